"""Tool kinds, main arguments and touched files across agents' tool names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactcli.tools import (
    Touched,
    _segments,
    call_kind,
    call_reads,
    main_argument,
    poll_target,
    read_only_command,
    shell_command,
    shell_deletes,
    shell_reads,
    shell_writes,
    tool_kind,
    touched_files,
)

PATCH = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** Add File: src/new.py\n+x\n*** End Patch\n"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("Read", "read"),
        ("read", "read"),
        ("Bash", "shell"),
        ("exec_command", "shell"),
        ("write_stdin", "shell"),  # the rest of a Codex process's output
        ("Grep", "search"),
        ("WebFetch", "web"),
        ("MultiEdit", "edit"),
        ("apply_patch", "edit"),
        ("str_replace_editor", "edit"),
        ("TodoWrite", "todo"),
        ("execute_bash", "shell"),  # OpenHands
        ("run_shell_command", "shell"),  # Gemini CLI
        ("run_in_terminal", "shell"),
        ("grep_search", "search"),
        ("list_directory", "search"),
        ("write_to_file", "edit"),  # Cline
        ("replace_in_file", "edit"),
        ("search_replace", "edit"),
        ("read_text_file", "read"),
        ("mcp__github__read_file", "read"),
        ("Task", "other"),
        (None, "other"),
    ],
)
def test_tool_kind(name: str | None, kind: str) -> None:
    assert tool_kind(name) == kind


@pytest.mark.parametrize(
    ("name", "arguments", "target", "kind", "argument"),
    [
        ("wait", {"cell_id": "28", "yield_time_ms": 10000}, ("cell", "28"), "shell", "cell 28"),
        ("write_stdin", {"session_id": 3, "chars": "y\n"}, ("session", "3"), "shell", "session 3"),
        # a multi-agent `wait` names other agents, not a command
        ("wait", {"ids": ["agent-1"], "timeout_ms": 30000}, None, "other", "agent-1"),
        ("wait", {"cell_id": None}, None, "other", ""),
        ("wait", {"cell_id": ["28"]}, None, "other", "28"),
        ("write_stdin", "not an object", None, "shell", "not an object"),
        ("Bash", {"command": "ls", "cell_id": "1"}, None, "shell", "ls"),
    ],
)
def test_codex_polls_name_the_command_they_poll(
    name: str, arguments: object, target: tuple[str, str] | None, kind: str, argument: str
) -> None:
    assert poll_target(name, arguments) == target
    assert call_kind(name, arguments) == kind
    assert main_argument(name, arguments) == argument


def test_main_argument_prefers_paths_then_commands_then_queries() -> None:
    assert main_argument("Read", {"file_path": "src/app.py", "limit": 10}) == "src/app.py"
    assert (
        main_argument("Bash", {"command": "pytest -q\n  tests/", "timeout": 5})
        == "pytest -q tests/"
    )
    assert main_argument("exec_command", {"cmd": ["rg", "-n", "TODO"]}) == "rg -n TODO"
    assert main_argument("Grep", {"pattern": "def main"}) == "def main"
    assert main_argument("apply_patch", PATCH) == "src/app.py, src/new.py"
    assert main_argument("Task", {"description": "x" * 200}, limit=10) == "xxxxxxxxx…"
    assert main_argument("Task", {}) == ""


def test_touched_files() -> None:
    assert touched_files("Read", {"file_path": "a.py"}) == Touched(read=("a.py",))
    assert touched_files("Edit", {"file_path": "a.py", "old_string": "x"}) == Touched(
        modified=("a.py",)
    )
    assert touched_files("MultiEdit", {"file_path": "a.py", "edits": []}) == Touched(
        modified=("a.py",)
    )
    assert touched_files("apply_patch", PATCH) == Touched(modified=("src/app.py", "src/new.py"))
    assert touched_files("apply_patch", {"input": PATCH}) == Touched(
        modified=("src/app.py", "src/new.py")
    )
    assert touched_files(
        "exec_command", {"cmd": "apply_patch <<'EOF'\n" + PATCH + "EOF"}
    ) == Touched(modified=("src/app.py", "src/new.py"))
    assert touched_files("str_replace_editor", {"command": "view", "path": "b.py"}) == Touched(
        read=("b.py",)
    )
    assert touched_files(
        "str_replace_editor", {"command": "str_replace", "path": "b.py"}
    ) == Touched(modified=("b.py",))
    assert touched_files(
        "search_replace", {"command": "search", "file_path": "c.txt", "pattern": "x"}
    ) == Touched(read=("c.txt",))
    assert touched_files("search_replace", {"command": "replace", "file_path": "c.txt"}) == Touched(
        modified=("c.txt",)
    )
    assert touched_files("Bash", {"command": "ls"}) == Touched()


SCRIPT = (
    'const a = await tools.exec_command({"cmd":"sed -n \'1,40p\' src/app.py","workdir":"/r"});\n'
    f"await tools.apply_patch({PATCH!r});\n"
    'text(await tools.exec_command({cmd: "pytest -q", workdir: "/r"}));\n'
)


def test_a_code_mode_script_is_read_as_the_calls_it_makes() -> None:
    assert main_argument("exec", SCRIPT) == (
        "sed -n '1,40p' src/app.py; src/app.py, src/new.py; pytest -q"
    )
    assert main_argument("exec", SCRIPT, limit=12) == "sed -n '1,4…"
    assert shell_command("exec", SCRIPT) == "sed -n '1,40p' src/app.py; pytest -q"
    assert touched_files("exec", SCRIPT) == Touched(modified=("src/app.py", "src/new.py"))
    # a patch held in a variable is read from the script's text
    held = "const p = " + repr(PATCH) + ";\nawait tools.apply_patch({input: p});"
    assert main_argument("exec", held) == "src/app.py, src/new.py"
    assert shell_command("exec", held) == ""
    assert touched_files("exec", held) == Touched(modified=("src/app.py", "src/new.py"))
    # a script that calls no tool, and a tool of another name, are left as they are
    assert main_argument("exec", "text(1 + 1)") == "text(1 + 1)"
    assert shell_command("exec", "text(1 + 1)") == "text(1 + 1)"
    assert shell_command("Bash", {"command": "ls -la"}) == "ls -la"
    assert shell_command("write_stdin", {"session_id": 3, "chars": "y\n"}) == ""
    # a script that only reads more of a running command's output runs no command
    polled = 'const r = await tools.write_stdin({"session_id":95469,"chars":""});\ntext(r);'
    assert shell_command("exec", polled) == ""


def _segments_by_characters(command: str) -> list[str]:
    """The shell splitting rule stated character by character (quotes, a backslash escaping in
    double quotes, `&&`, `||`, `;;`, `|`, `;` splitting, a lone `&` not)."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    at = 0
    while at < len(command):
        char = command[at]
        if quote:
            if char == "\\" and quote == '"':
                current.append(command[at : at + 2])
                at += 2
                continue
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "|;&":
            if char == "&" and command[at + 1 : at + 2] != "&":
                current.append(char)
                at += 1
                continue
            parts.append("".join(current))
            current = []
            at += 2 if command[at + 1 : at + 2] == char else 1
            continue
        current.append(char)
        at += 1
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab \\'\"|;&>12\n", max_size=40))
def test_command_lines_split_as_the_shell_rule_says(command: str) -> None:
    assert _segments(command) == _segments_by_characters(command)


