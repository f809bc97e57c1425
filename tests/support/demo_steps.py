"""A small real runtime and the demo step, for the log and timeline tests (no tests here).

``read`` is parallel-safe, ``write`` is exclusive; both sleep ``seconds`` of (virtual) time and
return text. ``demo_calls`` is the demo's step shape: three reads, a write barrier, two reads.
"""

from __future__ import annotations

import json
from typing import Any

import trio

import trio_harness as th

PARAMS = {
    "path": {"type": "string", "required": True},
    "seconds": {"type": "number", "required": True},
}


def _render(args: Any, value: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


def _present_call(args: Any) -> str:
    return f"{args['path']} ({args['seconds']}s)"


def _present_result(args: Any, result: Any) -> str:
    return ("failed: " if result.is_error else "done: ") + args["path"]


def runtime(*, presenters: bool = True) -> th.ToolRuntime:
    """A runtime with ``read`` (parallel) and ``write`` (exclusive)."""
    rt = th.ToolRuntime()
    for name, parallel in (("read", True), ("write", False)):

        async def body(args: Any, ctx: Any, name: str = name) -> str:
            await trio.sleep(args["seconds"])
            return f"{name} {args['path']}"

        rt.register(
            th.define_tool(
                name=name,
                description=name,
                parameters=PARAMS,
                output=th.ToolOutput(schema={"type": "string"}, render=_render),
                execute=body,
                is_concurrency_safe=(lambda args: True) if parallel else None,
                present_call=_present_call if presenters else None,
                present_result=_present_result if presenters else None,
            )
        )
    return rt


def call(call_id: str, name: str, path: str, seconds: float) -> th.ToolCallBlock:
    """A model call with JSON arguments."""
    return th.ToolCallBlock(call_id, name, json.dumps({"path": path, "seconds": seconds}))


def demo_calls(prefix: str = "c") -> list[th.ToolCallBlock]:
    """Three reads, an exclusive write, two reads (the demo's step)."""
    return [
        call(f"{prefix}1", "read", "a.txt", 3),
        call(f"{prefix}2", "read", "b.txt", 1),
        call(f"{prefix}3", "read", "c.txt", 1.5),
        call(f"{prefix}4", "write", "out.txt", 1),
        call(f"{prefix}5", "read", "d.txt", 2),
        call(f"{prefix}6", "read", "e.txt", 1),
    ]


async def two_steps(session: th.Session) -> None:
    """Step 0 runs whole; step 1 is aborted at t=0.5 (an ABORTED result, synthetic pairs)."""
    rt = runtime()
    await th.execute_tool_calls(rt, session, demo_calls(), max_parallel_tool_calls=2)
    abort = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            lambda: th.execute_tool_calls(
                rt, session, demo_calls("d"), step=1, abort=abort, max_parallel_tool_calls=2
            )
        )
        await trio.sleep(0.5)
        abort.set()
    session.append("note", {"text": "after the steps", "n": [1, 2.5, None, True]})


class Ticker:
    """A deterministic wall clock for ``"at"`` times: 1000.0, 1000.5, 1001.0, ..."""

    def __init__(self) -> None:
        self.now = 999.5

    def __call__(self) -> float:
        self.now += 0.5
        return self.now
