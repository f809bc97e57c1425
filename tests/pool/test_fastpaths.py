"""Pins for the pool's hot-path shortcuts: each must give exactly what the slow path gives.

* ``snapshot_json_value`` has a fast path for flat containers (dicts of scalars, lists of scalars
  and such dicts); its verdict must equal the general walker's (``is_json_value``) and its copy
  must be as detached.
* ``Session.append`` and ``ToolResultData.from_result`` build attrs objects by setting slots;
  the objects must equal the ones the attrs constructors build.
* Dispatch tasks take the oldest pending dispatch: dispatches enter in model order whatever order
  Trio runs the new tasks in (upstream invokes them synchronously, in order).
"""

from __future__ import annotations

import copy
import math
import pickle
import sys
from typing import Any

import attrs
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

import trio_harness as th
from tests.support.strategies import any_values, json_values
from trio_harness import (
    UNSET,
    ErrorInfo,
    SessionEvent,
    ToolError,
    ToolExecutionResult,
    is_json_value,
)
from trio_harness._log.events import (
    TOOL_CALL,
    fast_call_data,
    fast_event,
)
from trio_harness._pool.steps import fast_step_result
from trio_harness._values import fast_success_result, slot_builder
from trio_harness.log import (
    MessageSource,
    ToolCallData,
    ToolResultBlock,
    ToolResultData,
    ToolResultMessage,
)
from trio_harness.lowlevel import (
    NOT_JSON,
    snapshot_json_value,
)


def _containers(value: Any) -> list[int]:
    ids: list[int] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            ids.append(id(item))
            stack.extend(item.values())
        elif type(item) is list:
            ids.append(id(item))
            stack.extend(item)
    return ids


def _assert_detached_copy(value: Any) -> None:
    copy = snapshot_json_value(value)
    if not is_json_value(value):
        assert copy is NOT_JSON
        return
    assert copy == value
    assert not set(_containers(copy)) & set(_containers(value))


@given(any_values())
def test_snapshot_verdict_matches_the_general_walker_for_any_value(value: Any) -> None:
    _assert_detached_copy(value)


@given(
    st.lists(
        st.one_of(
            json_values(max_leaves=1),
            st.dictionaries(st.text(max_size=3), json_values(max_leaves=1), max_size=4),
        ),
        max_size=5,
    )
)
def test_snapshot_of_flat_lists_and_dicts_is_a_detached_equal_copy(value: list[Any]) -> None:
    _assert_detached_copy(value)
    _assert_detached_copy({"items": value})


def test_snapshot_flat_fast_path_rejects_what_the_walker_rejects() -> None:
    for bad in (math.nan, math.inf, -0.0, 2**1100, b"x", (1,)):
        assert snapshot_json_value({"a": bad}) is NOT_JSON
        assert snapshot_json_value([bad]) is NOT_JSON
        assert snapshot_json_value([{"a": bad}]) is NOT_JSON
    assert snapshot_json_value({1: "a"}) is NOT_JSON
    assert snapshot_json_value([{1: "a"}]) is NOT_JSON
    cyclic: list[Any] = [{"a": 1}]
    cyclic.append(cyclic)
    assert snapshot_json_value(cyclic) is NOT_JSON


def test_snapshot_copies_a_shared_flat_dict_once_per_occurrence() -> None:
    block = {"type": "text", "text": "ok"}
    copy = snapshot_json_value([block, block])
    assert copy == [block, block]
    assert copy[0] is not copy[1]
    assert copy[0] is not block


_CONTENT = st.lists(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=4)}), max_size=3
).map(tuple)


@given(
    turn=st.integers(0, 5),
    step=st.integers(0, 5),
    call_id=st.text(max_size=4),
    content=_CONTENT,
    is_error=st.booleans(),
    meta=st.one_of(st.just(UNSET), json_values(max_leaves=3)),
    code=st.one_of(st.none(), st.sampled_from(["TOOL_ARGS_INVALID", "TOOL_NOT_FOUND"])),
)
def test_result_data_equals_the_attrs_built_data(
    turn: int,
    step: int,
    call_id: str,
    content: tuple[Any, ...],
    is_error: bool,
    meta: Any,
    code: str | None,
) -> None:
    info = None if code is None else ErrorInfo(name="HarnessError", code=code)
    result = ToolExecutionResult(
        is_error=is_error,
        content=content,
        value=UNSET if is_error else "v",
        error=ToolError("boom", info) if is_error else None,
        meta=meta,
    )
    expected = ToolResultData(
        turn=turn,
        step=step,
        message=ToolResultMessage(
            source=MessageSource(call_id=call_id),
            content=(ToolResultBlock(tool_call_id=call_id, content=content, is_error=is_error),),
        ),
        error=info if is_error else None,
        meta=meta,
    )
    built = ToolResultData.from_result(turn, step, call_id, result)
    assert type(built) is ToolResultData
    assert built == expected
    assert repr(built) == repr(expected)


