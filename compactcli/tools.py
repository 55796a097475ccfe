"""What a tool call is about, across agents: its kind, its main argument, the files it touches.

Agents name the same tools differently (Claude Code `Read`, pi `read`, Codex `exec_command`,
SWE-agent `str_replace_editor`). `tool_kind(name)` and `call_kind(name, arguments)` put a call in
one of a few kinds (`COMPACTABLE` ones produce output worth clearing when it is old);
`main_argument`, `shell_command` and `touched_files` say what it did, `shell_reads` the paths a
shell command prints (`cat`, `sed -n`, `nl`, `head`, `tail`), `call_reads` the paths a call
reads and whether one is an instruction file (`AGENTS.md`, `SKILL.md`, ...), and
`read_only_command` whether a shell command only looks. A Codex code-mode script (`exec`, see
`compactcli.code_mode`) is read as the calls it makes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from compactcli.code_mode import is_script, patch_text, script_calls
from compactcli.lazy_pattern import compile_lazily

T = TypeVar("T")

ToolKind = Literal["read", "shell", "search", "web", "edit", "todo", "other"]
SOFT_ERROR_KINDS: frozenset[ToolKind] = frozenset({"shell", "other", "web", "edit"})
"""Kinds of call whose output is read for an error even when the call did not fail: what runs
something, not a file read or a search, whose text is the file's or the matches'; and an edit,
whose first line says how it went (`SOFT_ERROR_LINES`)."""
SOFT_ERROR_LINES: dict[str, int] = {"edit": 1}
"""How many first lines of a kind's output are read for an error when the call did not fail,
where not `compactcli.outcomes.SOFT_LINES`: an edit tool says how it went first (Codex's
`apply_patch verification failed: Failed to find expected lines in ...`, which it does not
flag as failed), then may show the edited file, whose text is no error of the call."""

COMPACTABLE: frozenset[ToolKind] = frozenset({"read", "shell", "search", "web", "edit"})
"""Kinds of tool whose old output is cleared by default."""

_KINDS: dict[str, ToolKind] = {}
for _kind, _names in {
    "read": "read read_file readfile view view_file cat open open_file notebookread "
    "read_many_files read_text_file read_multiple_files",
    "shell": "bash shell exec exec_command local_shell local_shell_call run_shell run_command "
    "run_terminal_cmd terminal bashoutput killshell command execute_command shell_command "
    "write_stdin execute_bash run_shell_command run_in_terminal bash_tool run_bash",
    "search": "grep glob ls list list_dir list_files find find_file find_files search "
    "search_files search_dir codebase_search rg ripgrep file_search websearch web_search "
    "toolsearch grep_search search_file_content list_directory directory_tree find_by_name "
    "google_web_search",
    "web": "webfetch web_fetch fetch fetch_url browse open_url http_get curl",
    "edit": "edit multiedit write write_file create create_file edit_file apply_patch "
    "str_replace_editor str_replace_based_edit_tool notebookedit replace insert patch "
    "write_to_file replace_in_file apply_diff search_replace str_replace edit_block multi_edit",
    "todo": "todowrite todo_write todoread update_plan todo taskcreate taskupdate tasklist",
}.items():
    for _name in _names.split():
        _KINDS[_name] = _kind  # type: ignore[assignment]

_PATH_KEYS = ("file_path", "path", "notebook_path", "filepath", "filename", "file", "target_file")
_COMMAND_KEYS = ("command", "cmd", "script")
_QUERY_KEYS = ("pattern", "query", "q", "url", "glob", "regex", "search")
_READ_ONLY_COMMANDS = frozenset({"view", "search", "find", "read", "list"})
"""Sub-commands of an edit tool that read and change nothing."""
_PATCH_HEADER = compile_lazily(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_MOVE_HEADER = compile_lazily(r"^\*\*\* Move to: (.+)$", re.MULTILINE)


@functools.lru_cache(maxsize=4096)  # a session calls few tools, each many times
def base_name(name: str | None) -> str:
    """A tool's name without its MCP or namespace prefix (`mcp__github__read_file` ->
    `read_file`), lower-cased; empty for no name."""
    return name.rsplit("__", 1)[-1].lower() if name else ""


def tool_kind(name: str | None) -> ToolKind:
    """The kind of tool `name` is (`other` when unknown). MCP prefixes are ignored."""
    return _KINDS.get(base_name(name), "other")


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return " ".join(value)
    return None


def main_argument(
    name: str | None, arguments: Any, *, limit: int = 120, lines: bool = False
) -> str:
    """The argument that best says what the call did (a path, a command, a query), on one line, at
    most `limit` chars; for a Codex poll of a running command, what it names that command by
    (`cell 28`, `session 3`); for a code-mode script, its calls' main arguments joined by `; `.
    With `lines`, a command of several lines keeps its line breaks (each line a command the
    shell runs), its other spaces still squeezed.
    """
    found: str | None = None
    polled = poll_target(name, arguments)
    if polled is not None:
        found = f"{polled[0]} {polled[1]}"
    elif is_script(name, arguments):
        parts = (
            main_argument(c.name, c.arguments, limit=limit, lines=lines)
            for c in script_calls(arguments)
        )
        found = "; ".join(part for part in parts if part) or None
        if found is None and "*** Begin Patch" in arguments:  # a patch held in a variable
            found = ", ".join(_paths(patch_text(arguments))) or None
    if found is None:
        found = _main_value(arguments)
    if not found:
        return ""
    if lines:  # a line that ends in a backslash goes on on the next
        joined = found.replace("\\\r\n", " ").replace("\\\n", " ")
        line = "\n".join(" ".join(part.split()) for part in joined.splitlines() if part.strip())
    else:
        line = " ".join(found.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


_MAIN_KEYS = (*_PATH_KEYS, *_COMMAND_KEYS, *_QUERY_KEYS)
"""The arguments that say what a call did, in the order `_main_value` looks for them."""


def _main_value(arguments: Any) -> str | None:
    if isinstance(arguments, Mapping):
        for key in _MAIN_KEYS:
            value = arguments.get(key)
            found = _text(value) if value is not None else None
            if found:
                return found
        for value in arguments.values():
            found = _text(value)
            if found:
                return found
        return None
    if isinstance(arguments, str):
        headers = _PATCH_HEADER.findall(arguments)
        return ", ".join(path for _, path in headers) if headers else arguments
    return None


@dataclass(frozen=True, slots=True)
class Touched:
    """Files one tool call read and modified."""

    read: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()


POLLS: dict[str, tuple[str, str]] = {
    "wait": ("cell", "cell_id"),
    "write_stdin": ("session", "session_id"),
}
"""Codex tools that poll a command already running (or type into it), and run none: by tool,
what they name the command by (a code-mode script's cell, a unified-exec process's session)
and the argument that holds it."""


def poll_target(name: str | None, arguments: Any) -> tuple[str, str] | None:
    """What a Codex poll names the running command by (`("cell", "28")`), if it is one."""
    poll = POLLS.get(base_name(name))
    if poll is None or not isinstance(arguments, Mapping):
        return None
    value = arguments.get(poll[1])
    if value is None or isinstance(value, (dict, list)):
        return None
    return poll[0], str(value)


_STILL_RUNNING = compile_lazily(
    r"\AScript running with cell ID (\S+)|^Process running with session ID (\S+)", re.MULTILINE
)


def still_running(text: str) -> tuple[str, str] | None:
    """What a later poll names a command by (`poll_target`), when the result of the call that
    started it says it is still running: a Codex code-mode script's cell, or a unified-exec
    process's session."""
    match = _STILL_RUNNING.search(text, 0, 400) if "running with" in text[:400] else None
    if match is None:
        return None
    return ("cell", match.group(1)) if match.group(1) else ("session", match.group(2))


