"""Playing a scheduling scenario on the real pool, under Trio's ``MockClock``.

:func:`run_scenario` builds a ``ToolRuntime`` whose tools and hooks follow a parsed
:class:`~.scenario_format.Scenario` (:class:`_ScriptedRuntime`), runs the real
:func:`trio_harness.execute_tool_calls` under ``trio.testing.MockClock`` in a fresh ``trio.run``
and records what happened: the session events in their wire form, every call's virtual times, the
accepted contexts and the step outcome. Nothing here re-implements a scheduling rule; the answer
is whatever the library did.

Virtual times are integer milliseconds since the step started. A scripted duration of ``0`` does
not await at all (the callback "takes no time", like a JavaScript callback that returns a resolved
promise); a positive one sleeps on the mock clock.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, Literal

import attrs
import trio

from .._errors import HarnessError
from .._json import js_json
from .._log import Session, SessionEvent
from .._pool import ToolCallBlock, execute_tool_calls
from .._runtime import (
    Accept,
    ApprovalRequest,
    Ask,
    Block,
    Deny,
    DispatchOutcome,
    PostToolDecision,
    Preparation,
    PreToolDecision,
    Scheduler,
    ToolExecutionInput,
    ToolRuntime,
    define_tool,
)
from .._values import UNSET, ToolDefinition, ToolExecutionResult, ToolOutput
from .scenario_format import (
    FailureSpec,
    RegistryChange,
    Scenario,
    ScenarioError,
    ToolSpec,
    parse_scenario,
)

__all__ = [
    "AGENT",
    "CONTEXT_SOURCE",
    "ScenarioAnswer",
    "answer_scenario",
    "run_scenario",
]

#: The agent every scenario's calls run for (approval requests need one).
AGENT: Final = "conformance-agent"
#: The ``source`` of every context a scenario's post-execute decisions supply.
CONTEXT_SOURCE: Final = {"kind": "plugin", "plugin": "conformance"}
#: A step still running after this much virtual time is reported as stuck (and cancelled).
VIRTUAL_LIMIT_MS: Final = 3_600_000


@attrs.frozen
class ScenarioAnswer:
    """What the reference did with one scenario.

    Attributes:
        answer: The wire answer (``events``, ``calls``, ``contexts``, ``outcome``; see FORMAT.md).
        ties: The instants (ms, ascending) at which the order of two happenings is not fixed
            (``spec/FORMAT.md``, "What is deterministic"): two timers expired together (a tool's
            deadline and the abort count as timers), or a dispatch that took no time settled
            while the pool went on starting calls. When non-empty the answer is one allowed
            outcome among others.
    """

    answer: dict[str, Any]
    ties: tuple[int, ...]


#: One happening of the run, in the order the reference saw it: ``(kind, call id, instant)``;
#: kinds ``call`` / ``result`` (an event appended), ``prepared`` (prepare returned: the pool
#: hands the call to a dispatch task and goes on), ``settled`` (the dispatch returned) and
#: ``failed`` (it raised the scripted scheduler failure).
Happening = tuple[Literal["call", "result", "prepared", "settled", "failed"], str, int]


class _TimedSession(Session):
    """A session that remembers the virtual time of every append (and notes it in ``order``)."""

    def __init__(self, clock_start: float, order: list[Happening]) -> None:
        super().__init__()
        self.start = clock_start
        self.times: list[int] = []
        self.order = order

    def append(
        self, type: str, data: Any, *, source_event_seqs: Sequence[int] | None = None
    ) -> SessionEvent:
        at = _now(self.start)
        self.times.append(at)
        event = super().append(type, data, source_event_seqs=source_event_seqs)
        if event.type == "tool/call":
            self.order.append(("call", event.data.call_id, at))
        elif event.type == "tool/result":
            self.order.append(("result", event.data.message.source.call_id, at))
        return event


#: Two virtual instants closer than this (seconds) are one instant: float drift of Trio's clock.
_SAME_INSTANT: Final = 1e-9


def _now(start: float) -> int:
    return round((trio.current_time() - start) * 1000)


def _render(args: Any, value: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value if type(value) is str else js_json(value)}]


class _ScriptedRuntime:
    """The ``ToolRuntime`` built from one scenario's script, and what it observed while the
    step ran (phase times, expired timers, contexts)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.calls = {call.id: call for call in scenario.calls}
        self.start = 0.0
        self.modes: dict[str, str] = {}
        self.body_started: dict[str, int] = {}
        self.prepared: dict[str, int] = {}
        self.settled: dict[str, int] = {}
        self.timers: list[int] = []
        self.deadlines: list[int] = []
        self.order: list[Happening] = []
        self.failed_at: int | None = None
        self.contexts: list[Any] = []
        self.runtime = ToolRuntime(approval=self if scenario.approval_service else None)
        for tool in scenario.tools:
            self.runtime.register(self._define(tool))
        self._install_hooks()
        self.runtime.scheduler = _Probe(self, self.runtime.scheduler)

    def now(self) -> int:
        return _now(self.start)

    async def timer(self, ms: float) -> None:
        """Sleep ``ms`` and note the instant the timer expired (for tie detection).

        A timer cut short at the very instant it was due (a deadline or the abort expiring with
        it) expired too: the two are a tie. Instants are whole milliseconds, as upstream's fake
        timers count them, but Trio's clock adds seconds as floats: a timer started at 2 ms for
        26 ms is due a hair before one started at 0 for 28, so "at its due instant" allows for
        that drift (``_SAME_INSTANT``, far below a millisecond).
        """
        if ms:
            due = trio.current_time() + ms / 1000
            try:
                await trio.sleep(ms / 1000)
            finally:
                if trio.current_time() >= due - _SAME_INSTANT:
                    self.timers.append(self.now())

    # -- tools ------------------------------------------------------------------------------

    def _classifier(self, name: str) -> Callable[[Any], object] | None:
        if self.modes[name] == "absent":
            # Absent at registration stays absent: setParallel flips the behaviour of a
            # classifier, it cannot add one to a registered definition.
            return None

        def classify(args: Any) -> object:
            mode = self.modes[name]
            if mode == "always":
                return True
            if mode in ("never", "absent"):
                return False
            if mode == "truthy":
                return "yes"
            if mode == "raises":
                raise RuntimeError(f"classifier of {name} failed")
            key = mode.removeprefix("argument:")
            return args.get(key) if type(args) is dict else None

        return classify

    def _define(self, tool: ToolSpec) -> ToolDefinition:
        self.modes[tool.name] = tool.parallel

        async def body(args: Any, ctx: Any) -> Any:
            call = self.calls.get(ctx.call_id)
            self.body_started[ctx.call_id] = self.now()
            if call is None:
                return None
            spec = call.body
            # The tool's deadline, when it has one (the only deadline nearer than the limit).
            deadline = trio.current_effective_deadline()
            try:
                if spec.outcome == "hangs":
                    await trio.sleep_forever()
                await self.timer(spec.ms)
            finally:
                # A deadline that expired is a timer too (it may tie with the abort, or with
                # the body's own timer).
                if (
                    deadline < self.start + VIRTUAL_LIMIT_MS / 1000
                    and trio.current_time() >= deadline - _SAME_INSTANT
                ):
                    self.deadlines.append(round((deadline - self.start) * 1000))
            if spec.outcome == "throws":
                raise RuntimeError(spec.message)
            if spec.outcome == "harnessError":
                raise HarnessError(spec.message, spec.code)
            if spec.conclude_turn:
                ctx.conclude_turn()
            return ctx.call_id if spec.value is UNSET else spec.value

        return define_tool(
            name=tool.name,
            description=f"conformance tool {tool.name}",
            parameters=tool.parameters,
            output=ToolOutput(schema=tool.output, render=_render),
            execute=body,
            is_concurrency_safe=self._classifier(tool.name),
            timeout_ms=tool.timeout_ms,
        )

    def apply(self, change: RegistryChange) -> None:
        """Apply one ``onCommit`` change to the registry."""
        if change.op == "setParallel":
            if change.tool in self.modes and self.modes[change.tool] != "absent":
                self.modes[change.tool] = change.parallel
        elif change.op == "remove":
            self.runtime.unregister(change.tool)
        else:
            assert change.spec is not None
            self.runtime.unregister(change.tool)
            self.runtime.register(self._define(change.spec))

    # -- hooks ------------------------------------------------------------------------------

    def _install_hooks(self) -> None:
        calls = self.scenario.calls
        if any(call.pre is not None for call in calls):
            self.runtime.add_pre_execute(self._pre_execute)
        if any(call.guard is not None for call in calls):
            self.runtime.add_guard(self._guard)
        if any(call.wrapper is not None for call in calls):
            self.runtime.add_execute_wrapper(self._wrap)
        if any(call.post is not None for call in calls):
            self.runtime.add_post_execute(self._post_execute)

    async def _pre_execute(
        self, exec: Any, next: Callable[[], Awaitable[PreToolDecision]]
    ) -> PreToolDecision:
        spec = self.calls[exec.call_id].pre
        if spec is None:
            return await next()
        await self.timer(spec.ms)
        if spec.decision == "deny":
            assert spec.reason is not None
            return Deny(spec.reason)
        if spec.decision == "ask":
            return Ask(spec.reason)
        if spec.decision == "raise":
            raise RuntimeError(spec.reason)
        return await next()

    async def request(self, request: ApprovalRequest) -> str:
        """The approval service: answer as the asking call's script says."""
        spec = self.calls[request.call_id].pre
        assert spec is not None
        await self.timer(spec.approval_ms)
        return spec.approval or "allowed-once"

    def _guard(self, exec: Any) -> str | None:
        return self.calls[exec.call_id].guard

    async def _wrap(
        self, exec: Any, next: Callable[[], Awaitable[ToolExecutionResult]]
    ) -> ToolExecutionResult:
        spec = self.calls[exec.call_id].wrapper
        if spec is None:
            return await next()
        await self.timer(spec.before_ms)
        if spec.kind == "raise":
            raise RuntimeError(spec.message)
        if spec.kind == "returns":
            result = ToolExecutionResult(is_error=False, content=(), value=spec.value)
        else:
            result = await next()
        await self.timer(spec.after_ms)
        return result

    async def _post_execute(
        self,
        exec: Any,
        result: ToolExecutionResult,
        next: Callable[[], Awaitable[PostToolDecision]],
    ) -> PostToolDecision:
        spec = self.calls[exec.call_id].post
        if spec is None:
            return await next()
        await self.timer(spec.ms)
        contexts = [
            {"id": f"{exec.call_id}-ctx{index}", "content": text, "source": CONTEXT_SOURCE}
            for index, text in enumerate(spec.contexts)
        ]
        if spec.decision == "raise":
            raise RuntimeError(spec.message)
        if spec.decision == "block":
            feedback = [{"type": "text", "text": spec.feedback}] if spec.feedback else []
            return Block(feedback, additional_contexts=contexts)
        content: Any = UNSET
        if spec.content is not None:
            content = [{"type": "text", "text": spec.content}]
        return Accept(value=spec.value, content=content, additional_contexts=contexts)


