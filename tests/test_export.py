"""`compactcli export`: every fixture and corpus transcript renders as Markdown and as one HTML
page; prompts, calls, summaries, boundaries and cleared outputs show as they should; secrets are
redacted; and a page of each format, each with images or non-ASCII text and the largest real
session are opened in a real headless Chromium, which takes a screenshot and gives back the
document it built (skipped where Chromium is absent, never under CI)."""

from __future__ import annotations

import html
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from compactcli import get_dialect, read_transcript
from compactcli.formats import session_title
from compactcli.redact import redact
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES, representative
from tests.test_secrets_end_to_end import leaks, planted

FILES = sorted((FIXTURES / "transcripts").glob("*.jsonl")) + sorted(CORPUS.glob("*.jsonl"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _prompts(path: Path) -> list[str]:
    transcript = read_transcript(str(path))
    return [
        " ".join(redact(b.text).split())
        for m in get_dialect(transcript.format).messages(transcript)
        if m.role == "user" and not m.summary
        for b in m.blocks
        if b.kind == "text" and b.text.strip()
    ]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_transcript_renders_with_its_prompts(path: Path) -> None:
    markdown = run("export", str(path))
    assert markdown.exit_code == 0, markdown.stderr
    page = run("export", str(path), "--html")
    assert page.exit_code == 0, page.stderr
    assert page.stdout.startswith("<!doctype html>") and page.stdout.endswith("</html>\n")
    assert "<script" not in page.stdout
    flat = " ".join(markdown.stdout.split())
    for prompt in _prompts(path)[:20]:
        assert prompt[:200] in flat
    _check_page(path, page.stdout)


def _check_page(path: Path, text: str) -> None:
    """The page (or the DOM a browser built from it) holds the session's title as its heading,
    the file's path, the first word of the first prompts and, after a compaction, its mark."""
    heading = session_title(str(path)) or str(path)  # a Claude Code session's title
    shown = html.unescape(text)  # a browser's DOM and the page escape quotes differently
    assert f"<h1>{heading}</h1>" in shown
    assert str(path) in shown
    for prompt in _prompts(path)[:3]:
        assert prompt.split()[0] in shown
    transcript = read_transcript(str(path))
    if get_dialect(transcript.format).compactions(transcript):
        assert "Compacted here" in shown


def test_calls_fold_their_results_and_compactions_are_marked(tmp_path: Path) -> None:
    path = FIXTURES / "transcripts" / "claude-code-compacted.jsonl"
    text = run("export", str(path)).stdout
    assert "<details><summary>Read: /home/dana/src/almanac/src/almanac/cli.py</summary>" in text
    assert "**Compacted here** (by the agent)" in text
    assert "## Summary of the earlier conversation" in text
    assert text.count("import argparse") == 1  # the result under its call, not again
    summary = run("export", str(path), "--summary-only").stdout
    assert summary.startswith(f"# {path}: summary\n\n")
    assert "1. Primary Request and Intent:" in summary and "## User" not in summary


def test_cleared_outputs_are_shown_as_cleared(tmp_path: Path) -> None:
    source = FIXTURES / "transcripts" / "claude-code-session.jsonl"
    pruned = tmp_path / "pruned.jsonl"
    assert (
        run("prune", str(source), "--keep-recent", "0", "--min-chars", "50", "-o", str(pruned))
    ).exit_code == 0
    text = run("export", str(pruned)).stdout
    assert "(output cleared)" in text and "[Old tool result cleared:" in text
    page = run("export", str(pruned), "--html").stdout
    assert '<pre class="cleared">[Old tool result cleared:' in page


@pytest.mark.parametrize("fmt", ["claude-code", "codex", "pi", "openai", "anthropic"])
def test_secrets_are_redacted_unless_asked(fmt: str, tmp_path: Path) -> None:
    source = tmp_path / f"{fmt}.jsonl"
    source.write_bytes(planted(fmt))
    for args in ([], ["--html"]):
        done = run("export", str(source), *args)
        assert done.exit_code == 0, done.stderr
        assert leaks(done.stdout) == []
    assert leaks(run("export", str(source), "--no-redact").stdout)


def test_output_file_is_written_whole(tmp_path: Path) -> None:
    path = FIXTURES / "transcripts" / "pi-compacted.jsonl"
    out = tmp_path / "page.html"
    done = run("export", str(path), "--html", "-o", str(out))
    assert done.exit_code == 0 and done.stdout == ""
    assert out.read_text() == run("export", str(path), "--html").stdout


def _chromium(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={home}",
            # the same page drawn in one process, not a browser, zygote, GPU and renderer
            # process each (a third less CPU per page; the same screenshot, byte for byte)
            "--single-process", "--no-zygote", *args,
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def _browser_files() -> list[Path]:
    """The pages opened in the browser: the representative transcripts (one of each format,
    each with images or non-ASCII text) and the largest real session; the static checks above
    hold for every page."""
    real = [p for p in FILES if p.parent == CORPUS]
    largest = [max(real, key=lambda p: p.stat().st_size)] if real else []
    return sorted({*representative(FILES), *largest})


@pytest.mark.parametrize("path", _browser_files(), ids=lambda p: p.name)
def test_the_page_renders_in_a_real_browser(path: Path, tmp_path: Path) -> None:
    """A page opened in headless Chromium: a screenshot is drawn, and the document it built
    holds the title, the first prompts and, after a compaction, its mark and summary."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is not installed: CI must check the page in a real browser")
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    page = tmp_path / "page.html"
    assert run("export", str(path), "--html", "-o", str(page)).exit_code == 0
    shot = tmp_path / "shot.png"
    done = _chromium(
        f"--screenshot={shot}", "--window-size=1000,1400", "--dump-dom", page.as_uri(),
        home=tmp_path / "a",
    )  # fmt: skip
    assert shot.is_file(), done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000  # a page drawn, not blank
    _check_page(path, done.stdout)
