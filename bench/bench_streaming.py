"""When a streamed step ends: waiting for the whole response vs streaming dispatch.

Run: ``.venv/bin/python bench/bench_streaming.py``.

A scripted model stream completes five calls at 0.5, 1.0, 1.5, 2.0 and 2.5 s; their bodies take
3, 1, 1, 1 and 0.2 s. Both variants run the real ``ToolRuntime`` (a ``define_tool`` tool that
sleeps) under ``trio.testing.MockClock``, so the times are virtual and exact:

* ``whole response``: the calls are handed to ``execute_tool_calls`` as a list once the stream
  ended (what a loop that reads the response to its end does);
* ``streaming dispatch``: the receive end of the channel the stream writes to is the step's
  ``tool_calls``; each call starts as soon as it is complete.

The limit: no call ends before it arrived and ran (``max(arrival + body)``), and an exclusive
call starts no earlier than every earlier call ended, later calls no earlier than it ended. Two
scripts: five safe calls, and the same with the middle call exclusive.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import trio
import trio.testing

import trio_harness as th

ARRIVALS = (0.5, 1.0, 1.5, 2.0, 2.5)
BODIES = (3.0, 1.0, 1.0, 1.0, 0.2)
SCRIPTS = {"5 safe calls": (), "exclusive in the middle": (2,)}


def _runtime() -> th.ToolRuntime:
    async def execute(args: Any, ctx: Any) -> str:
        await trio.sleep(args["seconds"])
        return "done"

    runtime = th.ToolRuntime()
    runtime.register(
        th.define_tool(
            name="work",
            description="works for a while",
            parameters={"seconds": {"type": "number"}, "alone": {"type": "boolean"}},
            output=th.ToolOutput(
                schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
            ),
            execute=execute,
            is_concurrency_safe=lambda args: not args.get("alone", False),
        )
    )
    return runtime


def _calls(exclusive: tuple[int, ...]) -> list[th.ToolCallBlock]:
    return [
        th.ToolCallBlock(
            f"c{i}",
            "work",
            f'{{"seconds": {body}, "alone": {"true" if i in exclusive else "false"}}}',
        )
        for i, body in enumerate(BODIES)
    ]


async def _stream(
    send: trio.MemorySendChannel[th.ToolCallBlock], calls: list[th.ToolCallBlock]
) -> None:
    start = trio.current_time()
    async with send:
        for at, call in zip(ARRIVALS, calls, strict=True):
            await trio.sleep_until(start + at)
            await send.send(call)


async def whole_response(calls: list[th.ToolCallBlock]) -> float:
    """Seconds until the step ended when it starts once the stream ended."""
    start = trio.current_time()
    send, receive = trio.open_memory_channel[th.ToolCallBlock](math.inf)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stream, send, calls)
        received = [call async for call in receive]
    await th.execute_tool_calls(_runtime(), th.Session(), received)
    return trio.current_time() - start


async def streaming_dispatch(calls: list[th.ToolCallBlock]) -> float:
    """Seconds until the step ended when it is fed the stream itself."""
    start = trio.current_time()
    send, receive = trio.open_memory_channel[th.ToolCallBlock](0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stream, send, calls)
        await th.execute_tool_calls(_runtime(), th.Session(), receive)
    return trio.current_time() - start


def limit(exclusive: tuple[int, ...]) -> float:
    """The earliest any scheduler could end the step (see the module docstring)."""
    ends: list[float] = []
    barrier = 0.0  # later calls start no earlier than this
    for index, (at, body) in enumerate(zip(ARRIVALS, BODIES, strict=True)):
        if index in exclusive:
            barrier = max(at, *ends) + body if ends else at + body
            ends.append(barrier)
        else:
            ends.append(max(at, barrier) + body)
    return max(ends)


def measure() -> dict[str, dict[str, float]]:
    """Per script: ``whole``, ``streamed`` and ``limit`` (seconds of virtual time)."""
    out: dict[str, dict[str, float]] = {}

    async def main() -> None:
        for name, exclusive in SCRIPTS.items():
            calls = _calls(exclusive)
            out[name] = {
                "whole": await whole_response(calls),
                "streamed": await streaming_dispatch(calls),
                "limit": limit(exclusive),
            }

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return out


def main() -> int:
    print("arrivals", ARRIVALS, "bodies", BODIES, "(virtual seconds)")
    print(f"{'script':<30}{'whole response':>16}{'streaming':>11}{'limit':>7}")
    for name, row in measure().items():
        print(f"{name:<30}{row['whole']:>15.2f}s{row['streamed']:>10.2f}s{row['limit']:>6.2f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main() if len(sys.argv) == 1 else 2)
