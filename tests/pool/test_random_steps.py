"""Random steps through execute_tool_calls on virtual time, and the 10,000-call scale test."""

from __future__ import annotations

from typing import Any

import attrs
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.pool_backends import (
    ABORTED_BEFORE_INFO,
    assert_paired,
    call_ids,
    result_ids,
    results,
)
from tests.support.pool_fakes import FakeExec, FakeRuntime, FakeTool, noop_body
from trio_harness import (
    Session,
    ToolCallBlock,
    ToolExecutionResult,
    execute_tool_calls,
)


class SchedulerBroke(Exception):
    pass


@attrs.frozen
class PlannedCall:
    parallel: bool
    duration: int
    fails: bool
    # At this call's commit, flip the classifier of call ``flip`` (an index, maybe out of range).
    flip: int | None


planned_calls = st.builds(
    PlannedCall,
    st.booleans(),
    st.integers(0, 5),
    st.integers(0, 30).map(lambda n: n == 0),
    st.none() | st.integers(0, 40),
)


def count_tasks() -> int:
    stack = [trio.lowlevel.current_root_task()]
    total = 0
    while stack:
        task = stack.pop()
        total += 1
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return total


# The clock fixture is shared by the examples: every time below is relative to the example's start.
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    plan=st.lists(planned_calls, max_size=40),
    cap=st.integers(1, 12),
    abort_at=st.none() | st.integers(0, 30),
)
async def test_random_steps_keep_every_promise(
    autojump_clock: trio.abc.Clock, plan: list[PlannedCall], cap: int, abort_at: int | None
) -> None:
    async def body(args: Any, ctx: FakeExec) -> str:
        await trio.sleep(plan[int(ctx.call_id[1:])].duration)
        return "ok"

    tools = [FakeTool(f"t{i}", body, parallel=p.parallel) for i, p in enumerate(plan)]
    runtime = FakeRuntime(*tools)
    real = runtime.scheduler
    failure_log_index: list[int] = []

    def observer(exec: FakeExec, result: ToolExecutionResult) -> None:
        flip = plan[int(exec.call_id[1:])].flip
        if flip is not None and flip < len(tools):
            tools[flip].parallel = not tools[flip].parallel

    runtime.observers.append(observer)

    class Wrapped:
        async def prepare(self, input: Any) -> Any:
            return await real.prepare(input)

        async def dispatch(self, exec: Any) -> Any:
            outcome = await real.dispatch(exec)
            if plan[int(exec.call_id[1:])].fails:
                failure_log_index.append(len(runtime.log))
                runtime.log.append(("dispatch-fail", exec.call_id, trio.current_time()))
                raise SchedulerBroke(exec.call_id)
            return outcome

        async def finalize(self, exec: Any, result: Any) -> Any:
            return await real.finalize(exec, result)

        def finish(self, exec: Any, result: Any) -> Any:
            return real.finish(exec, result)

    runtime.scheduler = Wrapped()
    calls = [ToolCallBlock(f"c{i}", f"t{i}", "{}") for i in range(len(plan))]
    session = Session()
    abort = trio.Event()
    tasks_before = count_tasks()
    outcome: list[Any] = []
    raised: list[SchedulerBroke] = []

    async def aborter() -> None:
        if abort_at is not None:
            await trio.sleep(abort_at)
            runtime.log.append(("abort", "", trio.current_time()))
            abort.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(aborter)
        try:
            outcome.append(
                await execute_tool_calls(
                    runtime, session, calls, abort=abort, max_parallel_tool_calls=cap
                )
            )
        except SchedulerBroke as exc:
            raised.append(exc)
            # Raised only once every started body finished.
            assert not runtime.running
            assert len(runtime.events("body-start")) == len(runtime.events("body-end"))
        nursery.cancel_scope.cancel()

    await trio.testing.wait_all_tasks_blocked()
    assert count_tasks() == tasks_before  # nothing left behind (dispatch tasks, abort watcher)
    assert runtime.max_running <= cap
    assert not runtime.exclusive_overlap

    log = runtime.log
    if abort_at is not None and any(kind == "abort" for kind, _, _ in log):
        abort_index = next(i for i, (kind, _, _) in enumerate(log) if kind == "abort")
        assert all(kind != "prepare" for kind, _, _ in log[abort_index:])

    ids = [f"c{i}" for i in range(len(plan))]
    if raised:
        first_fail = failure_log_index[0]
        assert raised[0].args == (log[first_fail][1],)  # the first failure, itself
        # Nothing committed after the failure; no synthetic pairs fabricated.
        assert all(kind != "finish" for kind, _, _ in log[first_fail:])
        assert result_ids(session) == ids[: len(results(session))]
        assert call_ids(session) == ids[: len(call_ids(session))]
        assert all(d.error != ABORTED_BEFORE_INFO or abort.is_set() for d in results(session))
    else:
        (step,) = outcome
        assert call_ids(session) == ids
        assert result_ids(session) == ids
        assert_paired(session)
        assert not step.aborted or abort.is_set()
        if not step.aborted:
            assert all(d.error is None for d in results(session))


async def test_ten_thousand_no_op_calls_complete_in_order(autojump_clock: trio.abc.Clock) -> None:
    runtime = FakeRuntime(FakeTool("t", noop_body, parallel=True))
    calls = [ToolCallBlock(f"c{i}", "t", "") for i in range(10_000)]
    session = Session()
    outcome = await execute_tool_calls(runtime, session, calls)
    assert not outcome.aborted
    ids = [f"c{i}" for i in range(10_000)]
    assert result_ids(session) == ids
    assert len(session.events) == 20_000
    assert runtime.max_running <= 10
    assert_paired(session)