class _Probe:
    """Wraps ``runtime.scheduler``: records phase times, injects the scripted failure and
    applies the registry changes of a call when it commits."""

    def __init__(self, script: _ScriptedRuntime, inner: Scheduler) -> None:
        self._script = script
        self._inner = inner
        failure = script.scenario.failure
        self._failure = failure

    def _fails(self, call_id: str, phase: str) -> FailureSpec | None:
        failure = self._failure
        if failure is not None and failure.call == call_id and failure.phase == phase:
            return failure
        return None

    async def _raise(self, failure: FailureSpec) -> None:
        await self._script.timer(failure.ms)
        self._script.failed_at = self._script.now()
        if failure.phase == "dispatch":
            self._script.order.append(("failed", failure.call, self._script.failed_at))
        raise RuntimeError(failure.message)

    async def prepare(self, input: ToolExecutionInput) -> Preparation:
        failure = self._fails(input.call_id, "prepare")
        if failure is not None:
            await self._raise(failure)
        preparation = await self._inner.prepare(input)
        self._script.prepared[input.call_id] = self._script.now()
        self._script.order.append(("prepared", input.call_id, self._script.prepared[input.call_id]))
        return preparation

    async def dispatch(self, exec: Any) -> DispatchOutcome:
        failure = self._fails(exec.call_id, "dispatch")
        if failure is not None:
            await self._raise(failure)
        outcome = await self._inner.dispatch(exec)
        self._script.settled[exec.call_id] = self._script.now()
        self._script.order.append(("settled", exec.call_id, self._script.settled[exec.call_id]))
        return outcome

    def _committed(self, exec: Any) -> None:
        call = self._script.calls.get(exec.call_id)
        if call is not None:
            for change in call.on_commit:
                self._script.apply(change)

    async def finalize(self, exec: Any, result: ToolExecutionResult) -> ToolExecutionResult:
        failure = self._fails(exec.call_id, "commit")
        if failure is not None:
            self._script.failed_at = self._script.now()
            raise RuntimeError(failure.message)
        final = await self._inner.finalize(exec, result)
        self._committed(exec)
        return final

    def finish(self, exec: Any, result: ToolExecutionResult) -> ToolExecutionResult:
        failure = self._fails(exec.call_id, "commit")
        if failure is not None:
            self._script.failed_at = self._script.now()
            raise RuntimeError(failure.message)
        final = self._inner.finish(exec, result)
        self._committed(exec)
        return final


