"""Random steps whose pre-execute hooks, execute wrappers and post-execute hooks sleep, with an
abort and an outside cancellation at random virtual times, in the default (upstream) mode and in
strict mode (issue 8, item 10): every call gets exactly one result, in model order, and a strict
step never outlives its abort."""

from __future__ import annotations

from typing import Any

import attrs
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.runtime_tools import echo_tool, runtime_with
from trio_harness import Session, ToolCallBlock, ToolRuntime, execute_tool_calls


@attrs.frozen
class Plan:
    parallel: list[bool]
    pre: list[int]  # seconds each call's pre-execute hook sleeps
    wrap_before: list[int]  # ... its wrapper before next()
    wrap_after: list[int]  # ... its wrapper after next()
    post: list[int]  # ... its post-execute hook
    body: list[int]  # ... its body
    abort_at: int | None
    cancel_at: int | None
    strict: bool
    cap: int


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    n = draw(st.integers(1, 6))
    durations = st.lists(st.sampled_from([0, 1, 2, 5, 1000]), min_size=n, max_size=n)
    return Plan(
        parallel=draw(st.lists(st.booleans(), min_size=n, max_size=n)),
        pre=draw(durations),
        wrap_before=draw(durations),
        wrap_after=draw(durations),
        post=draw(durations),
        body=draw(durations),
        abort_at=draw(st.none() | st.integers(0, 12)),
        cancel_at=draw(st.none() | st.integers(0, 3000)),
        strict=draw(st.booleans()),
        cap=draw(st.integers(1, 3)),
    )


def runtime_for(plan: Plan) -> ToolRuntime:
    def index(exec: Any) -> int:
        return int(exec.call_id[1:])

    async def body(args: Any, ctx: Any) -> Any:
        await trio.sleep(plan.body[index(ctx)])
        return "ok"

    runtime = runtime_with(
        echo_tool(execute=body, is_concurrency_safe=lambda args: args.get("text") == "p"),
        abort_cancels_callbacks=plan.strict,
    )

    async def pre(exec: Any, next: Any) -> Any:
        await trio.sleep(plan.pre[index(exec)])
        return await next()

    async def wrapper(exec: Any, next: Any) -> Any:
        await trio.sleep(plan.wrap_before[index(exec)])
        result = await next()
        await trio.sleep(plan.wrap_after[index(exec)])
        return result

    async def post(exec: Any, result: Any, next: Any) -> Any:
        await trio.sleep(plan.post[index(exec)])
        return await next()

    runtime.add_pre_execute(pre)
    runtime.add_execute_wrapper(wrapper)
    runtime.add_post_execute(post)
    return runtime


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(plan=plans())
def test_sleeping_callbacks_keep_one_result_per_call_in_model_order(plan: Plan) -> None:
    runtime = runtime_for(plan)
    session = Session()
    calls = [
        ToolCallBlock(f"c{i}", "echo", '{"text": "%s"}' % ("p" if parallel else "x"))
        for i, parallel in enumerate(plan.parallel)
    ]
    ended: list[float] = []

    async def main() -> None:
        abort = trio.Event()
        with trio.CancelScope() as outside:
            async with trio.open_nursery() as nursery:
                if plan.abort_at is not None:

                    async def fire() -> None:
                        await trio.sleep(plan.abort_at or 0)
                        abort.set()

                    nursery.start_soon(fire)
                if plan.cancel_at is not None:
                    outside.deadline = trio.current_time() + plan.cancel_at
                await execute_tool_calls(
                    runtime, session, calls, abort=abort, max_parallel_tool_calls=plan.cap
                )
                ended.append(trio.current_time())
                nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    events = [event.to_json() for event in session.events]
    call_seqs = [e["seq"] for e in events if e["type"] == "tool/call"]
    cited = [e["sourceEventSeqs"][0] for e in events if e["type"] == "tool/result"]
    # Exactly one result per logged call, whether the step ended, aborted or was cancelled.
    assert sorted(cited) == call_seqs
    ids = [e["data"]["callId"] for e in events if e["type"] == "tool/call"]
    assert ids == [f"c{i}" for i in range(len(ids))]  # calls logged in model order
    result_ids = [
        e["data"]["message"]["source"]["callId"] for e in events if e["type"] == "tool/result"
    ]
    if plan.cancel_at is None:
        assert ended  # nothing but the outside cancellation stops a step early
    if ended:
        # The step completed: every call answered, results in model order.
        assert result_ids == [f"c{i}" for i in range(len(calls))]
        if plan.strict and plan.abort_at is not None:
            # Strict mode: nothing outlives the abort (bodies, hooks and wrappers are cut).
            assert ended[0] <= plan.abort_at
