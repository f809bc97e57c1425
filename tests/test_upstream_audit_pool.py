"""Upstream catalogue §7–§8 against the REAL ``ToolRuntime`` and ``define_tool`` tools.

``tests/test_pool.py`` pins these cases on ``FakeRuntime``, whose phase semantics are a model of the
runtime's; the audit (``docs/_fragments/upstream-coverage-runtime-pool.md``) adds each case on the
real pipeline, so a divergence between the fake and the runtime cannot hide a pool bug.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import trio
import trio.testing

import trio_harness as th
from tests.test_runtime_helpers import content_tool, echo_tool, text_blocks
from trio_harness import (
    Accept,
    Deny,
    PostToolDecision,
    PreToolDecision,
    Session,
    StepOutcome,
    ToolCallBlock,
    ToolExecution,
    ToolExecutionResult,
    ToolRuntime,
    execute_tool_calls,
)

PreNext = Callable[[], Awaitable[PreToolDecision]]
PostNext = Callable[[], Awaitable[PostToolDecision]]
BEFORE_DISPATCH = {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}
ABORTED = {"name": "AbortError", "code": "ABORTED"}


def block(call_id: str, name: str, **args: Any) -> ToolCallBlock:
    return ToolCallBlock(call_id, name, json.dumps(args))


def xs(n: int, name: str = "x") -> list[ToolCallBlock]:
    return [block(f"c{i}", name, id=str(i)) for i in range(1, n + 1)]


class Gates:
    def __init__(self) -> None:
        self.events: dict[str, trio.Event] = {}

    def __getitem__(self, key: str) -> trio.Event:
        return self.events.setdefault(key, trio.Event())

    def release(self, *keys: str) -> None:
        for key in keys:
            self[key].set()


def gated_tool(name: str, gates: Gates, started: list[str], *, parallel: bool) -> th.ToolDefinition:
    """Upstream ``gatedTool``: records ``id``, waits for its release, returns ``done-<id>``."""

    async def body(args: Any, ctx: Any) -> Any:
        started.append(args["id"])
        await gates[args["id"]].wait()
        return text_blocks("done-" + args["id"])

    return content_tool(
        name,
        body,
        parameters={"id": {"type": "string", "required": True}},
        is_concurrency_safe=(lambda args: True) if parallel else None,
    )


def gated_runtime(parallel: bool = True) -> tuple[ToolRuntime, Gates, list[str]]:
    gates = Gates()
    started: list[str] = []
    runtime = ToolRuntime()
    runtime.register(gated_tool("x", gates, started, parallel=parallel))
    return runtime, gates, started


def wire(session: Session) -> list[dict[str, Any]]:
    return [event.to_json() for event in session.events]


def result_wire(session: Session) -> list[dict[str, Any]]:
    return [e["data"] for e in wire(session) if e["type"] == "tool/result"]


def result_ids(session: Session) -> list[str]:
    return [d["message"]["source"]["callId"] for d in result_wire(session)]


def call_ids(session: Session) -> list[str]:
    return [e["data"]["callId"] for e in wire(session) if e["type"] == "tool/call"]


def texts(session: Session) -> list[str]:
    return [d["message"]["content"][0]["content"][0]["text"] for d in result_wire(session)]


def timeline(session: Session) -> list[str]:
    out = []
    for e in wire(session):
        if e["type"] == "tool/call":
            out.append("tool/call:" + e["data"]["callId"])
        else:
            out.append("tool/result:" + e["data"]["message"]["source"]["callId"])
    return out


async def start(nursery: trio.Nursery, *args: Any, **kwargs: Any) -> list[StepOutcome]:
    box: list[StepOutcome] = []

    async def runner() -> None:
        box.append(await execute_tool_calls(*args, **kwargs))

    nursery.start_soon(runner)
    return box


def post_adding_context(log: list[str] | None = None) -> Any:
    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        if log is not None:
            log.append(exec.call_id)
        decision = await next()
        assert isinstance(decision, Accept)
        return Accept(
            additional_contexts=[
                *decision.additional_contexts,
                {"content": "ctx-" + exec.call_id, "source": {"kind": "plugin", "plugin": "p"}},
            ]
        )

    return post


def context_text(context: Any) -> str:
    return str(context["content"][0]["text"])


# -- §7 grouping and barriers ------------------------------------------------------------------


async def test_real_exclusive_call_between_parallel_calls_forms_three_groups() -> None:
    # upstream #199
    order: list[str] = []

    async def read(args: Any, ctx: Any) -> Any:
        order.append("r-start-" + args["id"])
        await trio.lowlevel.checkpoint()
        order.append("r-end-" + args["id"])
        return text_blocks("r")

    async def write(args: Any, ctx: Any) -> Any:
        order.append("w-" + args["id"])
        return text_blocks("w")

    runtime = ToolRuntime()
    id_param = {"id": {"type": "string", "required": True}}
    runtime.register(
        content_tool("r", read, parameters=id_param, is_concurrency_safe=lambda a: True)
    )
    runtime.register(content_tool("w", write, parameters=id_param))
    session = Session()
    calls = [block("c1", "r", id="A1"), block("c2", "w", id="A2"), block("c3", "r", id="A3")]
    await execute_tool_calls(runtime, session, calls)
    assert order == ["r-start-A1", "r-end-A1", "w-A2", "r-start-A3", "r-end-A3"]
    assert result_ids(session) == ["c1", "c2", "c3"]


async def test_real_pending_calls_are_reclassified_after_a_barrier_replaces_their_tool() -> None:
    # upstream #200
    gates = Gates()
    started: list[str] = []
    runtime = ToolRuntime()
    runtime.register(gated_tool("x", gates, started, parallel=True))

    async def replace(args: Any, ctx: Any) -> Any:
        runtime.unregister("x")
        runtime.register(gated_tool("x", gates, started, parallel=False))
        return text_blocks("replaced")

    runtime.register(content_tool("replace", replace, parameters={"id": {"type": "string"}}))
    session = Session()
    calls = [block("c0", "replace", id="0"), block("c1", "x", id="1"), block("c2", "x", id="2")]
    async with trio.open_nursery() as nursery:
        await start(nursery, runtime, session, calls)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1"]
        gates.release("1")
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        gates.release("2")
    assert result_ids(session) == ["c0", "c1", "c2"]


async def test_real_result_observer_making_the_next_call_exclusive_stops_replenishing() -> None:
    # upstream #201
    runtime, gates, started = gated_runtime()
    replacement: list[str] = []

    def observer(exec: Any, result: ToolExecutionResult) -> None:
        if exec.call_id == "c1":
            runtime.unregister("x")
            runtime.register(gated_tool("x", gates, replacement, parallel=False))

    runtime.add_result_observer(observer)
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, runtime, session, xs(3), max_parallel_tool_calls=2)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        gates.release("1")
        await trio.testing.wait_all_tasks_blocked()
        assert result_ids(session) == ["c1"]
        assert replacement == []
        gates.release("2")
        await trio.testing.wait_all_tasks_blocked()
        assert replacement == ["3"]
        gates.release("3")
    assert result_ids(session) == ["c1", "c2", "c3"]


# -- §7 rolling pool ---------------------------------------------------------------------------


async def test_real_cap_two_replenishes_with_the_upstream_event_order() -> None:
    # upstream #207
    runtime, gates, started = gated_runtime()
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, runtime, session, xs(4), max_parallel_tool_calls=2)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        gates.release("1")
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2", "3"]
        assert timeline(session)[:4] == [
            "tool/call:c1",
            "tool/call:c2",
            "tool/result:c1",
            "tool/call:c3",
        ]
        gates.release("4", "3", "2")
    assert result_ids(session) == ["c1", "c2", "c3", "c4"]
    assert texts(session) == ["done-1", "done-2", "done-3", "done-4"]


async def test_real_cap_one_is_fully_serial() -> None:
    # upstream #208
    runtime, gates, started = gated_runtime()
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, runtime, session, xs(3), max_parallel_tool_calls=1)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1"]
        gates.release("1")
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        gates.release("2", "3")
    assert result_ids(session) == ["c1", "c2", "c3"]


# -- §7 ordered middleware and contexts --------------------------------------------------------


async def test_real_pre_and_post_execute_observe_model_call_order() -> None:
    # upstream #210
    runtime, gates, _ = gated_runtime()
    pre_order: list[str] = []
    post_order: list[str] = []

    async def pre(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        pre_order.append(exec.call_id)
        return await next()

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        post_order.append(exec.call_id)
        return await next()

    runtime.add_pre_execute(pre)
    runtime.add_post_execute(post)
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, runtime, session, xs(3))
        await trio.testing.wait_all_tasks_blocked()
        for key in ("3", "2", "1"):
            gates.release(key)
            await trio.testing.wait_all_tasks_blocked()
    assert pre_order == ["c1", "c2", "c3"]
    assert post_order == ["c1", "c2", "c3"]


async def test_real_contexts_are_accepted_in_model_order_not_settlement_order() -> None:
    # upstream #211, #223 (each context reaches accept_context after its own tool/result)
    runtime, gates, _ = gated_runtime()
    runtime.add_post_execute(post_adding_context())
    session = Session()
    accepted: list[tuple[str, list[str]]] = []
    async with trio.open_nursery() as nursery:
        await start(
            nursery,
            runtime,
            session,
            xs(2),
            max_parallel_tool_calls=2,
            accept_context=lambda c: accepted.append((context_text(c), result_ids(session))),
        )
        await trio.testing.wait_all_tasks_blocked()
        gates.release("2")
        await trio.testing.wait_all_tasks_blocked()
        assert accepted == []
        gates.release("1")
    assert accepted == [("ctx-c1", ["c1"]), ("ctx-c2", ["c1", "c2"])]


async def test_real_pre_execute_denials_and_errors_are_ordered_without_dispatch() -> None:
    # upstream #212, #225: a denial is a post-result (post runs), a throw a final-result (no post)
    runtime, gates, started = gated_runtime()
    post_seen: list[str] = []

    async def pre(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        if exec.call_id == "c2":
            return Deny("blocked by policy")
        if exec.call_id == "c3":
            raise RuntimeError("pre exploded")
        return await next()

    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        post_seen.append(exec.call_id)
        return await next()

    runtime.add_pre_execute(pre)
    runtime.add_post_execute(post)
    session = Session()
    async with trio.open_nursery() as nursery:
        await start(nursery, runtime, session, xs(3))
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1"]
        gates.release("1")
    assert post_seen == ["c1", "c2"]
    assert result_ids(session) == ["c1", "c2", "c3"]
    assert texts(session) == ["done-1", "Error: blocked by policy", "Error: pre exploded"]
    assert [d["message"]["content"][0]["isError"] for d in result_wire(session)] == [
        False,
        True,
        True,
    ]
    assert all("error" not in d for d in result_wire(session))  # plain errors carry no info


# -- §7 abort handling -------------------------------------------------------------------------


async def test_real_already_aborted_step_starts_nothing_and_balances_the_log() -> None:
    # upstream #213, #232
    runtime, _, started = gated_runtime()
    observed: list[str] = []
    runtime.add_result_observer(lambda exec, result: observed.append(exec.call_id))
    abort = trio.Event()
    abort.set()
    session = Session()
    outcome = await execute_tool_calls(runtime, session, xs(2), abort=abort)
    assert outcome == StepOutcome(concluded=False, aborted=True)
    assert started == []
    assert observed == []  # synthetic pairs bypass tools/result
    assert timeline(session) == [
        "tool/call:c1",
        "tool/result:c1",
        "tool/call:c2",
        "tool/result:c2",
    ]
    for data in result_wire(session):
        assert data["error"] == BEFORE_DISPATCH
        assert data["message"]["content"][0]["isError"] is True
        assert data["message"]["content"][0]["content"] == text_blocks(
            "Error: tool call aborted before dispatch"
        )


async def test_real_abort_during_ordered_pre_execute_stops_starting_siblings() -> None:
    # upstream #214
    runtime, _, started = gated_runtime()
    abort = trio.Event()
    pre_seen: list[str] = []

    async def pre(exec: ToolExecution, next: PreNext) -> PreToolDecision:
        pre_seen.append(exec.call_id)
        abort.set()
        return await next()

    runtime.add_pre_execute(pre)
    session = Session()
    outcome = await execute_tool_calls(runtime, session, xs(2), abort=abort)
    assert outcome.aborted
    assert started == []
    assert pre_seen == ["c1"]
    assert call_ids(session) == ["c1", "c2"]
    assert [d["error"] for d in result_wire(session)] == [BEFORE_DISPATCH, BEFORE_DISPATCH]


async def test_real_abort_stops_replenishing_commits_started_calls_and_keeps_contexts() -> None:
    # upstream #215
    runtime, gates, started = gated_runtime()
    runtime.add_post_execute(post_adding_context())
    abort = trio.Event()
    session = Session()
    accepted: list[str] = []
    async with trio.open_nursery() as nursery:
        box = await start(
            nursery,
            runtime,
            session,
            xs(4),
            abort=abort,
            max_parallel_tool_calls=2,
            accept_context=lambda c: accepted.append(context_text(c)),
        )
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        abort.set()
        gates.release("1", "2")
    assert box[0].aborted
    assert started == ["1", "2"]
    assert call_ids(session) == ["c1", "c2", "c3", "c4"]
    assert result_ids(session) == ["c1", "c2", "c3", "c4"]
    assert [d["error"] for d in result_wire(session)] == [
        ABORTED,
        ABORTED,
        BEFORE_DISPATCH,
        BEFORE_DISPATCH,
    ]
    assert accepted == ["ctx-c1", "ctx-c2"]


async def test_real_exclusive_barrier_does_not_run_after_a_parallel_group_aborts() -> None:
    # upstream #216
    gates = Gates()
    started: list[str] = []
    ran: list[str] = []

    async def exclusive(args: Any, ctx: Any) -> Any:
        ran.append(ctx.call_id)
        return text_blocks("x")

    runtime = ToolRuntime()
    runtime.register(gated_tool("p", gates, started, parallel=True))
    runtime.register(content_tool("x", exclusive, parameters={"id": {"type": "string"}}))
    abort = trio.Event()
    session = Session()
    calls = [block("c1", "p", id="1"), block("c2", "p", id="2"), block("c3", "x", id="3")]
    async with trio.open_nursery() as nursery:
        await start(nursery, runtime, session, calls, abort=abort, max_parallel_tool_calls=2)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        abort.set()
    assert ran == []
    assert call_ids(session) == ["c1", "c2", "c3"]
    last = result_wire(session)[-1]
    assert last["message"]["source"]["callId"] == "c3"
    assert last["message"]["content"][0]["isError"] is True
    assert last["error"] == BEFORE_DISPATCH


# -- §7 failure quiescence ---------------------------------------------------------------------


async def test_real_scheduler_wrapper_failure_drains_started_bodies_first() -> None:
    # upstream #217, with a wrapper assigned to the real runtime's ``scheduler``
    runtime, gates, started = gated_runtime()
    real = runtime.scheduler
    c3_gate = trio.Event()
    c1_reject = trio.Event()

    class Wrapped:
        async def prepare(self, input: Any) -> Any:
            if input.call_id == "c3":
                await c3_gate.wait()
            return await real.prepare(input)

        async def dispatch(self, exec: Any) -> Any:
            if exec.call_id == "c1":
                await c1_reject.wait()
                raise RuntimeError("scheduler exploded")
            await real.dispatch(exec)
            raise RuntimeError("sibling failed while draining")

        async def finalize(self, exec: Any, result: Any) -> Any:
            return await real.finalize(exec, result)

        def finish(self, exec: Any, result: Any) -> Any:
            return real.finish(exec, result)

    runtime.scheduler = Wrapped()
    session = Session()
    raised: list[BaseException] = []

    async def runner() -> None:
        try:
            await execute_tool_calls(runtime, session, xs(3), max_parallel_tool_calls=3)
        except RuntimeError as exc:
            raised.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(runner)
        await trio.testing.wait_all_tasks_blocked()
        c1_reject.set()
        await trio.testing.wait_all_tasks_blocked()
        c3_gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert raised == []  # c2's body is still running
        assert started == ["2"]
        gates.release("2")
    assert [str(e) for e in raised] == ["scheduler exploded"]
    assert started == ["2"]
    assert call_ids(session) == ["c1", "c2", "c3"]
    assert result_wire(session) == []


# -- §8 single-call events ---------------------------------------------------------------------


async def test_real_non_json_arguments_fail_validation_with_the_exact_message() -> None:
    # upstream #219
    runtime = ToolRuntime()
    runtime.register(content_tool("t", parameters={"input": {"type": "string"}}))
    session = Session()
    await execute_tool_calls(runtime, session, [ToolCallBlock("c1", "t", "not json")])
    events = wire(session)
    assert events[0]["data"]["arguments"] == "not json"
    assert texts(session) == ['Error: invalid arguments: "arguments" must be an object']
    assert result_wire(session)[0]["error"] == {"name": "ToolArgsError", "code": "INVALID_ARGS"}


async def test_real_empty_arguments_run_a_tool_with_no_parameters() -> None:
    # upstream #220
    seen: list[Any] = []

    async def body(args: Any, ctx: Any) -> Any:
        seen.append(args)
        return text_blocks("ran")

    runtime = ToolRuntime()
    runtime.register(content_tool("t", body))
    session = Session()
    await execute_tool_calls(runtime, session, [ToolCallBlock("c1", "t", "")])
    assert seen == [{}]
    assert texts(session) == ["ran"]
    assert wire(session)[0]["data"]["arguments"] == ""


async def test_real_harness_error_is_forwarded_onto_the_result_event() -> None:
    # upstream #221
    async def body(args: Any, ctx: Any) -> Any:
        raise th.HarnessError("exploded", "BOOM")

    runtime = ToolRuntime()
    runtime.register(content_tool("t", body))
    session = Session()
    await execute_tool_calls(runtime, session, [block("c1", "t")])
    data = result_wire(session)[0]
    assert data["message"]["content"][0]["isError"] is True
    assert data["error"] == {"name": "HarnessError", "code": "BOOM"}
    assert texts(session) == ["Error: exploded"]


async def test_real_presentation_meta_is_recorded_on_the_result_event() -> None:
    # upstream #222
    runtime = ToolRuntime()
    runtime.register(echo_tool(presentation_meta=lambda args, value: {"presentation": "diff-card"}))
    session = Session()
    await execute_tool_calls(runtime, session, [block("c1", "echo", text="x")])
    assert result_wire(session)[0]["meta"] == {"presentation": "diff-card"}


async def test_real_deferred_contexts_follow_the_outer_result_in_order() -> None:
    # upstream #224
    async def composite(args: Any, ctx: Any) -> Any:
        ctx.defer_context("a", source={"kind": "plugin", "plugin": "a"})
        ctx.defer_context("b", source={"kind": "plugin", "plugin": "b"})
        return text_blocks("ok")

    runtime = ToolRuntime()
    runtime.register(content_tool("t", composite))
    session = Session()
    accepted: list[tuple[str, int]] = []
    await execute_tool_calls(
        runtime,
        session,
        [block("c1", "t")],
        accept_context=lambda c: accepted.append((c["source"]["plugin"], len(session.events))),
    )
    assert accepted == [("a", 2), ("b", 2)]


async def test_real_post_context_finalized_after_the_body_aborts_the_step_is_kept() -> None:
    # upstream #227: the body aborts the step then returns; post-execute still adds its context
    abort = trio.Event()

    async def aborter(args: Any, ctx: Any) -> Any:
        abort.set()
        return text_blocks("returned anyway")

    runtime = ToolRuntime()
    runtime.register(content_tool("t", aborter))
    runtime.add_post_execute(post_adding_context())
    session = Session()
    accepted: list[str] = []
    outcome = await execute_tool_calls(
        runtime,
        session,
        [block("c1", "t")],
        abort=abort,
        accept_context=lambda c: accepted.append(context_text(c)),
    )
    assert outcome.aborted
    assert [e["type"] for e in wire(session)] == ["tool/call", "tool/result"]
    assert result_wire(session)[0]["error"] == ABORTED
    assert accepted == ["ctx-c1"]  # accepted exactly once


async def test_real_post_context_is_kept_when_a_later_exclusive_call_aborts() -> None:
    # upstream #228
    abort = trio.Event()

    async def first(args: Any, ctx: Any) -> Any:
        return text_blocks("first")

    async def aborter(args: Any, ctx: Any) -> Any:
        abort.set()
        return text_blocks("aborter")

    runtime = ToolRuntime()
    runtime.register(content_tool("first", first))
    runtime.register(content_tool("aborter", aborter))
    post_seen: list[str] = []
    runtime.add_post_execute(post_adding_context(post_seen))
    session = Session()
    accepted: list[str] = []
    outcome = await execute_tool_calls(
        runtime,
        session,
        [block("c1", "first"), block("c2", "aborter")],
        abort=abort,
        accept_context=lambda c: accepted.append(context_text(c)),
    )
    assert outcome.aborted
    assert [e["type"] for e in wire(session)] == ["tool/call", "tool/result"] * 2
    assert texts(session)[0] == "first"
    assert result_wire(session)[1]["error"] == ABORTED
    assert post_seen == ["c1", "c2"]
    assert accepted == ["ctx-c1", "ctx-c2"]


async def test_real_result_keeps_the_model_call_id_when_post_execute_replaces_content() -> None:
    # upstream #231
    async def post(
        exec: ToolExecution, result: ToolExecutionResult, next: PostNext
    ) -> PostToolDecision:
        return Accept(content=text_blocks("rewritten"))

    runtime = ToolRuntime()
    runtime.register(echo_tool())
    runtime.add_post_execute(post)
    session = Session()
    await execute_tool_calls(runtime, session, [block("c1", "echo", text="hi")])
    data = result_wire(session)[0]
    assert data["message"]["source"] == {"kind": "tool", "callId": "c1"}
    assert data["message"]["content"][0]["toolCallId"] == "c1"
    assert texts(session) == ["rewritten"]


async def test_real_round_trip_of_an_echo_result() -> None:
    # upstream #233
    async def body(args: Any, ctx: Any) -> Any:
        return "echo: " + args["text"]

    runtime = ToolRuntime()
    runtime.register(echo_tool(execute=body))
    session = Session()
    await execute_tool_calls(runtime, session, [block("c1", "echo", text="ping")])
    assert result_wire(session)[0]["message"]["content"] == [
        {
            "type": "tool-result",
            "toolCallId": "c1",
            "content": text_blocks("echo: ping"),
            "isError": False,
        }
    ]


async def test_real_concluding_tool_concludes_the_step() -> None:
    # upstream #234 (the single model request is the agent loop's; the step reports concluded)
    async def body(args: Any, ctx: Any) -> Any:
        ctx.conclude_turn()
        return "done"

    runtime = ToolRuntime()
    runtime.register(echo_tool("end", execute=body))
    runtime.register(echo_tool())
    session = Session()
    outcome = await execute_tool_calls(
        runtime, session, [block("c1", "end"), block("c2", "echo", text="after")]
    )
    assert outcome == StepOutcome(concluded=True, aborted=False)
    assert texts(session) == ["done", "after"]