def polled_command(
    running: dict[tuple[str, str], T], name: str | None, arguments: Any, text: str, call: T
) -> T | None:
    """Whose output the result `text` of call `call` (`name(arguments)`) is: for a poll
    (`poll_target`), the command it polls, taken out of `running` (what `still_running` named,
    mapped to its call), or `call` when none is known; None when the poll itself failed
    ("write_stdin failed: stdin is closed ..."): its text is nothing of the command's, which
    stays running. Any other call's is its own."""
    target = poll_target(name, arguments)
    if target is None:
        return call
    if text.startswith("write_stdin failed:"):
        return None
    return running.pop(target, None) or call


def call_kind(name: str | None, arguments: Any) -> ToolKind:
    """The kind of one call: its tool's (`tool_kind`), except that a Codex poll of a running
    command (`wait` on a code-mode script's cell, `write_stdin` to a process's session) is a
    shell call, as the command whose output it brings is; a `wait` without a cell (for other
    agents, in a multi-agent session) stays what its name says."""
    return "shell" if poll_target(name, arguments) is not None else tool_kind(name)


def shell_command(
    name: str | None, arguments: Any, *, limit: int = 10_000, lines: bool = False
) -> str:
    """The command a shell call ran, on one line (its main argument; with `lines`, its line
    breaks kept); for a code-mode script, the commands of the shell calls it makes, joined by
    `; `; empty when it runs none (a script that calls no shell tool, Codex `write_stdin`, alone
    or in a script)."""
    if base_name(name) in POLLS:
        return ""
    if is_script(name, arguments):
        calls = script_calls(arguments)
        parts = (
            main_argument(c.name, c.arguments, limit=limit, lines=lines)
            for c in calls
            if c.arguments is not None
            and tool_kind(c.name) == "shell"
            and base_name(c.name) not in POLLS
        )
        return "; ".join(part for part in parts if part)
    return main_argument(name, arguments, limit=limit, lines=lines)


