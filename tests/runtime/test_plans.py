"""Pins for the per-call shortcuts of issue 21: each must give exactly what the general path gives.

* ``define_tool``'s validating wrapper and soft classifier are recorded as plans; the registry
  runs a plan inline (no wrapper coroutine), with the same results as awaiting the wrapper.
* The pool drives the runtime's own ``ToolScheduler`` through ``prepare_now`` / ``dispatch_now``
  (no phase coroutines, no phase objects) and appends its call data and the runtime's successes
  to a plain ``Session`` unchecked; with any other scheduler (here a pass-through wrapper) it
  takes the general path. Both give the same session log, event for event, and the same results.
* Results, inputs, preparations and dispatch outcomes built slot by slot equal the attrs-built
  ones.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
import trio

import trio_harness as th
from trio_harness import (
    UNSET,
    Accept,
    Allow,
    Session,
    ToolCallBlock,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolOutput,
    ToolRuntime,
    define_tool,
    execute_tool_calls,
)
from trio_harness._pool.steps import StepResult, fast_step_result
from trio_harness._runtime import NO_PROOF, direct_classifier
from trio_harness._runtime.define import classifier_plan, execute_plan
from trio_harness._runtime.execution import fast_input, fast_outcome, fast_preparation
from trio_harness._values import fast_success_result
from trio_harness.lowlevel import DispatchOutcome, Preparation


class Passthrough:
    """A scheduler wrapper that changes nothing: the pool then takes its general path."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def prepare(self, input: Any) -> Any:
        return await self.inner.prepare(input)

    async def dispatch(self, exec: Any) -> Any:
        return await self.inner.dispatch(exec)

    async def finalize(self, exec: Any, result: Any) -> Any:
        return await self.inner.finalize(exec, result)

    def finish(self, exec: Any, result: Any) -> Any:
        return self.inner.finish(exec, result)


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


@pytest.mark.parametrize("policy", ["none", "pre-execute", "wrapper", "post-execute"])
@pytest.mark.parametrize("abort", ["no event", "event never set", "set by a body", "set before"])
async def test_the_fast_path_logs_what_the_general_path_logs(
    policy: str, abort: str, autojump_clock: trio.testing.MockClock
) -> None:
    logs = []
    for wrap in (False, True, "runtime"):
        event = None if abort == "no event" else trio.Event()
        if abort == "set before":
            assert event is not None
            event.set()
        calls = ABORTING if abort == "set by a body" else CALLS
        logs.append(await _step(calls, event, policy, wrap))
    (fast_log, fast_outcome_), *others = logs
    for general_log, general_outcome in others:
        assert fast_log == general_log
        assert fast_outcome_ == general_outcome
        assert _comparable(fast_outcome_) == _comparable(general_outcome)
    # The scenario reaches the failures it is meant to (not a vacuous comparison).
    if abort == "no event":
        texts = [r.result.content[0]["text"] for r in fast_outcome_.results]
        assert texts[0] == "ok 1"
        assert "ToolArgsError" not in texts[1]
        assert texts[1].startswith("Error: ")
        assert "execute must be an async function (it returned str)" in texts[6]
        deferred = fast_outcome_.results[-1].result.additional_contexts
        assert [context["content"] for context in deferred] == [_text("note 13")]


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


