"""The monitor's rules for hooks, approvals, contexts, abort codes and the trace (issue 28), each
shown silent on the real pool and loud on a pool bug planted for the length of one step; and its
false alarms gone: repeated call ids, a streamed step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import trio

import trio_harness as th
from trio_harness import testing
from trio_harness._pool import driver as driver_module
from trio_harness._pool.driver import Driver
from trio_harness._runtime import body as body_module


class _Approvals:
    """An approval service that takes ``ms`` of virtual time per request and allows."""

    def __init__(self, ms: int = 2) -> None:
        self.ms = ms

    async def request(self, request: th.ApprovalRequest, /) -> str:
        await trio.sleep(self.ms / 1000)
        return "allowed-once"


def _runtime(*, approvals: bool = False, contexts: bool = False) -> th.ToolRuntime:
    async def body(args: Any, ctx: Any) -> str:
        await trio.sleep(args.get("ms", 1) / 1000)
        return "ok"

    runtime = th.ToolRuntime(approval=_Approvals() if approvals else None)
    text = th.ToolOutput(
        schema={"type": "string"}, render=lambda args, value: [{"type": "text", "text": value}]
    )
    for name, parallel in (("read", True), ("write", False)):
        runtime.register(
            th.define_tool(
                name=name,
                description=name,
                parameters={"ms": {"type": "integer"}},
                output=text,
                execute=body,
                is_concurrency_safe=(lambda args: True) if parallel else None,
            )
        )
    if approvals:

        async def ask(exec: Any, next: Callable[[], Any]) -> Any:
            return th.Ask("check")

        runtime.add_pre_execute(ask)
    if contexts:

        async def post(exec: Any, result: Any, next: Callable[[], Any]) -> Any:
            return th.Accept(additional_contexts=({"content": f"after {exec.call_id}"},))

        runtime.add_post_execute(post)
    return runtime


def _calls(*durations: int, ids: list[str] | None = None) -> list[th.ToolCallBlock]:
    return [
        th.ToolCallBlock(ids[i] if ids else f"c{i}", "read", f'{{"ms": {ms}}}')
        for i, ms in enumerate(durations)
    ]


async def _violations(
    runtime: th.ToolRuntime,
    calls: Any,
    *,
    abort_ms: int | None = None,
    contexts: bool = False,
    cap: int = 3,
) -> list[testing.PoolViolation]:
    monitor = testing.PoolMonitor(runtime)
    session = th.Session()
    abort = trio.Event() if abort_ms is not None else None
    accepted: list[Any] = []
    options: dict[str, Any] = {"max_parallel_tool_calls": cap, "agent": "agent"}
    if abort is not None:
        options["abort"] = abort
    if contexts:
        options["accept_context"] = accepted.append
    async with trio.open_nursery() as nursery:
        if abort is not None and abort_ms is not None:

            async def fire() -> None:
                await trio.sleep(abort_ms / 1000)
                abort.set()

            nursery.start_soon(fire)
        await monitor.execute_tool_calls(session, calls, **options)
    return monitor.violations()


def _rules(violations: list[testing.PoolViolation]) -> set[str]:
    return {violation.rule for violation in violations}


# -- the real pool keeps every one of these rules ---------------------------------------------


async def test_the_real_pool_keeps_the_hook_approval_context_and_abort_rules(
    autojump_clock: trio.abc.Clock,
) -> None:
    assert await _violations(_runtime(approvals=True), _calls(5, 1, 3, 2)) == []
    assert await _violations(_runtime(contexts=True), _calls(5, 1, 3), contexts=True) == []
    assert await _violations(_runtime(), _calls(10, 10, 1, 1), abort_ms=4, cap=2) == []


async def test_repeated_call_ids_raise_no_false_alarm(autojump_clock: trio.abc.Clock) -> None:
    # Models and compatible servers send "" or fixed ids; a writer between readers runs alone.
    runtime = _runtime()
    calls = [
        th.ToolCallBlock("a", "read", '{"ms": 3}'),
        th.ToolCallBlock("a", "write", '{"ms": 1}'),
        th.ToolCallBlock("a", "read", '{"ms": 2}'),
        th.ToolCallBlock("", "read", '{"ms": 1}'),
        th.ToolCallBlock("", "write", '{"ms": 1}'),
    ]
    assert await _violations(runtime, calls) == []


async def test_a_streamed_step_is_checked_like_a_list(autojump_clock: trio.abc.Clock) -> None:
    send, receive = trio.open_memory_channel[th.ToolCallBlock](10)
    for call in _calls(3, 1, 2):
        send.send_nowait(call)
    send.close()
    runtime = _runtime()
    monitor = testing.PoolMonitor(runtime)
    session = th.Session()
    outcome = await monitor.execute_tool_calls(session, receive)
    assert monitor.violations() == []
    assert len(outcome.results) == 3


def test_a_stream_failure_taken_while_a_result_waits_raises_no_false_alarm() -> None:
    # The stream raises right after its last call, as c0's body ends and c0's slow post-execute
    # hook would run: the pool takes the failure after admitting c2, and then commits nothing
    # (nothing commits after a failure) while c1 drains. Its wait is no window-idle. Found by
    # docs/property-testing.md's property test (a random local run).
    from trio_harness.testing import PoolScenario, ScenarioCall, ScenarioStep

    step = ScenarioStep(
        calls=(
            ScenarioCall(id="c0", duration=0.5, slow_post=True),
            ScenarioCall(id="c1", duration=1, slow_post=True),
            ScenarioCall(id="c2", duration=0, arrives_at=0.5, wrapper_fails=True),
        ),
        cap=2,
        streamed=True,
        stream_fails=True,
        accept_fails=True,
    )
    assert testing.run_pool_scenario(PoolScenario(steps=(step,), hooks=True, approvals=True)) == []


# -- planted bugs -------------------------------------------------------------------------------


def _finalizing_dispatch(*, deliver: bool) -> Any:
    """A planted driver bug: each dispatch task runs post-execute as soon as its body settled
    (completion order), and with ``deliver`` hands the contexts on there too; the committer then
    only records (``finish`` is made the identity)."""

    async def _dispatch(self: Driver) -> None:
        index, exec = self._pending.popleft()
        self._tell("body-started", index, None)
        try:
            outcome = await self._scheduler.dispatch(exec)
            result = await self._scheduler.finalize(exec, outcome.result)
            if deliver:
                self._recorder.delivered(index, result)
        finally:
            self._window.release_on_behalf_of(index)
        self._tell("settled", index, None)
        self._post(driver_module._Settled(index, exec, result, False))

    return _dispatch


def _plant_finalizing_dispatch(
    monkeypatch: pytest.MonkeyPatch, runtime: th.ToolRuntime, *, deliver: bool
) -> None:
    monkeypatch.setattr(Driver, "_dispatch", _finalizing_dispatch(deliver=deliver))
    monkeypatch.setattr(type(runtime.scheduler), "finish", lambda self, exec, result: result)


async def test_post_execute_in_completion_order_is_caught(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = _runtime(contexts=True)
    _plant_finalizing_dispatch(monkeypatch, runtime, deliver=False)
    found = await _violations(runtime, _calls(5, 1, 3), contexts=True)
    assert "post-execute" in _rules(found), found


async def test_approvals_in_the_dispatch_tasks_are_caught(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The policy phase (hooks, approval) moved into dispatch: approvals overlap, in any order.
    from trio_harness._runtime.pipeline import ToolScheduler

    prepare, dispatch = ToolScheduler.prepare, ToolScheduler.dispatch

    async def early_prepare(self: ToolScheduler, input: Any) -> Any:
        hooks = self._policy.pre_execute
        saved, hooks.items = hooks.items, []
        try:
            return await prepare(self, input)
        finally:
            hooks.items = saved

    async def late_dispatch(self: ToolScheduler, exec: Any) -> Any:
        await self._policy_reason(exec, exec._caller_abort)
        return await dispatch(self, exec)

    monkeypatch.setattr(ToolScheduler, "prepare", early_prepare)
    monkeypatch.setattr(ToolScheduler, "dispatch", late_dispatch)
    found = await _violations(_runtime(approvals=True), _calls(1, 1, 1))
    assert "approval" in _rules(found), found


async def test_contexts_in_settle_order_are_caught(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = _runtime(contexts=True)
    _plant_finalizing_dispatch(monkeypatch, runtime, deliver=True)
    found = await _violations(runtime, _calls(5, 1, 3), contexts=True)
    assert "contexts" in _rules(found), found


async def test_a_cut_body_answered_before_dispatch_is_caught(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(body_module, "aborted_result", th.aborted_before_dispatch_result)
    found = await _violations(_runtime(), _calls(10, 10, 1), abort_ms=4, cap=2)
    assert "abort" in _rules(found), found


@pytest.mark.parametrize("phase", ["prepared", "body-started", "settled", "committed"])
async def test_a_phase_never_told_is_caught(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch, phase: str
) -> None:
    tell = Driver._tell

    def _tell(self: Driver, name: str, index: int, detail: object) -> None:
        if name != phase:
            tell(self, name, index, detail)

    monkeypatch.setattr(Driver, "_tell", _tell)
    found = await _violations(_runtime(), _calls(3, 1, 2))
    assert "trace" in _rules(found), found


async def test_a_failure_turned_into_aborted_is_caught(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tool fails while the abort cuts it short: its failure is its answer, never ABORTED.
    from trio_harness._runtime.pipeline import ToolScheduler

    async def failing(args: Any, ctx: Any) -> str:
        try:
            await trio.sleep(1)
        except trio.Cancelled:
            raise ValueError("cleanup failed") from None
        return "ok"

    def runtime() -> th.ToolRuntime:
        made = _runtime()
        made.register(
            th.define_tool(
                name="fragile",
                description="fails when cut short",
                parameters={},
                output=th.ToolOutput(
                    schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
                ),
                execute=failing,
                is_concurrency_safe=lambda args: True,
            )
        )
        return made

    calls = [th.ToolCallBlock("f", "fragile", "{}"), *_calls(10)]
    assert await _violations(runtime(), calls, abort_ms=4) == []

    finalize = ToolScheduler.finalize

    async def every_result_aborted(self: ToolScheduler, exec: Any, result: Any) -> Any:
        final = await finalize(self, exec, result)
        if exec.abort is not None and exec.abort.is_set() and final.is_error:
            return th.aborted_result()
        return final

    monkeypatch.setattr(ToolScheduler, "finalize", every_result_aborted)
    found = await _violations(runtime(), calls, abort_ms=4)
    assert "abort" in _rules(found), found
