"""A log line is exactly ``js_json`` of the event's wire form plus its time (JavaScript's
JSON.stringify), whichever path the writer takes (the direct text writers and the C encoder when
that is exact, ``js_json`` otherwise)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import trio_harness as th
from trio_harness._json import NOT_JSON, snapshot_json_value
from trio_harness._log import journal
from trio_harness._log.events import SessionEvent
from trio_harness._log.journal import event_line
from trio_harness._values import UNSET
from trio_harness.lowlevel import js_json

TRICKY_CHARACTERS = st.sampled_from(
    ["\ud800", "\udfff", "\u2028", "\u0085", "\x00", "\x1f", "\x7f", '"', "\\", ".", "e", "é", "😀"]
)
STRINGS = st.text(alphabet=st.one_of(st.characters(), TRICKY_CHARACTERS), max_size=12)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**53 - 1, 2**53, 2**53 + 1, 10**15, 10**16, 10**21, -(10**21)]),
    st.floats(allow_nan=False, allow_infinity=False),
    STRINGS,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(STRINGS, inner, max_size=4)
    ),
    max_leaves=16,
)


def expected(wire: dict[str, Any]) -> bytes:
    return js_json(wire).encode("utf-8") + b"\n"


AT = 1796219599.0836601


def line_and_expected(event: SessionEvent) -> tuple[bytes, bytes]:
    """The line the log writes for ``event`` appended at ``AT`` (its data's numbers not judged
    yet, as in a log that keeps its events), and ``js_json`` of its wire form plus the time."""
    return event_line(event, None, repr(AT)), expected({**event.to_json(), "at": AT})


@given(VALUES)
def test_a_line_is_js_json(value: Any) -> None:
    line, exact = line_and_expected(SessionEvent(3, "note", value))
    assert line == exact


def test_the_paths_agree_on_the_cases_that_differ_in_python() -> None:
    for value in (1.0, -0.0, 1e21, 1e-7, 2**53 + 1, "\ud800", "a.b e", float("nan"), object()):
        line, exact = line_and_expected(SessionEvent(0, "note", {"v": value}))
        assert line == exact, value


def test_deep_values_take_the_iterative_path() -> None:
    deep: Any = "leaf"
    for _ in range(5_000):
        deep = [deep]
    line, exact = line_and_expected(SessionEvent(0, "note", deep))
    assert line == exact


def test_pool_events_take_the_direct_writers(monkeypatch: pytest.MonkeyPatch) -> None:
    session = th.Session()
    call = session.append("tool/call", th.log.ToolCallData(0, 0, "c1", "read", '{"path":"a.txt"}'))
    result = th.ToolExecutionResult(is_error=False, content=({"type": "text", "text": "done"},))
    answer = th.log.ToolResultData.from_result(0, 0, "c1", result)
    event = session.append("tool/result", answer, source_event_seqs=[call.seq])
    for logged in (call, event, SessionEvent(2, "note", [True, 7])):
        exact = expected({**logged.to_json(), "at": AT})
        with monkeypatch.context() as patch:
            patch.setattr(journal, "js_json", lambda value: pytest.fail(f"js_json({value!r})"))
            plain = None if logged.type == "note" else True
            assert event_line(logged, plain, repr(AT)) == exact


# What a log keeps: ``-0.0`` (which ``js_json`` writes as 0) is refused by ``append``.
LOSSLESS_VALUES = VALUES.filter(lambda value: snapshot_json_value(value) is not NOT_JSON)
CONTENT_ITEMS = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": STRINGS}),
    LOSSLESS_VALUES,
)
RESULTS = st.builds(
    th.log.ToolResultData,
    turn=st.integers(min_value=-(2**75), max_value=2**75),
    step=st.integers(min_value=0, max_value=10**22),
    message=st.builds(
        th.log.ToolResultMessage,
        role=STRINGS,
        source=st.builds(th.log.MessageSource, kind=STRINGS, call_id=STRINGS),
        content=st.lists(
            st.builds(
                th.log.ToolResultBlock,
                type=STRINGS,
                tool_call_id=STRINGS,
                content=st.lists(CONTENT_ITEMS, max_size=3).map(tuple),
                is_error=st.booleans(),
            ),
            max_size=3,
        ).map(tuple),
    ),
    error=st.none() | st.builds(th.ErrorInfo, name=STRINGS, code=STRINGS),
    meta=st.just(UNSET) | LOSSLESS_VALUES,
)
CALLS = st.builds(
    th.log.ToolCallData,
    turn=st.integers(min_value=-(2**75), max_value=2**75),
    step=st.integers(min_value=0, max_value=10**22),
    call_id=STRINGS,
    name=STRINGS,
    arguments=STRINGS,
)


@pytest.mark.parametrize("keep_events", [True, False])
@given(
    data=st.one_of(CALLS, RESULTS, LOSSLESS_VALUES),
    at=st.sampled_from([1796219599.0836601, 7, 1e21]),
)
def test_an_appended_line_is_js_json_of_the_wire_form_with_its_time(
    tmp_path_factory: pytest.TempPathFactory, keep_events: bool, data: Any, at: float
) -> None:
    # The writer's direct path (typed data written without its wire dicts, the time's text as
    # JavaScript writes it) gives the bytes ``js_json`` gives for the wire form plus "at".
    path = tmp_path_factory.mktemp("log") / "log.jsonl"
    log = th.log.DurableSession.open(path, fsync="never", keep_events=keep_events, clock=lambda: at)
    with log:
        log.append("note", 1)
        kind = type(data)
        event_type = {th.log.ToolCallData: "tool/call", th.log.ToolResultData: "tool/result"}
        sources = [0] if kind is th.log.ToolResultData else None
        event = log.append(event_type.get(kind, "custom/x"), data, source_event_seqs=sources)
    wire = {**event.to_json(), "at": at}
    assert path.read_bytes().split(b"\n")[1] + b"\n" == expected(wire)


@pytest.mark.parametrize("keep_events", [True, False])
def test_a_durable_log_writes_pool_events_and_plain_data_without_js_json(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, keep_events: bool
) -> None:
    monkeypatch.setattr(journal, "js_json", lambda value: pytest.fail(f"js_json({value!r})"))
    with th.log.DurableSession.open(tmp_path / "log.jsonl", keep_events=keep_events) as log:
        call = log.append("tool/call", th.log.ToolCallData(0, 0, "c1", "read", '{"p":"a"}'))
        result = th.ToolExecutionResult(is_error=False, content=({"type": "text", "text": "é"},))
        answer = th.log.ToolResultData.from_result(0, 0, "c1", result)
        log.append("tool/result", answer, source_event_seqs=[call.seq])
        log.append("turn/end", {"turn": 0, "stop": "done", "steps": 1, "x": [0.5, None]})
    monkeypatch.undo()
    lines = (tmp_path / "log.jsonl").read_bytes().splitlines(keepends=True)
    for event, at, line in zip(log.events, log.times, lines, strict=True):
        assert line == expected({**event.to_json(), "at": at})
