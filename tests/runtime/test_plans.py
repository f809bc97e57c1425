"""Pins for the plans built at registration: each gives exactly what awaiting the wrapper gives.

* ``define_tool``'s validating wrapper and soft classifier are recorded as plans; the registry
  runs a plan inline (no wrapper coroutine), with the same results as awaiting the wrapper.
* A session subclass gets every event through its own ``append``; a body that mutates its
  arguments changes nothing the step shows; an execute wrapper's changed arguments are checked.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
import trio

import trio_harness as th
from tests.support.runtime_tools import Passthrough
from trio_harness import (
    Accept,
    Allow,
    Session,
    ToolCallBlock,
    ToolExecutionInput,
    ToolOutput,
    ToolRuntime,
    define_tool,
    execute_tool_calls,
)
from trio_harness._runtime.define import classifier_plan, execute_plan


def _text(value: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": str(value)}]


def _tools(abort_by_body: trio.Event | None) -> list[th.ToolDefinition]:
    async def ok(args: Any, ctx: Any) -> Any:
        await trio.lowlevel.checkpoint()
        return f"ok {args['x']}"

    async def wrong_output(args: Any, ctx: Any) -> Any:
        return 5  # the output schema wants a string

    async def raises(args: Any, ctx: Any) -> Any:
        raise ValueError("the body failed")

    async def sets_abort(args: Any, ctx: Any) -> Any:
        if abort_by_body is not None:
            abort_by_body.set()
        await trio.sleep(1)
        return "late"

    async def defers(args: Any, ctx: Any) -> Any:
        ctx.defer_context(f"note {args['x']}")
        return "deferred"

    def not_lossless(args: Any, value: Any) -> Any:
        return [{"type": "text", "text": float("nan")}]

    params = {"x": {"type": "integer"}}
    string = {"type": "string"}
    return [
        define_tool(
            name="ok",
            description="ok",
            parameters=params,
            output=ToolOutput(schema=string, render=lambda a, v: _text(v)),
            execute=ok,
            is_concurrency_safe=lambda a: True,
        ),
        define_tool(
            name="exclusive",
            description="ok, never parallel",
            parameters=params,
            output=ToolOutput(schema=string, render=lambda a, v: _text(v)),
            execute=ok,
        ),
        define_tool(
            name="wrong_output",
            description="breaks its output contract",
            parameters=params,
            output=ToolOutput(schema=string, render=lambda a, v: _text(v)),
            execute=wrong_output,
            is_concurrency_safe=lambda a: True,
        ),
        define_tool(
            name="raises",
            description="raises",
            parameters=params,
            output=ToolOutput(schema=string, render=lambda a, v: _text(v)),
            execute=raises,
            is_concurrency_safe=lambda a: True,
        ),
        define_tool(
            name="sync",
            description="returns no awaitable",
            parameters=params,
            output=ToolOutput(schema=string, render=lambda a, v: _text(v)),
            execute=lambda a, c: "not awaitable",  # type: ignore[arg-type,return-value]
            is_concurrency_safe=lambda a: True,
        ),
        define_tool(
            name="nan_render",
            description="renders a NaN",
            parameters=params,
            output=ToolOutput(schema=string, render=not_lossless),
            execute=ok,
            is_concurrency_safe=lambda a: True,
        ),
        define_tool(
            name="sets_abort",
            description="sets the step's abort, then sleeps",
            parameters=params,
            output=ToolOutput(schema=string, render=lambda a, v: _text(v)),
            execute=sets_abort,
            is_concurrency_safe=lambda a: True,
        ),
        define_tool(
            name="defers",
            description="defers a context",
            parameters=params,
            output=ToolOutput(schema=string, render=lambda a, v: _text(v)),
            execute=defers,
            is_concurrency_safe=lambda a: True,
        ),
        th.ToolDefinition(
            name="raw",
            description="a raw definition: no plan",
            parameters={"type": "object"},
            output=ToolOutput(schema={"type": "string"}, render=lambda a, v: _text(v)),
            execute=ok,
            is_concurrency_safe=lambda a: True,
        ),
    ]


CALLS = [
    ToolCallBlock("c1", "ok", '{"x":1}'),
    ToolCallBlock("c2", "ok", '{"x":"not an int"}'),
    ToolCallBlock("c3", "ok", "{not json"),
    ToolCallBlock("c4", "exclusive", '{"x":4}'),
    ToolCallBlock("c5", "wrong_output", '{"x":5}'),
    ToolCallBlock("c6", "raises", '{"x":6}'),
    ToolCallBlock("c7", "sync", '{"x":7}'),
    ToolCallBlock("c8", "nan_render", '{"x":8}'),
    ToolCallBlock("c9", "missing", '{"x":9}'),
    ToolCallBlock("c10", "ok", '{"x":1e999}'),
    ToolCallBlock("c11", "raw", '{"x":11}'),
    ToolCallBlock("c12", "ok", '{"x":12}'),
    ToolCallBlock("c13", "defers", '{"x":13}'),
]
ABORTING = [*CALLS[:2], ToolCallBlock("a1", "sets_abort", '{"x":0}'), *CALLS[2:]]


def _runtime(abort: trio.Event | None, policy: str) -> ToolRuntime:
    runtime = ToolRuntime()
    for tool in _tools(abort):
        runtime.register(tool)
    if policy == "pre-execute":

        async def allow(exec: Any, next: Any) -> Any:
            decision = await next()
            assert isinstance(decision, Allow)
            return decision

        runtime.add_pre_execute(allow)
    elif policy == "wrapper":

        async def around(exec: Any, next: Any) -> Any:
            return await next()

        runtime.add_execute_wrapper(around)
    elif policy == "post-execute":

        async def accept(exec: Any, result: Any, next: Any) -> Any:
            decision = await next()
            assert isinstance(decision, Accept)
            return decision

        runtime.add_post_execute(accept)
    return runtime


class RuntimeFacade:
    """A runtime that is not a ``ToolRuntime`` (it only delegates): the pool then classifies
    through its ``execution_mode`` and snapshots every call's arguments for its execution."""

    def __init__(self, inner: ToolRuntime) -> None:
        self.inner = inner
        self.scheduler = inner.scheduler

    def execution_mode(self, input: Any) -> Any:
        return self.inner.execution_mode(input)