_DRIVE = compile_lazily(r"^[A-Za-z]:[\\/]")
"""A Windows path: a drive letter first."""
_HOME = compile_lazily(r"^(?:/Users/[^/]+|/home/[^/]+|/root|[A-Za-z]:\\Users\\[^\\]+)(?=$|[/\\])")
"""A home directory at the start of a working directory: macOS, Linux, root's, Windows."""


def given_read(given: set[str], read: Sequence[str], cwd: str | None) -> bool:
    """Whether `read` holds a file of `given` (paths as a user named them), taken out of `given`
    when so: the same path once both are made relative to `cwd` (`local_path`), or one that ends
    with the path named (`/root/trl/benchmarks/HANDOFF.md` for `benchmarks/HANDOFF.md`)."""
    paths = [local_path(path, cwd).replace("\\", "/") for path in read]
    found = set()
    for name in given:
        named = local_path(name.removeprefix("./"), cwd).replace("\\", "/")
        if any(path == named or path.endswith("/" + named) for path in paths):
            found.add(name)
    given.difference_update(found)
    return bool(found)


def local_path(path: str, cwd: str | None) -> str:
    """`path` relative to `cwd` when it lies under it, as the agent working there names it
    (`/repo/src/a.py` in `/repo`: `src/a.py`; `c:\\dev\\app\\main.py` in `c:\\dev\\app`:
    `main.py`, and so is `C:/dev/app/main.py`: a Windows path is matched with either slash and in
    any case); any other path as it is. A path from the home directory (`~/.config/x`) is read
    in the home `cwd` lies in (`/Users/NAME`, `/home/NAME`, `/root`, `C:\\Users\\NAME`), so that
    `~/.config/x` and `/Users/NAME/.config/x` are one file (`.config/x` in the home directory
    itself); one outside `cwd`, or where `cwd` names no home, is left as it is."""
    if not cwd:
        return path
    base = cwd.rstrip("/\\")
    given = path
    if path.startswith(("~/", "~\\")):
        home = _HOME.match(base)
        if home is None:
            return path
        path = home.group(0) + path[1:]
        if "\\" in home.group(0):
            path = path.replace("/", "\\")
    for prefix in (base + "/", base + "\\"):
        if len(prefix) > 1 and len(path) > len(prefix) and path.startswith(prefix):
            return path[len(prefix) :]
    if _DRIVE.match(base) and len(path) > len(base) + 1:  # Windows: either slash, any case
        folded = base.replace("\\", "/").lower() + "/"
        if path[: len(folded)].replace("\\", "/").lower() == folded:
            return path[len(folded) :]
    return given


