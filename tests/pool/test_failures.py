"""Scheduler failures, cancellation from outside, and composite sub-calls."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from tests.support.pool_backends import (
    ABORTED_BEFORE_INFO,
    ABORTED_INFO,
    assert_paired,
    block,
    call_ids,
    result_ids,
    results,
    xs,
)
from tests.support.pool_fakes import (
    FakeExec,
    FakeRuntime,
    FakeTool,
    Gates,
    gated_body,
    noop_body,
    sleep_body,
)
from trio_harness import (
    Session,
    SubCall,
    ToolCallBlock,
    execute_sub_calls,
    execute_tool_calls,
)


class Boom(Exception):
    pass


def wrap(runtime: FakeRuntime, **overrides: Any) -> None:
    """Replace some scheduler phases (others delegate to the real fake scheduler)."""
    real = runtime.scheduler

    class Wrapped:
        async def prepare(self, input: Any) -> Any:
            if "prepare" in overrides:
                return await overrides["prepare"](real, input)
            return await real.prepare(input)

        async def dispatch(self, exec: Any) -> Any:
            if "dispatch" in overrides:
                return await overrides["dispatch"](real, exec)
            return await real.dispatch(exec)

        async def finalize(self, exec: Any, result: Any) -> Any:
            if "finalize" in overrides:
                return await overrides["finalize"](real, exec, result)
            return await real.finalize(exec, result)

        def finish(self, exec: Any, result: Any) -> Any:
            if "finish" in overrides:
                return overrides["finish"](real, exec, result)
            return real.finish(exec, result)

    runtime.scheduler = Wrapped()


def failing(phase: str, call_id: str, message: str) -> Any:
    """A ``wrap`` override of ``phase`` raising ``Boom(message)`` for ``call_id``, else delegating."""

    async def override(real: Any, item: Any, *rest: Any) -> Any:
        if item.call_id == call_id:
            raise Boom(message)
        return await getattr(real, phase)(item, *rest)

    return override


def no_children() -> None:
    task = trio.lowlevel.current_task()
    assert all(not nursery.child_tasks for nursery in task.child_nurseries)


# ---------------------------------------------------------------------------------------------
# scheduler failures
# ---------------------------------------------------------------------------------------------


async def test_prepare_failure_is_raised_bare_after_in_flight_bodies_settle(
    autojump_clock: trio.abc.Clock,
) -> None:
    runtime = FakeRuntime(FakeTool("s", sleep_body(5), parallel=True))
    wrap(runtime, prepare=failing("prepare", "c3", "prepare broke"))
    session = Session()
    with pytest.raises(Boom, match=r"^prepare broke$"):
        await execute_tool_calls(runtime, session, [block(f"c{i}", "s") for i in range(1, 6)])
    assert trio.current_time() == 5  # raised only after c1 and c2 settled
    assert sorted(runtime.events("body-end")) == ["c1", "c2"]
    assert call_ids(session) == ["c1", "c2", "c3"]
    assert results(session) == []  # settled results are not committed after a failure
    no_children()


async def test_finalize_failure_is_raised_and_later_results_are_not_committed() -> None:
    runtime = FakeRuntime(FakeTool("t", noop_body))
    wrap(runtime, finalize=failing("finalize", "c2", "finalize broke"))
    session = Session()
    with pytest.raises(Boom, match=r"^finalize broke$"):
        await execute_tool_calls(runtime, session, xs(3, "t"))
    assert call_ids(session) == ["c1", "c2"]
    assert result_ids(session) == ["c1"]


async def test_finish_failure_is_a_scheduler_failure() -> None:
    runtime = FakeRuntime(FakeTool("t", noop_body))
    # An abort-free prepare that already has a result goes straight to finish.
    abort = trio.Event()

    def finish(real: Any, exec: Any, result: Any) -> Any:
        raise Boom("finish broke")

    async def prepare(real: Any, input: Any) -> Any:
        abort.set()
        return await real.prepare(input)

    wrap(runtime, finish=finish, prepare=prepare)
    with pytest.raises(Boom, match=r"^finish broke$"):
        await execute_tool_calls(runtime, Session(), xs(2, "t"), abort=abort)


async def test_execution_mode_failure_is_a_scheduler_failure() -> None:
    runtime = FakeRuntime(FakeTool("t", noop_body, parallel=True))

    def broken(input: Any) -> Any:
        raise Boom("classifier infrastructure broke")

    runtime.execution_mode = broken  # type: ignore[method-assign]
    session = Session()
    with pytest.raises(Boom):
        await execute_tool_calls(runtime, session, xs(2, "t"))
    assert session.events == []


async def test_first_of_several_dispatch_failures_wins(autojump_clock: trio.abc.Clock) -> None:
    runtime = FakeRuntime(FakeTool("t", noop_body, parallel=True))
    delays = {"c1": 3, "c2": 1, "c3": 2}

    async def dispatch(real: Any, exec: Any) -> Any:
        await trio.sleep(delays[exec.call_id])
        raise Boom("failed " + exec.call_id)

    wrap(runtime, dispatch=dispatch)
    with pytest.raises(Boom, match=r"^failed c2$"):
        await execute_tool_calls(runtime, Session(), xs(3, "t"))
    assert trio.current_time() == 3
    no_children()


async def test_failure_never_cancels_running_siblings(autojump_clock: trio.abc.Clock) -> None:
    finished: list[str] = []

    async def body(args: Any, ctx: FakeExec) -> str:
        await trio.sleep(10)
        finished.append(ctx.call_id)
        return "ok"

    runtime = FakeRuntime(FakeTool("t", body, parallel=True))
    wrap(runtime, dispatch=failing("dispatch", "c1", "early"))
    with pytest.raises(Boom):
        await execute_tool_calls(runtime, Session(), xs(4, "t"), max_parallel_tool_calls=3)
    assert sorted(finished) == ["c2", "c3"]
    assert runtime.started == ["c2", "c3"]
    assert trio.current_time() == 10


async def test_accept_context_failure_is_raised_after_its_result_is_recorded() -> None:
    async def body(args: Any, ctx: FakeExec) -> str:
        ctx.defer_context("ctx")
        return "ok"

    runtime = FakeRuntime(FakeTool("t", body))

    def accept(context: Any) -> None:
        raise Boom("accept broke")

    session = Session()
    with pytest.raises(Boom):
        await execute_tool_calls(runtime, session, xs(2, "t"), accept_context=accept)
    assert result_ids(session) == ["c1"]
    assert call_ids(session) == ["c1"]


# ---------------------------------------------------------------------------------------------
# cancellation from outside
# ---------------------------------------------------------------------------------------------


async def test_outside_cancellation_propagates_and_leaves_a_replay_valid_log(
    autojump_clock: trio.abc.Clock,
) -> None:
    delays = {"c1": 1, "c2": 50, "c3": 2}

    async def body(args: Any, ctx: FakeExec) -> str:
        await trio.sleep(delays[ctx.call_id])
        return "ok"

    runtime = FakeRuntime(FakeTool("t", body, parallel=True))
    session = Session()
    with trio.move_on_after(10) as scope:
        await execute_tool_calls(
            runtime, session, [block(f"c{i}", "t") for i in range(1, 6)], max_parallel_tool_calls=3
        )
    assert scope.cancelled_caught
    assert trio.current_time() == 10
    assert result_ids(session) == ["c1", "c2", "c3", "c4", "c5"]
    errors = [d.error for d in results(session)]
    # c1 committed; c2 was cut short; c3 settled but was not committed; c4 started at t=1 (c1's
    # slot) and c5 at t=2 (c3's slot) were cut short too.
    assert errors == [None, ABORTED_INFO, ABORTED_INFO, ABORTED_INFO, ABORTED_INFO]
    assert_paired(session)
    no_children()


async def test_outside_cancellation_pairs_calls_that_never_started(
    autojump_clock: trio.abc.Clock,
) -> None:
    gates = Gates()
    runtime = FakeRuntime(FakeTool("x", gated_body(gates)))  # exclusive: one at a time
    session = Session()
    with trio.move_on_after(1):
        await execute_tool_calls(runtime, session, xs(3))
    assert call_ids(session) == ["c1", "c2", "c3"]
    assert [d.error for d in results(session)] == [
        ABORTED_INFO,
        ABORTED_BEFORE_INFO,
        ABORTED_BEFORE_INFO,
    ]
    assert_paired(session)
    Session.from_jsonl(session.to_jsonl())


async def test_outside_cancellation_during_prepare_cuts_the_call_short(
    autojump_clock: trio.abc.Clock,
) -> None:
    runtime = FakeRuntime(FakeTool("t", noop_body))

    async def prepare(real: Any, input: Any) -> Any:
        await trio.sleep_forever()

    wrap(runtime, prepare=prepare)
    session = Session()
    with trio.move_on_after(1):
        await execute_tool_calls(runtime, session, xs(2, "t"))
    assert [d.error for d in results(session)] == [ABORTED_INFO, ABORTED_BEFORE_INFO]
    assert_paired(session)


async def test_keyboard_interrupt_in_a_body_propagates_bare() -> None:
    async def body(args: Any, ctx: FakeExec) -> str:
        if ctx.call_id == "c2":
            raise KeyboardInterrupt
        await trio.sleep_forever()
        return "never"

    runtime = FakeRuntime(FakeTool("t", body, parallel=True))
    session = Session()
    with pytest.raises(KeyboardInterrupt):
        await execute_tool_calls(runtime, session, xs(3, "t"))
    assert_paired(session)
    assert [d.error for d in results(session)] == [ABORTED_INFO, ABORTED_INFO, ABORTED_INFO]
    no_children()


async def test_outside_cancellation_after_a_failure_fabricates_nothing(
    autojump_clock: trio.abc.Clock,
) -> None:
    runtime = FakeRuntime(FakeTool("t", sleep_body(100), parallel=True))
    wrap(runtime, dispatch=failing("dispatch", "c1", "x"))
    session = Session()
    with trio.move_on_after(1):
        await execute_tool_calls(runtime, session, xs(2, "t"))
    assert results(session) == []


async def test_outside_cancellation_after_an_unread_failure_fabricates_nothing(
    autojump_clock: trio.abc.Clock,
) -> None:
    # c1's dispatch fails at once, while the driver still awaits c2's slow prepare: the failure
    # was sent but not yet taken when the cancellation comes. It happened first, so its rule
    # holds: no synthetic result for anyone (found by the property test of
    # docs/property-testing.md: the seal used to drop the unread failure and answer both calls).
    async def slow_prepare(real: Any, input: Any) -> Any:
        if input.call_id == "c2":
            await trio.sleep(10)
        return await real.prepare(input)

    runtime = FakeRuntime(FakeTool("t", sleep_body(0), parallel=True))
    wrap(runtime, dispatch=failing("dispatch", "c1", "x"), prepare=slow_prepare)
    session = Session()
    with trio.move_on_after(1) as scope:
        await execute_tool_calls(runtime, session, xs(2, "t"))
    assert scope.cancelled_caught
    assert results(session) == []
    assert [event.data.call_id for event in session.events] == ["c1", "c2"]  # two tool/calls


# ---------------------------------------------------------------------------------------------
# composite tools
# ---------------------------------------------------------------------------------------------


def composite_runtime(
    calls: list[Any], outcome: list[Any], **kwargs: Any
) -> tuple[FakeRuntime, list[Any]]:
    seen: list[Any] = []

    async def leaf(args: Any, ctx: FakeExec) -> str:
        seen.append((ctx.call_id, ctx.input.parent, ctx.input.root_call_id, ctx.input.abort))
        await trio.sleep(args.get("delay", 0))
        return "leaf-" + ctx.call_id

    async def composite(args: Any, ctx: FakeExec) -> str:
        outcome.append(ctx)
        results = await execute_sub_calls(ctx, calls, **kwargs)
        outcome.append(results)
        return "composite"

    runtime = FakeRuntime(FakeTool("leaf", leaf, parallel=True), FakeTool("composite", composite))
    return runtime, seen


async def test_sub_calls_return_results_in_order_and_are_not_logged(
    autojump_clock: trio.abc.Clock,
) -> None:
    outcome: list[Any] = []
    subs = [SubCall("s1", "leaf", {"delay": 3}), ToolCallBlock("s2", "leaf", '{"delay": 1}')]
    runtime, seen = composite_runtime(subs, outcome)
    abort = trio.Event()
    session = Session()
    await execute_tool_calls(runtime, session, [block("c1", "composite")], abort=abort)
    parent, sub_results = outcome
    assert [r.value for r in sub_results] == ["leaf-s1", "leaf-s2"]
    assert sorted(seen, key=lambda s: s[0]) == [
        ("s1", parent, "c1", abort),
        ("s2", parent, "c1", abort),
    ]
    assert trio.current_time() == 3  # the two sub-calls overlapped
    assert call_ids(session) == ["c1"]


async def test_sub_calls_honour_their_own_cap(autojump_clock: trio.abc.Clock) -> None:
    outcome: list[Any] = []
    subs = [SubCall(f"s{i}", "leaf", {"delay": 1}) for i in range(4)]
    runtime, _ = composite_runtime(subs, outcome, max_parallel_sub_calls=2)
    await execute_tool_calls(runtime, Session(), [block("c1", "composite")])
    assert trio.current_time() == 2
    assert runtime.max_running == 3  # the composite body plus two leaves


@pytest.mark.parametrize("cap", [0, True, 2.5])
async def test_sub_call_cap_is_validated(cap: Any) -> None:
    outcome: list[Any] = []
    runtime, _ = composite_runtime([], outcome, max_parallel_sub_calls=cap)
    session = Session()
    await execute_tool_calls(runtime, session, [block("c1", "composite")])
    text = results(session)[0].message.content[0].content[0]["text"]
    assert text == "Error: max_parallel_sub_calls must be a positive integer"


async def test_abort_cancels_a_composite_and_its_sub_calls_together(
    autojump_clock: trio.abc.Clock,
) -> None:
    # The sub-calls share the parent's abort (and relay): the composite body is cancelled with
    # its running sub-calls, so the composite's own result is ABORTED_INFO and nothing is left running.
    outcome: list[Any] = []
    subs = [SubCall(f"s{i}", "leaf", {"delay": 10}) for i in range(3)]
    runtime, seen = composite_runtime(subs, outcome, max_parallel_sub_calls=1)
    abort = trio.Event()
    session = Session()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            lambda: execute_tool_calls(runtime, session, [block("c1", "composite")], abort=abort)
        )
        await trio.sleep(1)
        abort.set()
    assert trio.current_time() == 1
    assert [s[0] for s in seen] == ["s0"]
    assert len(outcome) == 1  # execute_sub_calls never returned
    assert results(session)[0].error == ABORTED_INFO


async def test_sub_calls_of_an_already_aborted_parent_get_synthetic_results() -> None:
    outcome: list[Any] = []
    abort = trio.Event()

    async def composite(args: Any, ctx: FakeExec) -> str:
        abort.set()
        with trio.CancelScope(shield=True):
            outcome.append(await execute_sub_calls(ctx, [SubCall("s1", "leaf", {})]))
        return "composite"

    runtime = FakeRuntime(FakeTool("leaf", noop_body), FakeTool("composite", composite))
    await execute_tool_calls(runtime, Session(), [block("c1", "composite")], abort=abort)
    (sub_results,) = outcome
    assert [r.error.info.code for r in sub_results if r.error and r.error.info] == [
        "ABORTED_BEFORE_DISPATCH"
    ]
    assert runtime.started == ["c1"]
