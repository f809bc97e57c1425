"""A step meets hostile application code: exactly one result per call, in model order, whatever
the callbacks do (issue 8, items 3, 9, 17, 18)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from typing import Any

import pytest
import trio

from tests.support.runtime_tools import echo_tool, runtime_with
from trio_harness import (
    MAX_SUB_CALL_DEPTH,
    Session,
    SubCall,
    SubCallDepthError,
    ToolCallBlock,
    ToolOutput,
    context_message,
    define_tool,
    execute_sub_calls,
    execute_tool_calls,
)


def results_per_call(session: Session) -> dict[int, int]:
    calls = {event.seq: 0 for event in session.events if event.type == "tool/call"}
    for event in session.events:
        if event.type == "tool/result":
            (seq,) = event.source_event_seqs or (None,)
            calls[seq] += 1  # type: ignore[index]
    return calls


def context_tool() -> Any:
    async def body(args: Any, ctx: Any) -> Any:
        ctx.defer_context("note from " + ctx.call_id)
        return "done"

    return echo_tool(execute=body, is_concurrency_safe=lambda args: True)


# -- item 3 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("exception", [KeyboardInterrupt, SystemExit])
async def test_accept_context_raising_a_base_exception_leaves_one_result_per_call(
    exception: type[BaseException],
) -> None:
    runtime = runtime_with(context_tool())
    session = Session()

    def accept(context: Any) -> None:
        raise exception()

    calls = [ToolCallBlock(f"c{i}", "echo", "{}") for i in range(3)]
    with pytest.raises(exception):
        await execute_tool_calls(runtime, session, calls, accept_context=accept)
    assert set(results_per_call(session).values()) == {1}
    assert len(results_per_call(session)) == 3
    first = next(e for e in session.events if e.type == "tool/result").to_json()
    # The committed result is the real one, not an ABORTED stand-in.
    assert first["data"]["message"]["content"][0]["content"] == [{"type": "text", "text": "done"}]


def test_a_real_sigint_during_a_step_leaves_one_result_per_call(tmp_path: Any) -> None:
    # A subprocess whose accept_context is slow enough for a real SIGINT to land inside the
    # commit path; whatever the instant, the log it writes has exactly one result per call.
    script = tmp_path / "step.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, sys, time, trio, trio_harness as th

            async def body(args, ctx):
                ctx.defer_context("x")
                await trio.sleep(0)
                return "done"

            tool = th.define_tool(
                name="t", description="", parameters={},
                output=th.ToolOutput(schema={"type": "string"},
                                     render=lambda a, v: [{"type": "text", "text": v}]),
                execute=body, is_concurrency_safe=lambda a: True)
            runtime = th.ToolRuntime(); runtime.register(tool)
            session = th.Session()
            ready = [False]

            def accept(context):
                if not ready[0]:
                    ready[0] = True
                    print("ready", flush=True)
                time.sleep(0.001)

            async def main():
                calls = [th.ToolCallBlock(f"c{i}", "t", "{}") for i in range(5000)]
                await th.execute_tool_calls(runtime, session, calls, accept_context=accept)

            try:
                trio.run(main)
            except KeyboardInterrupt:
                pass
            sys.stdout.write(session.to_jsonl())
            """
        )
    )
    process = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    session = Session.from_jsonl(out)
    counts = results_per_call(session)
    assert counts
    assert set(counts.values()) == {1}
    assert len(counts) == 5000  # every call is answered: the seal closed the log
    codes = [
        json.loads(line)["data"].get("error", {}).get("code")
        for line in out.splitlines()
        if json.loads(line)["type"] == "tool/result"
    ]
    assert codes[0] is None  # a real result first
    assert "ABORTED_BEFORE_DISPATCH" in codes  # the interrupt stopped the step early


# -- item 17 -------------------------------------------------------------------------------------


async def test_an_async_accept_context_is_refused_before_anything_runs() -> None:
    runtime = runtime_with(context_tool())
    session = Session()

    async def accept(context: Any) -> None:
        pass

    with pytest.raises(TypeError, match="accept_context must be a synchronous callable"):
        await execute_tool_calls(
            runtime, session, [ToolCallBlock("c1", "echo", "{}")], accept_context=accept
        )
    assert session.events == []


async def test_an_accept_context_returning_an_awaitable_is_a_clear_failure() -> None:
    runtime = runtime_with(context_tool())
    session = Session()

    async def later(context: Any) -> None:
        pass

    with pytest.raises(TypeError, match="accept_context must be a synchronous callable"):
        await execute_tool_calls(
            runtime,
            session,
            [ToolCallBlock("c1", "echo", "{}")],
            accept_context=lambda context: later(context),
        )
    assert set(results_per_call(session).values()) == {1}


async def test_a_synchronous_accept_context_gets_every_context() -> None:
    runtime = runtime_with(context_tool())
    seen: list[Any] = []
    await execute_tool_calls(
        runtime,
        Session(),
        [ToolCallBlock(f"c{i}", "echo", "{}") for i in range(3)],
        accept_context=seen.append,
    )
    assert [context["content"][0]["text"] for context in seen] == [
        "note from c0",
        "note from c1",
        "note from c2",
    ]
    assert context_message("x")["role"] == "user"


# -- item 18 -------------------------------------------------------------------------------------