def test_slot_built_values_equal_the_attrs_built_ones() -> None:
    content = ({"type": "text", "text": "ok"},)
    result = fast_success_result(content, {"v": 1}, {"m": True}, True)
    assert type(result) is ToolExecutionResult
    assert attrs.asdict(result, recurse=False) == attrs.asdict(
        ToolExecutionResult(
            is_error=False, content=content, value={"v": 1}, meta={"m": True}, concludes_turn=True
        ),
        recurse=False,
    )
    plain = fast_success_result(content, "ok", UNSET, False)
    assert plain == ToolExecutionResult(is_error=False, content=content, value="ok")
    assert plain.exception is None
    assert plain.error is None
    assert plain.additional_contexts == ()
    abort = trio.Event()
    made = fast_input("c", "n", {"a": 1}, abort, "agent")
    assert attrs.asdict(made, recurse=False) == attrs.asdict(
        ToolExecutionInput("c", "n", {"a": 1}, abort, agent="agent"), recurse=False
    )
    exec: Any = object()
    assert fast_preparation("dispatch", exec, None) == Preparation("dispatch", exec)
    assert fast_outcome("post-result", plain) == DispatchOutcome("post-result", plain)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        plain.value = "changed"  # type: ignore[misc]
    step_result = fast_step_result("c", "n", plain)
    assert type(step_result) is StepResult
    assert attrs.asdict(step_result, recurse=False) == attrs.asdict(
        StepResult("c", "n", plain), recurse=False
    )


async def test_prepare_now_gives_the_fields_of_prepare() -> None:
    runtime = _runtime(None, "none")
    scheduler: Any = runtime.scheduler
    for input in (
        ToolExecutionInput("c", "ok", {"x": 1}),
        ToolExecutionInput("c", "ok", {"x": float("nan")}),
        ToolExecutionInput("c", "missing", {}),
        ToolExecutionInput("c", "ok", {"x": 1}, _set_event()),
    ):
        now = scheduler.prepare_now(input)
        preparation = await scheduler.prepare(input)
        assert now[0] == preparation.kind
        assert now[2] == preparation.result
        assert now[1].arguments == preparation.exec.arguments
    with_hook = _runtime(None, "pre-execute")
    assert with_hook.scheduler.prepare_now(ToolExecutionInput("c", "ok", {"x": 1})) is None  # type: ignore[attr-defined]
    with_wrapper = _runtime(None, "wrapper")
    exec = (await with_wrapper.scheduler.prepare(ToolExecutionInput("c", "ok", {"x": 1}))).exec
    assert with_wrapper.scheduler.dispatch_now(exec) is None  # type: ignore[attr-defined]


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


async def test_prepare_call_gives_what_prepare_now_gives_for_that_input() -> None:
    runtime = _runtime(None, "none")
    scheduler: Any = runtime.scheduler
    limit = th.lowlevel.json_node_limit()
    check = runtime._registry.lookup("ok").classify[0]  # type: ignore[union-attr]
    agent = object()
    for name, arguments in (
        ("ok", {"x": 1}),
        ("ok", {"x": "not an int"}),
        ("ok", {"x": float("nan")}),
        ("ok", "{not json"),
        ("missing", {}),
    ):
        for abort in (None, trio.Event(), _set_event(), "not an event"):
            for proof in (NO_PROOF, (limit, None), (limit, check), (limit + 1, check)):
                for who in (None, agent):
                    input = ToolExecutionInput("c", name, arguments, abort, agent=who)  # type: ignore[arg-type]
                    kind, exec, result = scheduler.prepare_call(
                        "c", name, arguments, abort, who, proof
                    )
                    now_kind, now_exec, now_result = scheduler.prepare_now(input, proof)
                    assert (kind, result) == (now_kind, now_result)
                    assert _identity(exec) == _identity(now_exec)
                    assert (exec.arguments is arguments) == (now_exec.arguments is arguments)
                    assert (exec._fresh_result is result) == (now_exec._fresh_result is now_result)
    with_hook: Any = _runtime(None, "pre-execute").scheduler
    assert with_hook.prepare_call("c", "ok", {"x": 1}, None, None) is None
    guarded = _runtime(None, "none")
    guarded.add_guard(lambda exec: None)
    assert guarded.scheduler.prepare_call("c", "ok", {"x": 1}, None, None) is None  # type: ignore[attr-defined]


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


