"""The session log and its JSON Lines wire form."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trio_harness import (
    ErrorInfo,
    HarnessError,
    Session,
    SessionEvent,
    ToolCallData,
    ToolError,
    ToolExecutionResult,
    ToolResultData,
    aborted_before_dispatch_result,
    error_result,
)


def pair(session: Session, call_id: str, result: ToolExecutionResult) -> None:
    call = session.append("tool/call", ToolCallData(0, 1, call_id, "read", '{"path":"a"}'))
    session.append(
        "tool/result",
        ToolResultData.from_result(0, 1, call_id, result),
        source_event_seqs=[call.seq],
    )


def test_wire_form_matches_the_api_contract_exactly() -> None:
    session = Session()
    pair(session, "c1", aborted_before_dispatch_result())
    lines = session.to_jsonl().splitlines()
    assert lines[0] == (
        '{"seq":0,"type":"tool/call","data":{"turn":0,"step":1,"callId":"c1","name":"read",'
        '"arguments":"{\\"path\\":\\"a\\"}"}}'
    )
    assert lines[1] == (
        '{"seq":1,"type":"tool/result","sourceEventSeqs":[0],"data":{"turn":0,"step":1,'
        '"message":{"role":"user","source":{"kind":"tool","callId":"c1"},"content":[{"type":'
        '"tool-result","toolCallId":"c1","content":[{"type":"text","text":"Error: tool call '
        'aborted before dispatch"}],"isError":true}]},"error":{"name":"AbortError","code":'
        '"ABORTED_BEFORE_DISPATCH"}}}'
    )


def test_key_order_of_to_json() -> None:
    session = Session()
    pair(session, "c1", error_result(HarnessError("exploded", "BOOM")))
    wire = session.events[1].to_json()
    assert list(wire) == ["seq", "type", "sourceEventSeqs", "data"]
    assert list(wire["data"]) == ["turn", "step", "message", "error"]
    assert list(wire["data"]["message"]) == ["role", "source", "content"]
    assert list(wire["data"]["message"]["content"][0]) == [
        "type",
        "toolCallId",
        "content",
        "isError",
    ]
    assert list(session.events[0].to_json()) == ["seq", "type", "data"]


def test_error_only_with_info_and_meta_only_when_present() -> None:
    session = Session()
    pair(session, "c1", ToolExecutionResult(is_error=True, content=(), error=ToolError("denied")))
    pair(session, "c2", ToolExecutionResult(is_error=False, content=(), value=1, meta=None))
    pair(session, "c3", ToolExecutionResult(is_error=False, content=(), value=1))
    denied, with_null_meta, plain = (session.events[i].to_json()["data"] for i in (1, 3, 5))
    assert "error" not in denied
    assert "meta" not in denied
    assert with_null_meta["meta"] is None  # a present null meta is kept
    assert list(plain) == ["turn", "step", "message"]


def test_seqs_are_dense_and_results_cite_their_call() -> None:
    session = Session()
    pair(session, "c1", aborted_before_dispatch_result())
    pair(session, "c2", aborted_before_dispatch_result())
    assert [e.seq for e in session.events] == [0, 1, 2, 3]
    assert [e.source_event_seqs for e in session.events] == [None, (0,), None, (2,)]


def test_other_event_types_carry_plain_json() -> None:
    session = Session()
    event = session.append("user/message", {"text": "hi", "n": [1, 2.5]})
    assert event.to_json() == {
        "seq": 0,
        "type": "user/message",
        "data": {"text": "hi", "n": [1, 2.5]},
    }


def test_events_are_frozen_values() -> None:
    event = SessionEvent(0, "x", {})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        event.seq = 1  # type: ignore[misc]


def test_round_trip() -> None:
    session = Session()
    pair(session, "c1", aborted_before_dispatch_result())
    pair(session, "c2", error_result(ValueError("plain")))
    pair(
        session,
        "c3",
        ToolExecutionResult(
            is_error=False,
            content=({"type": "text", "text": "é\u2028"},),
            value="v",
            meta={"presentation": "diff-card", "n": [1, {"a": None}]},
        ),
    )
    session.append("user/message", {"text": "later"})
    restored = Session.from_jsonl(session.to_jsonl())
    assert restored.events == session.events
    assert restored.to_jsonl() == session.to_jsonl()
    assert isinstance(restored.events[1].data, ToolResultData)
    assert restored.events[1].data.error == ErrorInfo("AbortError", "ABORTED_BEFORE_DISPATCH")


def test_deep_content_renders_without_recursion() -> None:
    deep: Any = "leaf"
    for _ in range(5000):
        deep = [deep]
    session = Session()
    pair(
        session,
        "c1",
        ToolExecutionResult(is_error=False, content=({"type": "json", "v": deep},), value=1),
    )
    assert session.to_jsonl().count("[") >= 5000


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nope", "session line 1"),
        ('{"seq": 1, "type": "x", "data": {}}', "seq 1, expected 0"),
        ('{"seq": 0, "type": "tool/call", "data": {"turn": 0}}', "session line 1"),
        ("[1]", "session line 1"),
    ],
)
def test_from_jsonl_rejects_malformed_lines(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Session.from_jsonl(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=10,
)
results = st.builds(
    lambda is_error, text, info, meta: ToolExecutionResult(
        is_error=is_error,
        content=({"type": "text", "text": text},),
        error=ToolError(text, info) if is_error else None,
        value="x" if not is_error else ToolExecutionResult.__attrs_attrs__.value.default,
        **({} if meta is None else {"meta": meta[0]}),
    ),
    st.booleans(),
    st.text(max_size=8),
    st.none() | st.builds(ErrorInfo, st.text(max_size=4), st.text(max_size=4)),
    st.none() | st.tuples(json_values),
)


@given(st.lists(st.tuples(st.text(max_size=4), results), max_size=6), st.integers(0, 3))
def test_round_trip_property(calls: list[tuple[str, ToolExecutionResult]], turn: int) -> None:
    session = Session()
    for call_id, result in calls:
        pair(session, call_id, result)
    text = session.to_jsonl()
    assert Session.from_jsonl(text).events == session.events
    for line in text.split("\n")[:-1]:
        json.loads(line)


def test_from_jsonl_reads_back_content_nested_deeper_than_json_recursion() -> None:
    deep: list[object] = []
    node = deep
    for _ in range(5_000):
        child: list[object] = []
        node.append(child)
        node = child
    session = Session()
    session.append("note", {"deep": deep})
    text = session.to_jsonl()
    assert Session.from_jsonl(text).to_jsonl() == text


def test_from_jsonl_names_the_bad_line() -> None:
    with pytest.raises(ValueError, match="session line 2"):
        Session.from_jsonl('{"seq":0,"type":"note","data":{}}\n{"seq":1,"type":"note","data":[[\n')
