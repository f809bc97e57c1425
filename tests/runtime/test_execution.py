"""Execution inputs, argument snapshots, observers and the scheduler view (upstream §6, e.3)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import trio

from tests.support.runtime_helpers import call, first_text, text_blocks
from tests.support.runtime_tools import content_tool, echo_tool, raw_tool, runtime_with
from trio_harness import (
    Deny,
    ToolError,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolRuntime,
)
from trio_harness.lowlevel import (
    DispatchOutcome,
    Preparation,
)

NOT_LOSSLESS = "tool execution arguments must be losslessly JSON-serializable"


class CountingInput:
    """A duck-typed input whose every field read is counted (the analogue of JS getters)."""

    def __init__(
        self, arguments: Any, *, raises: BaseException | None = None, **fields: Any
    ) -> None:
        self._arguments = arguments
        self._raises = raises
        self._fields = {
            "call_id": "c1",
            "name": "t",
            "abort": None,
            "parent": None,
            "agent": None,
            "root_call_id": None,
            **fields,
        }
        self.reads: dict[str, int] = {}

    def _read(self, field: str) -> Any:
        self.reads[field] = self.reads.get(field, 0) + 1
        return self._fields[field]

    @property
    def arguments(self) -> Any:
        self.reads["arguments"] = self.reads.get("arguments", 0) + 1
        if self._raises is not None:
            raise self._raises
        return self._arguments

    call_id = property(lambda self: self._read("call_id"))
    name = property(lambda self: self._read("name"))
    abort = property(lambda self: self._read("abort"))
    parent = property(lambda self: self._read("parent"))
    agent = property(lambda self: self._read("agent"))
    root_call_id = property(lambda self: self._read("root_call_id"))


def _phase_counting_runtime(tool: Any = None) -> tuple[ToolRuntime, dict[str, int], list[Any]]:
    runtime = ToolRuntime()
    counts = {"pre": 0, "wrapper": 0, "post": 0, "body": 0}
    observed: list[Any] = []

    async def body(args: Any, ctx: Any) -> Any:
        counts["body"] += 1
        return "ran:t"

    runtime.register(tool or raw_tool("t", execute=body))

    async def pre(exec: Any, next: Any) -> Any:
        counts["pre"] += 1
        return await next()

    async def wrapper(exec: Any, next: Any) -> Any:
        counts["wrapper"] += 1
        return await next()

    async def post(exec: Any, result: Any, next: Any) -> Any:
        counts["post"] += 1
        return await next()

    runtime.add_pre_execute(pre)
    runtime.add_execute_wrapper(wrapper)
    runtime.add_post_execute(post)
    runtime.add_result_observer(lambda exec, result: observed.append((exec, result)))
    return runtime, counts, observed


async def test_every_input_field_is_read_once() -> None:  # upstream #192, #193, #196
    runtime, counts, observed = _phase_counting_runtime()
    arguments = {"nested": {"deep": [1, 2]}}
    source = CountingInput(arguments)
    result = await runtime.execute(source)  # type: ignore[arg-type]
    assert result.to_json() == {"content": text_blocks("ran:t"), "isError": False, "value": "ran:t"}
    assert source.reads == {
        "call_id": 1,
        "name": 1,
        "abort": 1,
        "parent": 1,
        "agent": 1,
        "root_call_id": 1,
        "arguments": 1,
    }
    exec = observed[0][0]
    assert exec.parent is None
    assert exec.root_call_id == "c1"
    assert counts == {"pre": 1, "wrapper": 1, "post": 1, "body": 1}


async def test_a_raising_arguments_accessor_is_read_once() -> None:  # upstream #194
    runtime, counts, observed = _phase_counting_runtime()
    source = CountingInput(None, raises=RuntimeError("getter exploded"))
    result = await runtime.execute(source)  # type: ignore[arg-type]
    assert result.to_json() == {
        "content": text_blocks("Error: getter exploded"),
        "isError": True,
        "error": {"message": "getter exploded"},
    }
    assert source.reads["arguments"] == 1
    assert len(observed) == 1
    assert observed[0][0].arguments is __import__("trio_harness").UNSET
    assert counts == {"pre": 0, "wrapper": 0, "post": 0, "body": 0}


class _Point:
    def __init__(self) -> None:
        self.x = 1


@pytest.mark.parametrize(
    "arguments",
    [
        {"invalid": lambda: None},
        {"ids": {1, 2}},  # a set: the analogue of a Map
        {"point": _Point()},  # a class instance
        {"nan": float("nan")},
        {"negzero": -0.0},
        {1: "int key"},
        {"tuple": (1, 2)},
        type("Sub", (dict,), {})(a=1),  # a dict subclass
    ],
)
async def test_non_lossless_arguments_fail_before_policy(
    arguments: Any,
) -> None:  # upstream #191, #195
    runtime, counts, observed = _phase_counting_runtime()
    parent_runtime = ToolRuntime()
    parent_runtime.register(echo_tool())
    holder: list[ToolExecution] = []
    parent_runtime.add_result_observer(lambda exec, result: holder.append(exec))
    await parent_runtime.execute(call("echo"))
    abort = trio.Event()
    result = await runtime.execute(call("t", arguments, abort, agent="agent", parent=holder[0]))
    assert result.to_json() == {
        "content": text_blocks("Error: " + NOT_LOSSLESS),
        "isError": True,
        "error": {"message": NOT_LOSSLESS},
    }
    assert counts == {"pre": 0, "wrapper": 0, "post": 0, "body": 0}
    assert len(observed) == 1
    exec = observed[0][0]
    assert exec.arguments is __import__("trio_harness").UNSET
    assert exec.parent is holder[0]
    assert exec.abort is abort
    assert exec.finished


async def test_argument_failure_wins_over_a_pre_aborted_call() -> None:  # upstream #116
    observed: list[Any] = []
    runtime = ToolRuntime()
    runtime.add_result_observer(lambda exec, result: observed.append(result))
    abort = trio.Event()
    abort.set()
    result = await runtime.execute(call("unknown", {"f": print}, abort))
    assert result.to_json() == {
        "content": text_blocks("Error: " + NOT_LOSSLESS),
        "isError": True,
        "error": {"message": NOT_LOSSLESS},
    }
    assert len(observed) == 1


async def test_one_token_and_one_argument_snapshot_across_the_pipeline() -> None:  # upstream #190
    seen_tokens: set[int] = set()
    bodies: dict[str, int] = {"safe": 0, "danger": 0}
    body_args: list[Any] = []

    async def body(args: Any, ctx: Any) -> Any:
        bodies[args["kind"]] += 1
        body_args.append(args)
        seen_tokens.add(id(ctx.token))
        return "ran:t"

    runtime = runtime_with(raw_tool("t", execute=body))
    guard_args: list[Any] = []

    def guard(exec: ToolExecution) -> str | None:
        guard_args.append(exec.arguments)
        seen_tokens.add(id(exec.token))
        return "danger denied" if exec.arguments["kind"] == "danger" else None

    async def pre(exec: Any, next: Any) -> Any:
        seen_tokens.add(id(exec.token))
        return await next()

    async def post(exec: Any, result: Any, next: Any) -> Any:
        seen_tokens.add(id(exec.token))
        return await next()

    results: list[ToolExecutionResult] = []
    runtime.add_guard(guard)
    runtime.add_pre_execute(pre)
    runtime.add_post_execute(post)
    runtime.add_result_observer(lambda exec, result: results.append(result))
    danger = await runtime.execute(call("t", {"kind": "danger"}))
    assert first_text(danger) == "Error: danger denied"
    caller_args = {"kind": "safe", "list": [1]}
    safe = await runtime.execute(call("t", caller_args))
    assert first_text(safe) == "ran:t"
    assert body_args[0] is guard_args[1]  # the same snapshot in every phase
    assert body_args[0] == caller_args
    assert body_args[0] is not caller_args
    assert body_args[0]["list"] is not caller_args["list"]
    assert caller_args == {"kind": "safe", "list": [1]}
    assert len(seen_tokens) == 2
    assert len(results) == 2
    assert bodies == {"safe": 1, "danger": 0}


async def test_observer_failures_are_contained_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:  # upstream #197
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    runtime = runtime_with(raw_tool("t"))

    async def wrapper(exec: Any, next: Any) -> Any:
        await next()
        return ToolExecutionResult(
            is_error=True, content=text_blocks("outer failure"), error=ToolError("outer failure")
        )

    seen: list[bool] = []

    def throwing(exec: Any, result: Any) -> None:
        raise Unprintable

    async def rejecting(exec: Any, result: Any) -> None:
        raise RuntimeError("async observer failure")

    runtime.add_execute_wrapper(wrapper)
    runtime.add_result_observer(lambda exec, result: seen.append(result.is_error))
    runtime.add_result_observer(throwing)
    runtime.add_result_observer(rejecting)
    runtime.add_result_observer(lambda exec, result: seen.append(result.is_error))
    with caplog.at_level(logging.WARNING, logger="trio_harness.runtime"):
        result = await runtime.execute(call("t"))
    assert first_text(result) == "outer failure"
    assert seen == [True, True]
    assert [record.getMessage() for record in caplog.records] == [
        'tool "t" (c1): tools/result observer failed: <unprintable thrown value>',
        'tool "t" (c1): tools/result observer failed: tools/result observers must be synchronous',
    ]


async def test_hook_removal_is_per_registration() -> None:
    runtime = runtime_with(echo_tool())

    async def deny(exec: Any, next: Any) -> Any:
        return Deny("no")

    first = runtime.add_pre_execute(deny)
    second = runtime.add_pre_execute(deny)
    first()
    first()  # idempotent: does not remove the second registration
    assert first_text(await runtime.execute(call())) == "Error: no"
    second()
    assert first_text(await runtime.execute(call("echo", {"text": "ok"}))) == "ok"


# -- the scheduler view ---------------------------------------------------------------------------


class RecordingScheduler:
    """Wraps the runtime's scheduler and records every phase call."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[str] = []

    async def prepare(self, input: ToolExecutionInput) -> Preparation:
        preparation: Preparation = await self.inner.prepare(input)
        self.calls.append(f"prepare:{preparation.kind}")
        return preparation

    async def dispatch(self, exec: ToolExecution) -> DispatchOutcome:
        outcome: DispatchOutcome = await self.inner.dispatch(exec)
        self.calls.append(f"dispatch:{outcome.kind}")
        return outcome

    async def finalize(
        self, exec: ToolExecution, result: ToolExecutionResult
    ) -> ToolExecutionResult:
        self.calls.append("finalize")
        final: ToolExecutionResult = await self.inner.finalize(exec, result)
        return final

    def finish(self, exec: ToolExecution, result: ToolExecutionResult) -> ToolExecutionResult:
        self.calls.append("finish")
        final: ToolExecutionResult = self.inner.finish(exec, result)
        return final