def touched_files(name: str | None, arguments: Any, *, command: str | None = None) -> Touched:
    """Files the call read or modified, from its arguments, with Codex `apply_patch` headers read
    from the patch text; for a code-mode script, its calls' files and those its patch text names.
    `command` is the call's `shell_command` with `lines`, when the caller has it.
    """
    if is_script(name, arguments):
        read: list[str] = []
        modified: list[str] = []
        for call in script_calls(arguments):
            if call.arguments is not None:
                touched = touched_files(call.name, call.arguments)
                read.extend(p for p in touched.read if p not in read)
                modified.extend(p for p in touched.modified if p not in modified)
        if "*** Begin Patch" in arguments:  # a patch held in a variable, or escaped
            modified.extend(p for p in _paths(patch_text(arguments)) if p not in modified)
        return Touched(read=tuple(read), modified=tuple(modified))
    kind = tool_kind(name)
    paths = list(_paths(arguments))
    if kind == "edit":
        sub = arguments.get("command") if isinstance(arguments, Mapping) else None
        if sub in _READ_ONLY_COMMANDS:  # str_replace_editor `view`, search_replace `search`
            return Touched(read=tuple(paths))
        return Touched(modified=tuple(paths))
    if kind == "read":
        return Touched(read=tuple(paths))
    if kind == "shell" and isinstance(arguments, Mapping):
        given = next((_text(arguments.get(k)) for k in _COMMAND_KEYS if arguments.get(k)), None)
        if given and "*** Begin Patch" in given:  # apply_patch run through the shell
            return Touched(modified=tuple(_paths(given)))
        if command is None:
            command = shell_command(name, arguments, lines=True)
        written = [path for path, _ in shell_writes(name, arguments, command=command)]
        deleted = shell_deletes(name, arguments, command=command)
        if written or deleted:
            return Touched(modified=tuple(dict.fromkeys([*written, *deleted])))
    return Touched()


def _paths(arguments: Any) -> Iterable[str]:
    if isinstance(arguments, str):
        for _, path in _PATCH_HEADER.findall(arguments):
            yield path.strip()
        for path in _MOVE_HEADER.findall(arguments):
            yield path.strip()
        return
    if not isinstance(arguments, Mapping):
        return
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            yield value.strip()
    for key in ("input", "patch"):
        value = arguments.get(key)
        if isinstance(value, str):
            yield from _paths(value)
    edits = arguments.get("edits")
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, Mapping):
                yield from _paths(edit)


_READ_ONLY_PROGRAMS = frozenset(
    [
        "ls",
        "cat",
        "nl",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "ack",
        "find",
        "fd",
        "wc",
        "pwd",
        "echo",
        "printf",
        "tree",
        "stat",
        "file",
        "which",
        "whereis",
        "type",
        "du",
        "df",
        "less",
        "more",
        "diff",
        "cmp",
        "sort",
        "uniq",
        "cut",
        "column",
        "awk",
        "jq",
        "yq",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "date",
        "whoami",
        "uname",
        "env",
        "printenv",
        "id",
        "hostname",
        "true",
        "test",
    ]
)
_READ_ONLY_CMDLETS = frozenset(
    [
        "get-content",
        "gc",
        "get-childitem",
        "gci",
        "dir",
        "select-string",
        "sls",
        "test-path",
        "get-item",
        "gi",
        "get-itemproperty",
        "get-command",
        "gcm",
        "resolve-path",
        "get-location",
        "gl",
        "select-object",
        "select",
        "where-object",
        "where",
        "measure-object",
        "measure",
        "sort-object",
        "format-table",
        "ft",
        "format-list",
        "fl",
        "out-string",
        "write-output",
        "write-host",
        "get-filehash",
        "convertfrom-json",
        "split-path",
        "join-path",
        "get-date",
        "foreach-object",
    ]
)
"""PowerShell's cmdlets (and their aliases) that only read or print; its names are case-blind."""
_CURL_SENDS = compile_lazily(
    r"^(?:-[a-zA-Z]*[oOXdFTK]|--(?:output|remote-name|request|data|form|upload-file|json|config)\b)"
)
"""A curl option that writes a file or sends data (`-o`, `-O`, `-X`, `-d`, `-F`, `-T`, ...)."""
_READ_ONLY_GIT = frozenset(
    ["status", "log", "diff", "show", "branch", "remote", "rev-parse", "ls-files", "blame"]
)
_GIT_CONFIG_GETS = frozenset(["--get", "--get-all", "--get-regexp", "--list", "-l"])
_LISTINGS = {
    "pip": frozenset(["list", "show", "freeze"]),
    "npm": frozenset(["ls", "list", "view", "outdated"]),
    "pnpm": frozenset(["ls", "list", "outdated"]),
    "yarn": frozenset(["list", "info"]),
    "brew": frozenset(["list", "info"]),
}
"""Package managers' subcommands that list or describe what is installed."""