def _times(script: _ScriptedRuntime, session: _TimedSession) -> list[dict[str, Any]]:
    called: dict[str, int] = {}
    committed: dict[str, int] = {}
    for event, at in zip(session.events, session.times, strict=True):
        if event.type == "tool/call":
            called.setdefault(event.data.call_id, at)
        elif event.type == "tool/result":
            committed.setdefault(event.data.message.source.call_id, at)
    return [
        {
            "id": call.id,
            "called": called.get(call.id),
            "prepared": script.prepared.get(call.id),
            "bodyStarted": script.body_started.get(call.id),
            "settled": script.settled.get(call.id),
            "committed": committed.get(call.id),
        }
        for call in script.scenario.calls
    ]


async def _step(
    script: _ScriptedRuntime, session: _TimedSession, abort: trio.Event
) -> dict[str, Any]:
    scenario = script.scenario
    blocks = [ToolCallBlock(call.id, call.name, call.arguments) for call in scenario.calls]
    abort_at = scenario.abort_at_ms
    outcome: dict[str, Any]
    with trio.move_on_after(VIRTUAL_LIMIT_MS / 1000) as limit:
        async with trio.open_nursery() as nursery:
            if abort_at is not None:
                if abort_at == 0:
                    abort.set()
                else:

                    async def abort_later() -> None:
                        await script.timer(abort_at)
                        abort.set()

                    nursery.start_soon(abort_later)
            try:
                step = await execute_tool_calls(
                    script.runtime,
                    session,
                    blocks,
                    abort=abort if abort_at is not None else None,
                    max_parallel_tool_calls=scenario.cap,
                    accept_context=script.contexts.append,
                    agent=AGENT,
                )
            except ValueError as error:
                if script.failed_at is None and not session.events:
                    # The only ValueError before anything is logged: the cap was rejected.
                    outcome = {"rejectedCap": str(error)}
                else:
                    outcome = _raised(script, error)
            except RuntimeError as error:
                outcome = _raised(script, error)
            else:
                outcome = {
                    "concluded": step.concluded,
                    "aborted": step.aborted,
                    "endedAt": script.now(),
                }
            nursery.cancel_scope.cancel()
    if limit.cancelled_caught:
        return {"stuck": f"the step did not end within {VIRTUAL_LIMIT_MS} ms of virtual time"}
    return outcome


