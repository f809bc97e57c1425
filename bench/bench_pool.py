"""Per-call cost of execute_tool_calls vs a bare Trio pool (no-op bodies).

Run: ``.venv/bin/python bench/bench_pool.py [calls] [rounds]``.

Times are CPU time of the process (see ``_clock``). Each round runs every variant once, interleaved and in a rotating order (so a noisy neighbour
hurts all of them alike, and none always runs right after the same other one). Reported per
variant: its ratio to the bare pool in each round (the two ran seconds apart), as the median
over the rounds with the spread of the middle half, and the ratio of the best rounds. Variants:

* ``bare trio pool``: the idiomatic pool one would write by hand: a nursery, one task per call
  that holds a ``CapacityLimiter(10)`` token (``async with limiter``) around a no-op body, stores
  its result in its slot and signals the one committer, which commits settled slots in order.
* ``bare, gated spawn``: the same work shaped like the harness's driver (the spawner takes the
  token on the task's behalf before spawning, so at most 10 tasks exist); the tightest bare pool.
* ``bare + abort event``: the bare pool with an abort event never set, as Trio does it (a cancel
  scope per body, one watcher task that cancels them); the baseline of ``... + abort event``.
* ``execute_tool_calls``: the real ``ToolRuntime`` with a ``define_tool`` no-op tool (argument
  validation, output validation and render, session logging).
* ``... + abort event``: the same with ``abort=trio.Event()`` never set (the step's abort relay
  and a registered cancel scope per body).
* ``pool + log, no runtime``: ``execute_tool_calls`` with a scheduler whose phases do nothing but
  run the body: what the pool and the session log cost without the runtime's work.
* ``floor: required work``: ``bare, gated spawn`` doing, by the project's own primitives, only
  the work every faithful call must do (its ``tool/call`` event, the parse, the classifier and
  the argument check, the body, the output check, ``render`` and its snapshot, the result, its
  ``tool/result`` event in model order) and nothing else: no driver, core, scheduler protocol,
  execution context, hooks or abort checks. ``execute_tool_calls`` cannot cost less than this
  with these primitives (the floor even leaves out some required work: see ``floor_pool``); its
  ratio to this is what the shape's machinery costs.

The body is the same in every variant: one checkpoint, then return ``"ok"``.

Ratios to ``bare trio pool`` depend on the number of calls: it spawns every task up front, so
the garbage collector walks more live tasks the more calls there are, and its per-call time grows
with them (about 16 us a call at 2,000 calls, 26 us at 20,000 on the 2-core machine), while the
gated variants keep at most 10 tasks alive. Compare ratios at one size only; ``bench/run.py``
uses 2,000 calls.
"""

from __future__ import annotations

import gc
import math
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio

import trio_harness as th
from trio_harness._json import parse_arguments, snapshot_json_value
from trio_harness._log import TOOL_CALL, TOOL_RESULT, ToolCallData, ToolResultData
from trio_harness._runtime.define import ARGS_ROOT

CAP = 10

#: The process's CPU time: on a shared machine, time spent descheduled (other processes running)
#: is not counted, which is most of the noise of wall time there. Every variant is pure CPU work
#: on one thread (the Trio loop never waits for I/O), so on a quiet machine the two agree.
_clock = time.process_time


async def _noop_body() -> str:
    await trio.lowlevel.checkpoint()
    return "ok"


async def bare_pool(n: int) -> float:
    limiter = trio.CapacityLimiter(CAP)
    slots: list[Any] = [None] * n
    committed: list[Any] = []
    send, receive = trio.open_memory_channel[int](math.inf)

    async def task(i: int) -> None:
        async with limiter:
            slots[i] = await _noop_body()
        send.send_nowait(i)

    start = _clock()
    async with trio.open_nursery() as nursery:
        for i in range(n):
            nursery.start_soon(task, i)
        cursor = 0
        while cursor < n:
            await receive.receive()  # one settle; commit every settled slot at the cursor
            while cursor < n and slots[cursor] is not None:
                committed.append(slots[cursor])
                cursor += 1
    elapsed = _clock() - start
    assert len(committed) == n
    return elapsed


async def bare_gated_pool(n: int) -> float:
    limiter = trio.CapacityLimiter(CAP)
    slots: list[Any] = [None] * n
    committed: list[Any] = []
    send, receive = trio.open_memory_channel[int](math.inf)

    async def task(i: int) -> None:
        try:
            slots[i] = await _noop_body()
        finally:
            limiter.release_on_behalf_of(i)
        send.send_nowait(i)

    start = _clock()
    cursor = 0
    async with trio.open_nursery() as nursery:
        for i in range(n):
            await limiter.acquire_on_behalf_of(i)
            nursery.start_soon(task, i)
            while True:  # drain settles without blocking, then commit in order
                try:
                    receive.receive_nowait()
                except trio.WouldBlock:
                    break
            while cursor < n and slots[cursor] is not None:
                committed.append(slots[cursor])
                cursor += 1
        while cursor < n:
            await receive.receive()
            while cursor < n and slots[cursor] is not None:
                committed.append(slots[cursor])
                cursor += 1
    elapsed = _clock() - start
    assert len(committed) == n
    return elapsed


