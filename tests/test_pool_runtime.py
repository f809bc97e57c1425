"""execute_tool_calls with the real ToolRuntime and define_tool tools."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

import trio_harness as th


def gated_tool(name: str, gates: dict[str, trio.Event], started: list[str], parallel: bool) -> Any:
    async def execute(args: Any, ctx: Any) -> Any:
        started.append(args["id"])
        await gates.setdefault(args["id"], trio.Event()).wait()
        return [{"type": "text", "text": "done-" + args["id"]}]

    return th.define_tool(
        name=name,
        description="gated",
        parameters={"id": {"type": "string", "required": True}},
        output=th.ToolOutput(
            schema={"type": "array", "items": {"type": "json"}}, render=lambda a, v: v
        ),
        execute=execute,
        is_concurrency_safe=(lambda a: True) if parallel else None,
    )


async def test_real_runtime_parallel_group_commits_in_model_order() -> None:
    # upstream #198, #202 against the real pipeline
    gates: dict[str, trio.Event] = {}
    started: list[str] = []
    runtime = th.ToolRuntime()
    runtime.register(gated_tool("x", gates, started, True))
    session = th.Session()
    calls = [th.ToolCallBlock(f"c{i}", "x", f'{{"id":"{i}"}}') for i in (1, 2, 3)]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: th.execute_tool_calls(runtime, session, calls))
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2", "3"]
        for key in ("3", "2", "1"):
            gates[key].set()
    wire = [e.to_json() for e in session.events if e.type == "tool/result"]
    assert [w["data"]["message"]["source"]["callId"] for w in wire] == ["c1", "c2", "c3"]
    assert wire[0]["data"]["message"]["content"][0]["content"] == [
        {"type": "text", "text": "done-1"}
    ]


async def test_real_runtime_abort_and_invalid_arguments() -> None:
    # upstream #215 (shape), #219
    gates: dict[str, trio.Event] = {}
    started: list[str] = []
    runtime = th.ToolRuntime()
    runtime.register(gated_tool("x", gates, started, True))
    abort = trio.Event()
    session = th.Session()
    calls = [th.ToolCallBlock("c0", "x", "not json")] + [
        th.ToolCallBlock(f"c{i}", "x", f'{{"id":"{i}"}}') for i in (1, 2, 3, 4)
    ]
    box: list[Any] = []

    async def run() -> None:
        box.append(
            await th.execute_tool_calls(
                runtime, session, calls, abort=abort, max_parallel_tool_calls=2
            )
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        abort.set()
    assert box[0].aborted
    results = [e.to_json()["data"] for e in session.events if e.type == "tool/result"]
    assert results[0]["message"]["content"][0]["isError"] is True
    assert "must be an object" in results[0]["message"]["content"][0]["content"][0]["text"]
    assert [r.get("error", {}).get("code") for r in results[1:]] == [
        "ABORTED",
        "ABORTED",
        "ABORTED_BEFORE_DISPATCH",
        "ABORTED_BEFORE_DISPATCH",
    ]
    assert session.events[0].data.arguments == "not json"