def _raised(script: _ScriptedRuntime, error: Exception) -> dict[str, Any]:
    return {"raised": str(error), "failedAt": script.failed_at, "endedAt": script.now()}


def run_scenario(scenario: Scenario | Mapping[str, Any]) -> ScenarioAnswer:
    """Run one scenario through the real pool under ``MockClock`` and record what happened.

    Args:
        scenario: A :class:`Scenario`, or the decoded ``scenario`` object of a vector line.

    Returns:
        The wire answer and the instants of any timer ties.

    Raises:
        ScenarioError: ``scenario`` does not follow the format.
    """
    parsed = scenario if isinstance(scenario, Scenario) else parse_scenario(scenario)
    script = _ScriptedRuntime(parsed)
    holder: dict[str, Any] = {}

    async def main() -> None:
        script.start = trio.current_time()
        session = _TimedSession(script.start, script.order)
        abort = trio.Event()
        holder["outcome"] = await _step(script, session, abort)
        holder["session"] = session

    # Imported here, not at the top: ``trio.testing`` brings pytest along when it is installed,
    # and ``import trio_harness`` (an app's start) must not pay for the kit's clock.
    from trio.testing import MockClock

    trio.run(main, clock=MockClock(autojump_threshold=0))
    session: _TimedSession = holder["session"]
    answer = {
        "events": [event.to_json() for event in session.events],
        "calls": _times(script, session),
        "contexts": list(script.contexts),
        "outcome": holder["outcome"],
    }
    expiries = script.timers + script.deadlines
    ties = {at for at in expiries if expiries.count(at) > 1}
    ties.update(_unsettled_orders(script.order, parsed, answer["calls"]))
    return ScenarioAnswer(answer=answer, ties=tuple(sorted(ties)))


