"""The session log and its JSON Lines wire form."""

from __future__ import annotations

import json
import math
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
    ToolError,
    ToolExecutionResult,
    aborted_before_dispatch_result,
    error_result,
)
from trio_harness._log.session import _TYPED_OK, _typed_problem
from trio_harness.log import ToolCallData, ToolResultData


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
        ('{"seq": 1, "type": "x", "data": {}}', "seq is 1, expected 0"),
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


# ---------------------------------------------------------------------------------------------
# The log accepts only what it can keep (issue 8, item 16)
# ---------------------------------------------------------------------------------------------


class _DictSubclass(dict[str, Any]):
    pass


class _StrSubclass(str):
    pass


def _cycle() -> dict[str, Any]:
    inner: list[Any] = []
    value = {"a": [inner]}
    inner.append(value)
    return value


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        ({"x": math.nan}, ValueError, "data.x is NaN, not a finite JSON number"),
        ({"x": [1, math.inf]}, ValueError, r"data.x\[1\] is Infinity, not a finite JSON number"),
        (-0.0, ValueError, "data is -0.0, which JSON cannot keep"),
        ({"deep": {"z": -0.0}}, ValueError, "data.deep.z is -0.0, which JSON cannot keep"),
        ({"big": 10**400}, ValueError, "data.big is an int beyond the double range"),
        ({"s": {1, 2}}, TypeError, "data.s is not JSON: type set$"),
        ({"o": object()}, TypeError, "data.o is not JSON: type object$"),
        ({"t": (1, 2)}, TypeError, r"data.t is not JSON: type tuple \(use a list\)$"),
        ({"x": [{1: "a"}]}, TypeError, r"data.x\[0\] has the key 1 \(int\); JSON keys are str"),
        (
            {"d": _DictSubclass()},
            TypeError,
            r"data.d is not JSON: type _DictSubclass \(only an exact dict is\)$",
        ),
        (
            {"n": _StrSubclass("v")},
            TypeError,
            r"data.n is not JSON: type _StrSubclass \(only an exact str is\)$",
        ),
        ({"a b": {"c": math.nan}}, ValueError, r'data\["a b"\].c is NaN'),
        (_cycle(), ValueError, r"data.a\[0\]\[0\] contains itself \(a cycle\)"),
        (ErrorInfo("n", "c"), TypeError, "data is not JSON: type ErrorInfo$"),
    ],
)
def test_append_rejects_custom_data_that_json_cannot_keep(
    data: object, error: type[Exception], message: str
) -> None:
    session = Session()
    session.append("note", {"ok": [1, 2.5, None, "x", {"y": True}]})
    with pytest.raises(error, match="^Session.append: " + message):
        session.append("note", data)
    assert len(session.events) == 1  # nothing was logged
    assert Session.from_jsonl(session.to_jsonl()).events == session.events


def test_append_checks_the_event_type_and_its_sources() -> None:
    session = Session()
    with pytest.raises(TypeError, match=r"^Session.append: type must be a str, got int$"):
        session.append(1, {})  # type: ignore[arg-type]
    with pytest.raises(
        ValueError,
        match=r"^Session.append: source_event_seqs\[0\] is 0, not the seq of an earlier event "
        r"\(none yet\)$",
    ):
        session.append("note", {}, source_event_seqs=[0])
    session.append("note", {})
    with pytest.raises(
        TypeError, match=r"^Session.append: source_event_seqs\[1\] must be an int, got bool$"
    ):
        session.append("note", {}, source_event_seqs=[0, True])
    with pytest.raises(
        TypeError, match=r"^Session.append: source_event_seqs\[0\] must be an int, got str$"
    ):
        session.append("note", {}, source_event_seqs="0")
    for bad in (1, -1):
        with pytest.raises(
            ValueError,
            match=rf"^Session.append: source_event_seqs\[1\] is {bad}, not the seq of an earlier "
            r"event \(0 to 0\)$",
        ):
            session.append("note", {}, source_event_seqs=[0, bad])
    assert len(session.events) == 1
    assert session.append("note", {}, source_event_seqs=[0]).source_event_seqs == (0,)


