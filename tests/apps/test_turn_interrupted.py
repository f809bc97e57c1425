"""A turn cut short from outside still answers every call, in the log and to the model; the pool
itself raises a bare ``trio.Cancelled`` (virtual time, deterministic)."""

from __future__ import annotations

from typing import Annotated

import pytest
import trio
import trio.testing

import trio_harness as th
from trio_harness.lowlevel import check_log

from .scripted_model import ScriptedModel


def slow_runtime(unwind: float = 0) -> th.ToolRuntime:
    """``wait`` (parallel, sleeps ``seconds``; on cancellation takes ``unwind`` seconds to clean up,
    shielded) and ``write`` (exclusive)."""

    @th.tool(parallel=True)
    async def wait(seconds: Annotated[float, "how long"]) -> str:
        """Sleep."""
        try:
            await trio.sleep(seconds)
        except trio.Cancelled:
            with trio.CancelScope(shield=True):
                await trio.sleep(unwind)
            raise
        return "slept"

    @th.tool
    async def write(text: str) -> str:
        """Write (exclusive: behind a barrier)."""
        return text

    runtime = th.ToolRuntime()
    runtime.register(wait)
    runtime.register(write)
    return runtime


STEP = [
    ("c1", "wait", '{"seconds": 10}'),
    ("c2", "wait", '{"seconds": 20}'),
    ("c3", "write", '{"text": "x"}'),
    ("c4", "wait", '{"seconds": 1}'),
]


def codes(results: list[th.StepResult]) -> list[tuple[str, str | None]]:
    return [
        (r.call_id, r.result.error.info.code if r.result.error and r.result.error.info else None)
        for r in results
    ]


def assert_log_answers_every_call(session: th.Session) -> None:
    assert th.log.check_replay(session).valid
    assert check_log([event.to_json() for event in session.events]) == []


async def test_cancelled_from_outside_the_model_still_gets_every_result(
    autojump_clock: trio.testing.MockClock,
) -> None:
    model = ScriptedModel([("", list(STEP)), ("never", [])])
    session = th.Session()
    with trio.move_on_after(5) as scope:
        await th.run_turn(model, slow_runtime(), session)
    assert scope.cancelled_caught
    assert trio.current_time() == 5
    # The two waits were running; the exclusive write and the wait after it never started.
    assert codes(model.results_seen[-1]) == [
        ("c1", "ABORTED"),
        ("c2", "ABORTED"),
        ("c3", "ABORTED_BEFORE_DISPATCH"),
        ("c4", "ABORTED_BEFORE_DISPATCH"),
    ]
    assert_log_answers_every_call(session)


async def test_a_second_interrupt_while_a_body_unwinds_still_hands_every_result_over(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The first Ctrl-C sets the abort (t=1); the body takes 5 s to unwind, shielded; the second
    # Ctrl-C cancels the turn from outside (t=2) while it does.
    model = ScriptedModel([("", list(STEP)), ("never", [])])
    session = th.Session()
    abort = trio.Event()
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:

            async def interrupts() -> None:
                await trio.sleep(1)
                abort.set()
                await trio.sleep(1)
                scope.cancel()

            nursery.start_soon(interrupts)
            await th.run_turn(model, slow_runtime(unwind=5), session, abort=abort)
    assert trio.current_time() == 6  # the shielded clean-up ran to its end
    assert codes(model.results_seen[-1]) == [
        ("c1", "ABORTED"),
        ("c2", "ABORTED"),
        ("c3", "ABORTED_BEFORE_DISPATCH"),
        ("c4", "ABORTED_BEFORE_DISPATCH"),
    ]
    assert len(model.results_seen) == 1
    assert_log_answers_every_call(session)


class Broken(Exception):
    """The scheduler failure :func:`break_dispatch` plants."""


def break_dispatch(runtime: th.ToolRuntime, *, after: float = 0, run_first: bool = False) -> None:
    """Make every dispatch of ``runtime``'s scheduler raise ``Broken("dispatch exploded")``:
    after ``after`` seconds, or (``run_first``) after the real dispatch returned (the scheduler's
    other phases run as they are)."""
    scheduler = runtime.scheduler

    class Wrapped:
        def __getattr__(self, name: str) -> object:
            return getattr(scheduler, name)

        async def dispatch(self, exec: th.ToolExecution) -> object:
            if run_first:
                await scheduler.dispatch(exec)
            elif after:
                await trio.sleep(after)
            raise Broken("dispatch exploded")

    runtime.scheduler = Wrapped()  # type: ignore[assignment]


async def test_a_scheduler_failure_still_answers_the_step() -> None:
    runtime = slow_runtime()
    break_dispatch(runtime)
    model = ScriptedModel([("", [("c1", "write", '{"text": "a"}'), ("c2", "write", "{}")])])
    session = th.Session()
    with pytest.raises(Broken, match="dispatch exploded"):
        await th.run_turn(model, runtime, session)
    assert codes(model.results_seen[-1]) == [("c1", "ABORTED"), ("c2", "ABORTED_BEFORE_DISPATCH")]
    assert_log_answers_every_call(session)


async def test_execute_tool_calls_cancelled_from_outside_raises_cancelled_itself(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[str] = []
    session = th.Session()
    calls = [th.ToolCallBlock(i, n, a) for i, n, a in STEP]
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:

            async def cancel_when_running() -> None:
                await trio.testing.wait_all_tasks_blocked()
                scope.cancel()

            nursery.start_soon(cancel_when_running)
            try:
                await th.execute_tool_calls(slow_runtime(), session, calls)
            except trio.Cancelled:
                seen.append("Cancelled")
                raise
            except BaseExceptionGroup:
                seen.append("group")
                raise
    assert seen == ["Cancelled"]
    assert trio.current_time() == 0
    assert_log_answers_every_call(session)
