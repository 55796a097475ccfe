#!/usr/bin/env python3
"""Write compactcli/data/model_windows.json, the model table `compactcli.limits` reads, from the
model table an installed litellm wheel ships.

The source is litellm's `model_prices_and_context_window_backup.json` (located without importing
litellm). For each model whose `max_input_tokens` is a positive integer, the output keeps
`[window, output]`: the window, and `max_output_tokens` (else `max_tokens`) when that is a
positive integer, else null (`compactcli.limits` then assumes its default output limit). Other
models and every other field are left out. The file is compact JSON with sorted keys, so running
the script twice on one litellm version writes the same bytes. The shipped file was made from
litellm 1.106.2; litellm's licence (MIT) is copied next to it as LICENSE-litellm.

Usage (from a checkout, with litellm installed, e.g. `pip install -e '.[llm]'`):

    python scripts/model_windows.py            # rewrite compactcli/data/model_windows.json
    python scripts/model_windows.py --check    # exit 1 when the shipped file differs
    python scripts/model_windows.py --table PATH --out PATH
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

TABLE_NAME = "model_prices_and_context_window_backup.json"
OUT = Path(__file__).resolve().parent.parent / "compactcli" / "data" / "model_windows.json"


def litellm_table() -> Path:
    """The model table of the installed litellm wheel (SystemExit when litellm is missing)."""
    spec = importlib.util.find_spec("litellm")
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location) / TABLE_NAME
        if path.is_file():
            return path
    raise SystemExit("litellm is not installed: pip install -e '.[llm]' first")


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def windows(table: dict[str, Any]) -> dict[str, list[int | None]]:
    """Each model's `[window, output]` (output None when the table gives none)."""
    kept: dict[str, list[int | None]] = {}
    for key, entry in table.items():
        if not isinstance(entry, dict) or not _positive(entry.get("max_input_tokens")):
            continue
        output = entry.get("max_output_tokens", entry.get("max_tokens"))
        kept[key] = [entry["max_input_tokens"], output if _positive(output) else None]
    return kept


def render(table: dict[str, Any]) -> bytes:
    """The bytes of model_windows.json for `table` (litellm's model table, parsed)."""
    text = json.dumps(windows(table), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode() + b"\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--table", type=Path, help="litellm's model table (default: installed)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default: {OUT}")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    source = args.table or litellm_table()
    data = render(json.loads(source.read_bytes()))
    if args.check:
        same = args.out.is_file() and args.out.read_bytes() == data
        print(f"{args.out}: {'up to date' if same else 'differs from ' + str(source)}")
        return 0 if same else 1
    args.out.write_bytes(data)
    try:
        version = importlib.metadata.version("litellm")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    print(f"wrote {args.out} ({len(data):,} bytes) from {source} (litellm {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