CALL = ToolCallData(0, 1, "c1", "read", "{}")
RESULT = ToolResultData.from_result(0, 1, "c1", aborted_before_dispatch_result())


@pytest.mark.parametrize(
    ("kind", "data", "message"),
    [
        (
            "tool/call",
            ToolCallData(0, True, "c1", "read", "{}"),
            "data.step must be an int, got bool",
        ),  # type: ignore[arg-type]
        (
            "tool/call",
            ToolCallData("0", 1, "c1", "read", "{}"),
            "data.turn must be an int, got str",
        ),  # type: ignore[arg-type]
        ("tool/call", ToolCallData(0, 1, 7, "read", "{}"), "data.callId must be a str, got int"),  # type: ignore[arg-type]
        (
            "tool/call",
            ToolCallData(0, 1, "c1", None, "{}"),
            "data.name must be a str, got NoneType",
        ),  # type: ignore[arg-type]
        (
            "tool/call",
            ToolCallData(0, 1, "c1", "read", {}),
            "data.arguments must be a str, got dict",
        ),  # type: ignore[arg-type]
        ("tool/call", {"turn": 0}, "tool/call data must be a ToolCallData, got dict"),
        ("tool/result", CALL, "tool/result data must be a ToolResultData, got ToolCallData"),
        ("note", CALL, "a ToolCallData is the data of tool/call events only, not of 'note'"),
        ("note", RESULT, "a ToolResultData is the data of tool/result events only, not of 'note'"),
        (
            "tool/result",
            ToolResultData.from_result(
                0,
                1,
                "c1",
                ToolExecutionResult(is_error=False, content=({"v": math.nan},), value=1),
            ),
            r"data.message.content\[0\].content\[0\].v is NaN",
        ),
        (
            "tool/result",
            ToolResultData.from_result(
                0, 1, "c1", ToolExecutionResult(is_error=False, content=(), value=1, meta={1: 2})
            ),
            r"data.meta has the key 1 \(int\)",
        ),
        (
            "tool/result",
            attrs.evolve(RESULT, error=ErrorInfo("AbortError", 3)),  # type: ignore[arg-type]
            "data.error.code must be a str, got int",
        ),
        (
            "tool/result",
            attrs.evolve(RESULT, turn=False),
            "data.turn must be an int, got bool",
        ),
    ],
)
def test_append_rejects_typed_data_that_would_come_back_different(
    kind: str, data: object, message: str
) -> None:
    session = Session()
    error = ValueError if " is NaN" in message else TypeError
    with pytest.raises(error, match="^Session.append: " + message):
        session.append(kind, data)
    assert session.events == []


def _line(event: dict[str, Any]) -> str:
    return json.dumps(event, separators=(",", ":"))


GOOD_CALL = {"turn": 0, "step": 1, "callId": "c1", "name": "read", "arguments": "{}"}
GOOD_RESULT = json.loads(
    '{"turn":0,"step":1,"message":{"role":"user","source":{"kind":"tool","callId":"c1"},'
    '"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"x"}],'
    '"isError":true}]},"error":{"name":"AbortError","code":"ABORTED"}}'
)