async def _step(
    calls: list[ToolCallBlock], abort: trio.Event | None, policy: str, wrap: bool | str
) -> tuple[str, th.StepOutcome]:
    runtime: Any = _runtime(abort, policy)
    if wrap == "runtime":
        runtime = RuntimeFacade(runtime)
    elif wrap:
        runtime.scheduler = Passthrough(runtime.scheduler)
    session = Session()
    outcome = await execute_tool_calls(runtime, session, calls, abort=abort)
    return session.to_jsonl(), outcome


def _comparable(outcome: th.StepOutcome) -> list[Any]:
    # The results with the fresh ids of their context messages left out.
    return [
        (
            attrs.evolve(step.result, additional_contexts=()),
            [{**context, "id": None} for context in step.result.additional_contexts],
        )
        for step in outcome.results
    ]


async def test_a_plan_runs_what_awaiting_the_wrapper_runs() -> None:
    # The same definitions with ``execute`` / ``is_concurrency_safe`` hidden behind a lambda (no
    # plan: the registry then awaits define_tool's wrapper itself) give the same results.
    def hidden(tool: th.ToolDefinition) -> th.ToolDefinition:
        if execute_plan(tool.execute) is None:
            return tool
        wrapped = tool.execute
        classify = tool.is_concurrency_safe
        return attrs.evolve(
            tool,
            execute=lambda args, ctx: wrapped(args, ctx),
            is_concurrency_safe=None if classify is None else (lambda args: classify(args)),
        )

    planned, unplanned = ToolRuntime(), ToolRuntime()
    for tool in _tools(None):
        planned.register(tool)
        unplanned.register(hidden(tool))
    assert planned._registry.lookup("ok").plan is not None  # type: ignore[union-attr]
    assert unplanned._registry.lookup("ok").plan is None  # type: ignore[union-attr]
    for args in ({"x": 1}, {"x": "s"}, {}, [1], "text", {"x": 1, "y": [1, 2]}):
        for name in ("ok", "exclusive", "wrong_output", "raises", "sync", "nan_render", "raw"):
            given = ToolExecutionInput("c", name, args)
            assert planned.execution_mode(given) == unplanned.execution_mode(given)
            one = await planned.execute(given)
            other = await unplanned.execute(given)
            assert (one, type(one.exception)) == (other, type(other.exception)), (name, args)


def test_plans_are_recorded_for_define_tool_wrappers_only() -> None:
    async def body(args: Any, ctx: Any) -> Any:
        return "x"

    tool = define_tool(
        name="t",
        description="t",
        parameters={"x": {"type": "integer"}},
        output=ToolOutput(schema={"type": "string"}, render=lambda a, v: _text(v)),
        execute=body,
        is_concurrency_safe=lambda a: True,
    )
    plan = execute_plan(tool.execute)
    assert plan is not None
    check, execute, owner = plan
    assert execute is body
    assert owner == "defineTool(t)"
    assert check({"x": "s"}, "")
    assert not check({"x": 1}, "")
    assert classifier_plan(tool.is_concurrency_safe) is not None
    assert execute_plan(body) is None
    assert execute_plan(lambda a, c: None) is None
    assert execute_plan(object()) is None
    assert classifier_plan(None) is None


def _identity(exec: Any) -> tuple[Any, ...]:
    return (
        exec.call_id,
        exec.name,
        exec.arguments,
        exec.agent,
        exec.parent,
        exec.root_call_id,
        exec.runtime,
        exec.abort,
        exec._caller_abort,
        exec._finalize_content,
        exec._valid_under,
    )


