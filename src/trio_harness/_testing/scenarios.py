"""Whole pool scenarios: a hypothesis strategy of runs that touch every feature of the pool, and
a runner that plays one under :class:`~trio_harness.testing.PoolMonitor` and returns every
violation (the monitor's, ``check_session``'s, and the rules only a runner that owns the tools
can check).

A scenario is a few consecutive steps on one runtime and one abort event. Its calls use five
tools (``read`` parallel, ``write`` exclusive, ``maybe`` classified by its arguments, ``odd``
whose classification raises, ``composite`` which runs sub-calls); each call says how long its
body runs, how its policy phase goes (allowed, denied by a pre-execute hook, asked and
approved or refused, a raising hook, a guard), how its body ends (returns, raises, concludes the
turn, sets the abort itself), whether it defers a context, whether the scheduler fails in one of
its phases, whether its execute wrapper raises. A step is a list or a stream (calls arriving
over time, the stream possibly raising at its end), with a window that may be invalid, an abort
set before or during it, and possibly a cancellation from outside.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import trio
import trio.testing
from hypothesis import strategies as st

from .._errors import TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH
from .._log import TOOL_CALL, Session
from .._pool import StepOutcome, SubCall, ToolCallBlock, execute_sub_calls
from .._runtime import (
    Allow,
    Ask,
    Deny,
    Scheduler,
    ToolExecution,
    ToolExecutionInput,
    ToolRuntime,
    define_tool,
)
from .._values import ExecutionMode, ToolExecutionResult, ToolOutput
from .checklog import check_log
from .monitor import PoolMonitor
from .rules import PoolViolation, error_code

__all__ = [
    "SCENARIO_TOOLS",
    "PlantedFailure",
    "PoolScenario",
    "ScenarioCall",
    "ScenarioStep",
    "pool_scenarios",
    "run_pool_scenario",
]

#: The tools of a scenario: ``read`` (parallel), ``write`` (exclusive), ``maybe`` (parallel when
#: its ``par`` argument is true), ``flip`` (parallel once a body of the step ended or a result of
#: it was committed, so classifying it again after a settle matters), ``odd`` (its classification raises: a scheduler
#: failure), ``composite`` (runs its sub-calls with ``execute_sub_calls``).
SCENARIO_TOOLS = ("read", "write", "maybe", "flip", "odd", "composite")
POLICIES = ("allow", "deny", "ask", "ask-refused", "ask-cancelled", "hook-raises", "guarded")
ENDINGS = (
    "return",
    "error",
    "conclude",
    "set-abort",
    "set-abort-error",
    "abort-first",
    "abort-on-commit",
)
FAILURE_PHASES = ("prepare", "dispatch", "finalize", "late-finalize")


class PlantedFailure(Exception):
    """A scheduler failure the scenario planted (``args``: the call's index and the phase)."""


class _StreamFailure(Exception):
    """The exception a failing stream raises after its last call."""


@attrs.frozen(kw_only=True)
class ScenarioCall:
    """One call of a scenario step.

    Attributes:
        id: The call id (ids may repeat within a step, as models send them).
        tool: One of :data:`SCENARIO_TOOLS`.
        duration: How long the body runs (virtual seconds).
        par: ``maybe``'s classification.
        policy: ``allow``, ``deny`` (a pre-execute hook denies), ``ask`` (approved after
            1.5 seconds), ``ask-refused`` (rejected), ``ask-cancelled`` (the approval answers
            ``cancelled``), ``hook-raises`` (a pre-execute hook raises), ``guarded``.
        ends: ``return``, ``error`` (the body raises), ``conclude`` (``ctx.conclude_turn()``),
            ``set-abort`` (the body sets the step's abort, then returns), ``set-abort-error``,
            ``abort-first`` (the body sets the abort at once, then runs its sub-calls),
            ``abort-on-commit`` (a result observer sets the abort when its result is final).
        context: The body defers a context before it ends.
        failure: The scheduler raises :class:`PlantedFailure` in this phase of the call
            (``late-finalize``: a second into ``finalize``).
        slow_post: Its post-execute hook takes a second.
        wrapper_fails: The call's execute wrapper raises (a final result, no post-execute).
        sub_calls: The durations of a ``composite``'s sub-calls (all ``read``).
        sub_window: Its ``max_parallel_sub_calls``.
        arrives_at: When a streamed call arrives (seconds after the step began).
    """

    id: str
    tool: str = "read"
    duration: float = 1
    par: bool = True
    policy: str = "allow"
    ends: str = "return"
    context: bool = False
    failure: str | None = None
    wrapper_fails: bool = False
    slow_post: bool = False
    sub_calls: tuple[float, ...] = ()
    sub_window: int = 1
    arrives_at: float = 0


@attrs.frozen(kw_only=True)
class ScenarioStep:
    """One step of a scenario.

    Attributes:
        calls: Its calls, in model order.
        cap: ``max_parallel_tool_calls`` (may be invalid: ``0``, ``-1``, ``True``).
        streamed: The calls arrive over an async iterable at their ``arrives_at``.
        stream_fails: The stream raises after its last call.
        abort_at: When the scenario's abort is set (``0``: before the step; ``None``: not).
        cancel_at: When the step is cancelled from outside (``None``: never).
        accept_fails: ``accept_context`` raises (a scheduler failure of the step).
    """

    calls: tuple[ScenarioCall, ...]
    cap: object = 2
    streamed: bool = False
    stream_fails: bool = False
    abort_at: float | None = None
    cancel_at: float | None = None
    accept_fails: bool = False


@attrs.frozen(kw_only=True)
class PoolScenario:
    """Consecutive steps on one runtime and one abort event (set once, it stays set).

    Attributes:
        steps: The steps, in order.
        hooks: A pre-execute and a post-execute hook are installed (without them, guards and
            approvals still apply).
        approvals: An approval service is installed (without one, an ``Ask`` is a denial).
    """

    steps: tuple[ScenarioStep, ...]
    hooks: bool = True
    approvals: bool = True


_PARAMETERS = {
    "i": {"type": "integer", "required": True},
    "j": {"type": "integer"},
    "d": {"type": "number", "required": True},
    "ends": {"type": "string"},
    "par": {"type": "boolean"},
    "context": {"type": "boolean"},
    "subs": {"type": "array", "items": {"type": "number"}},
    "window": {"type": "integer"},
}
_TIMES = st.sampled_from([0, 0.5, 1, 1.5, 2, 3])
#: What a step is about: every feature at random, or one of the combinations the rarer bugs need
#: drawn often (a clean step whose results are all judged; two or more scheduler failures, in
#: every phase, during approvals; an abort during policy phases, bodies and sub-calls; a
#: cancellation from outside while post-execute hooks, bodies and late arrivals run).
FLAVOURS = ("any", "any", "clean", "clean", "failures", "failures", "abort", "cancel")
_NO = (None,)
_KNOBS: dict[str, dict[str, tuple[Any, ...]]] = {
    "any": {
        "policy": ("allow",) * 8 + POLICIES[1:],
        "ends": ("return",) * 8 + ENDINGS[1:],
        "failure": _NO * 12 + FAILURE_PHASES,
    },
    "clean": {
        "policy": ("allow",) * 6 + POLICIES[1:3] + ("hook-raises",) * 2 + POLICIES[4:],
        "ends": ("return",) * 6 + ("error", "conclude", "conclude"),
        "failure": _NO,
    },
    "failures": {
        "policy": ("allow", "allow", "ask", "ask", "ask", "deny"),
        "ends": ("return",) * 4 + ("error", "conclude"),
        "failure": _NO * 2 + FAILURE_PHASES + ("dispatch", "dispatch", "late-finalize"),
    },
    "abort": {
        "policy": ("allow",) * 3 + ("ask", "ask", "deny", "ask-refused"),
        "ends": ("return",) * 3 + ENDINGS[1:] + ("set-abort", "abort-first"),
        "failure": _NO * 12 + FAILURE_PHASES,
    },
    "cancel": {
        "policy": ("allow",) * 4 + ("ask", "deny"),
        "ends": ("return",) * 6 + ("error", "conclude"),
        "failure": _NO * 8 + FAILURE_PHASES,
    },
}


@st.composite
def _calls(draw: st.DrawFn, index: int, repeated_ids: bool, flavour: str) -> ScenarioCall:
    knobs = _KNOBS[flavour]
    tools: tuple[str, ...] = SCENARIO_TOOLS[:3] * 3 + SCENARIO_TOOLS[3:]
    if flavour == "clean":
        tools = tools[:-2] + SCENARIO_TOOLS[-1:]  # (``odd`` is a scheduler failure)
    elif flavour == "failures":
        tools += ("read",) * 4
    elif flavour == "abort":
        tools += ("composite",) * 3
    tool = draw(st.sampled_from(tools))
    ends = draw(st.sampled_from(knobs["ends"]))
    failure = draw(st.sampled_from(knobs["failure"]))
    duration = draw(_TIMES)
    policy = draw(st.sampled_from(knobs["policy"]))
    if flavour == "failures" and index == 0:
        # A parallel call failing soon: the later ones fail too, or are being approved then.
        tool, policy = "read", "allow"
        failure = draw(st.sampled_from(("dispatch", "dispatch", "late-finalize")))
        duration = draw(st.sampled_from([0.5, 1, 1.5]))
    elif flavour == "abort" and index < 2:
        # Two parallel calls open the step: with a window of one or two, the later calls wait.
        tool, policy, failure = "read", "allow", None
    elif flavour == "cancel" and index == 0:
        # A slow post-execute hook the cancellation (or a late arrival) may come during.
        tool, policy, failure = "read", "allow", None
        duration = draw(st.sampled_from([0.5, 1, 1.5]))
    if tool == "composite" and flavour == "abort" and draw(st.booleans()):
        ends = "abort-first"  # (its sub-calls never start)
    return ScenarioCall(
        id=draw(st.sampled_from(["", "a", "b"])) if repeated_ids else f"c{index}",
        tool=tool,
        duration=duration,
        par=draw(st.booleans()),
        policy=policy,
        ends=ends,
        context=draw(st.booleans()),
        failure=failure,
        wrapper_fails=flavour != "clean" and draw(st.integers(0, 7)) == 0,
        slow_post=(flavour == "cancel" and index == 0)
        or draw(st.integers(0, 1 if flavour == "cancel" else 3)) == 0,
        sub_calls=tuple(draw(st.lists(_TIMES, min_size=int(flavour == "abort"), max_size=4)))
        if tool == "composite"
        else (),
        sub_window=draw(st.integers(1, 3)),
        arrives_at=draw(_TIMES),
    )


_ABORTS: dict[str, list[float | None]] = {
    "any": [None] * 6 + [0, 0.5, 1, 1.5, 2.5],
    "abort": [None, 0, 0.5, 1, 1.5, 2, 2.5],
    "cancel": [None, None, None, 1, 2],
}
_CAPS: dict[str, list[object]] = {
    "any": [1, 2, 2, 3, 3, 4, 2, 3, 0, True],
    "clean": [2, 3, 3, 4],
    "failures": [2, 3, 3, 4],
    "abort": [1, 1, 2, 2, 3],  # (more calls than the window: some wait, then the abort comes)
}
_CANCELS: dict[str, list[float | None]] = {
    "any": [None] * 5 + [0.5, 1, 1.5, 2.5],
    "cancel": [0.5, 1, 1.5, 2, 2.5, 3],
}


@st.composite
def _steps(draw: st.DrawFn, max_calls: int) -> ScenarioStep:
    flavour = draw(st.sampled_from(FLAVOURS))
    repeated_ids = draw(st.integers(0, 3)) == 0
    count = draw(st.integers(0 if flavour == "any" else min(2, max_calls), max_calls))
    calls = [draw(_calls(index, repeated_ids, flavour)) for index in range(count)]
    # (a cancellation step mostly streams: calls arrive while post-execute hooks run)
    streamed = draw(st.integers(0, 3)) > 0 if flavour == "cancel" else draw(st.booleans())
    if streamed:  # arrivals in model order
        times = sorted(call.arrives_at for call in calls)
        calls = [attrs.evolve(call, arrives_at=at) for call, at in zip(calls, times, strict=True)]
    special = flavour in ("clean", "failures")
    return ScenarioStep(
        calls=tuple(calls),
        cap=draw(st.sampled_from(_CAPS.get(flavour, _CAPS["any"]))),
        streamed=streamed,
        stream_fails=streamed and flavour != "clean" and draw(st.integers(0, 5)) == 0,
        abort_at=None if special else draw(st.sampled_from(_ABORTS.get(flavour, _ABORTS["any"]))),
        cancel_at=None if special else draw(st.sampled_from(_CANCELS.get(flavour, [None]))),
        accept_fails=flavour != "clean" and draw(st.integers(0, 9)) == 0,
    )


def pool_scenarios(*, max_steps: int = 3, max_calls: int = 5) -> st.SearchStrategy[PoolScenario]:
    """Whole pool scenarios: every feature of the pool, in random steps.

    Args:
        max_steps: At most this many consecutive steps (on one runtime and one abort event).
        max_calls: At most this many calls a step.

    Returns:
        A strategy of :class:`PoolScenario`; play one with :func:`run_pool_scenario`.
    """
    return st.builds(
        PoolScenario,
        steps=st.lists(_steps(max_calls), min_size=1, max_size=max_steps).map(tuple),
        hooks=st.sampled_from([True, True, True, False]),
        approvals=st.sampled_from([True, True, True, False]),
    )


@attrs.define
class _Body:
    """What one body (a top-level call's or a sub-call's) did, in virtual time."""

    started: float
    ended: float | None = None
    returned: bool = False
    raised: bool = False
    sub_error: Exception | None = None
    sub_results: list[ToolExecutionResult] | None = None
    sub_peak: int = 0


@attrs.define(eq=False)
class _Run:
    """The state of one scenario's run: its runtime, its abort, what the tools saw."""

    scenario: PoolScenario
    runtime: ToolRuntime
    abort: trio.Event = attrs.field(factory=trio.Event)
    step: ScenarioStep | None = None
    session: Session = attrs.field(factory=Session)
    first_seq: int = 0
    bodies: dict[tuple[int, int], _Body] = attrs.field(factory=dict)
    abort_time: float | None = None
    post_seen: list[int] = attrs.field(factory=list)
    policy_logged: dict[int, int] = attrs.field(factory=dict)
    sub_running: dict[int, int] = attrs.field(factory=dict)
    asking: int = -1
    commits: int = 0  # final results of the step so far (``flip`` turns parallel after one)

    def call(self, index: int) -> ScenarioCall:
        assert self.step is not None
        return self.step.calls[index]

    def must_run_alone(self, name: str, arguments: Any) -> bool:
        # The truth about the tools, written apart from their classifiers.
        if name == "read":
            return False
        if name == "maybe":
            return not (isinstance(arguments, dict) and arguments.get("par") is True)
        if name == "flip":
            return not self.flipped()
        return True

    def flipped(self) -> bool:
        """``flip`` is parallel: a top-level body of the step ended, or a result was committed."""
        return self.commits > 0 or any(
            body.ended is not None for (_, sub), body in self.bodies.items() if sub < 0
        )

    def set_abort(self) -> None:
        if not self.abort.is_set():
            self.abort_time = trio.current_time()
            self.abort.set()

    def logged_calls(self) -> int:
        return sum(1 for e in self.session.events[self.first_seq :] if e.type == TOOL_CALL)


class _ScenarioRuntime(ToolRuntime):
    """The runtime of a scenario: ``odd`` calls fail to classify (a scheduler failure)."""

    def execution_mode(self, input: ToolExecutionInput) -> ExecutionMode:
        if input.name == "odd" and input.parent is None:
            raise PlantedFailure(_index(input.arguments), "classify")
        return super().execution_mode(input)


def _index(arguments: Any) -> int:
    return int(arguments["i"]) if isinstance(arguments, dict) else -1


class _PlantedScheduler:
    """Forwards every phase, raising :class:`PlantedFailure` where the scenario plants one
    (it changes no answer: the monitor judges the runtime's own scheduler behind it)."""

    forwards_answers = True

    def __init__(self, run: _Run, inner: Any) -> None:
        self.run = run
        self.inner = inner

    def _fail(self, arguments: Any, parent: object, phase: str) -> None:
        index = _index(arguments)
        if parent is None and index >= 0 and self.run.call(index).failure == phase:
            raise PlantedFailure(index, phase)

    async def prepare(self, input: ToolExecutionInput, /) -> Any:
        self._fail(input.arguments, input.parent, "prepare")
        return await self.inner.prepare(input)

    async def dispatch(self, exec: ToolExecution, /) -> Any:
        outcome = await self.inner.dispatch(exec)
        self._fail(exec.arguments, exec.parent, "dispatch")
        return outcome

    async def finalize(self, exec: ToolExecution, result: ToolExecutionResult, /) -> Any:
        self._fail(exec.arguments, exec.parent, "finalize")
        index = _index(exec.arguments)
        if exec.parent is None and index >= 0 and self.run.call(index).failure == "late-finalize":
            await trio.sleep(1)
            raise PlantedFailure(index, "late-finalize")
        return await self.inner.finalize(exec, result)

    def finish(self, exec: ToolExecution, result: ToolExecutionResult, /) -> Any:
        return self.inner.finish(exec, result)


class _Approvals:
    """Answers each request after 1.5 seconds: refused for ``ask-refused`` calls."""

    def __init__(self, run: _Run) -> None:
        self.run = run

    async def request(self, request: Any, /) -> str:
        await trio.sleep(1.5)
        index = self.run.asking
        policy = self.run.call(index).policy if index >= 0 else "ask"
        return {"ask-refused": "rejected", "ask-cancelled": "cancelled"}.get(policy, "allowed-once")


def _build(scenario: PoolScenario) -> _Run:
    runtime = _ScenarioRuntime(approval=None)
    run = _Run(scenario, runtime)
    if scenario.approvals:
        runtime._policy.approval = _Approvals(run)

    async def body(args: Any, ctx: Any) -> str:
        parent = ctx.exec.parent
        key = (_index(args), -1) if parent is None else (_index(parent.arguments), args["j"])
        record = run.bodies[key] = _Body(trio.current_time())
        top = parent is None
        if not top:
            running = run.sub_running[key[0]] = run.sub_running.get(key[0], 0) + 1
            top_body = run.bodies.get((key[0], -1))
            if top_body is not None:
                top_body.sub_peak = max(top_body.sub_peak, running)
        ends = args.get("ends", "return")
        try:
            if ends == "abort-first":
                run.set_abort()
            else:
                await trio.sleep(args["d"])
            if top and args.get("subs"):
                subs = [
                    SubCall(f"s{j}", "read", {"i": -1, "j": j, "d": d})
                    for j, d in enumerate(args["subs"])
                ]
                try:
                    results = await execute_sub_calls(
                        ctx, subs, max_parallel_sub_calls=args["window"]
                    )
                except Exception as error:  # no sub-call fails: the pool did
                    record.sub_error = error
                    raise
                record.sub_results = list(results)
        finally:
            record.ended = trio.current_time()
            if not top:
                run.sub_running[key[0]] -= 1
        if ends.startswith("set-abort"):
            run.set_abort()
        if args.get("context"):
            ctx.defer_context({"type": "text", "text": f"context of {key[0]}"})
        if ends == "conclude":
            ctx.conclude_turn()
        if ends.endswith("error"):
            record.raised = True
            raise ValueError("the tool failed")
        record.returned = True
        return f"v{key[0]}"

    output = ToolOutput(
        schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
    )
    classifiers: dict[str, Callable[[Any], object]] = {
        "read": lambda a: True,
        # (a truthy answer other than ``True`` is no parallel answer)
        "maybe": lambda a: True if a.get("par") is True else "yes",
        "flip": lambda a: run.flipped(),
        "odd": lambda a: True,  # (its top-level calls never get here: classifying them raises)
    }
    for name in SCENARIO_TOOLS:
        runtime.register(
            define_tool(
                name=name,
                description=name,
                parameters=_PARAMETERS,
                output=output,
                execute=body,
                is_concurrency_safe=classifiers.get(name),
            )
        )

    def policy_index(exec: ToolExecution) -> int:
        index = _index(exec.arguments) if exec.parent is None else -1
        if index >= 0:
            run.policy_logged.setdefault(index, run.logged_calls())
        return index

    def guard(exec: ToolExecution) -> str | None:
        index = policy_index(exec)
        return "guarded" if index >= 0 and run.call(index).policy == "guarded" else None

    runtime.add_guard(guard)

    def observe(exec: ToolExecution, result: ToolExecutionResult) -> None:
        index = _index(exec.arguments) if exec.parent is None else -1
        if index >= 0:
            run.commits += 1
            if run.call(index).ends == "abort-on-commit":
                run.set_abort()

    runtime.add_result_observer(observe)

    async def wrapper(exec: ToolExecution, next: Any) -> Any:
        index = _index(exec.arguments) if exec.parent is None else -1
        if index >= 0 and run.call(index).wrapper_fails:
            raise ValueError("the wrapper failed")
        return await next()

    if any(call.wrapper_fails for step in scenario.steps for call in step.calls):
        # (only then: a wrapper may answer anything, so the monitor's check that a body cut
        # short is answered ABORTED stands down while one is installed)
        runtime.add_execute_wrapper(wrapper)
    if scenario.hooks:

        async def pre(exec: ToolExecution, next: Any) -> Any:
            index = policy_index(exec)
            policy = run.call(index).policy if index >= 0 else "allow"
            if policy == "hook-raises":
                raise ValueError("the hook failed")
            if policy == "deny":
                return Deny("denied")
            if policy.startswith("ask"):
                run.asking = index
                return Ask("may I?")
            return Allow()

        async def post(exec: ToolExecution, result: ToolExecutionResult, next: Any) -> Any:
            index = _index(exec.arguments) if exec.parent is None else -1
            if index >= 0:
                run.post_seen.append(index)
                if run.call(index).slow_post:
                    await trio.sleep(1)
            return await next()

        runtime.add_pre_execute(pre)
        runtime.add_post_execute(post)
    runtime.scheduler = _PlantedScheduler(run, runtime.scheduler)
    return run


def _accept(step: ScenarioStep, contexts: list[Any]) -> Callable[[Any], None]:
    def accept(context: Any) -> None:
        if step.accept_fails:
            raise PlantedFailure(-1, "accept_context")
        contexts.append(context)

    return accept


def _blocks(step: ScenarioStep) -> list[ToolCallBlock]:
    blocks = []
    for index, call in enumerate(step.calls):
        arguments: dict[str, Any] = {"i": index, "d": call.duration, "ends": call.ends}
        arguments.update(par=call.par, context=call.context)
        if call.sub_calls:
            arguments.update(subs=list(call.sub_calls), window=call.sub_window)
        blocks.append(ToolCallBlock(call.id, call.tool, json.dumps(arguments)))
    return blocks


class _Channel:
    """The calls of a streamed step on a memory channel (what most apps hand the pool), each
    sent at its time by a producer task; counts what the pool took off the channel."""

    def __init__(self, blocks: list[ToolCallBlock], step: ScenarioStep, start: float) -> None:
        self.blocks, self.step, self.start = blocks, step, start
        self.send, self.receive = trio.open_memory_channel[ToolCallBlock](math.inf)
        self.sent = 0

    @property
    def taken(self) -> int:
        return self.sent - self.receive.statistics().current_buffer_used

    async def produce(self) -> None:
        async with self.send:
            for index, block in enumerate(self.blocks):
                await trio.sleep_until(self.start + self.step.calls[index].arrives_at)
                self.send.send_nowait(block)
                self.sent += 1


class _Stream:
    """The calls of a streamed step as an async iterator that raises after its last call."""

    def __init__(self, blocks: list[ToolCallBlock], step: ScenarioStep, start: float) -> None:
        self.blocks, self.step, self.start = blocks, step, start
        self.taken = 0

    def __aiter__(self) -> _Stream:
        return self

    async def __anext__(self) -> ToolCallBlock:
        if self.taken == len(self.blocks):
            if self.step.stream_fails:
                raise _StreamFailure("the stream failed")
            raise StopAsyncIteration
        await trio.sleep_until(self.start + self.step.calls[self.taken].arrives_at)
        self.taken += 1
        return self.blocks[self.taken - 1]


def run_pool_scenario(
    scenario: PoolScenario, *, wrap: Callable[[Scheduler], Scheduler] | None = None
) -> list[PoolViolation]:
    """Play ``scenario`` on the project's pool under a :class:`PoolMonitor`; every violation.

    Each step runs through :meth:`PoolMonitor.execute_tool_calls` under a ``MockClock`` (no
    real time passes). The violations are the monitor's rules, ``check_session``'s (as
    ``log/<rule>``), and the runner's own (see ``docs/property-testing.md``), each prefixed by
    its step (``step 1: [abort] ...`` is ``str(violation)``; ``violation.rule`` names the rule).

    Args:
        scenario: A :class:`PoolScenario` (from :func:`pool_scenarios`, or written by hand).
        wrap: ``scheduler -> scheduler``: your scheduler wrapper, put around the runtime's (the
            monitor wraps yours, so the guarantees are checked as your wrapper keeps them).

    Returns:
        Every violation, in step order; ``[]``: the pool kept every guarantee.
    """
    run = _build(scenario)
    if wrap is not None:
        run.runtime.scheduler = wrap(run.runtime.scheduler)
    found: list[PoolViolation] = []

    async def main() -> None:
        monitor = PoolMonitor(run.runtime, exclusive=run.must_run_alone)
        for number, step in enumerate(scenario.steps):
            for violation in await _play(run, monitor, number, step):
                found.append(attrs.evolve(violation, message=f"step {number}: {violation.message}"))

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return found


async def _play(run: _Run, monitor: PoolMonitor, number: int, step: ScenarioStep) -> list[Any]:
    run.step, run.first_seq = step, len(run.session.events)
    run.bodies.clear()
    run.commits = 0
    run.post_seen.clear()
    run.policy_logged.clear()
    contexts: list[Any] = []
    blocks = _blocks(step)
    start = trio.current_time()
    stream: _Stream | _Channel | None = None
    if step.streamed:
        stream = (_Stream if step.stream_fails else _Channel)(blocks, step, start)
    outcome: StepOutcome | None = None
    raised: BaseException | None = None
    if step.abort_at == 0:
        run.set_abort()
    abort_before = run.abort.is_set()

    async def abort_later(at: float) -> None:
        await trio.sleep_until(start + at)
        run.set_abort()

    async with trio.open_nursery() as nursery:
        if step.abort_at and not abort_before:
            nursery.start_soon(abort_later, step.abort_at)
        if isinstance(stream, _Channel):
            nursery.start_soon(stream.produce)
        with trio.CancelScope() as scope:
            if step.cancel_at is not None:
                scope.deadline = start + step.cancel_at
            try:
                outcome = await monitor.execute_tool_calls(
                    run.session,
                    blocks
                    if stream is None
                    else stream.receive
                    if isinstance(stream, _Channel)
                    else stream,
                    max_parallel_tool_calls=step.cap,
                    abort=run.abort,
                    accept_context=_accept(step, contexts),
                    step=number,
                    agent=run,
                )
            except BaseException as error:  # judged below, with what the monitor saw
                raised = error
                if not isinstance(error, Exception) and not isinstance(error, trio.Cancelled):
                    raise
        nursery.cancel_scope.cancel()
    found: list[Any] = list(monitor.violations())
    judge = _Judge(run, step, stream, outcome, raised, contexts, abort_before)
    found.extend(judge.verdict())
    return found


@attrs.define
class _Judge:
    """The runner's own rules: what only the owner of the tools knows should have happened."""

    run: _Run
    step: ScenarioStep
    stream: _Stream | _Channel | None
    outcome: StepOutcome | None
    raised: BaseException | None
    contexts: list[Any]
    abort_before: bool
    found: list[PoolViolation] = attrs.field(factory=list)

    def say(self, rule: str, message: str) -> None:
        self.found.append(PoolViolation(rule, message))

    def verdict(self) -> list[PoolViolation]:
        raised, step = self.raised, self.step
        valid_cap = type(step.cap) is int and step.cap >= 1  # (a bool is no cap)
        if not valid_cap:
            return self.found  # the monitor's ``cap`` rule judges a refused window
        failed = isinstance(raised, (PlantedFailure, _StreamFailure))
        cancelled = isinstance(raised, trio.Cancelled)
        if raised is not None and not failed and not cancelled:
            if isinstance(raised, BaseExceptionGroup):
                self.say("cancel", f"the step raised a group instead of one exception: {raised!r}")
            return self.found
        events = self.run.session.events[self.run.first_seq :]
        # A failure a cancellation overtook may leave calls unanswered, as a failure does.
        may_fail = step.stream_fails or any(c.failure or c.tool == "odd" for c in step.calls)
        failed = failed or (cancelled and may_fail)
        if not failed:
            for violation in check_log([e.to_json() for e in events]):
                if violation.rule == "unpaired-call":
                    self.say("answered-once", f"a logged call got no result: {violation.message}")
        if self.stream is not None and not failed:
            logged = sum(1 for e in events if e.type == TOOL_CALL)
            if raised is None and logged != len(step.calls):
                self.say("stream", f"{len(step.calls)} calls were streamed but {logged} logged")
            if logged != self.stream.taken:
                self.say(
                    "stream",
                    f"the pool took {self.stream.taken} calls from the stream but logged {logged}",
                )
        if (
            step.stream_fails
            and not cancelled
            and not isinstance(raised, PlantedFailure | _StreamFailure)
        ):
            self.say("stream", f"the stream's exception was not raised (raised {raised!r})")
        self.bodies_cut_short()
        self.sub_calls()
        self.policies(events)
        if raised is None and self.outcome is not None:
            self.committed(self.outcome)
        return self.found

    def bodies_cut_short(self) -> None:
        # ``abort-cancels``: every body (sub-calls too) running when the abort is set ends then.
        at = self.run.abort_time
        if at is None:
            return
        for (index, sub), body in sorted(self.run.bodies.items()):
            if body.started < at and (body.ended is None or body.ended > at):
                what = f"sub-call {sub} of call {index}" if sub >= 0 else f"call {index}"
                self.say(
                    "abort-cancels",
                    f"the body of {what} ran on after the abort at {at:g} (ended {body.ended})",
                )

    def sub_calls(self) -> None:
        # ``sub-calls``: a composite gets one result per sub-call, in a window of its own size.
        for (index, sub), body in sorted(self.run.bodies.items()):
            if body.sub_error is not None:
                self.say(
                    "sub-calls", f"execute_sub_calls of call {index} raised {body.sub_error!r}"
                )
            if sub >= 0 or body.sub_results is None:
                continue
            call = self.step.calls[index]
            wanted = len(call.sub_calls)
            if len(body.sub_results) != wanted:
                self.say(
                    "sub-calls",
                    f"call {index} got {len(body.sub_results)} results for {wanted} sub-calls",
                )
            aborted = self.run.abort_time is not None and self.run.abort_time <= (body.ended or 0)
            peak = min(call.sub_window, wanted)
            if body.sub_peak > call.sub_window or (not aborted and body.sub_peak < peak):
                self.say(
                    "sub-calls",
                    f"call {index} ran {body.sub_peak} sub-calls at once with "
                    f"max_parallel_sub_calls={call.sub_window} ({wanted} parallel sub-calls)",
                )

    def policies(self, events: Sequence[Any]) -> None:
        # ``policy``: a denied, refused, guarded or hook-failed call never runs its body; its
        # policy phase runs after its ``tool/call`` is logged (and after every earlier one).
        refused = self.refusing_policies()
        for index, call in enumerate(self.step.calls):
            if call.policy in refused and (index, -1) in self.run.bodies:
                self.say(
                    "policy", f"the body of call {index} ran though its call was {call.policy}"
                )
        for index, logged in sorted(self.run.policy_logged.items()):
            if logged != index + 1:
                self.say(
                    "policy",
                    f"the policy phase of call {index} ran with {logged} calls logged, not "
                    f"{index + 1} (its tool/call first)",
                )

    def refusing_policies(self) -> set[str]:
        """The scenario policies that refuse a call (its body never runs): without hooks only
        a guard refuses; without an approval service an ``Ask`` is a denial too."""
        scenario = self.run.scenario
        if not scenario.hooks:
            return {"guarded"}
        refused = {"deny", "hook-raises", "guarded", "ask-refused", "ask-cancelled"}
        if not scenario.approvals:
            refused.add("ask")
        return refused

    def refusals_kept(self, results: Sequence[ToolExecutionResult]) -> None:
        # ``policy``: a refusal that settled is the call's answer, even when the abort was set
        # while its policy phase ran (a denial that settles after the abort is kept, as upstream
        # keeps it): a call whose policy phase ran and refused is never answered ABORTED*.
        refused = self.refusing_policies()
        if self.run.scenario.approvals:
            # (the service's ``cancelled`` is an abort once the abort is set)
            refused.discard("ask-cancelled")
        for index, call in enumerate(self.step.calls):
            if call.policy not in refused or index >= len(results):
                continue
            if index not in self.run.policy_logged:
                continue  # never prepared (aborted before its start): a synthetic answer
            code = error_code(results[index])
            if code in (TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH):
                self.say(
                    "policy",
                    f"call {index} was {call.policy} by its policy phase but answered {code}: a "
                    "refusal that settled is kept, even after an abort",
                )

    def committed(self, outcome: StepOutcome) -> None:
        # ``concluded``, ``contexts``, ``post-execute``, ``result``: a step that returned.
        results = [r.result for r in outcome.results]
        concluded = any(result.concludes_turn for result in results)
        if outcome.concluded != concluded:
            self.say(
                "concluded",
                f"outcome.concluded is {outcome.concluded} but the committed results say {concluded}",
            )
        wanted_contexts = sum(len(result.additional_contexts) for result in results)
        if len(self.contexts) != wanted_contexts and not self.step.accept_fails:
            self.say("contexts", f"accept_context got {len(self.contexts)} of {wanted_contexts}")
        for index, call in enumerate(self.step.calls):
            body = self.run.bodies.get((index, -1))
            if body is None or index >= len(results):
                continue
            result = results[index]
            # (the body defers its context before it returns or raises: either keeps it)
            deferred = body.returned or body.raised
            if deferred and call.context and not result.additional_contexts:
                self.say("contexts", f"call {index} deferred a context its result lost")
            aborted = error_code(result) in (TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH)
            returned = body.returned and not aborted and not result.is_error
            if returned and not call.wrapper_fails and result.value != f"v{index}":
                self.say("result", f"call {index} was answered {result.value!r}, not v{index}")
            if body.raised and not call.wrapper_fails and aborted:
                self.say(
                    "result",
                    f"the body of call {index} raised its own error, answered {error_code(result)}",
                )
        self.refusals_kept(results)
        if self.run.abort_time is None and not self.abort_before:
            for index, result in enumerate(results):
                if error_code(result) in (TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH):
                    self.say(
                        "abort",
                        f"call {index} was answered {error_code(result)} though no abort was set",
                    )
        if not self.run.scenario.hooks or self.run.abort_time is not None or self.abort_before:
            return
        # A raising hook, and a failed execute wrapper (it runs for an allowed call only), give
        # final results: those bypass post-execute. Denials and rejections do not.
        allowed = {"allow", "ask"} if self.run.scenario.approvals else {"allow"}
        expected = [
            index
            for index, call in enumerate(self.step.calls)
            if call.policy != "hook-raises" and not (call.wrapper_fails and call.policy in allowed)
        ]
        if sorted(self.run.post_seen) != expected:
            self.say(
                "post-execute",
                f"post-execute hooks saw calls {sorted(self.run.post_seen)}, expected {expected}",
            )