@pytest.mark.parametrize(
    ("command", "read_only", "reads"),
    [
        ("Get-Content README.md", True, ["README.md"]),
        ("get-content -Raw web\\package.json", True, ["web\\package.json"]),
        (
            "gc C:\\Users\\me\\.codex\\skills\\x\\SKILL.md",
            True,
            ["C:\\Users\\me\\.codex\\skills\\x\\SKILL.md"],
        ),
        ("Get-ChildItem -Force", True, []),
        ("Get-Content src\\a.ts | Select-Object -First 40", True, ["src\\a.ts"]),
        ("Select-String -Path *.py -Pattern TODO", True, []),
        ("Set-Content notes.txt hello", False, []),
        ("Get-Content a.txt > b.txt", False, ["a.txt"]),  # reads it, and writes
        ("Remove-Item -Recurse build", False, []),
        ("if (Test-Path x.json) { Get-Content x.json }", True, ["x.json"]),
        ("if (Test-Path a.md) { Get-Content a.md } else { 'missing' }", True, ["a.md"]),
        (
            "if (Get-Command rg -ErrorAction SilentlyContinue) { rg --files } "
            "else { Get-ChildItem -Recurse -File | ForEach-Object { $_.FullName } }",
            True,
            [],
        ),
        ("$root = Join-Path $HOME '.codex'; Test-Path $root", True, []),
        ("Get-ChildItem | ForEach-Object { Remove-Item $_ }", False, []),
        ("if (-not (Test-Path out)) { New-Item -ItemType Directory out }", False, []),
        ("$f = Get-Item a.txt; $f.Delete()", False, []),
        ("[IO.File]::WriteAllText('a.txt', 'b')", False, []),
        ("git config --get user.name; git config --get user.email", True, []),
        ("git config user.name me", False, []),
        # a shell line that names a file like a cmdlet is no PowerShell: `$HOME/bin/x` runs x
        ("cat start-here.md; $HOME/bin/deploy", False, ["start-here.md"]),
    ],
)
def test_powershell_reads_are_reads(command: str, read_only: bool, reads: list[str]) -> None:
    """Codex on Windows runs PowerShell: its reading cmdlets (in any case) are read-only
    commands, also in its conditions and script blocks (a block that writes is not), and
    `Get-Content` names the file it reads, as `cat` does."""
    assert read_only_command(command) is read_only
    assert shell_reads("shell_command", {"command": command}) == reads


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rm /home/v/notes.md /home/v/notes.docx", ["/home/v/notes.md", "/home/v/notes.docx"]),
        ("cd app && rm -f src/old.ts && npm test", ["src/old.ts"]),
        ("sudo rm -rf /etc/nginx/sites-enabled/app", ["/etc/nginx/sites-enabled/app"]),
        ("git rm -r src/legacy", ["src/legacy"]),
        ("git rm --cached .env", []),  # still on disk, only no longer tracked
        ("Remove-Item -Path .\\docs\\draft.md -Force", [".\\docs\\draft.md"]),
        ("Remove-Item -Recurse -Force src\\assets,src\\ui", ["src\\assets", "src\\ui"]),
        ("rm -rf node_modules dist && npm ci", []),  # made again by the build
        ("rm -f /tmp/payload.json", []),  # scratch
        ('rm *.pyc; rm "$OUT"', []),  # a glob, a variable's
        ("echo rm notes.md", []),  # said, not run
    ],
)
def test_shell_deletes_are_the_files_a_command_removes(command: str, expected: list[str]) -> None:
    assert shell_deletes("Bash", {"command": command}) == expected
    assert touched_files("Bash", {"command": command}).modified == tuple(expected)


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("curl -sS https://txline.example/docs.yaml", True),
        ("curl -fsSL https://example.com/install.txt | head -20", True),
        ('curl -s -w "%{http_code}" http://127.0.0.1:8080/api/health', True),
        ("curl -s -o page.html https://example.com", False),
        ("curl -sSo page.html https://example.com", False),
        ("curl -O https://example.com/a.tar.gz", False),
        ("curl -X POST http://127.0.0.1:8080/api/kill", False),
        ("curl -d '{\"a\": 1}' http://127.0.0.1:8080/api", False),
        ("curl --data-binary @body.json http://127.0.0.1:8080/api", False),
    ],
)
def test_a_curl_that_only_fetches_is_a_read(command: str, read_only: bool) -> None:
    """A fetch prints a document (whose text may say "error" without being the session's
    error): read-only; one that writes a file or sends data is not."""
    assert read_only_command(command) is read_only


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("pip3 list 2>/dev/null | grep -iE 'httpx|playwright'", True),
        ("pip show httpx", True),
        ("npm ls react", True),
        ("C:/Python312/Scripts/pip3.exe list", True),
        ("node --version", False),  # its failing says the program is missing
        ("pip install httpx", False),
        ("npm run build", False),
        ("python -m pip list", False),  # a module run: read as any program run
        ("npm ls && npm install", False),
    ],
)
def test_listing_installed_packages_is_a_read(command: str, read_only: bool) -> None:
    assert read_only_command(command) is read_only