def _lists_packages(program: str, words: Sequence[str]) -> bool:
    """Whether a command only lists installed packages (`pip list`, `npm ls`: `_LISTINGS`); a
    program asked its version is not read-only, since its failing says the program is missing."""
    listing = _LISTINGS.get(program.removesuffix(".exe").rstrip("0123456789."))
    return listing is not None and len(words) > 1 and words[1] in listing


_SHELL_TOKEN = compile_lazily(
    r"""'[^']*'?|"(?:\\.|[^"\\])*"?|&&|\|\||;;|[|;&]|[^'"|;&]+""", re.DOTALL
)
"""A quoted string (to its closing quote or the end; a backslash escapes in double quotes), an
operator, or a run of anything else."""
_SPLITS = frozenset({"&&", "||", ";;", "|", ";"})


def _split(command: str, at: frozenset[str]) -> list[str]:
    """`command` split at the operators `at` outside quotes, each part stripped, empty ones
    left out."""
    parts: list[str] = []
    current: list[str] = []
    for token in _SHELL_TOKEN.findall(command):
        if token in at:
            parts.append("".join(current))
            current = []
        else:
            current.append(token)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def _segments(command: str) -> list[str]:
    """The simple commands of a command line: split at `&&`, `||`, `;` and `|` outside quotes
    (a lone `&`, as in `2>&1` or a background job, does not split)."""
    return _split(command, _SPLITS)


def and_chain(command: str) -> list[str]:
    """The commands of a line joined only by `&&` (a pipe inside one stays with it), each of
    which succeeded when the line did; `[command]` for a line with `||` or `;`."""
    if any(token in ("||", ";", ";;") for token in _SHELL_TOKEN.findall(command)):
        return [command]
    return _split(command, frozenset({"&&"}))


_WRITES = compile_lazily(
    r"(?<![0-9&])>{1,2}(?!&)\s*(?!/dev/null)\S|\btee\b|\bsed\s+-i|\s-delete\b|-exec\b"
)


_VERSION_ASKS = (["--version"], ["-v"], ["-V"], ["version"], ["-version"])
"""A program's only argument when it is asked what version it is."""
_REDIRECT = compile_lazily(r"^\d?>>?&?\S*$")
"""A redirection word (`2>/dev/null`, `2>&1`): the program's arguments are the others."""


_ARGUMENT = compile_lazily(r"(?<!\S)(?!-)(?:\"[^\"]*\"|'[^']*'|\S)+")
"""A word of a command that is not an option, quoted parts whole (`"/My Project"`)."""


def _joined(segment: str) -> bool:
    """Whether a `cd` is given more than its one folder: lines of a script joined into one
    (`cd app rm -rf dist npm i`)."""
    words = _ARGUMENT.findall(segment)
    while words and "=" in words[0]:  # `VAR=value` prefixes
        words = words[1:]
    return len(words) > 2


def _command_words(segment: str) -> list[str]:
    """A simple command's words without its `VAR=value` prefixes."""
    words = segment.split()
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]
    return words


def looks_up(command: str) -> bool:
    """Whether a command line only reads (`read_only_command`) but for programs asked their
    version after a `which` of them (`which anchor && anchor --version`): when it exits 1, a
    program looked up was not there; a version asked with no lookup first (`pnpm --version`)
    may be what failed."""
    looked_up: set[str] = set()
    for segment in _segments(command):
        words = [w for w in _command_words(segment) if not _REDIRECT.match(w)]
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program == "which" or words[:2] == ["command", "-v"]:
            looked_up.update(w for w in words[1:] if not w.startswith("-"))
        elif not (words[1:] in _VERSION_ASKS and program in looked_up) and not read_only_command(
            segment
        ):
            return False
    return True


