"""Per-call cost of execute_tool_calls vs a bare Trio pool (no-op bodies).

Run: ``.venv/bin/python bench/bench_pool.py [calls] [rounds]``.

Each round runs every variant once, interleaved (so a noisy neighbour hurts all of them alike);
the figure reported is the best round of each. Variants:

* ``bare trio pool``: the idiomatic pool one would write by hand: a nursery, one task per call
  that holds a ``CapacityLimiter(10)`` token (``async with limiter``) around a no-op body, stores
  its result in its slot and signals the one committer, which commits settled slots in order.
* ``bare, gated spawn``: the same work shaped like the harness's driver (the spawner takes the
  token on the task's behalf before spawning, so at most 10 tasks exist); the tightest bare pool.
* ``execute_tool_calls``: the real ``ToolRuntime`` with a ``define_tool`` no-op tool (argument
  validation, output validation and render, session logging).
* ``... + abort event``: the same with ``abort=trio.Event()`` never set (the step's abort relay
  and a registered cancel scope per body).

The body is the same in every variant: one checkpoint, then return ``"ok"``.
"""

from __future__ import annotations

import gc
import math
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio

import trio_harness as th

CAP = 10


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

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for i in range(n):
            nursery.start_soon(task, i)
        cursor = 0
        while cursor < n:
            await receive.receive()  # one settle; commit every settled slot at the cursor
            while cursor < n and slots[cursor] is not None:
                committed.append(slots[cursor])
                cursor += 1
    elapsed = time.perf_counter() - start
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

    start = time.perf_counter()
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
    elapsed = time.perf_counter() - start
    assert len(committed) == n
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
    start = time.perf_counter()
    await th.execute_tool_calls(runtime, session, calls, abort=abort)
    elapsed = time.perf_counter() - start
    assert len(session.events) == 2 * n
    assert not session.events[-1].data.message.content[0].is_error
    return elapsed


async def harness_pool(n: int) -> float:
    return await _harness(n, None)


async def harness_pool_abort(n: int) -> float:
    return await _harness(n, trio.Event())


VARIANTS: dict[str, Callable[[int], Awaitable[float]]] = {
    "bare trio pool": bare_pool,
    "bare, gated spawn": bare_gated_pool,
    "execute_tool_calls": harness_pool,
    "... + abort event": harness_pool_abort,
}


async def measure(n: int, rounds: int) -> dict[str, float]:
    """Best-of-``rounds`` seconds for ``n`` calls of every variant, rounds interleaved."""
    best = dict.fromkeys(VARIANTS, math.inf)
    for _ in range(rounds):
        for name, variant in VARIANTS.items():
            gc.collect()
            best[name] = min(best[name], await variant(n))
    return best


async def main(n: int, rounds: int) -> None:
    best = await measure(n, rounds)
    bare, gated = best["bare trio pool"], best["bare, gated spawn"]
    print(f"{n} calls, best of {rounds} interleaved rounds")
    for name, elapsed in best.items():
        print(
            f"{name:20} {elapsed / n * 1e6:7.1f} us/call"
            f"   {elapsed / bare:5.2f}x bare   {elapsed / gated:5.2f}x gated"
        )


if __name__ == "__main__":
    trio.run(
        main,
        int(sys.argv[1]) if len(sys.argv) > 1 else 5000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 7,
    )
