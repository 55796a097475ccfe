"""The tool calls read out of a Codex code-mode script (`exec`, JavaScript calling `tools.*`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compactcli.code_mode import ScriptCall, is_script, patch_text, script_calls

PATCH = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** End Patch\n"


@pytest.mark.parametrize(
    ("script", "calls"),
    [
        (  # as Codex writes it: a JSON object
            'const r = await tools.exec_command({"cmd":"git status","workdir":"/repo",'
            '"yield_time_ms":10000});\ntext(r.output);\n',
            [("exec_command", {"cmd": "git status", "workdir": "/repo", "yield_time_ms": 10000})],
        ),
        (  # bare keys, single quotes and their escapes, a trailing comma, a comment
            "text(await tools.exec_command({ cmd: 'echo \"hi\" it\\'s', /* why */ tty: false, }));",
            [("exec_command", {"cmd": 'echo "hi" it\'s', "tty": False})],
        ),
        (  # two calls; the second in a template literal with no ${}
            'const a = await tools.exec_command({cmd:"pwd"});\n'
            "text(await tools.exec_command({cmd: `ls\n-la`, limit: 1.5e3, n: -2, x: null}));",
            [
                ("exec_command", {"cmd": "pwd"}),
                ("exec_command", {"cmd": "ls\n-la", "limit": 1500.0, "n": -2, "x": None}),
            ],
        ),
        (  # a patch as a JSON string literal, with \u escapes
            'await tools.apply_patch("*** Begin Patch\\n*** Add File: caf\\u00e9.txt\\n+\\x41\\n'
            '*** End Patch");',
            [("apply_patch", "*** Begin Patch\n*** Add File: café.txt\n+A\n*** End Patch")],
        ),
        (  # arrays and nested objects
            'tools.view_image({paths: ["a.png", {"b": [1, true]}]})',
            [("view_image", {"paths": ["a.png", {"b": [1, True]}]})],
        ),
        # surrogate pairs make one character; `$` without `{` is text in a template
        (
            'tools.exec_command({cmd: "echo \\ud83d\\ude00 \\u{1F600}"})',
            [("exec_command", {"cmd": "echo 😀 😀"})],
        ),
        (
            "tools.x({note: `costs $5`, n: 12345678901234567890})",
            [("x", {"note": "costs $5", "n": 12345678901234567890})],
        ),
        ('text("no tools here")', []),
    ],
)
def test_script_calls(script: str, calls: list[tuple[str, Any]]) -> None:
    assert script_calls(script) == tuple(ScriptCall(name, value) for name, value in calls)


@pytest.mark.parametrize(
    "script",
    [
        # a variable, an interpolated template, an expression, shorthand keys
        "const p = 'x'; tools.run(p)",
        "tools.run({cmd: `cat ${file}`})",
        "tools.run(`costs $5, not ${price}`)",
        'tools.run({cmd: "a" + b})',
        "tools.run({cmd})",
        # broken strings and escapes: unterminated, short, a lone surrogate, past Unicode
        'tools.run("unterminated',
        'tools.run("bad \\u12")',
        'tools.run({cmd: "echo \\ud83d"})',
        'tools.run({cmd: "echo \\ud83d\\u0041"})',
        'tools.run({cmd: "\\u{110000}"})',
        'tools.run({cmd: "\\u{12"})',
        'tools.run({cmd: "\\x4"})',
        # too long a number to convert; nested deeper than any argument (no recursion error)
        "tools.run(" + "1" * 101 + ")",
        "tools.run(" + "[" * 5000 + "]" * 5000 + ")",
    ],
)
def test_arguments_that_are_no_literal_are_not_read(script: str) -> None:
    assert script_calls(script) == (ScriptCall("run", None),)


def test_arguments_nested_64_deep_are_read() -> None:
    value: Any = []
    for _ in range(63):
        value = [value]
    assert script_calls(f"tools.x({json.dumps(value)})") == (ScriptCall("x", value),)
    assert script_calls(f"tools.x([{json.dumps(value)}])") == (ScriptCall("x", None),)


def test_is_script_needs_an_exec_tool_with_a_script_that_calls_tools() -> None:
    script = 'await tools.exec_command({cmd: "ls"})'
    assert is_script("exec", script)
    assert is_script("functions__exec", script)
    assert not is_script("exec_command", script)
    assert not is_script("exec", {"cmd": "ls"})
    assert not is_script("exec", 'text("tools are nice")')
    assert not is_script(None, script)


def test_patch_text_decodes_the_escapes_of_a_string_literal() -> None:
    script = "const patch = " + '"' + PATCH.replace("\n", "\\n") + '";\ntools.apply_patch(patch)'
    assert "*** Update File: src/a.ts\n@@\n" in patch_text(script)
    assert patch_text("a\\tb \\'c\\' \\\"d\\\"") == "a\tb 'c' \"d\""


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**99), max_value=10**99)  # the reader converts up to 100 digits
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


@given(value=_JSON, ascii_only=st.booleans(), spaced=st.booleans())
def test_any_json_argument_reads_back_as_itself(value: Any, ascii_only: bool, spaced: bool) -> None:
    literal = json.dumps(value, ensure_ascii=ascii_only, indent=1 if spaced else None)
    script = f"const r = await tools.run({literal});\ntext(r);"
    assert script_calls(script) == (ScriptCall("run", value),)