async def bare_pool_abort(n: int) -> float:
    """The bare pool with an abort event (never set), done the way Trio does it: every task's body
    runs in its own cancel scope, and one watcher task cancels the scopes when the event fires
    (a cancelled body still produces a result, committed in order, as the harness's do)."""
    limiter = trio.CapacityLimiter(CAP)
    slots: list[Any] = [None] * n
    committed: list[Any] = []
    send, receive = trio.open_memory_channel[int](math.inf)
    abort = trio.Event()
    scopes: set[trio.CancelScope] = set()

    async def watch() -> None:
        await abort.wait()
        for scope in scopes:
            scope.cancel()

    async def task(i: int) -> None:
        async with limiter:
            with trio.CancelScope() as scope:
                scopes.add(scope)
                try:
                    slots[i] = await _noop_body()
                finally:
                    scopes.discard(scope)
            if scope.cancelled_caught:
                slots[i] = "aborted"
        send.send_nowait(i)

    start = _clock()
    async with trio.open_nursery() as outer:
        outer.start_soon(watch)
        async with trio.open_nursery() as nursery:
            for i in range(n):
                nursery.start_soon(task, i)
            cursor = 0
            while cursor < n:
                await receive.receive()
                while cursor < n and slots[cursor] is not None:
                    committed.append(slots[cursor])
                    cursor += 1
        outer.cancel_scope.cancel()
    elapsed = _clock() - start
    assert committed == ["ok"] * n
    return elapsed


def _runtime() -> th.ToolRuntime:
    async def execute(args: Any, ctx: Any) -> str:
        return await _noop_body()

    runtime = th.ToolRuntime()
    runtime.register(
        th.define_tool(
            name="noop",
            description="does nothing",
            parameters={"x": {"type": "integer"}},
            output=th.ToolOutput(
                schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
            ),
            execute=execute,
            is_concurrency_safe=lambda a: True,
        )
    )
    return runtime


async def _harness(n: int, abort: trio.Event | None) -> float:
    runtime = _runtime()
    calls = [th.ToolCallBlock(f"c{i}", "noop", '{"x":1}') for i in range(n)]
    session = th.Session()
    start = _clock()
    await th.execute_tool_calls(runtime, session, calls, abort=abort)
    elapsed = _clock() - start
    assert len(session.events) == 2 * n
    assert not session.events[-1].data.message.content[0].is_error
    return elapsed


async def harness_pool(n: int) -> float:
    return await _harness(n, None)


_OK = th.ToolExecutionResult(is_error=False, content=({"type": "text", "text": "ok"},), value="ok")


class _NoopScheduler:
    # Every phase as cheap as it can be: what the pool and the session log cost by themselves.
    async def prepare(self, input: Any) -> Any:
        return th.lowlevel.Preparation("dispatch", input)

    async def dispatch(self, exec: Any) -> Any:
        await _noop_body()
        return th.lowlevel.DispatchOutcome("final-result", _OK)

    async def finalize(self, exec: Any, result: Any) -> Any:
        return result

    def finish(self, exec: Any, result: Any) -> Any:
        return result


class _NoopRuntime:
    scheduler = _NoopScheduler()

    def execution_mode(self, input: Any) -> Any:
        return th.PARALLEL


async def pool_alone(n: int) -> float:
    calls = [th.ToolCallBlock(f"c{i}", "noop", '{"x":1}') for i in range(n)]
    session = th.Session()
    start = _clock()
    await th.execute_tool_calls(_NoopRuntime(), session, calls)
    elapsed = _clock() - start
    assert len(session.events) == 2 * n
    return elapsed


