"""The pool's abort-relay fast path keeps the general path's outcomes (upstream §5 101–116).

The body of a call whose abort event is watched by an enclosing ``abort_relay`` runs in a scope
added straight to the relay's set (no re-check of the event, no register call). These tests pin
that this path answers exactly as the general one: at the abort instant, after the abort, with
output failures, nested relays, and outside cancellation.
"""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

import trio_harness as th
from tests.support.runtime_helpers import ABORTED_RESULT, call, set_at, sleeper, text_blocks
from tests.support.runtime_tools import content_tool, runtime_with
from trio_harness._runtime.abort import (
    abort_relay,
    current_relay,
)


def _string_tool(execute: Any) -> th.ToolDefinition:
    return th.define_tool(
        name="s",
        description="returns a string",
        parameters={},
        output=th.ToolOutput(
            schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
        ),
        execute=execute,
    )


async def test_relay_body_aborted_at_its_checkpoint_at_the_abort_instant(
    autojump_clock: trio.abc.Clock,
) -> None:  # upstream #101
    runtime = runtime_with(content_tool("slow", sleeper(10)))
    abort = trio.Event()
    async with abort_relay(abort) as relay, trio.open_nursery() as nursery:
        nursery.start_soon(set_at(abort, 4))
        result = await runtime.execute(call("slow", abort=abort))
        assert relay.scopes == set()
    assert result.to_json() == ABORTED_RESULT
    assert trio.current_time() == 4


async def test_relay_body_that_sets_the_abort_and_returns_lost_the_race() -> None:  # upstream #114
    abort = trio.Event()

    async def sets_then_returns(args: Any, ctx: Any) -> Any:
        abort.set()  # no checkpoint afterwards: its scope is never cancelled
        return text_blocks("done")

    runtime = runtime_with(content_tool("quick", sets_then_returns))
    async with abort_relay(abort) as relay:
        result = await runtime.execute(call("quick", abort=abort))
        assert relay.scopes == set()
    assert result.to_json() == ABORTED_RESULT


async def test_relay_body_output_failure_after_the_abort_stays_the_error() -> None:  # upstream #114
    abort = trio.Event()

    async def sets_then_returns_a_number(args: Any, ctx: Any) -> Any:
        abort.set()
        return 5  # the output schema wants a string

    runtime = runtime_with(_string_tool(sets_then_returns_a_number))
    async with abort_relay(abort):
        in_relay = await runtime.execute(call("s", abort=abort))
    general = await runtime.execute(call("s", abort=trio.Event()))
    assert in_relay.is_error
    assert in_relay.to_json() != ABORTED_RESULT
    # Same answer as the general path (private watcher) gives for the same body.
    assert general.to_json() == in_relay.to_json()


async def test_relay_for_another_event_does_not_hide_the_outer_relay(
    autojump_clock: trio.abc.Clock,
) -> None:
    runtime = runtime_with(content_tool("slow", sleeper(10)))
    outer_event, inner_event = trio.Event(), trio.Event()
    async with abort_relay(outer_event) as outer, abort_relay(inner_event) as inner:
        assert current_relay(outer_event) is outer
        assert current_relay(inner_event) is inner
        assert current_relay(trio.Event()) is None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(set_at(outer_event, 2))
            result = await runtime.execute(call("slow", abort=outer_event))
        assert outer.scopes == set()
        assert inner.scopes == set()
    assert current_relay(outer_event) is None
    assert result.to_json() == ABORTED_RESULT
    assert trio.current_time() == 2


async def test_relay_body_outside_cancellation_is_not_an_abort(
    autojump_clock: trio.abc.Clock,
) -> None:  # upstream #116 (Trio mapping: outside cancellation propagates)
    runtime = runtime_with(content_tool("slow", sleeper(10)))
    abort = trio.Event()
    results: list[th.ToolExecutionResult] = []
    async with abort_relay(abort) as relay:
        with trio.move_on_after(3) as outside:
            results.append(await runtime.execute(call("slow", abort=abort)))
        assert relay.scopes == set()
    assert outside.cancelled_caught
    assert results == []
    assert not abort.is_set()
    assert trio.current_time() == 3


async def test_pool_step_with_unset_abort_logs_what_a_step_without_one_logs() -> None:
    async def body(args: Any, ctx: Any) -> Any:
        await trio.lowlevel.checkpoint()
        return f"x={args['x']}"

    def runtime() -> th.ToolRuntime:
        tool = th.define_tool(
            name="t",
            description="d",
            parameters={"x": {"type": "integer"}},
            output=th.ToolOutput(
                schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
            ),
            execute=body,
            is_concurrency_safe=lambda a: True,
        )
        return runtime_with(tool)

    calls = [th.ToolCallBlock(f"c{i}", "t", f'{{"x":{i}}}') for i in range(25)]
    logs = []
    for abort in (None, trio.Event()):
        session = th.Session()
        outcome = await th.execute_tool_calls(
            runtime(), session, calls, abort=abort, max_parallel_tool_calls=4
        )
        assert outcome == th.StepOutcome()
        logs.append([(event.type, event.data) for event in session.events])
    assert logs[0] == logs[1]
