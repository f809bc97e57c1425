"""Hostile or careless extension code meets the pipeline: every call still ends in exactly one
well-formed result, and the developer can find out what went wrong (issue 8, items 1, 6, 7, 8,
20, 21)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import trio

from tests.support.runtime_helpers import WrapNext, call, first_text
from tests.support.runtime_tools import content_tool, echo_tool, runtime_with
from trio_harness import (
    Accept,
    Allow,
    ErrorInfo,
    HarnessError,
    Session,
    ToolCallBlock,
    ToolError,
    ToolExecutionResult,
    ToolOutput,
    define_tool,
    execute_tool_calls,
)

# -- item 1: a wrapper that forgot ``return`` --------------------------------------------------


async def test_a_wrapper_returning_none_without_calling_next_is_an_error_result() -> None:
    runtime = runtime_with(echo_tool())

    async def forgetful(exec: Any, next: WrapNext) -> Any:
        if exec.arguments.get("text") == "deny":
            return None  # a policy branch that forgot to return a result
        return await next()

    runtime.add_execute_wrapper(forgetful)
    result = await runtime.execute(call(arguments={"text": "deny"}))
    assert result.is_error
    assert first_text(result) == (
        "Error: tools/execute wrapper must return a ToolExecutionResult, got NoneType"
    )


async def test_a_step_with_a_forgetful_wrapper_answers_every_call_once() -> None:
    runtime = runtime_with(echo_tool(is_concurrency_safe=lambda args: True))

    async def forgetful(exec: Any, next: WrapNext) -> Any:
        if exec.call_id == "b":
            return None
        return await next()

    runtime.add_execute_wrapper(forgetful)
    session = Session()
    calls = [ToolCallBlock(i, "echo", f'{{"text": "{i}"}}') for i in "abc"]
    await execute_tool_calls(runtime, session, calls)
    results = [event.to_json() for event in session.events if event.type == "tool/result"]
    assert [r["data"]["message"]["source"]["callId"] for r in results] == ["a", "b", "c"]
    texts = [r["data"]["message"]["content"][0]["content"][0]["text"] for r in results]
    assert texts[0] == "a"
    assert texts[2] == "c"
    assert texts[1].startswith("Error: tools/execute wrapper must return a ToolExecutionResult")


# -- item 6: HarnessError with a message that is not a str --------------------------------------


class OddError(HarnessError):
    def __init__(self, message: Any, code: Any) -> None:
        super().__init__(message, code)


@pytest.mark.parametrize("where", ["pre", "guard", "wrapper", "post", "finalize"])
@pytest.mark.parametrize(("message", "shown"), [(None, "None"), (42, "42"), (["x"], "['x']")])
async def test_a_harness_error_with_a_non_str_message_becomes_an_error_result(
    where: str, message: Any, shown: str
) -> None:
    def finalize(exec: Any, result: Any) -> Any:
        raise OddError(message, 7)

    tool = echo_tool(finalize_content=finalize if where == "finalize" else None)
    runtime = runtime_with(tool)
    if where == "pre":

        async def pre(exec: Any, next: Any) -> Any:
            raise OddError(message, "ODD")

        runtime.add_pre_execute(pre)
    elif where == "guard":

        def guard(exec: Any) -> Any:
            raise OddError(message, "ODD")

        runtime.add_guard(guard)
    elif where == "wrapper":

        async def wrapper(exec: Any, next: Any) -> Any:
            raise OddError(message, "ODD")

        runtime.add_execute_wrapper(wrapper)
    elif where == "post":

        async def post(exec: Any, result: Any, next: Any) -> Any:
            raise OddError(message, "ODD")

        runtime.add_post_execute(post)
    result = await runtime.execute(call(arguments={"text": "hi"}))
    assert result.is_error
    assert first_text(result) == "Error: " + shown
    assert result.error is not None
    assert result.error.message == shown
    assert result.error.info is not None
    assert type(result.error.info.code) is str
    session = Session()
    await execute_tool_calls(runtime, session, [ToolCallBlock("c1", "echo", '{"text": "hi"}')])
    assert Session.from_jsonl(session.to_jsonl()).to_jsonl() == session.to_jsonl()


# -- item 7: malformed error results from a wrapper ---------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        "boom",
        ToolError("boom", info="not info"),  # type: ignore[arg-type]
        ToolError("boom", ErrorInfo("E", 5)),  # type: ignore[arg-type]
        ToolError(None),  # type: ignore[arg-type]
    ],
    ids=["str", "info-str", "code-int", "message-none"],
)
async def test_a_malformed_wrapper_error_is_a_clear_error_and_the_log_stays_writable(
    error: Any,
) -> None:
    runtime = runtime_with(echo_tool())

    async def wrapper(exec: Any, next: WrapNext) -> ToolExecutionResult:
        return ToolExecutionResult(is_error=True, content=[], error=error)

    runtime.add_execute_wrapper(wrapper)
    result = await runtime.execute(call())
    assert first_text(result).startswith(
        "Error: tools/execute wrapper returned a failed result whose error is not a ToolError"
    )
    session = Session()
    await execute_tool_calls(runtime, session, [ToolCallBlock("c1", "echo", "{}")])
    assert Session.from_jsonl(session.to_jsonl()).to_jsonl() == session.to_jsonl()


# -- item 8: a stale trio.Cancelled re-raised by a body -----------------------------------------


async def stale_cancelled() -> trio.Cancelled:
    with trio.CancelScope() as scope:
        scope.cancel()
        try:
            await trio.lowlevel.checkpoint()
        except trio.Cancelled as cancelled:
            kept = cancelled
            raise
    return kept


@pytest.mark.parametrize("with_abort", [False, True])
async def test_a_stale_cancelled_from_a_body_is_that_call_s_error_only(with_abort: bool) -> None:
    kept = await stale_cancelled()

    async def body(args: Any, ctx: Any) -> Any:
        if args.get("text") == "stale":
            raise kept
        await trio.sleep(1)
        return "fine"

    runtime = runtime_with(echo_tool(execute=body, is_concurrency_safe=lambda args: True))
    session = Session()
    calls = [
        ToolCallBlock("a", "echo", '{"text": "x"}'),
        ToolCallBlock("b", "echo", '{"text": "stale"}'),
        ToolCallBlock("c", "echo", '{"text": "y"}'),
    ]
    outcome = await execute_tool_calls(
        runtime, session, calls, abort=trio.Event() if with_abort else None
    )
    assert not outcome.aborted
    texts = [
        event.to_json()["data"]["message"]["content"][0]["content"][0]["text"]
        for event in session.events
        if event.type == "tool/result"
    ]
    assert texts == [
        "fine",
        "Error: a trio.Cancelled was raised that no cancelled scope delivered",
        "fine",
    ]


async def test_a_real_outer_cancellation_still_propagates_through_the_body() -> None:
    async def body(args: Any, ctx: Any) -> Any:
        await trio.sleep(10)

    runtime = runtime_with(echo_tool(execute=body))
    with trio.move_on_after(1) as scope:
        await runtime.execute(call())
    assert scope.cancelled_caught


# -- item 20: synchronous bodies and a bool abort ------------------------------------------------


def test_a_synchronous_def_body_is_rejected_at_definition_time() -> None:
    def body(args: Any, ctx: Any) -> Any:
        return "sync"

    with pytest.raises(TypeError, match=r"execute must be an async function, got the synchronous"):
        echo_tool(execute=body)


async def test_a_lambda_or_partial_returning_an_awaitable_is_still_accepted() -> None:
    import functools

    async def real(args: Any, ctx: Any, suffix: str = "") -> Any:
        return "ok" + suffix

    for execute in (lambda args, ctx: real(args, ctx), functools.partial(real, suffix="!")):
        runtime = runtime_with(echo_tool(execute=execute))
        assert first_text(await runtime.execute(call())) in ("ok", "ok!")


async def test_an_abort_that_is_not_an_event_fails_the_call_clearly() -> None:
    runtime = runtime_with(echo_tool())
    result = await runtime.execute(call(abort=True))  # type: ignore[arg-type]
    assert first_text(result) == "Error: abort must be a trio.Event or None, got bool"
    with pytest.raises(TypeError, match=r"abort must be a trio\.Event or None, got bool"):
        await execute_tool_calls(runtime, Session(), [], abort=True)  # type: ignore[arg-type]


# -- item 21: a body's exception reaches the developer -----------------------------------------


async def test_a_body_exception_is_logged_with_its_traceback_and_kept_on_the_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def body(args: Any, ctx: Any) -> Any:
        raise KeyError("nope")

    runtime = runtime_with(echo_tool(execute=body))
    with caplog.at_level(logging.WARNING, logger="trio_harness"):
        result = await runtime.execute(call())
    assert first_text(result) == "Error: 'nope'"
    assert isinstance(result.exception, KeyError)
    assert "exception" not in result.to_json()
    (record,) = [r for r in caplog.records if r.name == "trio_harness.runtime"]
    assert record.getMessage() == 'tool "echo" (c1) raised KeyError'
    assert record.exc_info is not None
    assert record.exc_info[1] is result.exception


async def test_a_model_error_is_logged_at_debug_only(caplog: pytest.LogCaptureFixture) -> None:
    runtime = runtime_with(echo_tool())
    with caplog.at_level(logging.DEBUG, logger="trio_harness"):
        result = await runtime.execute(call(arguments={"text": 5}))
    assert result.is_error
    assert [r.levelno for r in caplog.records if r.name == "trio_harness.runtime"] == [
        logging.DEBUG
    ]


def test_the_library_logger_prints_nothing_unless_the_app_configures_logging() -> None:
    import subprocess
    import sys

    code = (
        "import trio, trio_harness as th\n"
        "async def body(args, ctx):\n    raise KeyError('nope')\n"
        "tool = th.define_tool(name='t', description='', parameters={},"
        " output=th.ToolOutput(schema={'type': 'null'}, render=lambda a, v: []), execute=body)\n"
        "rt = th.ToolRuntime(); rt.register(tool)\n"
        "r = trio.run(rt.execute, th.ToolExecutionInput('c', 't', {}))\n"
        "print(r.content[0]['text'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == "Error: 'nope'\n"
    assert done.stderr == ""


async def test_accept_keeps_the_exception_of_a_failed_result() -> None:
    async def body(args: Any, ctx: Any) -> Any:
        raise ValueError("bad")

    runtime = runtime_with(content_tool("c", body))

    async def post(exec: Any, result: Any, next: Any) -> Any:
        return Accept(content=[{"type": "text", "text": "replaced"}])

    runtime.add_post_execute(post)

    async def pre(exec: Any, next: Any) -> Any:
        return Allow()

    runtime.add_pre_execute(pre)
    result = await runtime.execute(call("c"))
    assert first_text(result) == "replaced"
    assert isinstance(result.exception, ValueError)


def test_define_tool_still_builds_raw_output_for_reference() -> None:
    # The output contract of define_tool is unchanged by the definition-time body check.
    async def body(args: Any, ctx: Any) -> Any:
        return None

    tool = define_tool(
        name="n",
        description="",
        parameters={},
        output=ToolOutput(schema={"type": "null"}, render=lambda args, value: []),
        execute=body,
    )
    assert tool.output.schema == {"type": "null"}
