"""Pins for the snapshot's flat fast path and for the order dispatches are entered in.

* ``snapshot_json_value`` has a fast path for flat containers (dicts of scalars, lists of scalars
  and such dicts); its verdict must equal the general walker's (``is_json_value``) and its copy
  must be as detached.
* Dispatch tasks take the oldest pending dispatch: dispatches enter in model order whatever order
  Trio runs the new tasks in (upstream invokes them synchronously, in order).
"""

from __future__ import annotations

import math
from typing import Any

import trio
from hypothesis import given
from hypothesis import strategies as st

import trio_harness as th
from tests.support.strategies import any_values, json_values
from tests.support.trees import detached
from trio_harness import (
    is_json_value,
)
from trio_harness._log.events import TOOL_CALL
from trio_harness.lowlevel import (
    NOT_JSON,
    snapshot_json_value,
)


def _assert_detached_copy(value: Any) -> None:
    copy = snapshot_json_value(value)
    if not is_json_value(value):
        assert copy is NOT_JSON
        return
    assert copy == value
    assert detached(copy, value)


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
