"""The one wire reader: ``Session.from_jsonl`` and ``load_session_log`` accept and refuse alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import trio_harness as th

NOTE = {"seq": 0, "type": "note", "data": {}}
CALL = {"turn": 0, "step": 1, "callId": "c1", "name": "read", "arguments": "{}"}


def _lines(*events: dict[str, Any] | str) -> str:
    return "".join(
        (event if isinstance(event, str) else json.dumps(event, separators=(",", ":"))) + "\n"
        for event in events
    )


def _both_refuse(tmp_path: Path, text: str) -> tuple[str, str | None]:
    """The problem both readers report for line 2 of ``text`` (the same words), and its field."""
    with pytest.raises(ValueError, match=r"^session line 2: ") as plain:
        th.Session.from_jsonl(text)
    path = tmp_path / "log.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(th.log.SessionLogError) as durable:
        th.log.load_session_log(path)
    offset = text.index("\n") + 1
    prefix = f"{path}: line 2 (byte {offset}): "
    assert str(durable.value).startswith(prefix)
    problem = str(durable.value).removeprefix(prefix)
    assert str(plain.value) == f"session line 2: {problem}"
    assert (durable.value.line, durable.value.offset) == (2, offset)
    return problem, durable.value.field


@pytest.mark.parametrize(
    ("event", "problem", "field"),
    [
        # An unknown field was silently dropped by the durable log's own reader.
        (
            {"seq": 1, "type": "tool/call", "data": {**CALL, "extra": 1}},
            'data has an unknown field "extra"',
            "data",
        ),
        (
            {"seq": 1, "type": "tool/call", "data": {**CALL, "turn": True}},
            "data.turn must be an integer, got boolean",
            "data.turn",
        ),
        (
            {"seq": 1, "type": "tool/call", "data": {**CALL, "step": 10**400}},
            "data.step is an integer beyond the double range, not a finite JSON number",
            "data.step",
        ),
        ({"seq": 1, "type": "x", "data": {}, "id": 1}, 'the event has an unknown field "id"', None),
        # Numbers ``append`` would refuse were read by the durable log's reader as they came.
        (
            '{"seq":1,"type":"note","data":{"x":[-0]}}',
            "data.x[0] is -0, which JSON cannot keep (it is written as 0)",
            "data.x[0]",
        ),
        (
            '{"seq":1,"type":"note","data":{"x":1e400}}',
            "data.x is Infinity, not a finite JSON number",
            "data.x",
        ),
        (
            '{"seq":1,"type":"note","data":{},"at":-1e999}',
            "at is -Infinity, not a finite JSON number",
            "at",
        ),
        (
            {"seq": 1, "type": "x", "sourceEventSeqs": [1], "data": {}},
            "sourceEventSeqs[0] is 1, not the seq of an earlier event",
            "sourceEventSeqs[0]",
        ),
        ({"seq": 2, "type": "x", "data": {}}, "seq is 2, expected 1", "seq"),
        ("[1]", "an event must be an object, got array", None),
        ('{"seq":1,"type":', "not JSON", None),
    ],
)
def test_both_readers_refuse_a_line_with_the_same_words(
    tmp_path: Path, event: dict[str, Any] | str, problem: str, field: str | None
) -> None:
    assert _both_refuse(tmp_path, _lines(NOTE, event)) == (problem, field)


def test_what_the_log_writes_both_readers_read_back_the_same(tmp_path: Path) -> None:
    # Content blocks are any lossless JSON the tool rendered; keys keep the line's order (the
    # durable reader used to put array-index keys first, from_jsonl refused a string block).
    result = th.ToolExecutionResult(is_error=False, content=("plain", {"b": 1, "1": [2]}))
    path = tmp_path / "log.jsonl"
    with th.log.DurableSession.open(path) as session:
        session.append("note", {"b": 1, "1": 2, "nested": {"z": 0, "0": 1}})
        call = session.append("tool/call", th.log.ToolCallData(0, 0, "c", "t", "{}"))
        data = th.log.ToolResultData.from_result(0, 0, "c", result)
        session.append("tool/result", data, source_event_seqs=[call.seq])
    loaded = th.log.load_session_log(path)
    plain = th.Session.from_jsonl(path.read_text(encoding="utf-8"))
    assert list(loaded.events) == plain.events == session.events
    assert list(loaded.events[0].data) == ["b", "1", "nested"]
    assert list(loaded.events[0].data["nested"]) == ["z", "0"]
    assert plain.to_jsonl() == session.to_jsonl()


def test_a_source_must_be_an_earlier_event_in_memory_too() -> None:
    # The reader refuses a result citing itself or a later event, so append refuses it first:
    # whatever ``to_jsonl`` writes, ``from_jsonl`` and ``load_session_log`` read.
    session = th.Session()
    with pytest.raises(ValueError, match=r"source_event_seqs\[0\] is 0, not the seq of an earlier"):
        session.append("note", {}, source_event_seqs=[0])
    assert session.events == []