async def floor_pool(n: int) -> float:
    """A lower bound for ``execute_tool_calls``: the ``bare, gated spawn`` pool doing only the work
    every faithful call must do, each piece by the project's own primitive, and nothing else (no
    driver, no core, no scheduler protocol, no execution context, no hooks, no abort checks, no
    tracer checks, no step outcome): the session's ``tool/call`` event when the call starts; the
    parse of the argument text; the classifier and the argument check (once); the body; the
    output check, ``render`` and the snapshot of what it returned; the result; the ``tool/result``
    event at the commit, in model order. A generous bound: it leaves out work a faithful call
    does too (the execution context the body is handed, the classifier's own copy of the
    arguments, the check of the call blocks, the step's results)."""
    runtime = _runtime()
    entry = runtime._registry.lookup("noop")
    assert entry is not None
    assert entry.plan is not None
    check, execute, _owner = entry.plan
    # The author's classifier itself (not ``define_tool``'s wrapper, which would check again).
    assert entry.classify is not None
    _check, classify, _pure = entry.classify
    calls = [th.ToolCallBlock(f"c{i}", "noop", '{"x":1}') for i in range(n)]
    session = th.Session()
    limiter = trio.CapacityLimiter(CAP)
    slots: list[Any] = [None] * n
    seqs: list[int] = [0] * n
    send, receive = trio.open_memory_channel[int](math.inf)

    async def task(i: int) -> None:
        try:
            args = parse_arguments(calls[i].arguments)
            if check(args, ARGS_ROOT) or classify(args) is not True:
                raise AssertionError("the floor's call is valid and parallel")
            value = await execute(args, None)
            if entry.check(value, "value"):
                raise AssertionError("the floor's output is valid")
            content = snapshot_json_value(entry.render(args, value))
            slots[i] = th.ToolExecutionResult(is_error=False, content=tuple(content), value=value)
        finally:
            limiter.release_on_behalf_of(i)
        send.send_nowait(i)

    def commit(cursor: int) -> int:
        while cursor < n and slots[cursor] is not None:
            data = ToolResultData.from_result(0, 0, calls[cursor].id, slots[cursor])
            session.append(TOOL_RESULT, data, source_event_seqs=(seqs[cursor],))
            cursor += 1
        return cursor

    start = _clock()
    cursor = 0
    async with trio.open_nursery() as nursery:
        for i in range(n):
            await limiter.acquire_on_behalf_of(i)
            call = calls[i]
            data = ToolCallData(0, 0, call.id, call.name, call.arguments)
            seqs[i] = session.append(TOOL_CALL, data).seq
            nursery.start_soon(task, i)
            while True:
                try:
                    receive.receive_nowait()
                except trio.WouldBlock:
                    break
            cursor = commit(cursor)
        while cursor < n:
            await receive.receive()
            cursor = commit(cursor)
    elapsed = _clock() - start
    assert len(session.events) == 2 * n
    return elapsed


async def harness_pool_abort(n: int) -> float:
    return await _harness(n, trio.Event())


VARIANTS: dict[str, Callable[[int], Awaitable[float]]] = {
    "bare trio pool": bare_pool,
    "bare, gated spawn": bare_gated_pool,
    "bare + abort event": bare_pool_abort,
    "execute_tool_calls": harness_pool,
    "... + abort event": harness_pool_abort,
    "pool + log, no runtime": pool_alone,
    "floor: required work": floor_pool,
}


async def measure_rounds(n: int, rounds: int) -> dict[str, list[float]]:
    """Seconds for ``n`` calls of every variant in every round (rounds interleaved, rotating)."""
    names = list(VARIANTS)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()
            times[name].append(await VARIANTS[name](n))
    return times


async def measure(n: int, rounds: int) -> dict[str, float]:
    """Best-of-``rounds`` seconds for ``n`` calls of every variant, rounds interleaved."""
    return {name: min(found) for name, found in (await measure_rounds(n, rounds)).items()}


def ratio_stats(times: dict[str, list[float]], name: str, baseline: str) -> dict[str, float]:
    """``name``/``baseline``: the median of the per-round ratios, its middle-half spread
    (``q1``, ``q3``), and ``best`` (best round over best round)."""
    ratios = sorted(a / b for a, b in zip(times[name], times[baseline], strict=True))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return {
        "median": statistics.median(ratios),
        "q1": quartiles[0],
        "q3": quartiles[2],
        "best": min(times[name]) / min(times[baseline]),
    }


async def main(n: int, rounds: int) -> None:
    times = await measure_rounds(n, rounds)
    print(f"{n} calls, {rounds} interleaved rounds; ratios to the bare pool of the same round")
    print(f"{'':24} {'us/call':>8}  {'median':>7}  {'middle half':>13}  {'best/best':>9}")
    for name, found in times.items():
        stats = ratio_stats(times, name, "bare trio pool")
        print(
            f"{name:24} {statistics.median(found) / n * 1e6:8.1f}  {stats['median']:6.3f}x"
            f"  {stats['q1']:5.3f}-{stats['q3']:5.3f}x  {stats['best']:8.3f}x"
        )
    stats = ratio_stats(times, "execute_tool_calls", "floor: required work")
    print(
        f"{'execute_tool_calls':24} {'':8}  {stats['median']:6.3f}x"
        f"  {stats['q1']:5.3f}-{stats['q3']:5.3f}x  {stats['best']:8.3f}x  (to the floor)"
    )
    stats = ratio_stats(times, "... + abort event", "bare + abort event")
    print(
        f"{'... + abort event':24} {'':8}  {stats['median']:6.3f}x"
        f"  {stats['q1']:5.3f}-{stats['q3']:5.3f}x  {stats['best']:8.3f}x  (to bare + abort event)"
    )


if __name__ == "__main__":
    trio.run(
        main,
        int(sys.argv[1]) if len(sys.argv) > 1 else 5000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 41,
    )