_CMDLET = compile_lazily(
    r"(?<![\w./-])(?:Get|Set|Test|Select|Where|ForEach|Sort|Measure|Format|Out|Write|Join|Split|"
    r"Resolve|Remove|New|Copy|Move|Invoke|ConvertFrom|ConvertTo|Add|Clear|Start|Stop)-[A-Z]"
    r"[A-Za-z]+\b|(?<![\w./-])(?i:get-content|get-childitem|select-string|test-path)\b"
)
"""A PowerShell cmdlet's name as a command (`Get-ChildItem`, or one of the reading cmdlets in
any case): a line with one is read as PowerShell, not a file named `start-here.md`."""
_PS_METHOD = compile_lazily(r"[\w\]]\.\w+\(|\]::\w+\(")
"""A .NET method call (`$file.Delete()`, `[IO.File]::WriteAllText(`), which may write."""
_PS_KEYWORDS = frozenset({"if", "elseif", "else", "foreach", "-not", "!"})
_PS_BLOCKS = str.maketrans({"{": ";", "}": ";", "(": ";", ")": ";"})


def _powershell_statements(command: str) -> list[str] | None:
    """The statements of a PowerShell line (one that names a cmdlet), its script blocks and
    conditions (`if (Test-Path a) { Get-Content a } else { 'missing' }`, `ForEach-Object {
    $_.FullName }`) statements of their own, an assignment (`$root = Join-Path ...`) what it
    assigns; None for a line that is not PowerShell or that calls a .NET method (`_PS_METHOD`),
    which may write."""
    if not _CMDLET.search(command) or _PS_METHOD.search(command):
        return None
    statements: list[str] = []
    for part in _split(command.translate(_PS_BLOCKS), _SPLITS):
        words = part.split()
        while words and words[0].lower() in _PS_KEYWORDS:
            words = words[1:]
        if len(words) > 1 and words[0].startswith("$") and words[1] == "=":
            words = words[2:]  # `$latest = Get-ChildItem ...`: what is assigned
        if words:
            statements.append(" ".join(words))
    return statements


def _prints(words: Sequence[str]) -> bool:
    """Whether a PowerShell statement only yields values: variables (`$_.FullName`), quoted
    strings, numbers and operators (`-eq`)."""
    return all((w[0] in "$'\"-" and "/" not in w) or w.replace(".", "").isdigit() for w in words)


@functools.lru_cache(maxsize=4096)  # each reader of a call's result asks of its command
def read_only_command(command: str) -> bool:
    """Whether every program of a shell command line only reads (lists, prints, searches: its output
    is a read, its success says nothing): `cd` prefixes (to one folder: a `cd` with more words is
    a script's lines joined into one), pipes and `2>&1` allowed, no output
    redirection, no `sed -i`, `tee` or `find -delete`; `sed` only with `-n`, `git` only with a
    reading subcommand (`config` only to get), `curl` only fetching (no `-o`, `-X`, `-d` ...),
    a package manager only listing what is installed (`pip list`, `npm ls`);
    PowerShell's reading cmdlets in any case (`Get-Content`, `gci`, ...), also inside its
    conditions and script blocks (`_powershell_statements`), with statements that only yield
    values (`_prints`).
    """
    command = command.strip()
    if not command or "\n" in command or _WRITES.search(command):
        return False
    statements = _powershell_statements(command)
    for segment in _segments(command) if statements is None else statements:
        words = _command_words(segment)
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program == "cd" and _joined(segment):
            return False
        if program == "cd" or (statements is not None and _prints(words)):
            continue
        if program == "sed":
            if "-n" not in words:
                return False
            continue
        if program == "curl":  # a fetch that prints what it got, writing and sending nothing
            if any(_CURL_SENDS.match(word) for word in words[1:]):
                return False
            continue
        if program == "git":
            rest = [w for w in words[1:] if not w.startswith("-")]
            if rest[:1] == ["config"] and _GIT_CONFIG_GETS.intersection(words):
                continue
            if not rest or rest[0] not in _READ_ONLY_GIT:
                return False
            continue
        if _lists_packages(program, words):
            continue
        if program not in _READ_ONLY_PROGRAMS and program.lower() not in _READ_ONLY_CMDLETS:
            return False
    return True