class _InputsSeen:
    """A runtime that is not a ``ToolRuntime`` and a scheduler that is not the runtime's own:
    the pool builds each call's input for them, once."""

    def __init__(self, inner: ToolRuntime) -> None:
        self.inner = inner
        self.classified: list[Any] = []
        self.prepared: list[Any] = []
        self.scheduler = Passthrough(inner.scheduler)
        prepare = self.scheduler.prepare

        async def record(input: Any) -> Any:
            self.prepared.append(input)
            return await prepare(input)

        self.scheduler.prepare = record  # type: ignore[method-assign]

    def execution_mode(self, input: Any) -> Any:
        self.classified.append(input)
        return self.inner.execution_mode(input)


def _set_event() -> trio.Event:
    event = trio.Event()
    event.set()
    return event


class _Recording(Session):
    """A ``Session`` subclass: the pool must go through its ``append``."""

    def __init__(self) -> None:
        super().__init__()
        self.appended: list[str] = []

    def append(self, type: str, data: Any, **kwargs: Any) -> Any:
        self.appended.append(type)
        return super().append(type, data, **kwargs)


async def test_a_session_subclass_gets_every_event_through_its_append() -> None:
    session = _Recording()
    calls = [CALLS[0], CALLS[11]]
    await execute_tool_calls(_runtime(None, "none"), session, calls)
    assert session.appended == [event.type for event in session.events]
    assert len(session.appended) == 4
    plain = Session()
    await execute_tool_calls(_runtime(None, "none"), plain, calls)
    assert plain.to_jsonl() == session.to_jsonl()


class _BadName(th.HarnessError):
    name = 5  # type: ignore[assignment]  # not a str: the log cannot keep it


class _KeepsInputs:
    """A tracer that keeps the step's inputs (``begin`` sees them)."""

    def __init__(self) -> None:
        self.inputs: Any = None

    def begin(self, calls: Any, cap: int) -> None:
        self.inputs = calls

    def phase(self, name: str, index: int, detail: object) -> None:
        pass


@pytest.mark.parametrize("traced", [False, True])
async def test_a_body_that_mutates_its_arguments_changes_nothing_the_step_shows(
    traced: bool,
) -> None:
    seen: list[Any] = []

    async def mutate(args: Any, ctx: Any) -> Any:
        seen.append(dict(args))
        args["x"] = 99
        args["added"] = True
        return "done"

    def classify(args: Any) -> bool:
        seen.append(dict(args))
        args[
            "x"
        ] = -1  # the input's parsed value (upstream hands it input.arguments), not the call's
        return True

    runtime = ToolRuntime()
    runtime.register(
        define_tool(
            name="mutate",
            description="mutates its arguments",
            parameters={"x": {"type": "integer"}},
            output=ToolOutput(schema={"type": "string"}, render=lambda a, v: _text(a)),
            execute=mutate,
            is_concurrency_safe=classify,
        )
    )
    tracer = _KeepsInputs() if traced else None
    session = Session()
    calls = [ToolCallBlock("c1", "mutate", '{"x":1}'), ToolCallBlock("c2", "mutate", '{"x":2}')]
    outcome = await execute_tool_calls(runtime, session, calls, tracer=tracer)
    # The classifier and the body each saw the call's arguments as the model wrote them.
    assert seen == [{"x": 1}, {"x": 1}, {"x": 2}, {"x": 2}] or seen == [
        {"x": 1},
        {"x": 2},
        {"x": 1},
        {"x": 2},
    ]
    calls_logged = [event.data.arguments for event in session.events if event.type == "tool/call"]
    assert calls_logged == ['{"x":1}', '{"x":2}']
    # The render sees what the body left (upstream: the execution's own arguments).
    texts = [step.result.content[0]["text"] for step in outcome.results]
    assert texts == [str({"x": 99, "added": True})] * 2
    if tracer is not None:
        # A tracer's inputs are the pool's own (one call path, traced or not): the body's
        # changes never reach them (the executions got copies); the classifier, handed each
        # input's parsed value as upstream hands it input.arguments, changed that.
        assert [input.arguments for input in tracer.inputs] == [{"x": -1}, {"x": -1}]


async def test_an_execute_wrapper_that_changes_the_arguments_has_them_checked_again() -> None:
    logs = []
    for facade in (False, True):
        runtime: Any = _runtime(None, "none")

        async def breaks(exec: Any, next: Any) -> Any:
            exec.arguments["x"] = "no longer an int"
            return await next()

        runtime.add_execute_wrapper(breaks)
        if facade:
            runtime = RuntimeFacade(runtime)  # no classification proof: the general path
        session = Session()
        outcome = await execute_tool_calls(runtime, session, [ToolCallBlock("c", "ok", '{"x":1}')])
        assert outcome.results[0].result.content[0]["text"] == (
            'Error: invalid arguments: "x" must be an integer'
        )
        logs.append(session.to_jsonl())
    assert logs[0] == logs[1]
