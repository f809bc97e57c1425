"""execute_tool_calls against a fake runtime: the upstream scheduler cases (catalogue §7, §8)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing

from tests.pool_fakes import (
    FakeExec,
    FakeRuntime,
    FakeTool,
    Gates,
    gated_body,
    noop_body,
    success,
)
from trio_harness._errors import DEFAULT_MAX_PARALLEL_TOOL_CALLS, HarnessError
from trio_harness._pool import StepOutcome, ToolCallBlock, execute_tool_calls
from trio_harness._session import Session
from trio_harness._types import ErrorInfo, ToolExecutionResult

ABORTED_BEFORE = ErrorInfo("AbortError", "ABORTED_BEFORE_DISPATCH")
ABORTED = ErrorInfo("AbortError", "ABORTED")


def call(call_id: str, name: str, **args: Any) -> ToolCallBlock:
    return ToolCallBlock(call_id, name, json.dumps(args))


def xs(n: int, name: str = "x") -> list[ToolCallBlock]:
    return [call(f"c{i}", name, id=str(i)) for i in range(1, n + 1)]


def timeline(session: Session) -> list[str]:
    out = []
    for event in session.events:
        if event.type == "tool/call":
            out.append("tool/call:" + event.data.call_id)
        else:
            out.append("tool/result:" + event.data.message.source.call_id)
    return out


def results(session: Session) -> list[Any]:
    return [event.data for event in session.events if event.type == "tool/result"]


def result_ids(session: Session) -> list[str]:
    return [data.message.source.call_id for data in results(session)]


def call_ids(session: Session) -> list[str]:
    return [event.data.call_id for event in session.events if event.type == "tool/call"]


def result_text(data: Any) -> str:
    return data.message.content[0].content[0]["text"]


def assert_paired(session: Session) -> None:
    """Every tool/result cites its own tool/call; every call has exactly one result."""
    calls = {e.seq: e.data.call_id for e in session.events if e.type == "tool/call"}
    cited = []
    for event in session.events:
        if event.type == "tool/result":
            (seq,) = event.source_event_seqs
            assert calls[seq] == event.data.message.source.call_id
            cited.append(seq)
    assert sorted(cited) == sorted(calls)


def gated_runtime(parallel: bool = True) -> tuple[FakeRuntime, Gates, list[str]]:
    gates = Gates()
    started: list[str] = []
    runtime = FakeRuntime(FakeTool("x", gated_body(gates, started), parallel=parallel))
    return runtime, gates, started


async def run_in_background(nursery: trio.Nursery, *args: Any, **kwargs: Any) -> list[Any]:
    box: list[Any] = []

    async def runner() -> None:
        box.append(await execute_tool_calls(*args, **kwargs))

    nursery.start_soon(runner)
    return box


# ---------------------------------------------------------------------------------------------
# grouping and barriers
# ---------------------------------------------------------------------------------------------


async def test_parallel_safe_siblings_run_concurrently() -> None:
    # upstream #198
    runtime, gates, started = gated_runtime()
    session = Session()
    async with trio.open_nursery() as nursery:
        box = await run_in_background(nursery, runtime, session, xs(3))
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2", "3"]
        gates.release("1", "2", "3")
    assert box == [StepOutcome(concluded=False, aborted=False)]
    assert result_ids(session) == ["c1", "c2", "c3"]
    assert_paired(session)


async def test_exclusive_call_between_parallel_calls_forms_a_barrier() -> None:
    # upstream #199
    order: list[str] = []

    async def read(args: Any, ctx: FakeExec) -> str:
        order.append("r-start-" + args["id"])
        await trio.lowlevel.checkpoint()
        order.append("r-end-" + args["id"])
        return "r"

    async def write(args: Any, ctx: FakeExec) -> str:
        order.append("w-" + args["id"])
        return "w"

    runtime = FakeRuntime(FakeTool("r", read, parallel=True), FakeTool("w", write))
    session = Session()
    calls = [call("c1", "r", id="A1"), call("c2", "w", id="A2"), call("c3", "r", id="A3")]
    await execute_tool_calls(runtime, session, calls)
    assert order == ["r-start-A1", "r-end-A1", "w-A2", "r-start-A3", "r-end-A3"]
    assert result_ids(session) == ["c1", "c2", "c3"]


async def test_pending_calls_are_reclassified_after_a_barrier_replaces_their_tool() -> None:
    # upstream #200
    gates = Gates()
    started: list[str] = []

    async def replace(args: Any, ctx: FakeExec) -> str:
        ctx.runtime.unregister("x")
        ctx.runtime.register(FakeTool("x", gated_body(gates, started), parallel=False))
        return "replaced"

    runtime = FakeRuntime(
        FakeTool("replace", replace),
        FakeTool("x", gated_body(gates, started), parallel=True),
    )
    session = Session()
    calls = [call("c0", "replace", id="0"), call("c1", "x", id="1"), call("c2", "x", id="2")]
    async with trio.open_nursery() as nursery:
        await run_in_background(nursery, runtime, session, calls)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1"]
        gates.release("1")
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        gates.release("2")
    assert result_ids(session) == ["c0", "c1", "c2"]
    assert runtime.max_running == 1


async def test_result_observer_making_the_next_call_exclusive_stops_replenishing() -> None:
    # upstream #201
    runtime, gates, started = gated_runtime()
    replacement_started: list[str] = []

    def observer(exec: FakeExec, result: ToolExecutionResult) -> None:
        if exec.call_id == "c1":
            runtime.register(FakeTool("x", gated_body(gates, replacement_started)))

    runtime.observers.append(observer)
    session = Session()
    async with trio.open_nursery() as nursery:
        await run_in_background(nursery, runtime, session, xs(3), max_parallel_tool_calls=2)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        gates.release("1")
        await trio.testing.wait_all_tasks_blocked()
        assert result_ids(session) == ["c1"]
        assert replacement_started == []
        gates.release("2")
        await trio.testing.wait_all_tasks_blocked()
        assert replacement_started == ["3"]
        gates.release("3")
    assert result_ids(session) == ["c1", "c2", "c3"]
    assert not runtime.exclusive_overlap


async def test_barrier_is_reclassified_again_when_the_registry_changes_back() -> None:
    # Upstream reclassifies on every fill attempt: a call that stopped the filling starts in the
    # same group if it is parallel again when the next dispatch settles.
    runtime, gates, started = gated_runtime()
    flips = {"c1": False, "c2": True}

    def observer(exec: FakeExec, result: ToolExecutionResult) -> None:
        if exec.call_id in flips:
            runtime.tools["x"].parallel = flips[exec.call_id]

    runtime.observers.append(observer)
    session = Session()
    async with trio.open_nursery() as nursery:
        await run_in_background(nursery, runtime, session, xs(4), max_parallel_tool_calls=3)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2", "3"]
        gates.release("1")
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2", "3"]
        gates.release("2")
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2", "3", "4"]
        assert len(runtime.running) == 2  # c3 and c4 overlap: same parallel group
        gates.release("3", "4")
    assert runtime.classified == ["c1", "c2", "c3", "c4", "c4"]


# ---------------------------------------------------------------------------------------------
# model-order results
# ---------------------------------------------------------------------------------------------


async def test_results_commit_in_model_order_when_a_later_call_settles_first() -> None:
    # upstream #202, #203
    runtime, gates, _ = gated_runtime()
    session = Session()
    async with trio.open_nursery() as nursery:
        await run_in_background(nursery, runtime, session, xs(2))
        await trio.testing.wait_all_tasks_blocked()
        gates.release("2")
        await trio.testing.wait_all_tasks_blocked()
        assert result_ids(session) == []
        gates.release("1")
    assert result_ids(session) == ["c1", "c2"]
    assert [d.message.content[0].tool_call_id for d in results(session)] == ["c1", "c2"]
    assert [result_text(d) for d in results(session)] == ["done-1", "done-2"]


# ---------------------------------------------------------------------------------------------
# rolling pool honors the cap
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cap", [0, -1, 1.5, 2.0, True, False, "2", None])
async def test_invalid_caps_are_rejected(cap: Any) -> None:
    # upstream #204, #205 (bool is rejected too: it is not an integer here)
    runtime, _, started = gated_runtime()
    session = Session()
    with pytest.raises(ValueError, match=r"^max_parallel_tool_calls must be a positive integer$"):
        await execute_tool_calls(runtime, session, xs(2), max_parallel_tool_calls=cap)
    assert session.events == []
    assert started == []


async def test_default_cap_is_ten() -> None:
    # upstream #206
    assert DEFAULT_MAX_PARALLEL_TOOL_CALLS == 10
    runtime, gates, started = gated_runtime()
    session = Session()
    async with trio.open_nursery() as nursery:
        await run_in_background(nursery, runtime, session, xs(12))
        await trio.testing.wait_all_tasks_blocked()
        assert started == [str(i) for i in range(1, 11)]
        gates.release(*[str(i) for i in range(1, 13)])
    assert runtime.max_running == 10


async def test_starts_at_most_the_cap_and_replenishes_as_calls_settle() -> None:
    # upstream #207
    runtime, gates, started = gated_runtime()
    session = Session()
    async with trio.open_nursery() as nursery:
        await run_in_background(nursery, runtime, session, xs(4), max_parallel_tool_calls=2)
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
        gates.release("2", "3", "4")
    assert result_ids(session) == ["c1", "c2", "c3", "c4"]
    assert runtime.max_running == 2


async def test_cap_of_one_is_fully_serial() -> None:
    # upstream #208, #209 (the per-agent config is the caller's: the cap is an argument here)
    runtime, gates, started = gated_runtime()
    session = Session()
    async with trio.open_nursery() as nursery:
        await run_in_background(nursery, runtime, session, xs(3), max_parallel_tool_calls=1)
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1"]
        gates.release("1")
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        gates.release("2", "3")
    assert runtime.max_running == 1


# ---------------------------------------------------------------------------------------------
# ordered middleware and additional contexts
# ---------------------------------------------------------------------------------------------


async def test_pre_and_post_execute_observe_model_call_order() -> None:
    # upstream #210
    runtime, gates, _ = gated_runtime()
    session = Session()
    async with trio.open_nursery() as nursery:
        await run_in_background(nursery, runtime, session, xs(3))
        await trio.testing.wait_all_tasks_blocked()
        for key in ("3", "2", "1"):
            gates.release(key)
            await trio.testing.wait_all_tasks_blocked()
    assert runtime.events("prepare") == ["c1", "c2", "c3"]
    assert runtime.events("post") == ["c1", "c2", "c3"]


async def test_additional_contexts_are_accepted_in_model_order() -> None:
    # upstream #211, #223: each context follows its own tool/result
    runtime, gates, _ = gated_runtime()

    async def post(exec: FakeExec, result: ToolExecutionResult) -> ToolExecutionResult:
        contexts = (*result.additional_contexts, "ctx-" + exec.call_id)
        return ToolExecutionResult(
            is_error=result.is_error,
            content=result.content,
            value=result.value,
            additional_contexts=contexts,
        )

    runtime.post_hooks.append(post)
    session = Session()
    accepted: list[tuple[str, list[str]]] = []
    async with trio.open_nursery() as nursery:
        await run_in_background(
            nursery,
            runtime,
            session,
            xs(2),
            max_parallel_tool_calls=2,
            accept_context=lambda c: accepted.append((c, result_ids(session))),
        )
        await trio.testing.wait_all_tasks_blocked()
        gates.release("2")
        await trio.testing.wait_all_tasks_blocked()
        assert accepted == []
        gates.release("1")
    assert accepted == [("ctx-c1", ["c1"]), ("ctx-c2", ["c1", "c2"])]


async def test_pre_execute_denials_and_errors_are_ordered_without_dispatch() -> None:
    # upstream #212, #225
    runtime, gates, started = gated_runtime()

    async def pre(exec: FakeExec) -> str | None:
        if exec.call_id == "c2":
            return "blocked by policy"
        if exec.call_id == "c3":
            raise RuntimeError("pre exploded")
        return None

    runtime.pre_hooks.append(pre)
    session = Session()
    async with trio.open_nursery() as nursery:
        await run_in_background(nursery, runtime, session, xs(3))
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1"]
        gates.release("1")
    assert runtime.events("post") == ["c1", "c2"]
    assert result_ids(session) == ["c1", "c2", "c3"]
    texts = [result_text(d) for d in results(session)]
    assert "blocked by policy" in texts[1]
    assert "pre exploded" in texts[2]
    assert [d.message.content[0].is_error for d in results(session)] == [False, True, True]


# ---------------------------------------------------------------------------------------------
# abort handling
# ---------------------------------------------------------------------------------------------


async def test_already_aborted_step_starts_nothing_and_balances_the_log() -> None:
    # upstream #213, #232
    runtime, _, started = gated_runtime()
    abort = trio.Event()
    abort.set()
    session = Session()
    outcome = await execute_tool_calls(runtime, session, xs(2), abort=abort)
    assert outcome == StepOutcome(concluded=False, aborted=True)
    assert started == []
    assert runtime.log == []  # no prepare, no observers: synthetic pairs bypass the runtime
    assert runtime.classified == []
    assert timeline(session) == ["tool/call:c1", "tool/result:c1", "tool/call:c2", "tool/result:c2"]
    for data in results(session):
        assert data.error == ABORTED_BEFORE
        assert data.message.content[0].is_error is True
    assert session.events[1].to_json()["data"] == {
        "turn": 0,
        "step": 0,
        "message": {
            "role": "user",
            "source": {"kind": "tool", "callId": "c1"},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "content": [
                        {"type": "text", "text": "Error: tool call aborted before dispatch"}
                    ],
                    "isError": True,
                }
            ],
        },
        "error": {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"},
    }
    assert_paired(session)


async def test_abort_during_ordered_pre_execute_skips_dispatch_and_stops_starting() -> None:
    # upstream #214
    runtime, _, started = gated_runtime()
    abort = trio.Event()

    async def pre(exec: FakeExec) -> None:
        if exec.call_id == "c1":
            abort.set()

    runtime.pre_hooks.append(pre)
    session = Session()
    outcome = await execute_tool_calls(runtime, session, xs(2), abort=abort)
    assert outcome.aborted
    assert started == []
    assert call_ids(session) == ["c1", "c2"]
    assert [d.error for d in results(session)] == [ABORTED_BEFORE, ABORTED_BEFORE]
    assert runtime.events("prepare") == ["c1"]


async def test_abort_stops_replenishing_commits_started_results_and_hands_contexts_on() -> None:
    # upstream #215 (the inbox parking is the agent loop's; here: contexts reach accept_context)
    runtime, gates, started = gated_runtime()

    async def post(exec: FakeExec, result: ToolExecutionResult) -> ToolExecutionResult:
        return ToolExecutionResult(
            is_error=result.is_error,
            content=result.content,
            error=result.error,
            additional_contexts=("ctx-" + exec.call_id,),
        )

    runtime.post_hooks.append(post)
    abort = trio.Event()
    session = Session()
    accepted: list[str] = []
    async with trio.open_nursery() as nursery:
        box = await run_in_background(
            nursery,
            runtime,
            session,
            xs(4),
            abort=abort,
            max_parallel_tool_calls=2,
            accept_context=accepted.append,
        )
        await trio.testing.wait_all_tasks_blocked()
        assert started == ["1", "2"]
        abort.set()
        gates.release("1", "2")
    assert box[0].aborted
    assert started == ["1", "2"]
    assert call_ids(session) == ["c1", "c2", "c3", "c4"]
    assert result_ids(session) == ["c1", "c2", "c3", "c4"]
    assert [d.error for d in results(session)] == [ABORTED, ABORTED, ABORTED_BEFORE, ABORTED_BEFORE]
    assert accepted == ["ctx-c1", "ctx-c2"]
    assert runtime.events("post") == ["c1", "c2"]


async def test_exclusive_barrier_does_not_run_after_a_parallel_group_aborts() -> None:
    # upstream #216
    gates = Gates()
    started: list[str] = []
    ran: list[str] = []

    async def exclusive(args: Any, ctx: FakeExec) -> str:
        ran.append(ctx.call_id)
        return "x"

    runtime = FakeRuntime(
        FakeTool("p", gated_body(gates, started), parallel=True), FakeTool("x", exclusive)
    )
    abort = trio.Event()
    session = Session()
    calls = [call("c1", "p", id="1"), call("c2", "p", id="2"), call("c3", "x", id="3")]
    async with trio.open_nursery() as nursery:
        await run_in_background(
            nursery, runtime, session, calls, abort=abort, max_parallel_tool_calls=2
        )
        await trio.testing.wait_all_tasks_blocked()
        abort.set()
    assert ran == []
    assert call_ids(session) == ["c1", "c2", "c3"]
    last = results(session)[-1]
    assert last.message.source.call_id == "c3"
    assert last.message.content[0].is_error
    assert last.error == ABORTED_BEFORE


async def test_abort_cancels_running_bodies_at_once(autojump_clock: trio.abc.Clock) -> None:
    # The abort relay cancels every in-flight body's scope: no body outlives the abort.
    async def slow(args: Any, ctx: FakeExec) -> str:
        await trio.sleep(100)
        return "slow"

    runtime = FakeRuntime(FakeTool("s", slow, parallel=True))
    abort = trio.Event()
    session = Session()
    async with trio.open_nursery() as nursery:
        box = await run_in_background(
            nursery,
            runtime,
            session,
            [call(f"c{i}", "s") for i in range(5)],
            abort=abort,
            max_parallel_tool_calls=3,
        )
        await trio.sleep(7)
        abort.set()
    assert trio.current_time() == 7
    assert box[0].aborted
    assert [d.error for d in results(session)] == [ABORTED] * 3 + [ABORTED_BEFORE] * 2


# ---------------------------------------------------------------------------------------------
# failure quiescence
# ---------------------------------------------------------------------------------------------


async def test_first_scheduler_failure_is_raised_after_started_bodies_drain() -> None:
    # upstream #217
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
        assert raised == []  # c2 is still running
        assert started == ["2"]
        gates.release("2")
    assert [str(e) for e in raised] == ["scheduler exploded"]
    assert type(raised[0]) is RuntimeError
    assert started == ["2"]  # c3 was prepared but abandoned
    assert call_ids(session) == ["c1", "c2", "c3"]
    assert results(session) == []  # nothing fabricated


# ---------------------------------------------------------------------------------------------
# §8: events of single calls
# ---------------------------------------------------------------------------------------------


async def test_non_json_arguments_pass_through_as_the_raw_string() -> None:
    # upstream #219
    seen: list[Any] = []

    async def body(args: Any, ctx: FakeExec) -> str:
        seen.append(args)
        return "ok"

    runtime = FakeRuntime(FakeTool("t", body))
    session = Session()
    await execute_tool_calls(runtime, session, [ToolCallBlock("c1", "t", "not json")])
    assert session.events[0].data.arguments == "not json"
    assert seen == ["not json"]
    assert result_ids(session) == ["c1"]


async def test_empty_arguments_become_an_empty_object() -> None:
    # upstream #220
    seen: list[Any] = []

    async def body(args: Any, ctx: FakeExec) -> str:
        seen.append(args)
        return "ok"

    runtime = FakeRuntime(FakeTool("t", body))
    session = Session()
    await execute_tool_calls(runtime, session, [ToolCallBlock("c1", "t", "")])
    assert seen == [{}]
    assert session.events[0].to_json()["data"]["arguments"] == ""


async def test_harness_error_info_is_forwarded_onto_the_result_event() -> None:
    # upstream #221
    async def body(args: Any, ctx: FakeExec) -> str:
        raise HarnessError("exploded", "BOOM")

    runtime = FakeRuntime(FakeTool("t", body))
    session = Session()
    await execute_tool_calls(runtime, session, [call("c1", "t")])
    wire = session.events[1].to_json()
    assert wire["data"]["message"]["content"][0]["isError"] is True
    assert wire["data"]["error"] == {"name": "HarnessError", "code": "BOOM"}
    assert wire["sourceEventSeqs"] == [0]


async def test_plain_error_result_has_no_error_key() -> None:
    async def body(args: Any, ctx: FakeExec) -> str:
        raise ValueError("plain")

    runtime = FakeRuntime(FakeTool("t", body))
    session = Session()
    await execute_tool_calls(runtime, session, [call("c1", "t")])
    assert "error" not in session.events[1].to_json()["data"]


async def test_presentation_meta_is_recorded_on_the_result_event() -> None:
    # upstream #222
    runtime = FakeRuntime(FakeTool("t", noop_body, meta={"presentation": "diff-card"}))
    session = Session()
    await execute_tool_calls(runtime, session, [call("c1", "t")])
    assert session.events[1].to_json()["data"]["meta"] == {"presentation": "diff-card"}


async def test_multiple_deferred_contexts_follow_the_outer_result_in_order() -> None:
    # upstream #224
    async def composite(args: Any, ctx: FakeExec) -> str:
        ctx.defer_context("a")
        ctx.defer_context("b")
        return "ok"

    runtime = FakeRuntime(FakeTool("t", composite))
    session = Session()
    accepted: list[tuple[str, int]] = []
    await execute_tool_calls(
        runtime,
        session,
        [call("c1", "t")],
        accept_context=lambda c: accepted.append((c, len(session.events))),
    )
    assert accepted == [("a", 2), ("b", 2)]


async def test_context_finalized_after_a_body_aborts_the_step_is_still_accepted() -> None:
    # upstream #227, #228
    abort = trio.Event()

    async def first(args: Any, ctx: FakeExec) -> str:
        return "first"

    async def aborter(args: Any, ctx: FakeExec) -> str:
        abort.set()
        return "aborter"

    async def post(exec: FakeExec, result: ToolExecutionResult) -> ToolExecutionResult:
        return ToolExecutionResult(
            is_error=result.is_error,
            content=result.content,
            error=result.error,
            additional_contexts=("ctx-" + exec.call_id,),
        )

    runtime = FakeRuntime(FakeTool("first", first), FakeTool("aborter", aborter))
    runtime.post_hooks.append(post)
    session = Session()
    accepted: list[str] = []
    outcome = await execute_tool_calls(
        runtime,
        session,
        [call("c1", "first"), call("c2", "aborter"), call("c3", "first")],
        abort=abort,
        accept_context=accepted.append,
    )
    assert outcome.aborted
    assert [e.type for e in session.events] == ["tool/call", "tool/result"] * 3
    assert accepted == ["ctx-c1", "ctx-c2"]
    assert results(session)[2].error == ABORTED_BEFORE


async def test_result_keeps_the_model_call_id_when_post_execute_replaces_content() -> None:
    # upstream #231
    async def post(exec: FakeExec, result: ToolExecutionResult) -> ToolExecutionResult:
        return ToolExecutionResult(
            is_error=False, content=({"type": "text", "text": "new"},), value=1
        )

    runtime = FakeRuntime(FakeTool("t", noop_body))
    runtime.post_hooks.append(post)
    session = Session()
    await execute_tool_calls(runtime, session, [call("c1", "t")])
    data = results(session)[0]
    assert data.message.source.call_id == "c1"
    assert data.message.content[0].tool_call_id == "c1"
    assert result_text(data) == "new"


async def test_round_trips_a_tool_result() -> None:
    # upstream #233
    async def echo(args: Any, ctx: FakeExec) -> str:
        return "echo: " + args["text"]

    runtime = FakeRuntime(FakeTool("echo", echo))
    session = Session()
    await execute_tool_calls(runtime, session, [call("c1", "echo", text="ping")], turn=3, step=2)
    wire = session.events[1].to_json()
    assert wire["data"]["turn"] == 3
    assert wire["data"]["step"] == 2
    assert wire["data"]["message"]["content"][0] == {
        "type": "tool-result",
        "toolCallId": "c1",
        "content": [{"type": "text", "text": "echo: ping"}],
        "isError": False,
    }
    assert Session.from_jsonl(session.to_jsonl()).events == session.events


async def test_a_concluding_result_concludes_the_step_without_stopping_later_calls() -> None:
    # upstream #234
    async def concluding(args: Any, ctx: FakeExec) -> str:
        ctx.conclude_turn()
        return "done"

    runtime = FakeRuntime(FakeTool("end", concluding), FakeTool("t", noop_body))
    session = Session()
    outcome = await execute_tool_calls(runtime, session, [call("c1", "end"), call("c2", "t")])
    assert outcome == StepOutcome(concluded=True, aborted=False)
    assert result_ids(session) == ["c1", "c2"]


async def test_no_calls_is_an_empty_step() -> None:
    runtime = FakeRuntime()
    session = Session()
    assert await execute_tool_calls(runtime, session, []) == StepOutcome()
    assert session.events == []


async def test_agent_and_abort_reach_every_input() -> None:
    seen: list[Any] = []

    async def body(args: Any, ctx: FakeExec) -> str:
        seen.append((ctx.input.agent, ctx.input.abort, ctx.input.parent))
        return "ok"

    runtime = FakeRuntime(FakeTool("t", body, parallel=True))
    abort = trio.Event()
    agent = object()
    await execute_tool_calls(runtime, Session(), xs(2, "t"), abort=abort, agent=agent)
    assert seen == [(agent, abort, None)] * 2


async def test_success_helper_shape() -> None:
    assert success("v").content == ({"type": "text", "text": "v"},)
