"""The approval flow beside the peers, measured: each script in this directory runs against
the strict OpenAI-compatible server of the tests (``tests/apps/strict_server.py``: 400 for a
tool call left unanswered, answered twice or out of order) on 127.0.0.1, pauses in one process
and is approved (or rejected) in another, and the resumed conversation must be accepted.

    python bench/peers/compare.py            # every peer that is installed; a table on stdout

The model asks for ``read_file(notes.txt)``, ``write_file(a.txt, "A")`` (needs approval) and
``read_file(a.txt)`` in one reply. What the third call returns after the resume says what the
step's other calls did while the write waited: ``A`` means it ran after the approved write, in
model order; ``(missing)`` means it ran before the decision. Glue lines are the non-blank,
non-comment lines between ``# glue:start`` and ``# glue:end`` (the tool bodies and imports are
not counted).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from tests.apps.strict_server import Policy, StrictServer  # noqa: E402

PEERS = {
    "trio_harness": ("approve_trio_harness.py", "trio_harness"),
    "OpenAI Agents SDK": ("approve_openai_agents.py", "agents"),
    "pydantic-ai": ("approve_pydantic_ai.py", "pydantic_ai"),
}
POLICY = Policy(
    first=[
        ("read_file", '{"path": "notes.txt"}'),
        ("write_file", '{"path": "a.txt", "text": "A"}'),
        ("read_file", '{"path": "a.txt"}'),
    ],
    answer="Wrote a.txt.",
)


def glue_lines(path: Path) -> int:
    """Non-blank, non-comment lines between the glue markers."""
    inside, count = False, 0
    for line in path.read_text().splitlines():
        text = line.strip()
        if text == "# glue:start":
            inside = True
        elif text == "# glue:end":
            inside = False
        elif inside and text and not text.startswith("#"):
            count += 1
    return count


def run_peer(script: Path, verb: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as root, StrictServer(POLICY) as server:
        sandbox = Path(root) / "sandbox"
        sandbox.mkdir()
        (sandbox / "notes.txt").write_text("milk\n")
        state = str(Path(root) / "state")
        command = [sys.executable, str(script), server.url, state, str(sandbox)]
        first = subprocess.run([*command, "run"], capture_output=True, text=True, timeout=60)
        stop, _, ids = first.stdout.strip().rpartition("\n")[2].partition(" ")
        written_before = (sandbox / "a.txt").exists()
        call_id = ids.strip("[]' ").split("'")[0] if ids.strip("[]") else ""
        second = subprocess.run(
            [*command, verb, call_id], capture_output=True, text=True, timeout=60
        )
        tools = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]
        return {
            "paused": stop == "paused",
            "resumed": second.stdout.strip().rpartition("\n")[2].startswith("done"),
            "errors": (first.stderr + second.stderr).strip()[-300:],
            "rejections": len(server.rejections),
            "written_before_decision": written_before,
            "written": (sandbox / "a.txt").exists(),
            "last_read": tools[-1]["content"] if tools else None,
            "tool_messages": [m["content"][:60] for m in tools],
        }


def main() -> int:
    print(
        "| peer | glue lines | paused | resumed | 400s | read after the write returned | tool messages after a rejection |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, (file, module) in PEERS.items():
        script = HERE / file
        if importlib.util.find_spec(module) is None:
            print(f"| {name} | {glue_lines(script)} | not installed | | | | |")
            continue
        approved = run_peer(script, "approve")
        rejected = run_peer(script, "reject")
        print(
            f"| {name} | {glue_lines(script)} | {approved['paused']} | {approved['resumed']} | "
            f"{approved['rejections']}/{rejected['rejections']} | {approved['last_read']!r} | "
            f"{rejected['tool_messages']} |"
        )
        for label, outcome in (("approve", approved), ("reject", rejected)):
            if outcome["errors"]:
                print(f"<!-- {name} {label}: {outcome['errors']!r} -->")
    return 0


if __name__ == "__main__":
    sys.exit(main())