def test_every_line_of_a_command_of_several_lines_names_what_it_reads() -> None:
    """A command of several lines (a code-mode script's `cmd` too) runs each line: each line's
    read counts, and a line that ends in a backslash goes on on the next."""
    command = "sed -n '1,280p' lib/client.ts\nsed -n '1,360p' lib/v2.ts\n\ncat \\\n  docs/a.md\n"
    assert shell_reads("Bash", {"command": command}) == ["lib/client.ts", "lib/v2.ts", "docs/a.md"]
    script = (
        'const r = await tools.exec_command({"cmd": "sed -n 1,20p a/x.ts\\nnl -ba b/y.ts"});\n'
        "text(r.output);"
    )
    assert shell_reads("exec", script) == ["a/x.ts", "b/y.ts"]
    # shown on one line, as before
    assert shell_command("Bash", {"command": command}) == (
        "sed -n '1,280p' lib/client.ts sed -n '1,360p' lib/v2.ts cat \\ docs/a.md"
    )


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (  # a heredoc into cat, the file named after it or before it
            "cat <<'EOF' > specs/research.md\n# Research\n- Decision: one queue\nEOF",
            [("specs/research.md", "# Research\n- Decision: one queue")],
        ),
        ("cat > notes.md <<EOF\nhello\nEOF\necho done", [("notes.md", "hello")]),
        ("tee -a log.txt <<'END'\nline\nEND", [("log.txt", "line")]),
        (  # PowerShell: a here-string piped to Set-Content, with or without -Path
            "@'\nAPP_ENV=local\n'@ | Set-Content .env.example\n"
            '@"\nx = 1\n"@ | Set-Content -Path app\\config.py',
            [(".env.example", "APP_ENV=local"), ("app\\config.py", "x = 1")],
        ),
        ("python - <<'PY'\nprint(1)\nPY", []),  # a script fed to a program writes no file
        ("cat <<EOF > /dev/null\nx\nEOF", []),
        ("cat > /tmp/payload.json <<'EOF'\n{}\nEOF", []),  # scratch
        ("cat > out.txt", []),  # no text it holds
    ],
)
def test_shell_writes_are_the_files_a_command_writes_from_text_it_holds(
    command: str, expected: list[tuple[str, str]]
) -> None:
    assert shell_writes("Bash", {"command": command}) == expected
    modified = tuple(dict.fromkeys(path for path, _ in expected))
    assert touched_files("Bash", {"command": command}).modified == modified


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("cd /app && ls -la", True),
        ('cd "/Users/me/My Project" && cat a.txt', True),
        ("HOME=/tmp cd -P /app && git status", True),
        # a script's lines, joined into one line as a summary shows them: not a `cd`
        ("cd /app rm -rf node_modules set -o pipefail npx -y npm@12.0.2 install", False),
        (shell_command("Bash", {"command": "cd /app\nrm -rf dist\nnpm run build"}), False),
    ],
)
def test_a_cd_is_to_one_folder(command: str, read_only: bool) -> None:
    assert read_only_command(command) is read_only


def test_a_call_reads_what_its_tool_names_and_for_a_shell_what_its_command_prints() -> None:
    shell = call_reads("Bash", {"command": "cat docs/AGENTS.md && sed -n 1,5p src/a.py"})
    assert shell.paths == ("docs/AGENTS.md", "src/a.py")
    assert shell.instructions
    read = call_reads("Read", {"file_path": "/repo/CLAUDE.md"})
    assert read.paths == ("/repo/CLAUDE.md",)
    assert read.instructions
    assert call_reads("Grep", {"pattern": "cat src/a.py"}).paths == ()  # a search reads no file
    assert not call_reads("Bash", {"command": "cat notes.md"}).instructions


def test_touched_files_given_the_command_finds_what_it_finds_alone() -> None:
    arguments = {"command": "cat <<'EOF' > specs/a.md\nx\nEOF\nrm old.txt"}
    line = shell_command("Bash", arguments, lines=True)
    assert touched_files("Bash", arguments, command=line) == touched_files("Bash", arguments)
    assert touched_files("Bash", arguments).modified == ("specs/a.md", "old.txt")
