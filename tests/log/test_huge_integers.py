"""Integers past Python's 4,300-digit ``int``-to-``str`` limit in a log (issue 32): every reader
refuses the line with the usual message naming the field (never the digit-limit ``ValueError``
with a traceback), and salvage keeps the valid prefix."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import trio

import trio_harness as th

HUGE = "9" * 5000
NOTE = json.dumps({"seq": 0, "type": "note", "data": {}}, separators=(",", ":"))
CALL = '{"turn":0,"step":0,"callId":"c1","name":"read","arguments":"{}"}'
BEYOND = "is an integer beyond the double range, not a finite JSON number"

LINES = {
    "seq": (f'{{"seq":{HUGE},"type":"note","data":{{}}}}', f"seq {BEYOND}"),
    "sourceEventSeqs": (
        f'{{"seq":1,"type":"note","sourceEventSeqs":[{HUGE}],"data":{{}}}}',
        f"sourceEventSeqs[0] {BEYOND}",
    ),
    "step": (
        '{"seq":1,"type":"tool/call","data":' + CALL.replace('"step":0', '"step":' + HUGE) + "}",
        f"data.step {BEYOND}",
    ),
    "data": (f'{{"seq":1,"type":"note","data":{{"n":{HUGE}}}}}', f"data.n {BEYOND}"),
    "cited": (
        '{"seq":1,"type":"tool/result","sourceEventSeqs":[' + HUGE + '],"data":{"turn":0,'
        '"step":0,"message":{"role":"user","source":{"kind":"tool","callId":"c1"},"content":'
        '[{"type":"tool-result","toolCallId":"c1","content":[],"isError":false}]}}}',
        f"sourceEventSeqs[0] {BEYOND}",
    ),
}


@pytest.fixture(params=sorted(LINES))
def tampered(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str, str]:
    line, problem = LINES[request.param]
    text = f"{NOTE}\n{line}\n"
    path = tmp_path / "log.jsonl"
    path.write_text(text, encoding="utf-8")
    return path, text, problem


def test_every_reader_refuses_the_line_naming_the_field(tampered: tuple[Path, str, str]) -> None:
    path, text, problem = tampered
    prefix = f"{path}: line 2 (byte {len(NOTE) + 1}): "
    with pytest.raises(ValueError, match=r"^session line 2: ") as plain:
        th.Session.from_jsonl(text)
    assert str(plain.value) == f"session line 2: {problem}"
    for read in (
        th.log.load_session_log,
        lambda p: th.log.DurableSession.open(p).close(),
        lambda p: th.agent.open_agent_log(p).close(),
    ):
        with pytest.raises(th.log.SessionLogError) as durable:
            read(path)
        assert str(durable.value) == prefix + problem


def test_salvage_keeps_the_valid_prefix(tampered: tuple[Path, str, str]) -> None:
    path, text, problem = tampered
    loaded = th.log.load_session_log(path, salvage=True)
    assert [event.seq for event in loaded.events] == [0]
    assert loaded.salvaged is not None
    assert str(loaded.salvaged).endswith(problem)
    session = th.log.DurableSession.open(path, salvage=True)
    try:
        assert [event.type for event in session.events] == ["note"]
    finally:
        session.close()
    assert path.read_text(encoding="utf-8") == NOTE + "\n"
    assert Path(f"{path}.salvaged").read_text(encoding="utf-8") == text[len(NOTE) + 1 :]


async def test_open_agent_refuses_it_too(tampered: tuple[Path, str, str]) -> None:
    path, _, problem = tampered

    class Model:
        def __init__(self) -> None:
            self.messages: list[object] = []

        async def step(self, tools: object) -> th.ModelStep:
            raise AssertionError("never asked")

        def add_tool_results(self, results: object) -> None:
            pass

    with pytest.raises(th.log.SessionLogError, match=re.escape(problem)):
        async with th.open_agent(path, Model(), []):
            pass
    await trio.lowlevel.checkpoint()


@pytest.mark.parametrize(
    "field",
    [
        "seq",
        "cited",
        "sourceEventSeqs",
        "step",
        "data",
    ],
)
def test_check_log_reports_the_line_without_a_traceback(tmp_path: Path, field: str) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(f"{NOTE}\n{LINES[field][0]}\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "trio_harness", "check-log", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1, 2)


def test_append_names_a_huge_source_seq_by_its_size() -> None:
    session = th.Session()
    session.append("note", {})
    with pytest.raises(ValueError, match=r"source_event_seqs\[0\] is a 16610-bit integer, not"):
        session.append("note", {}, source_event_seqs=[10**5000])
