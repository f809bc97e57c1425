"""Pre-execute, approval, guards, execute wrappers and post-execute (upstream §5 and §6)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from tests.support.runtime_helpers import (
    FakeApproval,
    PostNext,
    PreNext,
    WrapNext,
    call,
    context_sources,
    first_text,
    split_contexts,
    text_blocks,
)
from tests.support.runtime_tools import content_tool, echo_tool, raw_tool, runtime_with
from trio_harness import (
    Accept,
    Allow,
    Ask,
    Block,
    Deny,
    HarnessError,
    PostToolDecision,
    PreToolDecision,
    ToolDefinition,
    ToolExecution,
    ToolExecutionResult,
    ToolOutput,
    ToolRuntime,
    context_message,
    define_tool,
)

AGENT = object()
# The error of a call whose tool was unregistered while a hook ran.
ECHO_UNREGISTERED = {
    "message": 'unknown tool "echo"',
    "info": {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
}


def _echo_runtime(**options: Any) -> ToolRuntime:
    runtime = ToolRuntime(**options)
    runtime.register(echo_tool())
    return runtime


def _pre(decision: PreToolDecision) -> Any:
    async def hook(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        return decision

    return hook


def _post(decision: PostToolDecision) -> Any:
    async def hook(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        return decision

    return hook


def _plugin(name: str, text: str | None = None) -> dict[str, Any]:
    return {"content": text_blocks(text or name), "source": {"kind": "plugin", "plugin": name}}


# -- pre-execute and approval -------------------------------------------------------------------


async def test_pre_execute_deny_still_runs_post_execute_on_a_frozen_result() -> (
    None
):  # upstream #81
    runtime = _echo_runtime()
    runtime.add_pre_execute(_pre(Deny("denied by policy")))
    mutations: list[bool] = []

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        try:
            result.is_error = False  # type: ignore[misc]
        except attrs.exceptions.FrozenInstanceError:
            mutations.append(False)
        return await next()

    runtime.add_post_execute(post)
    result = await runtime.execute(call("echo", {"text": "hi"}))
    assert result.to_json() == {
        "content": text_blocks("Error: denied by policy"),
        "isError": True,
        "error": {"message": "denied by policy"},
    }
    assert mutations == [False]


async def test_ask_without_an_approval_service_is_a_denial() -> None:  # upstream #82, #83
    runtime = _echo_runtime()
    remove = runtime.add_pre_execute(_pre(Ask("needs approval")))
    assert first_text(await runtime.execute(call())) == "Error: needs approval"
    remove()
    runtime.add_pre_execute(_pre(Ask()))
    assert first_text(await runtime.execute(call())) == (
        'Error: tool "echo" requires approval (not yet supported)'
    )


async def test_allowed_once_dispatches_and_forwards_the_ask() -> None:  # upstream #84
    import trio

    approval = FakeApproval("allowed-once")
    runtime = _echo_runtime(approval=approval)
    runtime.add_pre_execute(_pre(Ask("hook wants a human")))
    abort = trio.Event()
    result = await runtime.execute(call("echo", {"text": "hi"}, abort, agent=AGENT))
    assert first_text(result) == "hi"
    assert len(approval.requests) == 1
    request = approval.requests[0]
    assert (request.agent, request.tool_name, request.call_id, request.reason) == (
        AGENT,
        "echo",
        "c1",
        "hook wants a human",
    )
    assert request.abort is abort


@pytest.mark.parametrize(
    ("outcome", "text"),
    [
        ("rejected", 'Error: the user rejected tool "echo"'),  # upstream #85
        ("cancelled", 'Error: approval for tool "echo" was cancelled'),  # upstream #86
        (
            "unavailable",
            'Error: tool "echo" requires approval, but no approval channel is available',
        ),  # upstream #88
    ],
)
async def test_approval_outcomes_map_to_denials(outcome: str, text: str) -> None:
    runtime = _echo_runtime(approval=FakeApproval(outcome))
    runtime.add_pre_execute(_pre(Ask()))
    result = await runtime.execute(call("echo", {"text": "hi"}, agent=AGENT))
    assert result.to_json() == {
        "content": text_blocks(text),
        "isError": True,
        "error": {"message": text.removeprefix("Error: ")},
    }


async def test_agentless_calls_are_denied_without_asking() -> None:  # upstream #89
    approval = FakeApproval()
    runtime = _echo_runtime(approval=approval)
    runtime.add_pre_execute(_pre(Ask("please")))
    result = await runtime.execute(call("echo"))
    assert first_text(result) == (
        'Error: tool "echo" requires approval, but the call has no agent to route it through'
    )
    assert approval.requests == []


async def test_a_rogue_approval_outcome_is_an_error_result() -> None:  # upstream #90
    runtime = _echo_runtime(approval=FakeApproval("yolo"))
    runtime.add_pre_execute(_pre(Ask()))
    result = await runtime.execute(call("echo", agent=AGENT))
    assert result.to_json()["error"] == {
        "message": 'unreachable variant in ApprovalOutcome: "yolo"'
    }


async def test_a_forged_pre_decision_is_an_error_result() -> None:
    runtime = _echo_runtime()
    runtime.add_pre_execute(_pre("allow"))  # type: ignore[arg-type]
    result = await runtime.execute(call())
    assert result.to_json()["error"] == {
        "message": 'unreachable variant in PreToolDecision: "allow"'
    }


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            RuntimeError("permission hook broke"),
            {"message": "permission hook broke"},
        ),  # upstream #126
        (  # upstream #128
            HarnessError("denied", "DENIED"),
            {"message": "denied", "info": {"name": "HarnessError", "code": "DENIED"}},
        ),
    ],
)
async def test_a_raising_pre_execute_hook_is_a_final_error(error: Exception, expected: Any) -> None:
    runtime = _echo_runtime()
    post_calls: list[str] = []
    runtime.add_pre_execute(_raising_pre(error))
    runtime.add_post_execute(_recording_post(post_calls))
    result = await runtime.execute(call())
    assert result.to_json() == {
        "content": text_blocks("Error: " + expected["message"]),
        "isError": True,
        "error": expected,
    }
    assert post_calls == []  # final-result: post-execute is skipped


def _raising_pre(error: Exception) -> Any:
    async def hook(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        raise error

    return hook


def _recording_post(log: list[str]) -> Any:
    async def hook(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        log.append("post")
        return await next()

    return hook


async def test_final_content_transform_captured_at_call_start_still_runs() -> None:  # upstream #93
    seen: list[bool] = []

    def finalizer(exec: ToolExecution, result: ToolExecutionResult) -> Any:
        seen.append(result.is_error)
        return text_blocks("bounded failure")

    runtime = runtime_with(echo_tool(finalize_content=finalizer))

    async def hook(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        runtime.unregister("echo")
        raise HarnessError("policy failed", "POLICY_FAILED")

    runtime.add_pre_execute(hook)
    result = await runtime.execute(call())
    assert result.to_json() == {
        "content": text_blocks("bounded failure"),
        "isError": True,
        "error": {
            "message": "policy failed",
            "info": {"name": "HarnessError", "code": "POLICY_FAILED"},
        },
    }
    assert seen == [True]


# -- guards ---------------------------------------------------------------------------------------


async def test_guards_run_after_the_waterfall_and_cannot_be_overridden() -> (
    None
):  # upstream #186 (global part)
    runtime = runtime_with(raw_tool())
    remove_first = runtime.add_guard(lambda exec: "terminal policy")
    remove_second = runtime.add_guard(lambda exec: "terminal policy")

    async def force_allow(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        return Allow()

    runtime.add_pre_execute(force_allow)
    assert first_text(await runtime.execute(call("t"))) == "Error: terminal policy"
    remove_first()
    assert first_text(await runtime.execute(call("t"))) == "Error: terminal policy"
    remove_second()
    assert first_text(await runtime.execute(call("t"))) == "ran:t"


async def test_guards_compose_monotonically() -> None:  # upstream #187
    calls: list[Any] = []
    runtime = runtime_with(raw_tool(calls=calls))
    runtime.add_guard(lambda exec: None)
    runtime.add_guard(lambda exec: "global denial")
    assert first_text(await runtime.execute(call("t"))) == "Error: global denial"
    assert calls == []


async def test_a_guard_registered_during_evaluation_is_consulted() -> None:  # upstream #188
    order: list[str] = []
    runtime = runtime_with(raw_tool())

    def late(exec: ToolExecution) -> str:
        order.append("late")
        return "late denial"

    def first(exec: ToolExecution) -> None:
        order.append("first")
        runtime.add_guard(late)

    runtime.add_guard(first)
    assert first_text(await runtime.execute(call("t"))) == "Error: late denial"
    assert order == ["first", "late"]


async def test_a_raising_guard_is_a_final_error() -> None:
    def broken(exec: ToolExecution) -> str:
        raise HarnessError("guard broke", "GUARD")

    runtime = _echo_runtime()
    runtime.add_guard(broken)
    post_calls: list[str] = []
    runtime.add_post_execute(_recording_post(post_calls))
    result = await runtime.execute(call())
    assert result.to_json()["error"] == {
        "message": "guard broke",
        "info": {"name": "HarnessError", "code": "GUARD"},
    }
    assert post_calls == []


# -- execute wrappers -----------------------------------------------------------------------------


async def test_deny_short_circuits_before_execute_wrappers() -> None:  # upstream #117
    entered: list[str] = []
    runtime = _echo_runtime()
    runtime.add_pre_execute(_pre(Deny("nope")))

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        entered.append("wrapper")
        return await next()

    runtime.add_execute_wrapper(wrapper)
    assert first_text(await runtime.execute(call())) == "Error: nope"
    assert entered == []


async def test_a_thrown_tool_is_normalized_before_the_wrapper_sees_it() -> (
    None
):  # upstream #118, #120
    async def kaboom(args: Any, ctx: Any) -> Any:
        raise HarnessError("kaboom", "BOOM")

    runtime = runtime_with(content_tool("boom", kaboom))
    seen: list[Any] = []

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        result = await next()
        seen.append(result.to_json())
        return result

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        seen.append(result.is_error)
        return await next()

    runtime.add_execute_wrapper(wrapper)
    runtime.add_post_execute(post)
    result = await runtime.execute(call("boom"))
    assert seen[0]["isError"] is True
    assert seen[0]["error"] == {
        "message": "kaboom",
        "info": {"name": "HarnessError", "code": "BOOM"},
    }
    assert seen[1] is True
    assert first_text(result) == "Error: kaboom"


async def test_dispatch_outcomes_are_frozen_for_wrappers_and_post() -> None:  # upstream #119
    runtime = runtime_with(raw_tool("t", "original"))
    attempts: list[bool] = []

    def attempt(result: ToolExecutionResult) -> None:
        try:
            result.value = "changed"  # type: ignore[misc]
            attempts.append(True)
        except attrs.exceptions.FrozenInstanceError:
            attempts.append(False)

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        result = await next()
        attempt(result)
        return result

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        attempt(result)
        return await next()

    runtime.add_execute_wrapper(wrapper)
    runtime.add_post_execute(post)
    result = await runtime.execute(call("t"))
    assert attempts == [False, False]
    assert result.value == "original"


async def test_order_of_pre_execute_wrappers_and_post() -> None:  # upstream #99, #100
    order: list[str] = []

    async def body(args: Any, ctx: Any) -> Any:
        order.append("dispatch")
        return text_blocks("hi")

    runtime = runtime_with(content_tool("hi", body))

    async def pre(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        order.append("pre:before")
        decision = await next()
        order.append("pre:after")
        return decision

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        order.append("execute:before")
        result = await next()
        order.append("execute:after")
        return result

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        order.append("post:before")
        decision = await next()
        order.append("post:after")
        return decision

    runtime.add_pre_execute(pre)
    runtime.add_execute_wrapper(wrapper)
    runtime.add_post_execute(post)
    result = await runtime.execute(call("hi"))
    assert order == [
        "pre:before",
        "pre:after",
        "execute:before",
        "dispatch",
        "execute:after",
        "post:before",
        "post:after",
    ]
    assert result.to_json() == {
        "content": text_blocks("hi"),
        "isError": False,
        "value": text_blocks("hi"),
    }


async def test_wrapper_authored_failure_is_normalized() -> None:  # upstream #74
    runtime = _echo_runtime()

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        return ToolExecutionResult(
            is_error=True,
            content=text_blocks("wrapper content"),
            value="ignored",
            error=__import__("trio_harness").ToolError("wrapped failure"),
            meta={"wrapped": True},
            additional_contexts=(_plugin("wrapper"),),
            concludes_turn=True,
        )

    runtime.add_execute_wrapper(wrapper)
    result = await runtime.execute(call())
    data, context = split_contexts(result)
    assert data == {
        "content": text_blocks("wrapper content"),
        "isError": True,
        "error": {"message": "wrapped failure"},
        "meta": {"wrapped": True},
    }
    assert [sorted(c) for c in context] == [["content", "id", "role", "source"]]
    assert context[0]["role"] == "user"
    assert isinstance(context[0]["id"], str)


async def test_wrapper_success_is_revalidated_and_rerendered() -> None:  # upstream #122, #124
    ran: list[str] = []

    async def body(args: Any, ctx: Any) -> Any:
        ran.append("body")
        return ""

    runtime = runtime_with(echo_tool(execute=body))

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        return ToolExecutionResult(
            is_error=False,
            content=text_blocks("ignored authored content"),
            value="short-circuited",
            additional_contexts=(_plugin("wrapper"),),
        )

    runtime.add_execute_wrapper(wrapper)
    result = await runtime.execute(call())
    assert ran == []
    assert first_text(result) == "short-circuited"
    assert result.value == "short-circuited"
    assert context_sources(result) == ["wrapper"]
    assert result.additional_contexts[0]["role"] == "user"


async def test_wrapper_success_fails_when_the_tool_disappears() -> None:  # upstream #75
    runtime = _echo_runtime()

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        runtime.unregister("echo")
        return ToolExecutionResult(is_error=False, content=(), value="x")

    runtime.add_execute_wrapper(wrapper)
    result = await runtime.execute(call())
    assert result.to_json()["error"] == ECHO_UNREGISTERED


async def test_a_result_from_another_dispatch_is_revalidated() -> None:  # upstream #123
    cached: list[ToolExecutionResult] = []
    ran: list[str] = []

    async def object_body(args: Any, ctx: Any) -> Any:
        ran.append("object")
        return {"ok": True}

    runtime = _echo_runtime()
    runtime.register(
        define_tool(
            name="obj",
            description="object output",
            parameters={},
            output=ToolOutput(
                schema={"type": "object", "additionalProperties": True},
                render=lambda args, value: text_blocks("obj"),
            ),
            execute=object_body,
        )
    )
    cached.append(await runtime.execute(call("echo", {"text": "cached"})))

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        return cached[0] if exec.name == "obj" else await next()

    runtime.add_execute_wrapper(wrapper)
    result = await runtime.execute(call("obj"))
    assert ran == []
    assert result.to_json()["error"] == {
        "message": 'tool "obj" returned invalid output: "value" must be an object',
        "info": {"name": "ToolOutputError", "code": "INVALID_TOOL_OUTPUT"},
    }


async def test_a_raising_wrapper_is_a_final_error() -> None:  # upstream #125
    runtime = _echo_runtime()
    post_calls: list[str] = []

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        raise RuntimeError("wrapper broke")

    runtime.add_execute_wrapper(wrapper)
    runtime.add_post_execute(_recording_post(post_calls))
    result = await runtime.execute(call())
    assert result.to_json() == {
        "content": text_blocks("Error: wrapper broke"),
        "error": {"message": "wrapper broke"},
        "isError": True,
    }
    assert post_calls == []


async def test_a_wrapper_returning_a_non_result_is_an_error() -> None:
    runtime = _echo_runtime()

    async def wrapper(exec: ToolExecution, next: WrapNext) -> Any:
        return "not a result"

    runtime.add_execute_wrapper(wrapper)
    result = await runtime.execute(call())
    assert result.to_json()["error"] == {
        "message": "tools/execute wrapper must return a ToolExecutionResult, got str"
    }


# -- post-execute ---------------------------------------------------------------------------------


def _projected_tool() -> ToolDefinition:
    async def body(args: Any, ctx: Any) -> Any:
        return {"text": "body"}

    return define_tool(
        name="projected",
        description="projected",
        parameters={},
        output=ToolOutput(
            schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {"text": {"type": "string", "required": True}},
            },
            render=lambda args, value: text_blocks("render:" + value["text"]),
            presentation_meta=lambda args, value: {"projected": value["text"]},
        ),
        execute=body,
    )


async def test_content_replacement_keeps_value_and_meta() -> None:  # upstream #66, #91
    runtime = runtime_with(_projected_tool())
    remove = runtime.add_post_execute(_post(Accept(content=text_blocks("policy content"))))
    result = await runtime.execute(call("projected"))
    assert result.to_json() == {
        "content": text_blocks("policy content"),
        "isError": False,
        "meta": {"projected": "body"},
        "value": {"text": "body"},
    }
    remove()
    runtime.add_post_execute(
        _post(
            Accept(
                value={"text": "policy value"},
                additional_contexts=[_plugin("test", "value context")],
            )
        )
    )
    result = await runtime.execute(call("projected"))
    data, contexts = split_contexts(result)
    assert data == {
        "content": text_blocks("render:policy value"),
        "isError": False,
        "meta": {"projected": "policy value"},
        "value": {"text": "policy value"},
    }
    assert contexts == [
        {
            "id": contexts[0]["id"],
            "role": "user",
            "content": text_blocks("value context"),
            "source": {"kind": "plugin", "plugin": "test"},
        }
    ]
    assert isinstance(contexts[0]["id"], str)
    assert contexts[0]["id"]


async def test_accept_cannot_replace_both_or_supply_an_invalid_value() -> None:  # upstream #67
    runtime = _echo_runtime()
    remove = runtime.add_post_execute(_post(Accept(value="x", content=text_blocks("y"))))
    result = await runtime.execute(call())
    assert result.to_json()["error"] == {
        "message": "tools/post-execute accept decision cannot replace both value and content"
    }
    remove()
    runtime.add_post_execute(_post(Accept(value=1)))
    result = await runtime.execute(call())
    assert result.to_json()["error"]["info"]["code"] == "INVALID_TOOL_OUTPUT"
    assert result.value is __import__("trio_harness").UNSET


async def test_block_is_a_valueless_failure() -> None:  # upstream #68, #92
    runtime = _echo_runtime()
    runtime.add_post_execute(_post(Block(text_blocks("blocked by policy"))))
    result = await runtime.execute(call("echo", {"text": "hi"}))
    assert result.to_json() == {
        "isError": True,
        "error": {"message": "blocked by policy"},
        "content": text_blocks("blocked by policy"),
    }


async def test_value_replacement_does_not_manufacture_context() -> None:  # upstream #69
    runtime = _echo_runtime()
    runtime.add_post_execute(_post(Accept(value="replacement")))
    result = await runtime.execute(call())
    assert result.to_json() == {
        "isError": False,
        "value": "replacement",
        "content": text_blocks("replacement"),
    }


@pytest.mark.parametrize(
    ("feedback", "message"),
    [
        ([], "tool result blocked by post-execute policy"),
        ([{"type": "reasoning", "text": "private rationale"}], "[reasoning content]"),
        (
            [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "x"},
                {"type": "text", "text": "b"},
            ],
            "a\n[image content]\nb",
        ),
    ],
)
async def test_block_message_from_feedback(
    feedback: list[Any], message: str
) -> None:  # upstream #70
    runtime = _echo_runtime()
    runtime.add_post_execute(_post(Block(feedback)))
    result = await runtime.execute(call())
    assert result.error is not None
    assert result.error.message == message
    assert result.to_json()["content"] == feedback


async def test_non_json_block_feedback_is_a_safe_final_error() -> None:  # upstream #71
    runtime = _echo_runtime()
    runtime.add_post_execute(_post(Block([{"type": "text", "text": "x", "f": lambda: None}])))
    result = await runtime.execute(call())
    assert result.to_json() == {
        "content": text_blocks("Error: tool result must be losslessly JSON-serializable"),
        "isError": True,
        "error": {"message": "tool result must be losslessly JSON-serializable"},
    }


async def test_value_replacement_on_a_failure_is_refused() -> None:  # upstream #72
    async def fail(args: Any, ctx: Any) -> Any:
        raise RuntimeError("body failed")

    runtime = _echo_runtime()
    runtime.register(echo_tool("failing", execute=fail))
    runtime.add_post_execute(_post(Accept(value="x")))
    result = await runtime.execute(call("failing"))
    assert result.to_json()["error"] == {
        "message": "tools/post-execute cannot replace the value of a failed result"
    }


async def test_value_replacement_fails_when_the_tool_disappears() -> None:  # upstream #73
    runtime = _echo_runtime()

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        runtime.unregister("echo")
        return Accept(value="late")

    runtime.add_post_execute(post)
    result = await runtime.execute(call())
    assert result.to_json()["error"] == ECHO_UNREGISTERED


async def test_a_raising_post_hook_and_a_forged_decision_are_errors() -> None:  # upstream #127
    runtime = _echo_runtime()

    async def broken(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        raise RuntimeError("post hook broke")

    remove = runtime.add_post_execute(broken)
    assert (await runtime.execute(call())).to_json() == {
        "content": text_blocks("Error: post hook broke"),
        "error": {"message": "post hook broke"},
        "isError": True,
    }
    remove()
    runtime.add_post_execute(_post({"kind": "accept"}))  # type: ignore[arg-type]
    error = (await runtime.execute(call())).error
    assert error is not None
    assert error.message == 'unreachable variant in PostToolDecision: {"kind":"accept"}'


async def test_block_and_accept_carry_contexts() -> None:  # upstream #95, #96
    runtime = _echo_runtime()
    remove = runtime.add_post_execute(
        _post(Block(text_blocks("rejected"), [_plugin("why", "why it was rejected")]))
    )
    blocked = await runtime.execute(call())
    assert blocked.is_error
    assert [c["content"] for c in blocked.additional_contexts] == [
        text_blocks("why it was rejected")
    ]
    remove()
    runtime.add_post_execute(_post(Accept(additional_contexts=[_plugin("fyi")])))
    accepted = await runtime.execute(call())
    assert not accepted.is_error
    assert context_sources(accepted) == ["fyi"]


async def test_deferred_wrapper_and_post_contexts_keep_their_order() -> None:  # upstream #97
    async def body(args: Any, ctx: Any) -> Any:
        ctx.defer_context(text_blocks("nested-1"), source={"kind": "plugin", "plugin": "nested-1"})
        ctx.defer_context("nested-2", source={"kind": "plugin", "plugin": "nested-2"})
        return text_blocks("done")

    runtime = runtime_with(content_tool("composite", body))

    async def wrapper(exec: ToolExecution, next: WrapNext) -> ToolExecutionResult:
        result = await next()
        return attrs.evolve(
            result, additional_contexts=(*result.additional_contexts, _plugin("wrapper"))
        )

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        decision = await next()
        assert isinstance(decision, Accept)
        return Accept(additional_contexts=[_plugin("post"), *decision.additional_contexts])

    runtime.add_execute_wrapper(wrapper)
    runtime.add_post_execute(post)
    result = await runtime.execute(call("composite"))
    assert context_sources(result) == ["nested-1", "nested-2", "wrapper", "post"]
    assert result.additional_contexts[1]["content"] == text_blocks("nested-2")


async def test_deferred_contexts_survive_a_throw_but_not_a_block() -> None:  # upstream #98
    async def body(args: Any, ctx: Any) -> Any:
        ctx.defer_context("nested", source={"kind": "plugin", "plugin": "nested"})
        raise RuntimeError("composite failed")

    runtime = runtime_with(content_tool("composite", body))
    thrown = await runtime.execute(call("composite"))
    assert thrown.is_error
    assert context_sources(thrown) == ["nested"]
    runtime.add_post_execute(_post(Block(text_blocks("no"), [_plugin("blocker")])))
    blocked = await runtime.execute(call("composite"))
    assert context_sources(blocked) == ["blocker"]


async def test_defer_context_after_dispatch_is_refused() -> None:
    kept: list[ToolExecution] = []

    async def body(args: Any, ctx: Any) -> Any:
        kept.append(ctx)
        return text_blocks("x")

    runtime = runtime_with(content_tool("c", body))
    await runtime.execute(call("c"))
    with pytest.raises(RuntimeError, match="defer_context after dispatch settled"):
        kept[0].defer_context("late")
    message = context_message("hello", source={"kind": "plugin", "plugin": "p"})
    assert message["content"] == text_blocks("hello")
    assert list(message) == ["id", "role", "content", "source"]


async def test_nested_calls_get_no_meta_and_forward_conclusions() -> None:  # upstream #76, #77
    async def nested_body(args: Any, ctx: Any) -> Any:
        ctx.conclude_turn()
        return ""

    runtime = runtime_with(echo_tool(presentation_meta=lambda args, value: {"card": True}))
    runtime.register(echo_tool("nested", execute=nested_body))

    async def composite(args: Any, ctx: Any) -> Any:
        inner = await ctx.runtime.execute(call("nested", {}, ctx.abort, "inner", parent=ctx))
        if inner.concludes_turn:
            ctx.conclude_turn()
        meta_probe = await ctx.runtime.execute(call("echo", {}, ctx.abort, "probe", parent=ctx))
        assert meta_probe.meta is __import__("trio_harness").UNSET
        assert meta_probe.value == ""
        return text_blocks("composite")

    runtime.register(content_tool("composite", composite))
    direct = await runtime.execute(call("echo"))
    assert direct.meta == {"card": True}
    result = await runtime.execute(call("composite"))
    assert result.concludes_turn is True
    assert result.to_json()["concludesTurn"] is True

    async def block_nested(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        if exec.name == "nested":
            return Block(text_blocks("blocked"))
        return await next()

    runtime.add_post_execute(block_nested)
    blocked = await runtime.execute(call("composite"))
    assert blocked.is_error is False
    assert blocked.concludes_turn is False


@pytest.mark.parametrize("kind", ["guard", "deny"])
async def test_a_non_string_denial_reason_is_an_error_result(kind: str) -> None:
    runtime = _echo_runtime()
    if kind == "guard":
        runtime.add_guard(lambda exec: 42)  # type: ignore[arg-type, return-value]
    else:
        runtime.add_pre_execute(_pre(Deny(42)))  # type: ignore[arg-type]
    result = await runtime.execute(call())
    assert result.to_json()["error"] == {"message": "a denial reason must be a str, got int"}


def test_runtime_names_are_exported() -> None:
    import trio_harness

    for name in (
        "ToolRuntime",
        "ToolExecution",
        "Allow",
        "Deny",
        "Ask",
        "Accept",
        "Block",
        "ApprovalRequest",
        "ApprovalService",
        "ApprovalOutcome",
        "PreToolDecision",
        "PostToolDecision",
        "context_message",
        "PARALLEL",
        "EXCLUSIVE",
    ):
        assert name in trio_harness.__all__
        assert getattr(trio_harness, name) is not None
    import trio_harness.lowlevel

    assert "ToolScheduler" in trio_harness.lowlevel.__all__
