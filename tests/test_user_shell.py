"""Shell commands the user ran themselves (Claude Code's and pi's `!`) in the facts: what they
printed says whether they failed, and a failure is an error until the command succeeds."""

from __future__ import annotations

from typing import Any

from compactcli import get_dialect
from compactcli.outcomes import content_error
from compactcli.summarizers.extractive import render_facts
from compactcli.summarizers.facts import Command, ErrorFact, extract_facts
from compactcli.summarizers.user_shell import USER_SHELL, UserShell, pi_shell, printed
from compactcli.transcript import Block, Message, Record, Transcript


def conversation(*turns: Any) -> tuple[Message, ...]:
    records = tuple(Record(raw={"role": role, "content": content}) for role, content in turns)
    return tuple(get_dialect("anthropic").messages(Transcript(records=records, format="anthropic")))


def ran(command: str, stdout: str = "", stderr: str = "") -> tuple[tuple[str, str], ...]:
    """The two user records Claude Code writes for a `!` command: its input, what it printed."""
    return (
        ("user", f"<bash-input>{command}</bash-input>"),
        ("user", f"<bash-stdout>{stdout}</bash-stdout><bash-stderr>{stderr}</bash-stderr>"),
    )


NOT_FOUND = "/usr/bin/bash: line 1: inputmodule-control: command not found"


def test_a_command_the_user_ran_failed_when_it_printed_an_error() -> None:
    facts = extract_facts(
        conversation(("user", "build it"), *ran("inputmodule-control --list", "", NOT_FOUND + "\n"))
    )
    assert facts.commands == (Command("inputmodule-control --list", "failed", NOT_FOUND),)
    assert facts.errors == (ErrorFact(NOT_FOUND, False, USER_SHELL, "inputmodule-control --list"),)
    assert facts.user_messages == ("build it",)  # what it printed is no message of the user's
    summary, _ = render_facts(facts, 2000, len)
    assert f"Unresolved: {NOT_FOUND} ({USER_SHELL}: inputmodule-control --list)" in summary


def test_the_same_command_run_again_without_an_error_resolves_it() -> None:
    facts = extract_facts(
        conversation(
            *ran("inputmodule-control --list", "", NOT_FOUND),
            ("assistant", "Add ~/.cargo/bin to your PATH."),
            *ran("inputmodule-control --list", "/dev/ttyACM0\n/dev/ttyACM1\n", ""),
        )
    )
    assert facts.commands == (Command("inputmodule-control --list", "ok", "", runs=2),)
    assert [(e.text, e.resolved) for e in facts.errors] == [(NOT_FOUND, True)]


def test_standard_error_without_an_error_line_is_no_failure() -> None:
    facts = extract_facts(
        conversation(*ran("git clone https://example.com/r.git", "", "Cloning into 'r'...\n"))
    )
    assert facts.commands == (Command("git clone https://example.com/r.git", "ok"),)
    assert facts.errors == ()


def test_what_it_printed_is_read_with_its_brackets_written_back() -> None:
    said = printed(
        "<bash-stdout></bash-stdout><bash-stderr>error: &quot;--package &lt;SPEC&gt;&quot; "
        "requires a SPEC format value</bash-stderr>"
    )
    assert said == UserShell("", True, 'error: "--package <SPEC>" requires a SPEC format value')


def test_sudo_and_the_shell_say_why_the_users_command_failed() -> None:
    said = printed(
        "<bash-stdout></bash-stdout><bash-stderr>Verification timed out\n"
        "sudo: a terminal is required to read the password; either use the -S option\n"
        "sudo: a password is required\n"
        "/usr/bin/bash: line 2: /etc/udev/rules.d/: Is a directory\n</bash-stderr>"
    )
    assert said is not None and said.failed
    assert said.detail.startswith("sudo: a terminal is required to read the password")
    assert "/etc/udev/rules.d/: Is a directory" in said.detail
    # sudo's warning about the host name comes before commands that succeed
    assert (
        content_error("sudo: unable to resolve host box: Name or service not known", shell=True)
        == ""
    )


def test_printed_output_with_no_command_before_it_is_left_out() -> None:
    facts = extract_facts(
        conversation(("user", f"<bash-stdout></bash-stdout><bash-stderr>{NOT_FOUND}</bash-stderr>"))
    )
    assert facts.commands == () and facts.errors == () and facts.user_messages == ()
    assert printed("<bash-input>ls</bash-input>") is None and printed("a message") is None


def test_a_failed_command_run_with_pis_bang_is_an_error_too() -> None:
    output = "Ran `make test`\n\nmake: *** No rule to make target 'test'.  Stop.\n\nExit code: 2"
    assert pi_shell(output).failed
    messages = (Message(0, "user", (Block("text", output, type="bashExecution"),)),)
    facts = extract_facts(messages)
    assert facts.commands[0].command == "make test" and facts.commands[0].outcome == "failed"
    assert [(e.tool, e.where, e.resolved) for e in facts.errors] == [
        (USER_SHELL, "make test", False)
    ]
