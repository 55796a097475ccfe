"""The work episodes a generated session is made of, and the token estimate it is planned with.

`EpisodeWriter(rng, project)` writes the turns of one session. `episode(index)` is a user request
answered by reading the source file and running its tests, maybe reading another file and
searching, editing (maybe also writing a new file or editing the test), running the tests again
and reporting; `read`, `test_run`, `edit`, `write` and `grep` make single tool calls, and
`fail(run, error)` makes a test run fail with `error` inside its log. The writer keeps every
file's contents as last shown, so a later read or edit of a file agrees with what came before.
`estimate_tokens(turns)` is the size planned with: characters over `CHARS_PER_TOKEN`, plus
`RECORD_OVERHEAD` per message; fixtures are measured exactly once rendered. Every choice comes
from `rng`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from compactcli.evaluation import filler
from compactcli.evaluation.filler import NOUNS, VERBS, Project, snake
from compactcli.evaluation.session_model import Call, Step, Turn

CHARS_PER_TOKEN = 3.6  # for planning depths only; fixtures are measured exactly afterwards
RECORD_OVERHEAD = 40  # tokens of framing per message in the estimate


class EpisodeWriter:
    """Builds turns for one session; keeps the file contents it has shown so reads agree."""

    def __init__(self, rng: random.Random, project: Project) -> None:
        self.rng = rng
        self.project = project
        self.files: dict[str, str] = {}
        self.read_paths: list[str] = []
        self.modified: list[str] = []

    def text_of(self, path: str) -> str:
        if path not in self.files:
            module, part = _split(path, self.project)
            self.files[path] = filler.source(self.rng, self.project, module, part)
        return self.files[path]

    def read(self, path: str) -> Call:
        self.read_paths.append(path)
        return Call("read", path=path, output=self.text_of(path))

    def test_run(self, target: str) -> Call:
        size = self.rng.randint(20, 80)
        return Call(
            "bash",
            command=self.project.test_command(target),
            target=target,
            output=filler.test_log(self.rng, self.project, size=size),
        )

    def fail(self, run: Call, error: str) -> None:
        """Make test run `run` fail with `error` inside its log."""
        size = self.rng.randint(20, 80)
        run.output = filler.test_log(
            self.rng, self.project, error=error, failing_path=run.target or None, size=size
        )
        run.exit_code = 1

    def edit(self, path: str) -> Call:
        old, new = filler.snippet(self.rng, self.project)
        text = self.text_of(path)
        lines = text.splitlines()
        at = self.rng.randrange(max(1, len(lines) - 1))
        lines.insert(at, old)
        self.files[path] = "\n".join(lines).replace(old, new, 1) + "\n"
        self.modified.append(path)
        start = max(0, at - 3)
        shown = self.files[path].splitlines()[start : at + 4]
        output = "\n".join(f"{start + i + 1:>6}\t{line}" for i, line in enumerate(shown))
        return Call("edit", path=path, old=old, new=new, output=output)

    def write(self, path: str) -> Call:
        module, part = _split(path, self.project)
        content = filler.source(self.rng, self.project, module, part)
        content = "\n".join(content.splitlines()[: self.rng.randint(20, 60)]) + "\n"
        self.files[path] = content
        self.modified.append(path)
        return Call("write", path=path, content=content, output="")

    def grep(self, pattern: str) -> Call:
        return Call(
            "grep",
            pattern=pattern,
            path="src",
            output=filler.grep_output(self.rng, self.project, pattern, self.rng.randint(3, 25)),
        )

    def episode(self, index: int) -> tuple[Turn, str]:
        """A work episode; returns the turn and its title (for the todo list)."""
        r, p = self.rng, self.project
        module = r.choice(p.modules)
        part = r.choice(p.parts)
        source = p.source_path(module, part)
        test = p.test_path(module, part)
        title = f"{r.choice(VERBS).capitalize()} {r.choice(NOUNS)} handling in {module}"
        user = filler.task_request(r, p, module, source)
        first = Step(
            thinking=f"Start by reading {source} and running the {module} tests to see the "
            "current failure.",
            text=f"I'll read `{source}` and run the {module} tests.",
            calls=[self.read(source), self.test_run(test)],
        )
        steps = [first]
        if r.random() < 0.6:
            other = p.source_path(module, r.choice(p.parts))
            steps.append(Step(calls=[self.read(other), self.grep(snake(r.choice(VERBS), module))]))
        if r.random() < 0.5:
            steps.append(Step(calls=[self.read(test)]))
        steps.append(
            Step(
                text=filler.explanation(r, p, source),
                calls=[self.edit(source)],
            )
        )
        if r.random() < 0.35:
            new_module_path = p.source_path(module, r.choice(p.parts))
            if new_module_path not in self.files:
                steps.append(Step(calls=[self.write(new_module_path)]))
        if r.random() < 0.4:
            steps.append(Step(calls=[self.edit(test)]))
        steps.append(Step(calls=[self.test_run(test)]))
        closing = f"Done: `{source}` is fixed and the {module} tests pass."
        if r.random() < 0.5:
            _, new = filler.snippet(r, p)
            language = "python" if p.language == "python" else "ts"
            closing += f" The change:\n\n```{language}\n{new.strip()}\n```"
        steps.append(Step(text=closing))
        return Turn(user=user, steps=steps), title


def _split(path: str, project: Project) -> tuple[str, str]:
    parts = path.split("/")
    module = next((m for m in project.modules if m in parts), project.modules[0])
    stem = parts[-1].rsplit(".", 1)[0].removeprefix("test_").removesuffix(".test")
    return module, stem


def estimate_tokens(turns: Sequence[Turn]) -> int:
    """The planned size of `turns` (see the module docstring)."""
    chars = sum(t.chars() for t in turns)
    messages = sum(t.messages() for t in turns)
    return int(chars / CHARS_PER_TOKEN) + messages * RECORD_OVERHEAD


__all__ = ["CHARS_PER_TOKEN", "RECORD_OVERHEAD", "EpisodeWriter", "estimate_tokens"]