def _unsettled_orders(
    order: Sequence[Happening], scenario: Scenario, times: Sequence[dict[str, Any]]
) -> set[int]:
    """Instants whose order depends on how fast a dispatch that takes no time is noticed.

    A dispatch that starts and ends in one instant ``t`` (wrappers and body that take no time, or
    the scheduler failure of a dispatch after 0 ms) settles while the pool goes on starting later
    calls. Trio runs the dispatch task only when the pool next waits; upstream notices the settle
    after a number of promise reactions that depends on how deep the callbacks' awaits go, so it
    may commit the call (or stop at its failure) before it starts the next one, or after. The
    order is open when the settle has an effect at ``t`` (the call could be committed at ``t``:
    every earlier call is committed by then; or the dispatch raised the failure) and the
    reference logged another call's ``tool/call`` at ``t`` after the call was handed to its
    dispatch (its prepare returned) and before its result.
    """
    committed = {entry["id"]: entry["committed"] for entry in times}
    model_order = [call.id for call in scenario.calls]
    found: set[int] = set()
    for start, (kind, call_id, at) in enumerate(order):
        if kind != "prepared":
            continue
        end = next(
            (
                index
                for index in range(start + 1, len(order))
                if order[index][0] in ("settled", "failed") and order[index][1] == call_id
            ),
            None,
        )
        if end is None or order[end][2] != at:
            continue
        if order[end][0] == "settled":
            earlier = model_order[: model_order.index(call_id)]
            if any(committed.get(other) is None or committed[other] > at for other in earlier):
                continue
        result = next(
            (
                index
                for index in range(end + 1, len(order))
                if order[index][0] == "result" and order[index][1] == call_id
            ),
            len(order),
        )
        if any(
            order[index][0] == "call" and order[index][1] != call_id and order[index][2] == at
            for index in range(start + 1, result)
        ):
            found.add(at)
    return found


def answer_scenario(case: Mapping[str, Any]) -> dict[str, Any]:
    """Answer one ``{"op": "schedule", ...}`` line (decoded) as the oracle does.

    Returns:
        The case with ``expected`` replaced by (or appended as) the answer; ``expected.ties`` is
        present only when scripted timers tied. ``{"error": "<what>"}`` alone when the scenario
        does not follow the format. Never raises for a malformed scenario.
    """
    if "scenario" not in case:
        return {"error": 'op "schedule" needs "scenario"'}
    try:
        result = run_scenario(parse_scenario(case["scenario"]))
    except ScenarioError as error:
        return {"error": f"invalid scenario: {error}"}
    except Exception as error:  # a scenario the library rejects while building it
        return {"error": f"invalid scenario: {type(error).__name__}: {error}"}
    expected = dict(result.answer)
    if result.ties:
        expected["ties"] = list(result.ties)
    answered = dict(case)
    answered["expected"] = expected
    return answered