_READ_COMMAND = compile_lazily(
    r"(?:^|&&|;|\|\||\n|\{)\s*(?:cat|nl(?:\s+-\w+)*|head(?:\s+-n?\s*\d+)?|tail(?:\s+-n?\s*\d+)?|"
    r"sed\s+-n\s+(?:'[^']*'|\"[^\"]*\"|\S+)|"
    r"(?i:get-content|gc|type)(?:\s+-(?i:raw|path|literalpath|(?:totalcount|tail|head|first)\s+\d+))*)"
    r"\s+(\"[^\"\n]+\"|'[^'\n]+'|[^\s|;&<>$`'\"]+(?=[\s|;&<>)]|$))"
)


_POWERSHELL_READ = compile_lazily(r"(?i:\b(?:get-content|gc|type))\s")


def shell_reads(name: str | None, arguments: Any, *, command: str | None = None) -> list[str]:
    """Paths a shell command reads with cat / sed -n / nl / head / tail, or PowerShell's
    `Get-Content` (`gc`, `type`): a quoted path whole, spaces and all; not a glob
    (`next.config.*`), nor a path the shell makes from a variable (`.chunk_$i.txt`). Brackets
    are a route's name, not a pattern, in a path PowerShell reads with `-LiteralPath` or
    another shell reads in single quotes (`app/[id]/page.tsx`); in a command of several lines,
    on every line."""
    if command is None:  # else given, as the caller read it (`shell_command`, `lines`)
        command = shell_command(name, arguments, lines=True)
    found: list[str] = []
    for match in _READ_COMMAND.finditer(command):
        quoted = match.group(1)
        path = quoted.strip("'\"")
        literal = "-literalpath" in match.group(0).lower() or (
            quoted.startswith("'") and not _POWERSHELL_READ.search(match.group(0))
        )
        if path.startswith("-") or path in found or any(c in path for c in "*?$`"):
            continue
        if "[" in path and not literal:
            continue
        if "/" in path or "." in path:
            found.append(path)
    return found


_HEREDOC = compile_lazily(
    r"(?:\bcat(?:\s+>>?\s*(?P<before>[^\s<>|;&]+))?|\btee(?:\s+-a)?\s+(?P<tee>[^\s<>|;&-][^\s<>|;&]*))"
    r"\s*<<-?\s*"
    r"(?P<quote>['\"]?)(?P<end>[A-Za-z_]\w*)(?P=quote)(?:[ \t]+(?:>>?[ \t]*)?"
    r"(?P<after>[^\s<>|;&]+))?[^\n]*\n(?P<text>.*?)\n[ \t]*(?P=end)[ \t]*(?:\n|$)",
    re.DOTALL,
)
_HERE_STRING = compile_lazily(
    r"@(?P<quote>['\"])\r?\n(?P<text>.*?)\r?\n(?P=quote)@\s*\|\s*"
    r"(?:Set-Content|Out-File|Add-Content)\s+(?:-(?:Path|FilePath|LiteralPath)\s+)?"
    r"(?P<q>['\"]?)(?P<path>[^\s'\"|;]+)(?P=q)",
    re.DOTALL | re.IGNORECASE,
)


_SCRATCH = ("/dev/", "/tmp/", "/var/tmp/", "$TMPDIR", "${TMPDIR", "$env:TEMP", "$env:TMP")
"""Where a shell writes what is not the work: a device, a temporary file (a payload to try)."""


def shell_writes(
    name: str | None, arguments: Any, *, command: str | None = None
) -> list[tuple[str, str]]:
    """(path, text) for each file a shell command writes whole from text it holds: a heredoc
    into `cat > path` or `tee path` (`cat <<'EOF' > specs/research.md`), a PowerShell
    here-string piped to `Set-Content`, `Out-File` or `Add-Content` (`@'...'@ | Set-Content
    .env`). Agents without an edit tool, or on Windows, write files this way. A temporary
    file (`/tmp/payload.json`) is scratch, not the work: none (`_SCRATCH`)."""
    if command is None:  # else given, as the caller read it (`shell_command`, `lines`)
        command = shell_command(name, arguments, lines=True)
    if "<<" not in command and "@" not in command:
        return []
    found: list[tuple[str, str]] = []
    for match in _HEREDOC.finditer(command):
        path = match.group("before") or match.group("tee") or match.group("after")
        if path and not path.startswith(("-", "&", *_SCRATCH)):
            found.append((path.strip("'\""), match.group("text")))
    for match in _HERE_STRING.finditer(command):
        if not match.group("path").startswith(_SCRATCH):
            found.append((match.group("path"), match.group("text")))
    return found


