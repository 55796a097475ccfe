"""The read-only command classifier and the share of a summary it measures."""

from __future__ import annotations

import pytest

from compactcli.evaluation.commands import is_read_only, ok_command, read_only_cost


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat src/app.py",
        "sed -n '1,120p' src/app.py",
        "head -50 README.md",
        "tail -n 20 log.txt",
        "grep -rn 'TODO' src",
        'rg -n "foo|bar" src',
        "find . -name '*.py' -type f",
        "wc -l src/*.py",
        "pwd",
        "echo $HOME",
        "git status",
        "git log --oneline -5",
        "git diff HEAD~1 -- src/app.py",
        "git show abc123:src/app.py",
        "git -C repo status --short",
        "git --no-pager log",
        "git branch -a",
        "git stash list",
        "nl -ba src/app.py",
        "tree -L 2",
        "stat pyproject.toml",
        "file image.png",
        "which python",
        "jq '.items[] | .name' data.json",
        "cd src && ls",
        "cd /repo && git status && git diff",
        "ls | head -5",
        "grep foo a.txt 2>/dev/null",
        "cat a.txt 2>&1 | tail -3",
        "ls > /dev/null",
        "FOO=1 BAR=2 rg needle",
        "bash -lc 'ls -la && cat README.md'",
        "timeout 10 grep -r x .",
        "/usr/bin/grep x a.txt",
        "sort data.txt | uniq -c",
        "ls\ncat a.txt",
        "wc -l < input.txt",
    ],
)
def test_read_only_commands(command: str) -> None:
    assert is_read_only(command)


@pytest.mark.parametrize(
    "command",
    [
        "",
        "rm -rf build",
        "cat a > b",
        "echo hi >> notes.txt",
        "jq . data.json > out.json",
        "ls &> listing.txt",
        "sed -i 's/a/b/' file.py",
        "sed -ni '1p' file.py",
        "find . -name '*.pyc' -delete",
        "find . -name '*.py' -exec rm {} \\;",
        "git commit -m 'x'",
        "git push origin main",
        "git checkout -b feature",
        "git stash",
        "git branch -D old",
        "git",
        "npm test",
        "python -m pytest",
        "make build",
        "ls | xargs rm",
        "cat a.txt | tee b.txt",
        "cd src && python setup.py install",
        "echo $(rm -rf /)",
        "echo `date`",
        "cat 'unclosed",
        "sort -o out.txt in.txt",
        "bash script.sh",
        "cat <<EOF > file.txt",
    ],
)
def test_commands_that_write_run_or_are_unknown(command: str) -> None:
    assert not is_read_only(command)


def test_ok_command_lines_of_a_summary() -> None:
    assert ok_command("- `ls -la` (ok)") == "ls -la"
    assert ok_command("- `git status` (ok, ran 3 times)") == "git status"
    assert ok_command("- `cat a.py` (ok): 120 lines") == "cat a.py"
    assert ok_command("- `echo `x`` (ok)") == "echo `x`"
    assert ok_command("- `npm test` (failed): exit 1") is None
    assert ok_command("- `ls` (unknown)") is None
    assert ok_command("- src/app.py") is None
    assert ok_command("ls (ok)") is None


def test_the_share_of_a_summary_spent_on_read_only_commands() -> None:
    text = "\n".join(
        [
            "## Commands",
            "- `ls -la` (ok)",
            "- `git status` (ok, ran 2 times)",
            "- `npm test` (ok)",
            "- `rm -rf dist` (ok)",
            "- `cat a.py` (failed): no such file",
        ]
    )

    def words(part: str) -> int:
        return len(part.split())

    spent, total = read_only_cost(text, words)
    assert spent == words("- `ls -la` (ok)") + words("- `git status` (ok, ran 2 times)")
    assert total == words(text)
    assert read_only_cost("", words) == (0, 0)
