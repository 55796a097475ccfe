"""The facts a generated session plants, drawn fresh from its project's vocabulary.

`Catalogue(rng, project)` draws one fact per call, a specific sentence or value with the key
terms a probe matches it by: a user constraint, an error line in the project's language, a
technical decision, a request left for later (with its todo item), the final unfinished request,
an identifier (with the carrier it goes in), a setting that changes during the session (its old
and new values), and decoys absent from a given text. Within one catalogue no template of a
category repeats until all of them have been drawn, a number drawn from a range of 50 or more is
not drawn again (as far as 200 tries find another), and no setting changes twice. Every choice
comes from `rng`, so the same draws give the same facts.
"""

from __future__ import annotations

import random

from compactcli.evaluation import filler
from compactcli.evaluation.filler import FIELDS, NOUNS, VERBS, Project, snake
from compactcli.evaluation.probes import Category
from compactcli.evaluation.session_model import Carrier

_SETTING_NAMES = ("{module}_timeout", "{module}-db", "{module}_workers")


class Catalogue:
    """Draws facts for one session; never the same template twice in a category."""

    def __init__(self, rng: random.Random, project: Project) -> None:
        self.rng = rng
        self.project = project
        self.used: dict[str, list[int]] = {}
        self.numbers: set[int] = set()
        self.settings: set[str] = set()

    def _pick(self, category: str, count: int) -> int:
        used = self.used.setdefault(category, [])
        free = [i for i in range(count) if i not in used]
        if not free:
            used.clear()
            free = list(range(count))
        choice = self.rng.choice(free)
        used.append(choice)
        return choice

    def number(self, low: int, high: int) -> int:
        """A number not drawn before in this session (so every planted value is distinct);
        ranges too small for that (a Python minor version) are drawn freely."""
        if high - low < 50:
            return self.rng.randint(low, high)
        value = self.rng.randint(low, high)
        for _ in range(200):  # a range nearly used up gives a repeat rather than a hang
            if value not in self.numbers:
                break
            value = self.rng.randint(low, high)
        self.numbers.add(value)
        return value

    def module(self) -> str:
        return self.rng.choice(self.project.modules)

    def constraint(self) -> tuple[str, tuple[str, ...]]:
        """(sentence, key terms) of a user constraint."""
        p, r = self.project, self.rng
        module = self.module()
        python = p.language == "python"
        options: list[tuple[str, tuple[str, ...]]] = [
            (
                f"Never push directly to release/{self.number(2, 9)}.{self.number(10, 40)}; "
                "open a PR instead.",
                ("never push", "release/"),
            ),
            (
                f"Don't touch anything under {'db/migrations' if python else 'prisma/migrations'}"
                "/, those files are generated.",
                ("migrations/", "touch"),
            ),
            (
                "Use uv for every install, never plain pip."
                if python
                else "Use pnpm for every install, never npm.",
                ("uv" if python else "pnpm", "never"),
            ),
            (
                f"Always run `{'make check' if python else 'pnpm lint && pnpm typecheck'}` before "
                "you tell me something is done.",
                ("make check" if python else "pnpm typecheck", "always"),
            ),
            (
                "Do not add new dependencies without asking me first.",
                ("dependencies", "asking"),
            ),
            (
                f"Keep `{snake(r.choice(VERBS), r.choice(NOUNS))}` backwards compatible, the "
                f"{module} team imports it.",
                ("backwards compatible", f"{module} team"),
            ),
            (
                f"Never log {r.choice(('email', 'reference', 'owner_id'))} values, not even at "
                "debug level.",
                ("never log", "debug level"),
            ),
            (
                f"It must keep working on Python 3.{self.number(9, 10)}."
                if python
                else f"It must keep working on Node {r.choice((18, 20))}.",
                ("python 3." if python else "node ", "keep working"),
            ),
            (
                f"Don't change the response shapes of the public {module} API.",
                ("response shapes", f"{module} api"),
            ),
            (
                "All timestamps we store must be in UTC.",
                ("timestamps", "utc"),
            ),
            (
                f"Don't mock the database in the {module} repository tests; use the real test "
                "database.",
                ("mock", f"{module} repository tests"),
            ),
            (
                f"Only the standard library in src/{p.name}/{module}/utils.py, no third-party "
                "imports there."
                if python
                else f"No default exports in src/{module}/, named exports only.",
                ("standard library" if python else "default exports", f"{module}/"),
            ),
        ]
        return options[self._pick("constraint", len(options))]

    def error(self) -> tuple[str, tuple[str, ...]]:
        """(error line, key terms) of a distinctive error."""
        p, r = self.project, self.rng
        module, noun, field_name = self.module(), r.choice(NOUNS), r.choice(FIELDS)
        port = self.number(5000, 9999)
        key = f"{noun}s_{field_name}_{self.number(10, 99)}_key"
        missing = f"{field_name}_{noun}_{self.number(10, 99)}"
        if p.language == "python":
            options: list[tuple[str, tuple[str, ...]]] = [
                (
                    f"redis.exceptions.ConnectionError: Error 111 connecting to 127.0.0.1:{port}. "
                    "Connection refused.",
                    ("ConnectionError", f"127.0.0.1:{port}"),
                ),
                (
                    "sqlalchemy.exc.IntegrityError: duplicate key value violates unique "
                    f'constraint "{key}"',
                    ("IntegrityError", key),
                ),
                (
                    f"KeyError: '{missing}'",
                    ("KeyError", missing),
                ),
                (
                    f"AssertionError: assert Decimal('{self.number(100, 999)}.40') == "
                    f"Decimal('{self.number(100, 999)}.00')",
                    ("AssertionError", "Decimal"),
                ),
                (
                    "httpx.HTTPStatusError: Client error '401 Unauthorized' for url "
                    f"'http://localhost:{port}/api/{module}/{r.choice(VERBS)}'",
                    ("401 Unauthorized", f"localhost:{port}"),
                ),
                (
                    f"TypeError: {snake(r.choice(VERBS), noun)}() got an unexpected keyword "
                    f"argument '{field_name}_{self.number(10, 99)}'",
                    ("TypeError", "unexpected keyword argument"),
                ),
                (
                    "psycopg.OperationalError: connection failed: FATAL: password "
                    f'authentication failed for user "{module}_{self.number(10, 99)}"',
                    ("OperationalError", "password authentication failed"),
                ),
                (
                    f"ModuleNotFoundError: No module named '{p.name}.{module}."
                    f"{noun}_v{self.number(2, 99)}'",
                    ("ModuleNotFoundError", f"{p.name}.{module}"),
                ),
                (
                    f"json.decoder.JSONDecodeError: Expecting ',' delimiter: line "
                    f"{self.number(2, 99)} column {self.number(2, 99)} "
                    f"(char {self.number(1000, 9999)})",
                    ("JSONDecodeError", "delimiter"),
                ),
                (
                    f"TimeoutError: {module} worker did not finish within {self.number(31, 299)}s",
                    ("TimeoutError", f"{module} worker"),
                ),
            ]
        else:
            options = [
                (
                    f"TypeError: Cannot read properties of undefined (reading "
                    f"'{filler.camel(noun, *field_name.split('_'))}{self.number(2, 99)}')",
                    ("TypeError", "Cannot read properties of undefined"),
                ),
                (
                    f"Error: connect ECONNREFUSED 127.0.0.1:{port}",
                    ("ECONNREFUSED", f"127.0.0.1:{port}"),
                ),
                (
                    f"src/{module}/{r.choice(p.parts)}.ts({self.number(10, 400)},"
                    f"{self.number(2, 60)}): error TS2322: Type 'string' is not assignable to "
                    "type 'number'.",
                    ("TS2322", f"src/{module}/"),
                ),
                (
                    f"AssertionError: expected {self.number(100, 999)}.4 to equal "
                    f"{self.number(100, 999)}",
                    ("AssertionError", "to equal"),
                ),
                (
                    f"AxiosError: Request failed with status code 401 (POST /api/{module}/"
                    f"{r.choice(VERBS)}-{self.number(2, 99)})",
                    ("status code 401", f"/api/{module}/"),
                ),
                (
                    f"SyntaxError: Unexpected token '<', \"<!DOCTYPE \"... is not valid JSON "
                    f"(GET /api/{module}/{noun}s?page={self.number(2, 99)})",
                    ("SyntaxError", "is not valid JSON"),
                ),
                (
                    f"RangeError: Invalid time value at {filler.camel(r.choice(VERBS), noun)} "
                    f"(src/{module}/utils.ts:{self.number(10, 300)}:{self.number(2, 60)})",
                    ("RangeError", "Invalid time value"),
                ),
                (
                    f"ZodError: [{noun}.{filler.camel(*field_name.split('_'))}] Expected number, "
                    f"received string (code {self.number(100, 999)})",
                    ("ZodError", "Expected number"),
                ),
                (
                    f"Error: Timeout of {self.number(3000, 9000)}ms exceeded waiting for "
                    f"{module} queue",
                    ("Timeout", f"{module} queue"),
                ),
            ]
        return options[self._pick("error", len(options))]

    def decision(self) -> tuple[str, tuple[str, ...]]:
        """(sentence, key terms) of a technical decision."""
        r = self.rng
        module, noun = self.module(), r.choice(NOUNS)
        python = self.project.language == "python"
        helper = f"{r.choice(VERBS)}_with_backoff"
        flag = f"{module}_{noun}_v{self.number(2, 9)}"
        options: list[tuple[str, tuple[str, ...]]] = [
            (
                f"Decision: cache {noun} lookups in Redis with a {self.number(30, 900)}-second "
                "TTL instead of hitting Postgres on every request.",
                (f"{noun} lookups", "redis"),
            ),
            (
                f"I'll switch the {module} export to streaming CSV rows, since building the "
                "whole file in memory is what runs out of memory.",
                ("streaming csv", f"{module} export"),
            ),
            (
                f"Going with optimistic locking on {noun}s (a `version` column) rather than "
                "SELECT ... FOR UPDATE.",
                ("optimistic locking", f"{noun}s"),
            ),
            (
                f"We'll keep amounts as integer cents in {module} instead of floats.",
                ("integer cents", module),
            ),
            (
                f"I decided to move the retries into a `{helper}` helper "
                f"with {self.number(3, 9)} attempts instead of retrying inline.",
                (helper, "attempts"),
            ),
            (
                f"Let's validate {noun} payloads with {'pydantic' if python else 'zod'} at the "
                "route boundary instead of inside the service.",
                (f"{noun} payloads", "pydantic" if python else "zod"),
            ),
            (
                f"I'll batch the {noun} inserts in chunks of {self.number(100, 999)} instead of "
                "one INSERT per row.",
                (f"{noun} inserts", "chunks of"),
            ),
            (
                f"Going with a feature flag, `{flag}`, so the new "
                f"{module} path can be switched off without a deploy.",
                ("feature flag", flag),
            ),
            (
                f"Decision: paginate {noun} listings with opaque cursors instead of OFFSET.",
                (f"paginate {noun} listings", "cursors"),
            ),
            (
                f"We'll run the {module} sync as a background job every "
                f"{self.number(5, 55)} minutes instead of on each request.",
                (f"{module} sync", "background job"),
            ),
        ]
        return options[self._pick("decision", len(options))]

    def deferred_ask(self) -> tuple[str, str, tuple[str, ...]]:
        """(user sentence, todo item, key terms) of a request left for later."""
        r = self.rng
        module, noun = self.module(), r.choice(NOUNS)
        version = f"{self.number(1, 9)}.{self.number(11, 40)}.{self.number(2, 9)}"
        manifest = "pyproject.toml" if self.project.language == "python" else "package.json"
        legacy = f"{snake(r.choice(VERBS), noun)}_legacy"
        options: list[tuple[str, str, tuple[str, ...]]] = [
            (
                f"bump the version to {version} in {manifest} and add a CHANGELOG entry",
                f"Bump version to {version} and add a CHANGELOG entry",
                (version, "changelog"),
            ),
            (
                f"write a short migration note for the {module} team about the {noun} change",
                f"Write migration note for the {module} team ({noun} change)",
                ("migration note", f"{module} team"),
            ),
            (
                f"add a {noun} {r.choice(VERBS)} latency panel to the {module} dashboard",
                f"Add {noun} latency panel to the {module} dashboard",
                (f"{noun}", "latency panel"),
            ),
            (
                f"open a follow-up issue for the flaky {module} retry test",
                f"Open follow-up issue for the flaky {module} retry test",
                ("follow-up issue", f"flaky {module} retry test"),
            ),
            (
                f"delete the unused `{legacy}` helper from {module}",
                f"Delete unused {legacy} helper",
                (legacy, "helper"),
            ),
            (
                f"add a {module} section to the runbook explaining the {noun} replay command",
                f"Add {module} runbook section ({noun} replay command)",
                ("runbook", f"{noun} replay command"),
            ),
        ]
        return options[self._pick("ask", len(options))]

    def final_ask(self, path: str) -> tuple[str, tuple[str, ...]]:
        r = self.rng
        func = snake(r.choice(VERBS), r.choice(NOUNS))
        options: list[tuple[str, tuple[str, ...]]] = [
            (
                f"Next, add a retry with exponential backoff to `{func}` in {path}, and cover it "
                "with a test.",
                (func, "backoff"),
            ),
            (
                f"Now make `{func}` in {path} idempotent: calling it twice with the same "
                "request id must not create a second row.",
                (func, "idempotent"),
            ),
            (
                f"Next up: split `{func}` in {path} into a pure calculation and the database "
                "write, so the calculation can be unit tested.",
                (func, "pure calculation"),
            ),
        ]
        return options[self._pick("final", len(options))]

    def identifier(self) -> tuple[str, str, Carrier]:
        """(sentence or command, identifier, carrier) of an identifier worth keeping."""
        r = self.rng
        module = self.module()
        python = self.project.language == "python"
        kind = self._pick("identifier", 5)
        if kind == 0:
            pr = f"#{self.number(1000, 9999)}"
            return (f"This all goes into PR {pr}, so keep the commits small.", pr, "user_text")
        if kind == 1:
            var = f"{module.upper()}_{r.choice(FIELDS).upper()}_LIMIT"
            value = f"{var}={self.number(100, 9999)}"
            return (f"CI runs with {value}, so use the same locally.", value, "user_text")
        if kind == 2:
            shard = self.number(2, 9)
            command = (
                f"make test-integration SHARD={shard} MODULE={module}"
                if python
                else f"pnpm run e2e --shard={shard}/{shard + 2} --project={module}"
            )
            return (command, command, "tool_input")
        if kind == 3:
            ticket = f"{module[:4].upper()}-{self.number(100, 9999)}"
            return (
                f"For the record, this is ticket {ticket} in the tracker.",
                ticket,
                "user_text",
            )
        sha = f"{r.getrandbits(40):010x}"
        return (
            f"The regression came in with commit {sha}, which changed the {module} query.",
            sha,
            "assistant_text",
        )

    def setting(self) -> tuple[str, str, str]:
        """(name, old value, new value) of a setting that changes during the session; never
        the same setting twice in a session."""
        module = self.module()
        kind = self._pick("setting", 3)
        while _SETTING_NAMES[kind].format(module=module) in self.settings:
            module = self.module()
        self.settings.add(_SETTING_NAMES[kind].format(module=module))
        if kind == 0:
            name = f"{module.upper()}_TIMEOUT_MS"
            old, new = self.number(1000, 4999), self.number(5000, 9999)
            return name, f"{name}={old}", f"{name}={new}"
        if kind == 1:
            host = f"{module}-db.staging.internal"
            old, new = self.number(5000, 5999), self.number(6000, 6999)
            return host, f"{host}:{old}", f"{host}:{new}"
        name = f"{module.upper()}_WORKERS"
        old, new = self.number(2, 8), self.number(12, 48)
        return name, f"{name}={old}", f"{name}={new}"

    def decoys(self, count: int, text: str) -> list[tuple[Category, str, str]]:
        """`count` decoys (category label for the probe, fact, what it imitates) absent from
        `text`."""
        p, r = self.project, self.rng
        found: list[tuple[Category, str, str]] = []
        paths = [path for path in p.paths() if path not in text]
        attempts = 0
        while len(found) < count and attempts < 200:
            attempts += 1
            kind = len(found) % 4
            if kind == 0 and paths:
                fact = r.choice(paths)
                paths.remove(fact)
                imitates = "file_modified"
            elif kind == 1:
                fact, _ = self.error()
                imitates = "error_string"
            elif kind == 2:
                fact = f"fix/{self.module()}-{r.choice(NOUNS)}-{self.number(100, 999)}"
                imitates = "identifier"
            else:
                fact, _ = self.constraint()
                imitates = "user_constraint"
            if fact not in text and fact.lower() not in text.lower():
                found.append(("decoy", fact, imitates))
        return found


__all__ = ["Catalogue"]
