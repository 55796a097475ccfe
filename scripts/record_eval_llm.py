#!/usr/bin/env python3
"""Record the LLM answers `compactcli eval` replays, from a scripted local server.

    python scripts/record_eval_llm.py                 # record what is missing
    python scripts/record_eval_llm.py --fresh         # delete the recordings and record all

No language model is involved. The script starts an OpenAI-compatible chat-completions server on
127.0.0.1 that answers every summary request with the fixed-heading template filled in
mechanically from the request's FACTS section (the extractive facts the prompt gives as ground
truth): the constraints under "Constraints and preferences", the files under "Relevant files",
and so on. Then it runs `compactcli eval --strategies llm-replay --record --upstream URL`, which
stores each answer under the sha256 of its request in compactcli/evaluation/fixtures/recordings/.

So the committed recordings exercise the replay path and everything the LLM summarizer does
around the model (prompt, fitting, heading checks, facts appended), deterministically; the
`llm-replay` figures they give measure that pipeline with an ideal fact-copying answer, not a
real model's summary. To measure a real model, record against it instead:

    OPENAI_API_KEY=... compactcli eval --strategies llm-replay --record \\
        --upstream https://api.openai.com/v1 --llm-model openai/gpt-4o-mini \\
        --recordings recordings-gpt-4o-mini

(any OpenAI-compatible endpoint works: vLLM, Ollama's /v1, a LiteLLM proxy), then replay with
the same `--llm-model` and `--recordings`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RECORDINGS = os.path.join(ROOT, "compactcli", "evaluation", "fixtures", "recordings")

# the sections of the prompt's FACTS block (compactcli.summarizers.prompt.render_facts)
_SECTIONS = (
    "User constraints",
    "Files modified",
    "Files read",
    "Commands run",
    "Errors",
    "Decisions",
    "Pending user asks",
    "Open todo items",
)


def parse_facts(prompt: str) -> dict[str, list[str]]:
    """The FACTS block of a summary request, by section."""
    found = re.search(r"<facts>\n(.*?)\n</facts>", prompt, re.DOTALL)
    facts: dict[str, list[str]] = {"Goal": []}
    if not found:
        return facts
    section = ""
    for line in found.group(1).splitlines():
        if line.startswith("Goal (the user's first request): "):
            facts["Goal"].append(line.split(": ", 1)[1])
        elif line.rstrip(":") in _SECTIONS and line.endswith(":"):
            section = line.rstrip(":")
            facts.setdefault(section, [])
        elif line.startswith("- ") and section:
            facts[section].append(line[2:])
    return facts


def earlier(prompt: str) -> str:
    found = re.search(r"<earlier_summary>\n(.*?)\n</earlier_summary>", prompt, re.DOTALL)
    return found.group(1) if found else ""


def answer(prompt: str) -> str:
    """The fixed-heading summary, filled in from the request's facts."""
    facts = parse_facts(prompt)

    def items(*sections: str) -> list[str]:
        values = [f"- {v}" for s in sections for v in facts.get(s, [])]
        return values or ["- none"]

    errors = facts.get("Errors", [])
    blocked = [f"- {e}" for e in errors if "(unresolved" in e] or ["- none"]
    done = [f"- {c}" for c in facts.get("Commands run", []) if c.endswith("-> ok")] or ["- none"]
    lines = ["## Goal", *(facts["Goal"] or ["- none"])]
    lines += ["", "## Constraints and preferences", *items("User constraints")]
    lines += ["", "## Progress", "### Done", *done, "### In progress"]
    lines += items("Open todo items")
    lines += ["### Blocked", *blocked]
    lines += ["", "## Key decisions", *items("Decisions")]
    lines += ["", "## Resolved questions", "- none"]
    lines += ["", "## Pending user asks", *items("Pending user asks", "Open todo items")]
    lines += ["", "## Relevant files", *items("Files modified", "Files read")]
    lines += ["", "## Remaining work", *items("Open todo items")]
    lines += ["", "## Critical context", *items("Errors")]
    previous = earlier(prompt)
    if previous:
        lines += ["", "Carried over from the earlier summary:", previous]
    return "\n".join(lines) + "\n"


class Scripted(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        text = answer(prompt)
        reply = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 1_767_225_600,
            "model": body.get("model", "compactcli-scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": len(prompt) // 4,
                "completion_tokens": len(text) // 4,
                "total_tokens": len(prompt) // 4 + len(text) // 4,
            },
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="delete the recordings first")
    parser.add_argument("--recordings", default=RECORDINGS)
    args, rest = parser.parse_known_args()
    if args.fresh and os.path.isdir(args.recordings):
        shutil.rmtree(args.recordings)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    command = [
        sys.executable,
        "-m",
        "compactcli",
        "eval",
        "--strategies",
        "llm-replay",
        "--record",
        "--upstream",
        url,
        "--recordings",
        args.recordings,
        *rest,
    ]
    result = subprocess.run(command, cwd=ROOT, check=False, stdout=subprocess.DEVNULL)
    server.shutdown()
    return 0 if result.returncode in (0, 1) else result.returncode


if __name__ == "__main__":
    sys.exit(main())
