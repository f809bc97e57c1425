"""A log line is exactly ``js_json`` of the event (JavaScript's JSON.stringify), whichever path
the writer takes (the C encoder when that is exact, ``js_json`` otherwise)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import trio_harness as th
from trio_harness._log import journal
from trio_harness._log.journal import encode_line
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


@given(VALUES)
def test_a_line_is_js_json(value: Any) -> None:
    wire = {"seq": 3, "type": "note", "data": value}
    assert encode_line(wire) == expected(wire)


def test_the_paths_agree_on_the_cases_that_differ_in_python() -> None:
    for value in (1.0, -0.0, 1e21, 1e-7, 2**53 + 1, "\ud800", "a.b e", float("nan"), object()):
        wire = {"seq": 0, "type": "note", "data": {"v": value}}
        assert encode_line(wire) == expected(wire), value


def test_deep_values_take_the_iterative_path() -> None:
    deep: Any = "leaf"
    for _ in range(5_000):
        deep = [deep]
    wire = {"seq": 0, "type": "note", "data": deep}
    assert encode_line(wire) == expected(wire)


def test_pool_events_take_the_c_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(journal, "js_json", lambda value: calls.append(value) or "")
    session = th.Session()
    call = session.append("tool/call", th.log.ToolCallData(0, 0, "c1", "read", '{"path":"a.txt"}'))
    result = th.ToolExecutionResult(is_error=False, content=({"type": "text", "text": "done"},))
    answer = th.log.ToolResultData.from_result(0, 0, "c1", result)
    event = session.append("tool/result", answer, source_event_seqs=[call.seq])
    for wire in (call.to_json(), event.to_json(), {"seq": 2, "type": "note", "data": [True, 7]}):
        monkeypatch.undo()
        exact = expected(wire)
        monkeypatch.setattr(journal, "js_json", lambda value: calls.append(value) or "")
        assert encode_line(wire) == exact
    assert calls == []
