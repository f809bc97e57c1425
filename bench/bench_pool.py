"""Per-call cost of execute_tool_calls vs a bare Trio pool (no-op bodies).

Run: ``.venv/bin/python bench/bench_pool.py [calls]``. The bare pool is a nursery, a
``CapacityLimiter(10)`` and an ordered commit over settled slots; the pool run uses the real
``ToolRuntime`` with a ``define_tool`` no-op (argument validation, output validation, logging).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import trio

import trio_harness as th


async def bare_pool(n: int) -> float:
    limiter = trio.CapacityLimiter(10)
    slots: list[Any] = [None] * n
    committed: list[Any] = []
    ready = trio.Event()

    async def body(i: int) -> None:
        async with limiter:
            await trio.lowlevel.checkpoint()
            slots[i] = {"i": i}
        ready.set()

    start = time.perf_counter()
    cursor = 0
    async with trio.open_nursery() as nursery:
        for i in range(n):
            async with limiter:  # wait for a free slot before spawning
                pass
            nursery.start_soon(body, i)
            while cursor < n and slots[cursor] is not None:
                committed.append(slots[cursor])
                cursor += 1
            await trio.lowlevel.checkpoint()
    while cursor < n and slots[cursor] is not None:
        committed.append(slots[cursor])
        cursor += 1
    assert len(committed) == n
    return time.perf_counter() - start


async def harness_pool(n: int) -> float:
    async def execute(args: Any, ctx: Any) -> str:
        await trio.lowlevel.checkpoint()
        return "ok"

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
    calls = [th.ToolCallBlock(f"c{i}", "noop", '{"x":1}') for i in range(n)]
    session = th.Session()
    start = time.perf_counter()
    await th.execute_tool_calls(runtime, session, calls)
    elapsed = time.perf_counter() - start
    assert len(session.events) == 2 * n
    return elapsed


async def main(n: int) -> None:
    bare = min([await bare_pool(n) for _ in range(3)])
    pool = min([await harness_pool(n) for _ in range(3)])
    print(f"bare trio pool:      {bare / n * 1e6:8.1f} us/call")
    print(f"execute_tool_calls:  {pool / n * 1e6:8.1f} us/call")
    print(f"ratio:               {pool / bare:8.2f}x")


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