_REMOVES = frozenset({"rm", "unlink", "del", "erase", "remove-item", "ri"})
_REBUILT = frozenset(
    {"node_modules", "dist", "build", "target", "out", "coverage", "__pycache__", ".next"}
    | {".cache", ".turbo", ".pytest_cache", ".venv", "venv"}
)
"""Folders a build or an install makes again: deleting one is no change to the work."""


def shell_deletes(name: str | None, arguments: Any, *, command: str | None = None) -> list[str]:
    """Paths a shell command deletes (`rm`, `git rm` but for `--cached`, `unlink`, PowerShell's
    `Remove-Item`), each as named: not a glob, a variable's or a scratch path (`_SCRATCH`), nor
    a folder a build makes again (`_REBUILT`)."""
    if command is None:  # else given, as the caller read it (`shell_command`, `lines`)
        command = shell_command(name, arguments, lines=True)
    if not any(
        word in command.lower()
        for word in ("rm ", "unlink ", "del ", "erase ", "ri ", "remove-item ")
    ):
        return []
    found: list[str] = []
    for segment in (part for line in command.splitlines() for part in _segments(line)):
        words = [word.strip("'\"") for word in _command_words(segment)]
        words = words[1:] if words[:1] == ["sudo"] else words
        words = words[1:] if words[:2] == ["git", "rm"] else words
        if not words or words[0].lower() not in _REMOVES or "--cached" in words:
            continue
        powershell = words[0].lower() in ("remove-item", "ri")  # `a,b`: two paths
        for path in (p for word in words[1:] for p in (word.split(",") if powershell else [word])):
            name_ = path.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
            if (
                path.startswith(("-", *_SCRATCH))
                or any(c in path for c in "*?$`{>")
                or name_ in _REBUILT
                or path in found
            ):
                continue
            found.append(path)
    return found


INSTRUCTION_FILES = frozenset(
    {"skill.md", "agents.md", "claude.md", "gemini.md", ".cursorrules", "conventions.md"}
)
"""Files whose binding lines an agent follows: read by a tool, they are the session's rules."""
RULE_FILES = INSTRUCTION_FILES | {"memory.md"}
"""Files whose binding lines the summary keeps as rules: the instruction files, and a project's
`MEMORY.md` of standing conventions (Claude Code's memory index), which is a log of facts too
long to keep whole as instruction files are kept."""


@dataclass(frozen=True, slots=True)
class CallReads:
    """The paths one call reads (`call_reads`): by its arguments (`touched_files`) and by the
    shell command it runs (`shell_reads`)."""

    tool: tuple[str, ...]  # `touched_files(...).read`
    shell: tuple[str, ...]  # `shell_reads`
    runs_shell: bool  # a shell call (`call_kind`)

    @property
    def paths(self) -> tuple[str, ...]:
        """The paths the call reads: a read tool's path, and for a shell call the files its
        command reads."""
        return (*self.tool, *self.shell) if self.runs_shell else self.tool

    @property
    def instructions(self) -> bool:
        """Whether the call reads an instruction file (`INSTRUCTION_FILES`), by a read tool or
        a shell command that prints it."""
        return any(
            p.replace("\\", "/").rsplit("/", 1)[-1].lower() in INSTRUCTION_FILES
            for p in (*self.tool, *self.shell)
        )


def call_reads(name: str | None, arguments: Any) -> CallReads:
    """The paths call `name(arguments)` reads (`CallReads`), its command read once for all."""
    command = shell_command(name, arguments, lines=True)
    return CallReads(
        touched_files(name, arguments, command=command).read,
        tuple(shell_reads(name, arguments, command=command)),
        call_kind(name, arguments) == "shell",
    )
