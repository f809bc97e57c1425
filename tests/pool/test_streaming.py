"""Streaming dispatch: ``execute_tool_calls`` fed by a channel or an async iterable.

Exact virtual times under ``autojump_clock``; the property tests against listed steps are in
``test_stream_scenarios.py``, the core's own in ``test_stream_machine.py``.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence
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
from trio_harness.testing import PoolMonitor, check_session
from trio_harness.timeline import StepTrace


def _runtime(
    durations: dict[str, float],
    *,
    log: list[tuple[str, str, float]] | None = None,
    safe: dict[str, bool] | None = None,
) -> ToolRuntime:
    """Tool ``work``: sleeps ``durations[call id]``; calls whose arguments say ``{"alone": true}``
    must run alone, and all of them once ``safe["now"]`` is false."""
    state = safe if safe is not None else {"now": True}

    async def execute(args: Any, ctx: Any) -> str:
        if log is not None:
            log.append(("body", ctx.call_id, trio.current_time()))
        await trio.sleep(durations.get(ctx.call_id, 0))
        return ctx.call_id

    runtime = ToolRuntime()
    runtime.register(
        define_tool(
            name="work",
            description="sleeps",
            parameters={"alone": {"type": "boolean"}},
            output=ToolOutput(
                schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
            ),
            execute=execute,
            is_concurrency_safe=lambda args: state["now"] and not args.get("alone", False),
        )
    )
    return runtime


def _call(call_id: str, alone: bool = False) -> ToolCallBlock:
    return ToolCallBlock(call_id, "work", '{"alone": true}' if alone else "{}")


async def _feed(
    send: trio.MemorySendChannel[ToolCallBlock],
    script: Sequence[tuple[float, ToolCallBlock]],
) -> None:
    """Send each call at its (absolute, from now) time, then close the channel."""
    start = trio.current_time()
    async with send:
        for at, block in script:
            await trio.sleep_until(start + at)
            await send.send(block)


def _committed_at(session: Session, times: dict[int, float]) -> dict[str, float]:
    return {
        event.data.message.source.call_id: times[event.seq]
        for event in session.events
        if event.type == "tool/result"
    }


class _TimedSession(Session):
    def __init__(self) -> None:
        super().__init__()
        self.times: dict[int, float] = {}

    def append(self, type: str, data: Any, **kwargs: Any) -> Any:
        event = super().append(type, data, **kwargs)
        self.times[event.seq] = trio.current_time()
        return event


BODIES = {"c0": 3.0, "c1": 1.0, "c2": 1.0, "c3": 1.0, "c4": 0.2}


async def test_safe_calls_start_as_they_arrive_and_commit_in_model_order(
    autojump_clock: trio.abc.Clock,
) -> None:
    # The benchmark's stream: calls complete at 0.5 s steps; the step ends at 3.5 s, not 5.5 s.
    log: list[tuple[str, str, float]] = []
    runtime = _runtime(BODIES, log=log)
    session = _TimedSession()
    send, receive = trio.open_memory_channel[ToolCallBlock](0)
    script = [(0.5 * (i + 1), _call(f"c{i}")) for i in range(5)]
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_feed, send, script)
        outcome = await execute_tool_calls(runtime, session, receive)
    assert trio.current_time() - start == pytest.approx(3.5)
    assert [(call_id, at - start) for _, call_id, at in log] == [
        ("c0", 0.5),
        ("c1", 1.0),
        ("c2", 1.5),
        ("c3", 2.0),
        ("c4", 2.5),
    ]
    committed = {k: v - start for k, v in _committed_at(session, session.times).items()}
    assert committed == pytest.approx({"c0": 3.5, "c1": 3.5, "c2": 3.5, "c3": 3.5, "c4": 3.5})
    assert [r.call_id for r in outcome.results] == ["c0", "c1", "c2", "c3", "c4"]
    assert not outcome.aborted
    assert check_session(session) == []


async def test_an_exclusive_call_waits_for_every_earlier_commit_and_blocks_later_calls(
    autojump_clock: trio.abc.Clock,
) -> None:
    log: list[tuple[str, str, float]] = []
    runtime = _runtime(BODIES, log=log)
    monitor = PoolMonitor(runtime)
    session = _TimedSession()
    send, receive = trio.open_memory_channel[ToolCallBlock](0)
    calls = [_call("c0"), _call("c1"), _call("c2", alone=True), _call("c3"), _call("c4")]
    script = [(0.5 * (i + 1), block) for i, block in enumerate(calls)]
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_feed, send, script)
        await execute_tool_calls(runtime, session, receive, tracer=monitor)
    # c2 (exclusive, arrived at 1.5) starts once c0 (3.5) and c1 committed; c3 and c4 (arrived
    # at 2.0 and 2.5) start when c2 is committed at 4.5.
    assert [(call_id, at - start) for _, call_id, at in log] == [
        ("c0", 0.5),
        ("c1", 1.0),
        ("c2", 3.5),
        ("c3", 4.5),
        ("c4", 4.5),
    ]
    assert trio.current_time() - start == pytest.approx(5.5)
    monitor.check(session, calls)
    monitor.assert_ok()


async def test_calls_already_sent_are_logged_exactly_as_a_list(
    autojump_clock: trio.abc.Clock,
) -> None:
    calls = [_call("c0"), _call("c1"), _call("c2", alone=True), _call("c3")]
    listed, streamed = Session(), Session()
    await execute_tool_calls(_runtime({"c0": 1, "c1": 0}), listed, calls)
    send, receive = trio.open_memory_channel[ToolCallBlock](math.inf)
    for block in calls:
        send.send_nowait(block)
    send.close()
    await execute_tool_calls(_runtime({"c0": 1, "c1": 0}), streamed, receive)
    assert [e.to_json() for e in streamed.events] == [e.to_json() for e in listed.events]


async def test_an_async_generator_is_a_source_too(autojump_clock: trio.abc.Clock) -> None:
    async def calls() -> AsyncIterator[ToolCallBlock]:
        for i in range(3):
            await trio.sleep(1)
            yield _call(f"c{i}")

    session = Session()
    outcome = await execute_tool_calls(_runtime({"c0": 5}), session, calls())
    assert [r.call_id for r in outcome.results] == ["c0", "c1", "c2"]
    assert trio.current_time() == pytest.approx(6.0)  # c0 started at 1, its body takes 5


async def test_a_broken_stream_fails_the_step_after_running_bodies_settle(
    autojump_clock: trio.abc.Clock,
) -> None:
    class StreamBroke(Exception):
        pass

    log: list[tuple[str, str, float]] = []

    async def calls() -> AsyncIterator[ToolCallBlock]:
        yield _call("c0")
        await trio.sleep(1)
        raise StreamBroke("connection reset")

    session = Session()
    with pytest.raises(StreamBroke, match="connection reset"):
        await execute_tool_calls(_runtime({"c0": 3}, log=log), session, calls())
    assert trio.current_time() == pytest.approx(3.0)  # c0's body was not abandoned
    assert [e.type for e in session.events] == ["tool/call"]  # no result after a failure
    assert check_session(session, allow_unpaired=True) == []


async def test_a_streamed_item_that_is_not_a_call_fails_the_step(
    autojump_clock: trio.abc.Clock,
) -> None:
    async def calls() -> AsyncIterator[Any]:
        yield _call("c0")
        yield {"id": "c1"}

    with pytest.raises(TypeError, match=r"tool_calls\[1\] must be a ToolCallBlock"):
        await execute_tool_calls(_runtime({}), Session(), calls())


async def test_an_abort_answers_every_call_that_still_arrives(
    autojump_clock: trio.abc.Clock,
) -> None:
    abort = trio.Event()
    session = Session()
    send, receive = trio.open_memory_channel[ToolCallBlock](0)
    script = [(0.0, _call("c0")), (2.0, _call("c1")), (3.0, _call("c2"))]

    async def abort_later() -> None:
        await trio.sleep(1)
        abort.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(_feed, send, script)
        nursery.start_soon(abort_later)
        outcome = await execute_tool_calls(_runtime({"c0": 10}), session, receive, abort=abort)
    assert outcome.aborted
    assert trio.current_time() == pytest.approx(3.0)  # the step ends with the stream
    codes = [r.result.error.info.code for r in outcome.results if r.result.error]
    assert codes == ["ABORTED", "ABORTED_BEFORE_DISPATCH", "ABORTED_BEFORE_DISPATCH"]
    assert check_session(session) == []


async def test_cancelling_a_streamed_step_answers_every_call_it_read(
    autojump_clock: trio.abc.Clock,
) -> None:
    session = Session()
    send, receive = trio.open_memory_channel[ToolCallBlock](math.inf)
    send.send_nowait(_call("c0"))
    send.send_nowait(_call("c1", alone=True))  # waits behind c0
    with trio.move_on_after(1):
        await execute_tool_calls(_runtime({"c0": 10}), session, receive)
    assert [(e.type, e.data.call_id if e.type == "tool/call" else None) for e in session.events][
        :3
    ] == [("tool/call", "c0"), ("tool/result", None), ("tool/call", "c1")]
    codes = [e.data.error.code for e in session.events if e.type == "tool/result"]
    assert codes == ["ABORTED", "ABORTED_BEFORE_DISPATCH"]
    assert check_session(session) == []
    send.send_nowait(_call("c2"))  # the channel is the caller's: still usable


async def test_a_call_is_classified_when_it_is_needed_not_when_it_arrives(
    autojump_clock: trio.abc.Clock,
) -> None:
    # Window of 2: c2 arrives at 1.5 while c0 and c1 run. It is classified when c0 settles at 2,
    # after c0's commit made every call exclusive, so it waits for c1 (6) instead of starting at 2.
    log: list[tuple[str, str, float]] = []
    safe = {"now": True}
    runtime = _runtime({"c0": 2, "c1": 5}, log=log, safe=safe)

    def flip(exec: Any, result: Any) -> None:
        if exec.call_id == "c0":
            safe["now"] = False

    runtime.add_result_observer(flip)
    send, receive = trio.open_memory_channel[ToolCallBlock](0)
    script = [(0.0, _call("c0")), (1.0, _call("c1")), (1.5, _call("c2"))]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_feed, send, script)
        await execute_tool_calls(runtime, Session(), receive, max_parallel_tool_calls=2)
    assert [(call_id, at) for _, call_id, at in log] == [("c0", 0.0), ("c1", 1.0), ("c2", 6.0)]


async def test_a_traced_streamed_step_reports_arrivals(autojump_clock: trio.abc.Clock) -> None:
    send, receive = trio.open_memory_channel[ToolCallBlock](0)
    trace = StepTrace()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_feed, send, [(1.0, _call("c0")), (2.0, _call("c1"))])
        await execute_tool_calls(_runtime({}), Session(), receive, tracer=trace)
    assert trace.calls == [("c0", "work"), ("c1", "work")]
    arrived = [(at, index) for at, name, index, _ in trace.phases if name == "arrived"]
    assert arrived == [(1.0, 0), (2.0, 1)]