def _result_with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(GOOD_RESULT))
    node = data
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (
            {"seq": 1, "type": "tool/call", "data": {**GOOD_CALL, "turn": "0"}},
            "data.turn must be an integer, got string",
        ),
        (
            {"seq": 1, "type": "tool/call", "data": {**GOOD_CALL, "step": 1.5}},
            "data.step must be an integer, got number",
        ),
        (
            {"seq": 1, "type": "tool/call", "data": {**GOOD_CALL, "step": True}},
            "data.step must be an integer, got boolean",
        ),
        (
            {"seq": 1, "type": "tool/call", "data": {**GOOD_CALL, "callId": 5}},
            "data.callId must be a string, got number",
        ),
        (
            {"seq": 1, "type": "tool/call", "data": {**GOOD_CALL, "extra": 1}},
            'data has an unknown field "extra"',
        ),
        ({"seq": 1, "type": "tool/call", "data": {"turn": 0, "step": 1}}, "data.callId is missing"),
        ({"seq": 1, "type": "tool/call", "data": []}, "data must be an object, got array"),
        (
            {
                "seq": 1,
                "type": "tool/result",
                "data": _result_with(("message", "content", 0, "isError"), "yes"),
            },
            r"data.message.content\[0\].isError must be a boolean, got string",
        ),
        (
            {"seq": 1, "type": "tool/result", "data": _result_with(("message", "content"), {})},
            "data.message.content must be an array, got object",
        ),
        (
            {
                "seq": 1,
                "type": "tool/result",
                "data": _result_with(("message", "content", 0, "content"), "x"),
            },
            r"data.message.content\[0\].content must be an array, got string",
        ),
        (
            {
                "seq": 1,
                "type": "tool/result",
                "data": _result_with(("message", "source", "callId"), KeyError),
            },
            "data.message.source.callId is missing",
        ),
        (
            {"seq": 1, "type": "tool/result", "data": _result_with(("error",), None)},
            "data.error must be an object, got null",
        ),
        (
            {"seq": 1, "type": "tool/result", "data": _result_with(("error", "code"), [])},
            "data.error.code must be a string, got array",
        ),
        ({"seq": "1", "type": "x", "data": {}}, "seq must be an integer, got string"),
        ({"seq": 1, "type": None, "data": {}}, "type must be a string, got null"),
        ({"seq": 1, "data": {}}, "type is missing"),
        ({"seq": 1, "type": "x"}, "data is missing"),
        ({"seq": 1, "type": "x", "data": {}, "id": 1}, 'the event has an unknown field "id"'),
        (
            {"seq": 1, "type": "x", "sourceEventSeqs": "ab", "data": {}},
            "sourceEventSeqs must be an array, got string",
        ),
        (
            {"seq": 1, "type": "x", "sourceEventSeqs": [0, 1.5], "data": {}},
            r"sourceEventSeqs\[1\] must be an integer, got number",
        ),
        (
            {"seq": 1, "type": "x", "sourceEventSeqs": None, "data": {}},
            "sourceEventSeqs must be an array, got null",
        ),
    ],
)
def test_from_jsonl_errors_name_the_line_and_the_field(event: dict[str, Any], message: str) -> None:
    text = _line({"seq": 0, "type": "note", "data": {}}) + "\n" + _line(event) + "\n"
    with pytest.raises(ValueError, match="^session line 2: " + message + "$"):
        Session.from_jsonl(text)


@pytest.mark.parametrize(
    ("data_text", "message"),
    [
        ('{"x":-0}', "data.x is -0, which JSON cannot keep"),
        ('{"x":[1,' + "9" * 400 + "]}", r"data.x\[1\] is an integer beyond the double range"),
        ('{"x":' + "9" * 5000 + "}", "data.x is an integer beyond the double range"),
        ('{"x":NaN}', "not JSON"),
    ],
)
def test_from_jsonl_rejects_numbers_append_would_reject(data_text: str, message: str) -> None:
    text = '{"seq":0,"type":"note","data":' + data_text + "}\n"
    with pytest.raises(ValueError, match="^session line 1: " + message):
        Session.from_jsonl(text)


@pytest.mark.parametrize(
    "space", ["\x0c", "\xa0", "\u2028", "\x85"], ids=lambda c: f"U+{ord(c):04X}"
)
def test_from_jsonl_skips_only_json_blank_lines(space: str) -> None:
    good = '{"seq":0,"type":"note","data":{}}'
    assert len(Session.from_jsonl("\n \t\r\n" + good + "\n\n").events) == 1
    with pytest.raises(ValueError, match=r"^session line 2: not JSON$"):
        Session.from_jsonl(good + "\n" + space + "\n")


