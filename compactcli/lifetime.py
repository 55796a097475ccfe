"""The end of a command-line process: the work it can leave to the system.

A process that has written its output is about to hand all of its memory back to the system at
once. Freeing a large transcript first, object by object (hundreds of thousands of them for a
100 MB file), and then tearing the interpreter down module by module, is work with no result.
The command line opts in to skipping it; the library never does on its own:

- `enable()` turns `keep` on for the rest of the process (the command line calls it first).
- `keep(*objects)` is a no-op unless enabled. When enabled, it keeps `objects` referenced until
  the process ends, in place of what the previous call kept (so a batch frees each file's data
  but the last's when the next file's comes), and moves every object then tracked by the cyclic
  garbage collector out of its sight (`gc.freeze`), so that no later collection walks them
  either. What the previous call froze is handed back to the collector first (`gc.unfreeze`), so
  a long batch leaves nothing but the last file's data out of it.
- `exit_now(code)` flushes standard output and standard error and ends the process with `code`
  without the interpreter's teardown (`os._exit`), when nothing else is left to run at exit: no
  thread but the main one and no exit handler registered (a library such as an LLM client may
  register some). Otherwise it raises `SystemExit(code)` as usual. A standard stream that can no
  longer be written (a reader that went away, `| head`) is left unflushed, quietly, as the error
  boundary leaves it (`compactcli.cli.runner`).
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from typing import Any, NoReturn

__all__ = ["enable", "enabled", "exit_now", "keep"]

_state: dict[str, Any] = {"enabled": False, "kept": ()}


def enable() -> None:
    """Let `keep` hold objects until the process ends (see the module docstring)."""
    _state["enabled"] = True


def enabled() -> bool:
    return bool(_state["enabled"])


def keep(*objects: Any) -> None:
    """Hold `objects` until the process ends, out of the collector's sight, when enabled."""
    if not _state["enabled"]:
        return
    gc.unfreeze()
    _state["kept"] = objects  # what the previous call kept is freed here
    gc.freeze()


def exit_now(code: int) -> NoReturn:
    """End the process with `code`, skipping the interpreter's teardown when that is safe."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe, a closed stream: nothing more to say
            pass
    if threading.active_count() > 1 or atexit._ncallbacks():
        raise SystemExit(code)
    os._exit(code)
