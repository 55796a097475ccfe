#!/usr/bin/env python3
"""Write the committed evaluation fixtures (compactcli/evaluation/fixtures/), or check them.

    python scripts/eval_fixtures.py            # (re)write every fixture of SPECS
    python scripts/eval_fixtures.py --check    # exit 1 if a file differs from what the
                                               # generator makes (they are reproducible)

Each fixture is NAME.jsonl (the transcript) and NAME.probes.jsonl (its probes); the set is
`compactcli.evaluation.generator.SPECS`. Larger sizes are generated at run time instead:
`compactcli eval --generate claude-code:500k:7`.
"""

from __future__ import annotations

import argparse
import os
import sys

from compactcli.evaluation.generator import SPECS, generate, write_fixture
from compactcli.evaluation.measure import exact_counter
from compactcli.evaluation.probes import dump_probes

FOLDER = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "compactcli", "evaluation", "fixtures"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--folder", default=FOLDER, help="where the fixtures live")
    args = parser.parse_args()
    stale: list[str] = []
    for spec in SPECS:
        fixture = generate(spec, exact_counter(spec.format))
        if not args.check:
            for path in write_fixture(args.folder, fixture):
                print(os.path.relpath(path))
            continue
        for suffix, data in (
            (".jsonl", fixture.data),
            (".probes.jsonl", dump_probes(fixture.probes)),
        ):
            path = os.path.join(args.folder, fixture.name + suffix)
            try:
                with open(path, "rb") as handle:
                    same = handle.read() == data
            except FileNotFoundError:
                same = False
            if not same:
                stale.append(os.path.relpath(path))
    for path in stale:
        print(f"differs from the generator: {path}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