async def test_a_step_builds_the_inputs_it_used_to_for_whoever_needs_them() -> None:
    abort = trio.Event()
    agent = object()
    runtime = _InputsSeen(_runtime(None, "none"))
    await execute_tool_calls(runtime, Session(), CALLS, abort=abort, agent=agent)
    expected = [
        ToolExecutionInput(c.id, c.name, th.parse_arguments(c.arguments), abort, agent=agent)
        for c in CALLS
    ]
    assert runtime.prepared == expected
    assert all(type(input) is ToolExecutionInput for input in runtime.prepared)
    # One input per call: what the classification saw is what the preparation got.
    assert {id(input) for input in runtime.classified} == {id(i) for i in runtime.prepared}


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


async def test_a_failure_is_still_checked_when_the_pool_logs_unchecked_successes() -> None:
    async def raises(args: Any, ctx: Any) -> Any:
        raise _BadName("odd", "ODD")

    errors = []
    for wrap in (False, True):
        runtime = ToolRuntime()
        runtime.register(
            define_tool(
                name="odd",
                description="raises an error whose name is not a str",
                parameters={},
                output=ToolOutput(schema={"type": "string"}, render=lambda a, v: _text(v)),
                execute=raises,
            )
        )
        if wrap:
            runtime.scheduler = Passthrough(runtime.scheduler)
        session = Session()
        with pytest.raises(TypeError) as caught:
            await execute_tool_calls(runtime, session, [ToolCallBlock("c", "odd", "{}")])
        errors.append((str(caught.value), session.to_jsonl()))
    assert errors[0] == errors[1]


def test_only_an_exact_tool_runtime_is_classified_without_its_execution_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime = _runtime(None, "none")
    classify = direct_classifier(runtime)
    assert classify is not None
    arguments = {"x": 1}
    for name in ("ok", "exclusive", "missing", "raw"):
        input = ToolExecutionInput("c", name, arguments)
        assert classify(name, arguments)[0] == runtime.execution_mode(input)
    # Found lossless under the current limit, by a snapshot: only that reached the classifier.
    check = classifier_plan(runtime._registry.lookup("ok").definition.is_concurrency_safe)[0]  # type: ignore[index,union-attr]
    # ... and valid under define_tool's (pure) argument check.
    assert classify("ok", arguments) == (th.PARALLEL, (th.lowlevel.json_node_limit(), check))
    assert classify("ok", {"x": "s"}) == (th.EXCLUSIVE, (th.lowlevel.json_node_limit(), None))
    assert classify("ok", {"x": float("nan")})[1] == NO_PROOF
    assert classify("exclusive", arguments)[1] == NO_PROOF  # no classifier: no snapshot taken

    class Sub(ToolRuntime):
        pass

    assert direct_classifier(Sub()) is None
    assert direct_classifier(RuntimeFacade(runtime)) is None
    monkeypatch.setattr(ToolRuntime, "execution_mode", lambda self, input: th.EXCLUSIVE)
    assert direct_classifier(runtime) is None


async def test_prepare_now_takes_checked_arguments_only_under_the_same_node_limit() -> None:
    scheduler: Any = _runtime(None, "none").scheduler
    arguments = {"x": 1, "y": [1, 2, 3]}
    input = ToolExecutionInput("c", "ok", arguments)
    limit = th.lowlevel.json_node_limit()
    assert scheduler.prepare_now(input)[1].arguments is not arguments
    assert scheduler.prepare_now(input, (limit, None))[1].arguments is arguments
    # Checked under another limit: snapshotted (and judged) afresh, as without a check.
    previous = th.lowlevel.set_json_node_limit(3)
    try:
        kind, exec, result = scheduler.prepare_now(input, (limit, None))
        assert exec.arguments is UNSET
        assert kind == "final-result"
        assert result == scheduler.prepare_now(input)[2]
        assert result.is_error
    finally:
        th.lowlevel.set_json_node_limit(previous)


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
        args["x"] = -1  # the classifier's copy only
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
        # A tracer holds the inputs: the executions got copies, its inputs are untouched.
        assert [input.arguments for input in tracer.inputs] == [{"x": 1}, {"x": 2}]


