"""Abort and slow callbacks (issue 8, item 10).

By default the pipeline awaits pre-execute hooks, approval, execute wrappers and post-execute hooks
to the end, as upstream does (run side by side, the two agree); only bodies are cancelled. A
callback honours the abort with one line (``th.cancel_on_abort(exec.abort)``), and the opt-in
strict mode ``ToolRuntime(abort_cancels_callbacks=True)`` runs every awaited callback of an
aborted call under the abort's cancellation, so an abort bounds the whole step.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from tests.support.runtime_helpers import (
    ABORTED_RESULT,
    BEFORE_DISPATCH_RESULT,
    FakeApproval,
    WrapNext,
    call,
    execute_setting_at,
    first_text,
    set_at,
)
from tests.support.runtime_tools import echo_tool, runtime_with
from trio_harness import (
    Allow,
    Ask,
    Session,
    ToolCallBlock,
    ToolRuntime,
    cancel_on_abort,
    execute_tool_calls,
)

SLOW = 1000.0
ABORT_AT = 2.0


def slow_runtime(where: str, *, strict: bool) -> ToolRuntime:
    approval = FakeApproval(gate=trio.Event()) if where == "approval" else None
    runtime = runtime_with(
        echo_tool(is_concurrency_safe=lambda args: True),
        approval=approval,
        abort_cancels_callbacks=strict,
    )
    if where == "pre":

        async def pre(exec: Any, next: Any) -> Any:
            await trio.sleep(SLOW)
            return await next()

        runtime.add_pre_execute(pre)
    elif where == "approval":

        async def ask(exec: Any, next: Any) -> Any:
            return Ask("check")

        runtime.add_pre_execute(ask)
    elif where == "wrapper-before":

        async def before(exec: Any, next: WrapNext) -> Any:
            await trio.sleep(SLOW)
            return await next()

        runtime.add_execute_wrapper(before)
    elif where == "wrapper-after":

        async def after(exec: Any, next: WrapNext) -> Any:
            result = await next()
            await trio.sleep(SLOW)
            return result

        runtime.add_execute_wrapper(after)
    elif where == "post":

        async def post(exec: Any, result: Any, next: Any) -> Any:
            await trio.sleep(SLOW)
            return await next()

        runtime.add_post_execute(post)
    return runtime


# The result each slow place gives a call aborted at t=2 in strict mode.
STRICT_RESULT = {
    "pre": BEFORE_DISPATCH_RESULT,
    "approval": BEFORE_DISPATCH_RESULT,
    "wrapper-before": BEFORE_DISPATCH_RESULT,
    "wrapper-after": ABORTED_RESULT,
    "post": ABORTED_RESULT,
}
PLACES = list(STRICT_RESULT)


@pytest.mark.parametrize("where", PLACES)
async def test_strict_mode_bounds_a_direct_execute_by_the_abort(
    where: str, autojump_clock: trio.testing.MockClock
) -> None:
    runtime = slow_runtime(where, strict=True)
    abort = trio.Event()
    result = await execute_setting_at(runtime, call(abort=abort, agent="me"), abort, ABORT_AT)
    assert trio.current_time() == ABORT_AT
    assert result.to_json() == STRICT_RESULT[where]


@pytest.mark.parametrize("where", PLACES)
async def test_strict_mode_bounds_a_step_by_the_abort(
    where: str, autojump_clock: trio.testing.MockClock
) -> None:
    runtime = slow_runtime(where, strict=True)
    abort = trio.Event()
    session = Session()
    calls = [ToolCallBlock(f"c{i}", "echo", '{"text": "x"}') for i in range(3)]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(set_at(abort, ABORT_AT))
        outcome = await execute_tool_calls(runtime, session, calls, abort=abort, agent="me")
    assert trio.current_time() == ABORT_AT
    assert outcome.aborted
    cited = [e.source_event_seqs for e in session.events if e.type == "tool/result"]
    calls_logged = [e.seq for e in session.events if e.type == "tool/call"]
    assert len(calls_logged) == 3
    assert sorted(seq for (seq,) in cited) == calls_logged  # exactly one result per call


@pytest.mark.parametrize("where", [p for p in PLACES if p != "approval"])
async def test_default_mode_waits_for_callbacks_and_still_answers_once(
    where: str, autojump_clock: trio.testing.MockClock
) -> None:
    runtime = slow_runtime(where, strict=False)
    abort = trio.Event()
    session = Session()
    calls = [ToolCallBlock(f"c{i}", "echo", '{"text": "x"}') for i in range(3)]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(set_at(abort, ABORT_AT))
        await execute_tool_calls(runtime, session, calls, abort=abort)
    # Upstream waits for the callbacks: the step ends only once the slow ones returned.
    assert trio.current_time() >= SLOW
    seqs = [e.source_event_seqs for e in session.events if e.type == "tool/result"]
    calls_logged = [e.seq for e in session.events if e.type == "tool/call"]
    assert sorted(seq for (seq,) in seqs) == calls_logged  # exactly one result per call


async def test_a_hook_honours_the_abort_with_one_line(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runtime = runtime_with(echo_tool())

    async def polite(exec: Any, next: Any) -> Any:
        async with cancel_on_abort(exec.abort) as scope:
            await trio.sleep(SLOW)
        if scope.cancelled_caught:
            return await next()  # the pipeline sees the abort and answers ABORTED_BEFORE_DISPATCH
        return Allow()

    runtime.add_pre_execute(polite)
    abort = trio.Event()
    result = await execute_setting_at(runtime, call(abort=abort), abort, ABORT_AT)
    assert trio.current_time() == ABORT_AT
    assert result.to_json() == BEFORE_DISPATCH_RESULT


async def test_strict_mode_without_an_abort_event_changes_nothing(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runtime = slow_runtime("post", strict=True)
    result = await runtime.execute(call(arguments={"text": "hi"}))
    assert first_text(result) == "hi"
    assert trio.current_time() == SLOW


async def test_strict_mode_keeps_a_denial_that_settled_before_the_abort(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runtime = runtime_with(echo_tool(), abort_cancels_callbacks=True)

    async def deny(exec: Any, next: Any) -> Any:
        from trio_harness import Deny

        await trio.sleep(1)
        return Deny("no")

    runtime.add_pre_execute(deny)
    abort = trio.Event()
    result = await execute_setting_at(runtime, call(abort=abort), abort, ABORT_AT)
    assert first_text(result) == "Error: no"


def test_the_strict_flag_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="abort_cancels_callbacks must be a bool, got int"):
        ToolRuntime(abort_cancels_callbacks=1)  # type: ignore[arg-type]