async def test_a_classifier_that_mutates_its_arguments_does_not_change_what_the_body_runs() -> None:
    seen: list[Any] = []

    def classify(args: Any) -> bool:
        args["path"] = "/etc/passwd"
        args.pop("limit", None)
        return True

    async def body(args: Any, ctx: Any) -> Any:
        seen.append(args)
        return "ok"

    tool = define_tool(
        name="read",
        description="",
        parameters={"path": {"type": "string", "required": True}, "limit": {"type": "integer"}},
        output=ToolOutput(schema={"type": "string"}, render=lambda args, value: []),
        execute=body,
        is_concurrency_safe=classify,
    )
    runtime = runtime_with(tool)
    session = Session()
    raw = '{"path": "notes.txt", "limit": 3}'
    await execute_tool_calls(runtime, session, [ToolCallBlock("c1", "read", raw)])
    assert seen == [{"path": "notes.txt", "limit": 3}]
    assert session.events[0].to_json()["data"]["arguments"] == raw


# -- item 9 --------------------------------------------------------------------------------------


def nesting_tool(runtime_box: list[Any], reached: list[int]) -> Any:
    async def body(args: Any, ctx: Any) -> Any:
        depth = args["depth"]
        reached.append(depth)
        results = await execute_sub_calls(ctx, [SubCall(f"s{depth}", "nest", {"depth": depth + 1})])
        return results[0].content[0]["text"]

    return define_tool(
        name="nest",
        description="",
        parameters={"depth": {"type": "integer", "required": True}},
        output=ToolOutput(
            schema={"type": "string"}, render=lambda args, value: [{"type": "text", "text": value}]
        ),
        execute=body,
    )


async def test_sub_calls_nested_past_the_limit_give_a_clear_error_result() -> None:
    reached: list[int] = []
    runtime = runtime_with(nesting_tool([], reached))
    session = Session()
    await execute_tool_calls(runtime, session, [ToolCallBlock("c1", "nest", '{"depth": 1}')])
    assert max(reached) == MAX_SUB_CALL_DEPTH
    result = session.events[-1].to_json()["data"]["message"]["content"][0]["content"][0]
    assert result["text"] == (
        f"Error: sub-calls nested deeper than {MAX_SUB_CALL_DEPTH} levels (MAX_SUB_CALL_DEPTH)"
    )
    assert SubCallDepthError(3).code == "SUB_CALL_DEPTH_EXCEEDED"


async def test_cancelling_the_deepest_allowed_tree_unwinds_cleanly() -> None:
    # At the depth limit, an outside cancellation unwinds every level (no TrioInternalError) and
    # the log still has one result per call.
    reached: list[int] = []

    async def body(args: Any, ctx: Any) -> Any:
        depth = args["depth"]
        reached.append(depth)
        if depth == MAX_SUB_CALL_DEPTH:
            await trio.sleep_forever()
        await execute_sub_calls(ctx, [SubCall(f"s{depth}", "nest", {"depth": depth + 1})])
        return "unreachable"

    tool = define_tool(
        name="nest",
        description="",
        parameters={"depth": {"type": "integer", "required": True}},
        output=ToolOutput(schema={"type": "string"}, render=lambda args, value: []),
        execute=body,
    )
    runtime = runtime_with(tool)
    session = Session()
    with trio.move_on_after(5) as scope:
        await execute_tool_calls(runtime, session, [ToolCallBlock("c1", "nest", '{"depth": 1}')])
    assert scope.cancelled_caught
    assert max(reached) == MAX_SUB_CALL_DEPTH
    assert set(results_per_call(session).values()) == {1}


# -- on_inputs: the step's own inputs, before anything runs ---------------------------------------


async def test_on_inputs_gets_the_steps_own_inputs_before_anything_is_logged_or_classified() -> (
    None
):
    session = Session()
    seen: list[Any] = []
    classified: list[Any] = []

    def classify(args: Any) -> bool:
        classified.append(args)
        return True

    runtime = runtime_with(echo_tool(is_concurrency_safe=classify))

    def on_inputs(inputs: Any) -> None:
        # Nothing is logged or classified yet.
        seen.append(([(i.call_id, i.name, i.arguments) for i in inputs], len(session.events)))
        seen.append(len(classified))
        runtime_inputs.extend(inputs)

    runtime_inputs: list[Any] = []
    calls = [ToolCallBlock("c1", "echo", '{"a": 1}'), ToolCallBlock("c2", "echo", "[")]
    await execute_tool_calls(runtime, session, calls, on_inputs=on_inputs)
    assert seen == [([("c1", "echo", {"a": 1}), ("c2", "echo", "[")], 0), 0]
    # They are the inputs the pool classified (one parse: the classifier got the same value).
    assert classified[0] is runtime_inputs[0].arguments
    assert set(results_per_call(session).values()) == {1}


async def test_what_on_inputs_raises_propagates_and_the_step_does_not_run() -> None:
    session = Session()
    ran: list[str] = []

    async def body(args: Any, ctx: Any) -> Any:
        ran.append(ctx.call_id)
        return "done"

    def on_inputs(inputs: Any) -> None:
        raise LookupError("the app's own")

    runtime = runtime_with(echo_tool(execute=body))
    with pytest.raises(LookupError, match="the app's own"):
        await execute_tool_calls(
            runtime, session, [ToolCallBlock("c1", "echo", "{}")], on_inputs=on_inputs
        )
    assert session.events == []
    assert ran == []