async def test_finalize_now_gives_what_finalize_gives() -> None:
    for abort in (None, trio.Event(), _set_event()):
        runtime = _runtime(None, "none")
        scheduler: Any = runtime.scheduler
        input = ToolExecutionInput("c", "ok", {"x": 1}, abort)
        results = []
        for now in (False, True):
            exec = (await scheduler.prepare(ToolExecutionInput("c", "ok", {"x": 1}))).exec
            exec._caller_abort = input.abort  # the same phase, with the caller's event
            ok = ToolExecutionResult(is_error=False, content=({"type": "text", "text": "ok"},))
            if now:
                results.append(scheduler.finalize_now(exec, ok))
            else:
                results.append(await scheduler.finalize(exec, ok))
        assert results[0] == results[1]
        assert results[0].is_error is (abort is not None and abort.is_set())
    hooked: Any = _runtime(None, "post-execute").scheduler
    exec = (await hooked.prepare(ToolExecutionInput("c", "ok", {"x": 1}))).exec
    assert hooked.finalize_now(exec, ToolExecutionResult(is_error=False, content=())) is None


async def test_the_body_takes_the_verdict_of_the_very_check_the_classification_ran() -> None:
    runtime = _runtime(None, "none")
    scheduler: Any = runtime.scheduler
    classify = direct_classifier(runtime)
    assert classify is not None
    arguments = {"x": 1}
    proof = classify("ok", arguments)[1]
    limit, check = proof
    assert check is not None
    exec = scheduler.prepare_now(ToolExecutionInput("c", "ok", arguments), proof)[1]
    assert exec.arguments is arguments
    assert exec._valid_under is check
    assert (await scheduler.dispatch_now(exec)).content[0]["text"] == "ok 1"
    # The body trusts that check's verdict only: given as found by it, invalid arguments run
    # (nothing in the package gives such a proof; this shows the check is not run again) ...
    invalid = {"x": "s"}
    exec = scheduler.prepare_now(ToolExecutionInput("c", "ok", invalid), proof)[1]
    assert (await scheduler.dispatch_now(exec)).content[0]["text"] == "ok s"
    # ... any other check, or none, and its own check runs.
    for other in (None, lambda value, path: []):
        exec = scheduler.prepare_now(ToolExecutionInput("c", "ok", invalid), (limit, other))[1]
        result = await scheduler.dispatch_now(exec)
        assert result.is_error
        assert result.content[0]["text"] == 'Error: invalid arguments: "x" must be an integer'
    # Under another node limit the arguments are snapshotted afresh: no verdict is taken.
    previous = th.lowlevel.set_json_node_limit(limit + 1)
    try:
        exec = scheduler.prepare_now(ToolExecutionInput("c", "ok", invalid), proof)[1]
        assert exec.arguments is not invalid
        assert exec._valid_under is None
        assert (await scheduler.dispatch_now(exec)).is_error
    finally:
        th.lowlevel.set_json_node_limit(previous)


def test_only_define_tools_pure_check_gives_its_verdict_to_the_body() -> None:
    runtime = ToolRuntime()
    output = ToolOutput(schema={"type": "string"}, render=lambda a, v: _text(v))

    async def body(args: Any, ctx: Any) -> Any:
        return "x"

    definition, _report = th.define_json_tool(
        name="raw_schema",
        description="d",
        input_schema={"type": "object", "properties": {"x": {"type": "integer"}}},
        output=output,
        execute=body,
        is_concurrency_safe=lambda a: True,
    )
    runtime.register(definition)
    classify = direct_classifier(runtime)
    assert classify is not None
    limit = th.lowlevel.json_node_limit()
    assert classify("raw_schema", {"x": 1}) == (th.PARALLEL, (limit, None))


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