async def test_execute_goes_through_an_assigned_scheduler() -> None:  # e.3
    async def broken(exec: Any, next: Any) -> Any:
        raise RuntimeError("wrapper broke")

    runtime = runtime_with(echo_tool())
    recorder = RecordingScheduler(runtime.scheduler)
    runtime.scheduler = recorder
    await runtime.execute(call())
    assert recorder.calls == ["prepare:dispatch", "dispatch:post-result", "finalize"]
    recorder.calls.clear()
    abort = trio.Event()
    abort.set()
    await runtime.execute(call(abort=abort))
    assert recorder.calls == ["prepare:final-result", "finish"]
    recorder.calls.clear()
    remove = runtime.add_pre_execute(lambda exec, next: _deny())
    await runtime.execute(call())
    assert recorder.calls == ["prepare:post-result", "finalize"]
    remove()
    recorder.calls.clear()
    runtime.add_execute_wrapper(broken)
    await runtime.execute(call())
    assert recorder.calls == ["prepare:dispatch", "dispatch:final-result", "finish"]


async def _deny() -> Deny:
    return Deny("no")


async def test_a_scheduler_failure_escapes_execute() -> None:
    class Broken(RecordingScheduler):
        async def dispatch(self, exec: ToolExecution) -> DispatchOutcome:
            raise LookupError("scheduler bug")

    runtime = runtime_with(echo_tool())
    runtime.scheduler = Broken(runtime.scheduler)
    with pytest.raises(LookupError, match="scheduler bug"):
        await runtime.execute(call())


async def test_phases_can_be_driven_one_by_one() -> None:
    async def body(args: Any, ctx: Any) -> Any:
        ctx.defer_context("deferred", source={"kind": "plugin", "plugin": "body"})
        ctx.conclude_turn()
        return text_blocks("done")

    runtime = runtime_with(content_tool("t", body))
    scheduler = runtime.scheduler
    preparation = await scheduler.prepare(call("t", {}, call_id="c9", root_call_id="root"))
    assert preparation.kind == "dispatch"
    assert preparation.result is None
    exec = preparation.exec
    assert (exec.call_id, exec.name, exec.root_call_id, exec.exec) == ("c9", "t", "root", exec)
    assert exec.runtime is runtime
    outcome = await scheduler.dispatch(exec)
    assert outcome.kind == "post-result"
    final = scheduler.finish(exec, outcome.result)
    assert final.concludes_turn is True
    assert [c["content"] for c in final.additional_contexts] == [text_blocks("deferred")]
    with pytest.raises(RuntimeError, match="conclude_turn after the call finished"):
        exec.conclude_turn()