@pytest.mark.parametrize("depth", [0, 1, 3_000])
def test_from_jsonl_keeps_key_order_at_every_depth(depth: int) -> None:
    inner = {"b": 1, "10": 2, "a": {"z": 0, "2": 1}}
    value: Any = inner
    for _ in range(depth):
        value = [value]
    session = Session()
    session.append("note", {"v": value, "1": "last"})
    text = session.to_jsonl()
    restored = Session.from_jsonl(text)
    assert restored.to_jsonl() == text
    got = restored.events[0].data
    assert list(got) == ["v", "1"]
    got = got["v"]
    for _ in range(depth):
        (got,) = got
    assert list(got) == ["b", "10", "a"]
    assert list(got["a"]) == ["z", "2"]


# Wrong values for any field: each kind of field rejects all but its own.
_STRANGERS: list[Any] = [
    None,
    True,
    0,
    1.5,
    -0.0,
    "s",
    (),
    [],
    {},
    {"k": math.nan},
    ({},),
    object(),
]


def _mutations(value: Any) -> list[Any]:
    """``value`` with one field (at any depth, content items included) replaced by a stranger."""
    found: list[Any] = []
    for field in attrs.fields(type(value)):
        current = getattr(value, field.name)
        for stranger in _STRANGERS:
            found.append(attrs.evolve(value, **{field.name: stranger}))
        if attrs.has(type(current)):
            found += [attrs.evolve(value, **{field.name: m}) for m in _mutations(current)]
        elif type(current) is tuple:
            for index, item in enumerate(current):
                replaced = [*_mutations(item)] if attrs.has(type(item)) else _STRANGERS
                for new in replaced:
                    items = list(current)
                    items[index] = new
                    found.append(attrs.evolve(value, **{field.name: tuple(items)}))
    return found


def test_fast_typed_checks_agree_with_the_field_table() -> None:
    # The append hot path checks typed data with unrolled code; errors are worded from the field
    # table. The two must agree on every value, or append would raise an AssertionError.
    result = ToolResultData.from_result(
        0,
        1,
        "c1",
        ToolExecutionResult(
            is_error=True,
            content=({"type": "text", "text": "x", "n": 1.5}, {"deep": [{"a": None}]}),
            error=ToolError("boom", ErrorInfo("E", "CODE")),
            meta={"m": [1]},
        ),
    )
    samples = [CALL, RESULT, result, *_mutations(CALL), *_mutations(RESULT), *_mutations(result)]
    assert len(samples) > 400
    for sample in samples:
        fast = _TYPED_OK[type(sample)](sample)
        assert fast == (_typed_problem(sample, type(sample)) is None), sample


def test_custom_data_is_kept_as_appended() -> None:
    # The log keeps a detached copy: mutating the caller's value afterwards (say, putting a nan
    # in it) cannot change, or break, what the log holds.
    data: dict[str, Any] = {"items": [1, {"a": "b"}]}
    session = Session()
    event = session.append("note", data)
    data["items"].append(math.nan)
    data["items"][1]["a"] = -0.0
    data["new"] = {1, 2}
    assert event.data == {"items": [1, {"a": "b"}]}
    assert session.to_jsonl() == '{"seq":0,"type":"note","data":{"items":[1,{"a":"b"}]}}\n'


def test_data_over_the_json_node_limit_is_a_value_error_naming_the_limit() -> None:
    from trio_harness.lowlevel import set_json_node_limit

    shared = [1, 2, 3]
    session = Session()
    previous = set_json_node_limit(40)
    try:
        # Every part is lossless JSON; the whole is 41 nodes as a tree (the shared list counts
        # at each place), one over the limit.
        with pytest.raises(ValueError, match="larger than the JSON node limit") as refused:
            session.append("note", {"rows": [shared] * 10})
        assert str(refused.value) == (
            "Session.append: data is larger than the JSON node limit of 40 nodes (a container "
            "shared by several places counts at each; see set_json_node_limit)"
        )
        assert session.events == []
        session.append("note", {"rows": [shared] * 9})
        assert len(session.events) == 1
    finally:
        set_json_node_limit(previous)
