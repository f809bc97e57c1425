"""What a body sees of the task it runs in: the pool spawns one dispatch task per dispatched call
(which may run another call's dispatch, the oldest queued one), each must look like a fresh
task (contexts, exception state), and none may outlive its group."""

from __future__ import annotations

import contextvars
import sys
from typing import Any

import pytest
import trio
import trio.testing

from trio_harness import (
    Session,
    ToolCallBlock,
    ToolOutput,
    ToolRuntime,
    define_tool,
    execute_tool_calls,
)

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="unset")


def _runtime(body: Any) -> ToolRuntime:
    """A runtime with ``t``, always parallel, and ``x``, exclusive (no classifier)."""
    runtime = ToolRuntime()
    for name, classifier in (("t", lambda args: True), ("x", None)):
        runtime.register(
            define_tool(
                name=name,
                description="d",
                parameters={},
                output=ToolOutput(
                    schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
                ),
                execute=body,
                is_concurrency_safe=classifier,
            )
        )
    return runtime


@pytest.mark.parametrize("cap", [1, 2, 10])
async def test_every_body_sees_the_callers_context_and_its_own_changes_only(
    autojump_clock: trio.abc.Clock, cap: int
) -> None:
    seen: list[tuple[str, str, str]] = []

    async def body(args: Any, ctx: Any) -> str:
        before = VAR.get()
        VAR.set(ctx.call_id)
        await trio.sleep(int(ctx.call_id[1:]) % 3)
        seen.append((ctx.call_id, before, VAR.get()))
        return "ok"

    VAR.set("caller")
    calls = [ToolCallBlock(f"c{i}", "t", "{}") for i in range(8)]
    await execute_tool_calls(_runtime(body), Session(), calls, max_parallel_tool_calls=cap)
    assert sorted(seen) == [(f"c{i}", "caller", f"c{i}") for i in range(8)]
    assert VAR.get() == "caller"


async def test_no_dispatch_task_outlives_its_group(autojump_clock: trio.abc.Clock) -> None:
    async def body(args: Any, ctx: Any) -> str:
        await trio.sleep(1)
        return "ok"

    runtime = _runtime(body)
    calls = [ToolCallBlock(f"c{i}", "t", "{}") for i in range(6)]
    before = trio.lowlevel.current_statistics().tasks_living
    await execute_tool_calls(runtime, Session(), calls, max_parallel_tool_calls=4)
    assert trio.lowlevel.current_statistics().tasks_living == before
    assert trio.current_time() == 2


async def test_no_dispatch_task_of_a_group_is_alive_when_the_next_group_runs(
    autojump_clock: trio.abc.Clock,
) -> None:
    # Two parallel groups around an exclusive barrier: while the barrier's body runs, and while
    # the last group's bodies run, only the running group's dispatch tasks are alive.
    living: dict[str, int] = {}

    async def body(args: Any, ctx: Any) -> str:
        await trio.sleep(int(ctx.call_id[1:]) % 3 + 1)
        living[ctx.call_id] = trio.lowlevel.current_statistics().tasks_living
        return "ok"

    runtime = _runtime(body)
    before = trio.lowlevel.current_statistics().tasks_living
    await execute_tool_calls(runtime, Session(), [ToolCallBlock("c9", "x", "{}")])
    alone = living.pop("c9") - before  # the dispatch tasks alive while a lone call's body runs
    assert alone == 1
    calls = [ToolCallBlock(f"c{i}", "t", "{}") for i in range(3)]
    calls += [ToolCallBlock("c3", "x", "{}"), ToolCallBlock("c4", "t", "{}")]
    calls += [ToolCallBlock("c5", "t", "{}")]
    start = trio.current_time()
    await execute_tool_calls(runtime, Session(), calls, max_parallel_tool_calls=4)
    # c0-c2 (ending at 1, 2, 3 s), then c3 alone (1 s), then c4 and c5 (2 s, 3 s).
    assert trio.current_time() - start == 3 + 1 + 3
    assert living["c3"] == before + 1  # the first group's three tasks are gone
    assert living["c4"] == before + 2  # c4 ends first: c5's task and its own
    assert living["c5"] == before + 1
    assert trio.lowlevel.current_statistics().tasks_living == before


async def test_a_body_sees_no_exception_being_handled(autojump_clock: trio.abc.Clock) -> None:
    # A dispatch task hands every answer of Trio's to the body unchanged, cancellations included.
    handled: list[object] = []
    abort = trio.Event()

    async def body(args: Any, ctx: Any) -> str:
        swallowed = False
        try:
            await trio.sleep(10)
        except trio.Cancelled:
            swallowed = True  # the body returns after the abort
        handled.append(sys.exc_info()[1])  # outside the handler: nothing is being handled
        return "late" if swallowed else "never"

    async def abort_at_1() -> None:
        await trio.sleep(1)
        abort.set()

    calls = [ToolCallBlock(f"c{i}", "t", "{}") for i in range(3)]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(abort_at_1)
        outcome = await execute_tool_calls(_runtime(body), Session(), calls, abort=abort)
    assert outcome.aborted
    assert handled == [None, None, None]