def test_call_data_and_events_equal_the_attrs_built_ones() -> None:
    data = fast_call_data(1, 2, "c1", "noop", '{"x":1}')
    assert data == ToolCallData(1, 2, "c1", "noop", '{"x":1}')
    assert repr(data) == repr(ToolCallData(1, 2, "c1", "noop", '{"x":1}'))
    session = th.Session()
    call = session.append(TOOL_CALL, data)
    note = session.append("app/note", {"any": "json"}, source_event_seqs=[call.seq])
    assert call == SessionEvent(0, TOOL_CALL, data)
    assert note == SessionEvent(1, "app/note", {"any": "json"}, (0,))
    assert th.Session.from_jsonl(session.to_jsonl()).events == [call, note]


async def test_dispatches_enter_in_model_order_whatever_order_tasks_run_in() -> None:
    # Trio reverses about half of its run batches, so ten calls started in one batch would often
    # run their tasks last-first; the dispatches must still be entered first-to-last.
    entered: list[str] = []

    async def execute(args: Any, ctx: Any) -> str:
        entered.append(ctx.call_id)
        await trio.lowlevel.checkpoint()
        return "ok"

    runtime = th.ToolRuntime()
    runtime.register(
        th.define_tool(
            name="noop",
            description="does nothing",
            parameters={},
            output=th.ToolOutput(
                schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
            ),
            execute=execute,
            is_concurrency_safe=lambda a: True,
        )
    )
    for attempt in range(40):
        entered.clear()
        calls = [th.ToolCallBlock(f"c{i}", "noop", "{}") for i in range(25)]
        session = th.Session()
        await th.execute_tool_calls(runtime, session, calls, max_parallel_tool_calls=10)
        assert entered == [call.id for call in calls], attempt
        logged = [event.data.call_id for event in session.events if event.type == TOOL_CALL]
        assert logged == entered


def _built_values() -> list[tuple[Any, Any]]:
    # Each hot-path value as ``slot_builder``'s makers build it, and as attrs' constructor does.
    content = ({"type": "text", "text": "ok"},)
    success = fast_success_result(content, "ok", {"m": 1}, True)
    data = ToolResultData.from_result(1, 2, "c1", success)
    call = fast_call_data(1, 2, "c1", "noop", "{}")
    event = fast_event(3, TOOL_CALL, call, (1,))
    return [
        (
            success,
            ToolExecutionResult(
                is_error=False, content=content, value="ok", meta={"m": 1}, concludes_turn=True
            ),
        ),
        (
            data,
            ToolResultData(
                turn=1,
                step=2,
                message=ToolResultMessage(
                    source=MessageSource(call_id="c1"),
                    content=(ToolResultBlock(tool_call_id="c1", content=content, is_error=False),),
                ),
                meta={"m": 1},
            ),
        ),
        (data.message, data.message.__class__(**attrs.asdict(data.message, recurse=False))),
        (data.message.source, MessageSource(call_id="c1")),
        (
            data.message.content[0],
            ToolResultBlock(tool_call_id="c1", content=content, is_error=False),
        ),
        (call, ToolCallData(1, 2, "c1", "noop", "{}")),
        (event, SessionEvent(3, TOOL_CALL, call, (1,))),
        (fast_step_result("c1", "noop", success), th.StepResult("c1", "noop", success)),
    ]


def test_slot_builders_make_exact_frozen_values_equal_to_the_attrs_built_ones() -> None:
    for built, expected in _built_values():
        cls = type(expected)
        assert type(built) is cls
        assert built == expected
        assert repr(built) == repr(expected)
        assert attrs.asdict(built, recurse=False) == attrs.asdict(expected, recurse=False)
        name = attrs.fields(cls)[0].name
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(built, name, None)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            delattr(built, name)
        assert pickle.loads(pickle.dumps(built)) == expected
        assert copy.copy(built) == expected
        assert attrs.evolve(built) == expected
        # The maker adds no slot: a value is exactly as large as the constructor's.
        assert sys.getsizeof(built) == sys.getsizeof(expected)


def test_a_slot_builder_maker_is_a_private_subclass_that_adds_no_slot() -> None:
    @attrs.frozen
    class Point:
        x: int
        y: int

    def init(self: Any, x: int, y: int) -> None:
        self.x = x
        self.y = y
        self.__class__ = Point

    make = slot_builder(Point, init)
    point = make(1, 2)
    assert type(point) is Point
    assert point == Point(1, 2)
    assert Point.__subclasses__() == [make]
    assert make.__slots__ == ()  # type: ignore[attr-defined]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        point.x = 3  # type: ignore[misc]
