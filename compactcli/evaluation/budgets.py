"""The budgets an evaluation compacts to: shares of the input's tokens, or compactcli's defaults.

A budget is either a share of the input context's exact o200k tokens (`0.1`: compact to 10% of
what the input holds) or `DEFAULT`, the string `"default"`: no token budget at all, the
strategy run as `compactcli compact --force` runs it with its built-in settings (what a user
gets by default). `parse_budgets("default,0.2,10%")` reads the `--budgets` form (every value a
share when none has `%`, every value a percentage when one has); `label` is how a table shows a
budget and `budget_tokens` the token budget it sets for an input of a given size (None for
`DEFAULT`, which sets none).
"""

from __future__ import annotations

from typing import Final, Literal

from compactcli.errors import UsageError

DEFAULT: Final = "default"
Budget = float | Literal["default"]


def is_default(budget: Budget) -> bool:
    return isinstance(budget, str)


def label(budget: Budget) -> str:
    """`default`, or the share as a percentage (`10%`)."""
    return DEFAULT if isinstance(budget, str) else f"{budget:.0%}"


def budget_tokens(budget: Budget, tokens: int) -> int | None:
    """The token budget `budget` sets for an input of `tokens` tokens (None: no budget)."""
    return None if isinstance(budget, str) else int(tokens * budget)


def parse_budgets(text: str) -> tuple[Budget, ...]:
    """`--budgets` as budgets; `UsageError` for a value that is neither a share nor `default`."""
    values: list[Budget] = []
    percent = "%" in text
    for part in text.split(","):
        part = part.strip().rstrip("%")
        if part.lower() == DEFAULT:
            values.append(DEFAULT)
            continue
        try:
            value = float(part) / (100 if percent else 1)
        except ValueError:
            raise UsageError(
                f"--budgets takes shares of the input such as 0.5,0.1 or default, not {text!r}"
            ) from None
        if not 0 < value <= 1:
            raise UsageError(f"--budgets: {part} is not a share between 0 and 1")
        values.append(value)
    return tuple(values)
