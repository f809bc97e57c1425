"""Abort, timeout and outside cancellation on Trio (upstream §5 101–116, and the Trio mapping)."""

from __future__ import annotations

import contextlib
from typing import Any

import attrs
import pytest
import trio
import trio.testing

from tests.support.runtime_helpers import (
    ABORTED_RESULT,
    BEFORE_DISPATCH_RESULT,
    FakeApproval,
    PostNext,
    PreNext,
    WrapNext,
    abort_swapping_wrapper,
    call,
    context_sources,
    execute_setting_at,
    observe_results,
    set_at,
    sleeper,
    split_contexts,
    text_blocks,
)
from tests.support.runtime_tools import content_tool, echo_tool, runtime_with
from trio_harness import (
    Accept,
    Ask,
    Deny,
    HarnessError,
    PostToolDecision,
    PreToolDecision,
    ToolExecution,
    ToolExecutionResult,
    ToolRuntime,
)
from trio_harness._runtime.abort import abort_relay

ABORTED = ABORTED_RESULT
BEFORE_DISPATCH = BEFORE_DISPATCH_RESULT


async def _deferring_child(args: Any, ctx: Any) -> Any:
    ctx.defer_context("child", source={"kind": "plugin", "plugin": "child"})
    return text_blocks("ok")


# -- abort of the body ----------------------------------------------------------------------------


async def test_a_waiting_body_is_aborted_at_the_abort_instant(
    autojump_clock: trio.abc.Clock,
) -> None:
    runtime = runtime_with(content_tool("slow", sleeper(10)))
    abort = trio.Event()
    result = await execute_setting_at(runtime, call("slow", abort=abort), abort, 2)
    assert result.to_json() == ABORTED
    assert trio.current_time() == 2


async def test_abort_through_the_pool_relay_needs_no_watcher_task(
    autojump_clock: trio.abc.Clock,
) -> None:
    runtime = ToolRuntime()
    tasks: list[int] = []

    async def body(args: Any, ctx: Any) -> Any:
        tasks.append(trio.lowlevel.current_statistics().tasks_living)
        await trio.sleep(10)
        return text_blocks("never")

    runtime.register(content_tool("slow", body))
    abort = trio.Event()
    async with abort_relay(abort), trio.open_nursery() as nursery:
        before = trio.lowlevel.current_statistics().tasks_living
        nursery.start_soon(set_at(abort, 3))
        result = await runtime.execute(call("slow", abort=abort))
    assert result.to_json() == ABORTED
    assert trio.current_time() == 3
    # Only the setter task was added while the body ran: no per-call watcher.
    assert tasks == [before + 1]


async def test_a_body_returning_after_the_abort_is_aborted_with_its_contexts(
    autojump_clock: trio.abc.Clock,
) -> None:  # upstream #114
    async def uncooperative(args: Any, ctx: Any) -> Any:
        with trio.CancelScope(shield=True):
            await trio.sleep(5)
        ctx.defer_context("child", source={"kind": "plugin", "plugin": "child"})
        return text_blocks("done anyway")

    runtime = runtime_with(content_tool("stubborn", uncooperative))
    abort = trio.Event()
    result = await execute_setting_at(runtime, call("stubborn", abort=abort), abort, 1)
    # A started body is never abandoned: the result waits for it to settle.
    assert trio.current_time() == 5
    assert split_contexts(result)[0] == ABORTED
    assert context_sources(result) == ["child"]


async def test_a_tool_owned_failure_after_the_abort_is_kept(
    autojump_clock: trio.abc.Clock,
) -> None:  # upstream #110
    async def body(args: Any, ctx: Any) -> Any:
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            raise HarnessError("tool failed", "TOOL_FAILURE") from None

    runtime = runtime_with(content_tool("owner", body))
    abort = trio.Event()
    result = await execute_setting_at(runtime, call("owner", abort=abort), abort, 1)
    assert result.to_json()["error"] == {
        "message": "tool failed",
        "info": {"name": "HarnessError", "code": "TOOL_FAILURE"},
    }


class _CountingArguments:
    """A duck-typed input whose ``arguments`` read is counted (the analogue of a JS getter)."""

    def __init__(self, arguments: Any, abort: trio.Event) -> None:
        self._arguments = arguments
        self.reads = 0
        self.call_id = "c1"
        self.name = "t"
        self.abort = abort
        self.parent = None
        self.agent = None
        self.root_call_id = None

    @property
    def arguments(self) -> Any:
        self.reads += 1
        return self._arguments


@pytest.mark.parametrize("source", ["input", "counting"])
async def test_pre_aborted_calls_skip_every_phase(source: str) -> None:
    # upstream #2 of e.4, #115: arguments read exactly once; no phase entered; one notification of
    # the very (frozen) result returned; exec carries the caller's abort, a unique token and a
    # detached deep copy; the caller's object is untouched.
    phases: list[str] = []
    runtime = runtime_with(content_tool("t", sleeper(0, phases)))

    async def pre(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        phases.append("pre")
        return await next()

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        phases.append("wrapper")
        return await next()

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        phases.append("post")
        return await next()

    runtime.add_pre_execute(pre)
    runtime.add_execute_wrapper(wrapper)
    runtime.add_post_execute(post)
    observed = observe_results(runtime)
    abort = trio.Event()
    abort.set()
    arguments = {"nested": {"list": [1, {"deep": True}]}}
    counting = _CountingArguments(arguments, abort)
    input: Any = counting if source == "counting" else call("t", arguments, abort)
    result = await runtime.execute(input)
    assert result.to_json() == BEFORE_DISPATCH
    if source == "counting":
        assert counting.reads == 1
    assert phases == []
    assert len(observed) == 1
    exec, seen = observed[0]
    assert seen is result
    assert exec.abort is abort
    assert exec.finished
    assert exec.token is not None
    assert exec.arguments == arguments
    assert exec.arguments is not arguments
    assert exec.arguments["nested"] is not arguments["nested"]
    assert exec.arguments["nested"]["list"] is not arguments["nested"]["list"]
    with pytest.raises(AttributeError):
        exec.abort = None
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        result.is_error = False  # type: ignore[misc]
    assert arguments == {"nested": {"list": [1, {"deep": True}]}}


async def test_abort_during_pre_execute_skips_dispatch() -> None:  # upstream #101
    ran: list[str] = []
    runtime = runtime_with(content_tool("t", sleeper(0, ran)))
    abort = trio.Event()

    async def pre(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        abort.set()  # the caller aborts while the hook is deciding
        await trio.lowlevel.checkpoint()
        return await next()

    runtime.add_pre_execute(pre)
    assert (await runtime.execute(call("t", abort=abort))).to_json() == BEFORE_DISPATCH
    assert ran == []


@pytest.mark.parametrize(
    ("settle", "message"),
    [("deny", "policy denied the call"), ("raise", "gate interrupted")],
)
async def test_a_pre_execute_outcome_settling_after_the_abort_is_kept(
    settle: str, message: str
) -> None:  # upstream #102 (a denial), #103 (a pre-execute failure)
    runtime = runtime_with(echo_tool())
    abort = trio.Event()

    async def pre(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        abort.set()
        if settle == "raise":
            raise RuntimeError(message)
        return Deny(message)

    runtime.add_pre_execute(pre)
    result = await runtime.execute(call("echo", abort=abort))
    assert result.to_json() == {
        "content": text_blocks("Error: " + message),
        "isError": True,
        "error": {"message": message},
    }


async def test_abort_overtaking_approval_is_aborted_before_dispatch(
    autojump_clock: trio.abc.Clock,
) -> None:  # upstream #87
    ran: list[str] = []
    gate = trio.Event()
    runtime = ToolRuntime(approval=FakeApproval("allowed-once", gate))
    runtime.register(content_tool("t", sleeper(0, ran)))
    runtime.add_pre_execute(lambda exec, next: _ask())
    abort = trio.Event()

    async def abort_then_grant() -> None:
        await trio.sleep(1)
        abort.set()
        gate.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(abort_then_grant)
        result = await runtime.execute(call("t", abort=abort, agent="agent"))
    assert result.to_json() == BEFORE_DISPATCH
    assert ran == []


async def _ask() -> PreToolDecision:
    return Ask("why")


async def test_approval_cancelled_by_the_abort_is_aborted_before_dispatch() -> None:  # e.4 step 5
    abort = trio.Event()
    abort_on_request = FakeApproval("cancelled")
    runtime = ToolRuntime(approval=abort_on_request)
    runtime.register(echo_tool())

    async def pre(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        abort.set()
        return Ask()

    runtime.add_pre_execute(pre)
    result = await runtime.execute(call("echo", abort=abort, agent="agent"))
    assert result.to_json() == BEFORE_DISPATCH


# -- abort around execute wrappers ----------------------------------------------------------------


async def test_caller_abort_is_rechecked_after_an_async_wrapper(
    autojump_clock: trio.abc.Clock,
) -> None:  # upstream #104
    ran: list[str] = []
    runtime = runtime_with(content_tool("t", sleeper(0, ran)))
    abort = trio.Event()
    runtime.add_execute_wrapper(abort_swapping_wrapper(trio.Event, delay=2))
    result = await execute_setting_at(runtime, call("t", abort=abort), abort, 1)
    assert result.to_json() == BEFORE_DISPATCH
    assert ran == []


async def test_an_already_aborted_replacement_skips_dispatch() -> None:  # upstream #105
    ran: list[str] = []
    runtime = runtime_with(content_tool("t", sleeper(0, ran)))
    replacement = trio.Event()
    replacement.set()
    runtime.add_execute_wrapper(abort_swapping_wrapper(lambda: replacement))
    result = await runtime.execute(call("t", abort=trio.Event()))
    # The caller never aborted: post-execute keeps the wrapper's failure as it is.
    assert result.to_json() == BEFORE_DISPATCH
    assert ran == []


async def test_a_wrapper_short_circuit_overtaken_by_the_abort() -> None:  # upstream #106
    runtime = runtime_with(echo_tool())
    abort = trio.Event()

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        abort.set()
        return ToolExecutionResult(
            is_error=False,
            content=(),
            value="short",
            additional_contexts=(
                {"content": text_blocks("w"), "source": {"kind": "plugin", "plugin": "wrapper"}},
            ),
        )

    runtime.add_execute_wrapper(wrapper)
    result = await runtime.execute(call("echo", abort=abort))
    assert split_contexts(result)[0] == BEFORE_DISPATCH
    assert context_sources(result) == ["wrapper"]


async def test_a_late_wrapper_success_becomes_aborted_with_deferred_contexts() -> (
    None
):  # upstream #107
    runtime = runtime_with(content_tool("t", _deferring_child))
    abort = trio.Event()

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        result = await next()
        abort.set()
        return result

    runtime.add_execute_wrapper(wrapper)
    result = await runtime.execute(call("t", abort=abort))
    assert split_contexts(result)[0] == ABORTED
    assert context_sources(result) == ["child"]


async def test_a_late_post_execute_success_becomes_aborted(
    autojump_clock: trio.abc.Clock,
) -> None:  # upstream #108
    runtime = runtime_with(content_tool("t", _deferring_child))
    abort = trio.Event()

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        await exec.abort.wait()  # type: ignore[union-attr]
        return Accept(
            additional_contexts=[{"content": "p", "source": {"kind": "plugin", "plugin": "post"}}]
        )

    runtime.add_post_execute(post)
    result = await execute_setting_at(runtime, call("t", abort=abort), abort, 4)
    assert trio.current_time() == 4
    assert split_contexts(result)[0] == ABORTED
    assert context_sources(result) == ["child", "post"]


@pytest.mark.parametrize("phase", ["wrapper", "post"])
async def test_hook_failures_settling_after_the_abort_are_kept(
    phase: str,
) -> None:  # upstream #109, #111
    runtime = runtime_with(echo_tool())
    abort = trio.Event()

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        abort.set()
        raise HarnessError("wrapper failed", "WRAPPER_FAILURE")

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        abort.set()
        raise HarnessError("post-policy failed", "POST_FAILURE")

    if phase == "wrapper":
        runtime.add_execute_wrapper(wrapper)
        expected = ("wrapper failed", "WRAPPER_FAILURE")
    else:
        runtime.add_post_execute(post)
        expected = ("post-policy failed", "POST_FAILURE")
    result = await runtime.execute(call("echo", abort=abort))
    assert result.to_json() == {
        "content": text_blocks("Error: " + expected[0]),
        "isError": True,
        "error": {"message": expected[0], "info": {"name": "HarnessError", "code": expected[1]}},
    }


async def test_the_body_sees_a_fusion_of_caller_and_replacement(
    autojump_clock: trio.abc.Clock,
) -> None:  # upstream #112, #113, #121
    seen: dict[str, Any] = {}
    caller = trio.Event()
    replacement = trio.Event()

    async def body(args: Any, ctx: Any) -> Any:
        seen["body"] = ctx.abort
        await trio.sleep(10)
        return text_blocks("never")

    runtime = runtime_with(content_tool("t", body))

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        seen["post"] = exec.abort
        return await next()

    runtime.add_execute_wrapper(abort_swapping_wrapper(lambda: replacement, seen=seen))
    runtime.add_post_execute(post)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(set_at(caller, 2))
        result = await runtime.execute(call("t", abort=caller))
        tasks_after = trio.lowlevel.current_statistics().tasks_living
    assert result.to_json() == ABORTED
    assert trio.current_time() == 2
    assert seen["wrapper"] is caller
    assert seen["post"] is caller
    assert seen["body"] is not caller
    assert seen["body"] is not replacement
    assert seen["body"].is_set()
    assert not replacement.is_set()
    await trio.testing.wait_all_tasks_blocked()
    assert trio.lowlevel.current_statistics().tasks_living <= tasks_after


async def test_a_replacement_event_alone_aborts_the_body(autojump_clock: trio.abc.Clock) -> None:
    runtime = runtime_with(content_tool("t", sleeper(10)))
    replacement = trio.Event()
    runtime.add_execute_wrapper(abort_swapping_wrapper(lambda: replacement))
    result = await execute_setting_at(runtime, call("t", abort=trio.Event()), replacement, 3)
    assert result.to_json() == ABORTED
    assert trio.current_time() == 3


# -- timeout (a trio_harness addition) ------------------------------------------------------------

TIMEOUT = {
    "content": text_blocks("Error: tool call timed out after 1500ms"),
    "isError": True,
    "error": {
        "message": "tool call timed out after 1500ms",
        "info": {"name": "ToolTimeoutError", "code": "TOOL_TIMEOUT"},
    },
}


@pytest.mark.parametrize("abort", ["none", "event", "relay"])
async def test_a_body_past_its_timeout_is_cancelled(
    autojump_clock: trio.abc.Clock, abort: str
) -> None:
    runtime = runtime_with(content_tool("slow", sleeper(10), timeout_ms=1500))
    event = None if abort == "none" else trio.Event()
    if abort == "relay":
        assert event is not None
        async with abort_relay(event):
            result = await runtime.execute(call("slow", abort=event))
    else:
        result = await runtime.execute(call("slow", abort=event))
    assert result.to_json() == TIMEOUT
    assert trio.current_time() == 1.5


async def test_a_body_within_its_timeout_succeeds(autojump_clock: trio.abc.Clock) -> None:
    runtime = runtime_with(content_tool("slow", sleeper(1), timeout_ms=1500))
    result = await runtime.execute(call("slow"))
    assert result.to_json()["value"] == text_blocks("slept")
    assert trio.current_time() == 1


async def test_a_body_swallowing_its_timeout_still_times_out(
    autojump_clock: trio.abc.Clock,
) -> None:
    async def swallow(args: Any, ctx: Any) -> Any:
        with trio.move_on_after(100):
            with contextlib.suppress(trio.Cancelled):
                await trio.sleep(10)
        return text_blocks("late")

    runtime = runtime_with(content_tool("slow", swallow, timeout_ms=1500))
    result = await runtime.execute(call("slow"))
    assert result.to_json() == TIMEOUT


async def test_an_abort_before_the_timeout_wins(autojump_clock: trio.abc.Clock) -> None:
    runtime = runtime_with(content_tool("slow", sleeper(10), timeout_ms=5000))
    abort = trio.Event()
    result = await execute_setting_at(runtime, call("slow", abort=abort), abort, 2)
    assert result.to_json() == ABORTED
    assert trio.current_time() == 2


# -- cancellation from outside is never a result --------------------------------------------------


@pytest.mark.parametrize("with_event", [False, True])
async def test_outer_cancellation_propagates_and_leaves_no_task(
    autojump_clock: trio.abc.Clock, with_event: bool
) -> None:
    observed: list[Any] = []
    runtime = runtime_with(content_tool("slow", sleeper(10)))
    runtime.add_result_observer(lambda exec, result: observed.append(result))
    await trio.testing.wait_all_tasks_blocked()
    before = trio.lowlevel.current_statistics().tasks_living
    abort = trio.Event() if with_event else None
    with trio.move_on_after(2) as scope:
        await runtime.execute(call("slow", abort=abort))
        pytest.fail("execute returned instead of propagating the cancellation")
    assert scope.cancelled_caught
    assert trio.current_time() == 2
    assert observed == []
    await trio.testing.wait_all_tasks_blocked()
    assert trio.lowlevel.current_statistics().tasks_living == before
    assert abort is None or not abort.is_set()


async def test_outer_cancellation_in_a_hook_propagates(autojump_clock: trio.abc.Clock) -> None:
    runtime = runtime_with(echo_tool())

    async def pre(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        await trio.sleep(100)
        return await next()

    runtime.add_pre_execute(pre)
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:

            async def cancel_later() -> None:
                await trio.sleep(1)
                scope.cancel()

            nursery.start_soon(cancel_later)
            await runtime.execute(call("echo", abort=trio.Event()))
            pytest.fail("execute returned instead of propagating the cancellation")
    assert scope.cancelled_caught
    assert trio.current_time() == 1


async def test_keyboard_interrupt_from_a_body_propagates() -> None:
    async def body(args: Any, ctx: Any) -> Any:
        raise KeyboardInterrupt

    runtime = runtime_with(content_tool("ki", body))
    with pytest.raises(KeyboardInterrupt):
        await runtime.execute(call("ki", abort=trio.Event()))
