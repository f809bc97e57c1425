"""Scheduling scenarios: the language-neutral format, and answering one with the real pool.

A scenario scripts one model step in virtual time (``spec/FORMAT.md`` is the normative
description). :func:`parse_scenario` checks a decoded JSON object and turns it into a
:class:`Scenario`; :func:`run_scenario` builds a ``ToolRuntime`` whose tools and hooks follow the
script, runs the real :func:`trio_harness.execute_tool_calls` under ``trio.testing.MockClock`` in a
fresh ``trio.run`` and records what happened: the session events in their wire form, every call's
virtual times, the accepted contexts and the step outcome. Nothing here re-implements a
scheduling rule; the answer is whatever the library did.

Virtual times are integer milliseconds since the step started. A scripted duration of ``0`` does
not await at all (the callback "takes no time", like a JavaScript callback that returns a resolved
promise); a positive one sleeps on the mock clock.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, Literal

import attrs
import trio
import trio.testing

from .._errors import HarnessError
from .._json import js_json
from .._log import Session, SessionEvent
from .._pool import DEFAULT_MAX_PARALLEL_TOOL_CALLS, ToolCallBlock, execute_tool_calls
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

__all__ = [
    "AGENT",
    "CONTEXT_SOURCE",
    "ScenarioAnswer",
    "ScenarioError",
    "answer_scenario",
    "parse_scenario",
    "run_scenario",
]

#: The agent every scenario's calls run for (approval requests need one).
AGENT: Final = "conformance-agent"
#: The ``source`` of every context a scenario's post-execute decisions supply.
CONTEXT_SOURCE: Final = {"kind": "plugin", "plugin": "conformance"}
#: A step still running after this much virtual time is reported as stuck (and cancelled).
VIRTUAL_LIMIT_MS: Final = 3_600_000

ClassifierKind = Literal["always", "never", "absent", "raises", "truthy"]
_CLASSIFIERS: Final = ("always", "never", "absent", "raises", "truthy")
_APPROVALS: Final = ("allowed-once", "rejected", "cancelled", "unavailable")
_PHASES: Final = ("prepare", "dispatch", "commit")


class ScenarioError(ValueError):
    """A scenario that does not follow the format; the message names the offending field."""


# ---------------------------------------------------------------------------------------------
# The format, as typed values
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ToolSpec:
    """A tool of the scenario (``tools[i]``)."""

    name: str
    parameters: Any
    output: Any
    parallel: ClassifierKind | str  # a kind, or ``"argument:<name>"``
    timeout_ms: float | None


@attrs.frozen
class BodySpec:
    """What the body of one call does (``calls[i].body``)."""

    ms: float = 0
    outcome: Literal["returns", "throws", "harnessError", "hangs"] = "returns"
    value: Any = None
    message: str = ""
    code: str = ""
    conclude_turn: bool = False


@attrs.frozen
class PreSpec:
    """The pre-execute decision of one call (``calls[i].pre``)."""

    ms: float = 0
    decision: Literal["allow", "deny", "ask", "raise"] = "allow"
    reason: str | None = None
    approval: str | None = None
    approval_ms: float = 0


@attrs.frozen
class WrapperSpec:
    """The execute wrapper around one call (``calls[i].wrapper``)."""

    before_ms: float = 0
    after_ms: float = 0
    kind: Literal["passthrough", "raise", "returns"] = "passthrough"
    message: str = ""
    value: Any = None


@attrs.frozen
class PostSpec:
    """The post-execute decision of one call (``calls[i].post``)."""

    ms: float = 0
    decision: Literal["accept", "block", "raise"] = "accept"
    value: Any = UNSET
    content: str | None = None
    feedback: str = ""
    message: str = ""
    contexts: tuple[str, ...] = ()


@attrs.frozen
class RegistryChange:
    """One entry of ``calls[i].onCommit``."""

    op: Literal["setParallel", "remove", "add"]
    tool: str
    parallel: str = "always"
    spec: ToolSpec | None = None


@attrs.frozen
class CallSpec:
    """One call of the step, in model order (``calls[i]``)."""

    id: str
    name: str
    arguments: str
    body: BodySpec
    pre: PreSpec | None
    guard: str | None
    wrapper: WrapperSpec | None
    post: PostSpec | None
    on_commit: tuple[RegistryChange, ...]


@attrs.frozen
class FailureSpec:
    """The scheduler failure of the step (``schedulerFailure``)."""

    call: str
    phase: Literal["prepare", "dispatch", "commit"]
    ms: float
    message: str


@attrs.frozen
class Scenario:
    """A parsed scenario (see ``spec/FORMAT.md``)."""

    tools: tuple[ToolSpec, ...]
    calls: tuple[CallSpec, ...]
    cap: Any
    abort_at_ms: float | None
    failure: FailureSpec | None
    approval_service: bool


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------


def _obj(value: object, where: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise ScenarioError(f"{where} must be an object")
    return value


def _keys(value: dict[str, Any], where: str, allowed: Sequence[str]) -> None:
    for key in value:
        if key not in allowed:
            raise ScenarioError(f"{where}.{key} is not part of the format")


def _str(value: object, where: str) -> str:
    if type(value) is not str:
        raise ScenarioError(f"{where} must be a string")
    return value


def _ms(value: object, where: str) -> float:
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ScenarioError(f"{where} must be a finite number >= 0")
    return value


def _opt_ms(source: dict[str, Any], key: str, where: str) -> float:
    return _ms(source[key], f"{where}.{key}") if key in source else 0


def _classifier(value: object, where: str) -> str:
    if type(value) is str and value in _CLASSIFIERS:
        return value
    if type(value) is dict and set(value) == {"argument"} and type(value["argument"]) is str:
        return "argument:" + value["argument"]
    raise ScenarioError(
        f'{where} must be one of "always", "never", "absent", "raises", "truthy" '
        'or {"argument": <name>}'
    )


def _tool(value: object, where: str) -> ToolSpec:
    raw = _obj(value, where)
    _keys(raw, where, ("name", "parameters", "output", "parallel", "timeoutMs"))
    if "name" not in raw:
        raise ScenarioError(f"{where}.name is required")
    timeout = raw.get("timeoutMs")
    if timeout is not None and (
        type(timeout) not in (int, float) or not math.isfinite(timeout) or timeout <= 0
    ):
        raise ScenarioError(f"{where}.timeoutMs must be a positive finite number")
    return ToolSpec(
        name=_str(raw["name"], f"{where}.name"),
        parameters=raw.get("parameters", {}),
        output=raw.get("output", {"type": "json"}),
        parallel=_classifier(raw.get("parallel", "always"), f"{where}.parallel"),
        timeout_ms=timeout,
    )


def _body(value: object, where: str) -> BodySpec:
    raw = _obj(value, where)
    _keys(raw, where, ("ms", "returns", "throws", "harnessError", "hangs", "concludeTurn"))
    outcomes = [key for key in ("returns", "throws", "harnessError", "hangs") if key in raw]
    if len(outcomes) > 1:
        raise ScenarioError(f"{where} has more than one outcome: {', '.join(outcomes)}")
    conclude = raw.get("concludeTurn", False)
    if type(conclude) is not bool:
        raise ScenarioError(f"{where}.concludeTurn must be a boolean")
    ms = _opt_ms(raw, "ms", where)
    outcome = outcomes[0] if outcomes else "returns"
    if outcome == "throws":
        return BodySpec(ms, "throws", message=_str(raw["throws"], f"{where}.throws"))
    if outcome == "harnessError":
        error = _obj(raw["harnessError"], f"{where}.harnessError")
        _keys(error, f"{where}.harnessError", ("code", "message"))
        return BodySpec(
            ms,
            "harnessError",
            code=_str(error.get("code"), f"{where}.harnessError.code"),
            message=_str(error.get("message"), f"{where}.harnessError.message"),
        )
    if outcome == "hangs":
        if raw["hangs"] is not True or "ms" in raw:
            raise ScenarioError(f"{where}.hangs must be true, without ms")
        return BodySpec(0, "hangs")
    return BodySpec(ms, "returns", value=raw.get("returns", UNSET), conclude_turn=conclude)


def _pre(value: object, where: str) -> PreSpec:
    raw = _obj(value, where)
    _keys(raw, where, ("ms", "decision", "reason", "approval", "approvalMs"))
    decision = raw.get("decision", "allow")
    if decision not in ("allow", "deny", "ask", "raise"):
        raise ScenarioError(f'{where}.decision must be "allow", "deny", "ask" or "raise"')
    reason = raw.get("reason")
    if reason is not None:
        _str(reason, f"{where}.reason")
    if decision in ("deny", "raise") and reason is None:
        raise ScenarioError(f"{where}.reason is required for {decision}")
    approval = raw.get("approval")
    if approval is not None and approval not in _APPROVALS:
        raise ScenarioError(f"{where}.approval must be one of {', '.join(_APPROVALS)}")
    if (approval is not None or "approvalMs" in raw) and decision != "ask":
        raise ScenarioError(f"{where}.approval belongs to an ask decision")
    return PreSpec(
        _opt_ms(raw, "ms", where), decision, reason, approval, _opt_ms(raw, "approvalMs", where)
    )


def _wrapper(value: object, where: str) -> WrapperSpec:
    raw = _obj(value, where)
    _keys(raw, where, ("beforeMs", "afterMs", "raise", "returns"))
    before = _opt_ms(raw, "beforeMs", where)
    after = _opt_ms(raw, "afterMs", where)
    if "raise" in raw and "returns" in raw:
        raise ScenarioError(f"{where} cannot both raise and return")
    if "raise" in raw:
        return WrapperSpec(before, after, "raise", message=_str(raw["raise"], f"{where}.raise"))
    if "returns" in raw:
        return WrapperSpec(before, after, "returns", value=raw["returns"])
    return WrapperSpec(before, after)


def _post(value: object, where: str) -> PostSpec:
    raw = _obj(value, where)
    _keys(raw, where, ("ms", "decision", "value", "content", "feedback", "message", "contexts"))
    decision = raw.get("decision", "accept")
    if decision not in ("accept", "block", "raise"):
        raise ScenarioError(f'{where}.decision must be "accept", "block" or "raise"')
    contexts = raw.get("contexts", [])
    if type(contexts) is not list or any(type(text) is not str for text in contexts):
        raise ScenarioError(f"{where}.contexts must be a list of strings")
    content = raw.get("content")
    if content is not None:
        _str(content, f"{where}.content")
    if decision == "raise":
        return PostSpec(
            _opt_ms(raw, "ms", where), "raise", message=_str(raw.get("message"), f"{where}.message")
        )
    return PostSpec(
        _opt_ms(raw, "ms", where),
        decision,
        value=raw.get("value", UNSET),
        content=content,
        feedback=_str(raw.get("feedback", ""), f"{where}.feedback"),
        contexts=tuple(contexts),
    )


def _change(value: object, where: str) -> RegistryChange:
    raw = _obj(value, where)
    op = raw.get("op")
    if op == "setParallel":
        _keys(raw, where, ("op", "tool", "parallel"))
        return RegistryChange(
            "setParallel",
            _str(raw.get("tool"), f"{where}.tool"),
            parallel=_classifier(raw.get("parallel"), f"{where}.parallel"),
        )
    if op == "remove":
        _keys(raw, where, ("op", "tool"))
        return RegistryChange("remove", _str(raw.get("tool"), f"{where}.tool"))
    if op == "add":
        _keys(raw, where, ("op", "tool"))
        spec = _tool(raw.get("tool"), f"{where}.tool")
        return RegistryChange("add", spec.name, spec=spec)
    raise ScenarioError(f'{where}.op must be "setParallel", "remove" or "add"')


def _call(value: object, where: str) -> CallSpec:
    raw = _obj(value, where)
    _keys(
        raw,
        where,
        ("id", "name", "arguments", "body", "pre", "guard", "wrapper", "post", "onCommit"),
    )
    guard = raw.get("guard")
    if guard is not None:
        _str(guard, f"{where}.guard")
    changes = raw.get("onCommit", [])
    if type(changes) is not list:
        raise ScenarioError(f"{where}.onCommit must be a list")
    return CallSpec(
        id=_str(raw.get("id"), f"{where}.id"),
        name=_str(raw.get("name"), f"{where}.name"),
        arguments=_str(raw.get("arguments", "{}"), f"{where}.arguments"),
        body=_body(raw.get("body", {}), f"{where}.body"),
        pre=_pre(raw["pre"], f"{where}.pre") if "pre" in raw else None,
        guard=guard,
        wrapper=_wrapper(raw["wrapper"], f"{where}.wrapper") if "wrapper" in raw else None,
        post=_post(raw["post"], f"{where}.post") if "post" in raw else None,
        on_commit=tuple(
            _change(change, f"{where}.onCommit[{index}]") for index, change in enumerate(changes)
        ),
    )


def parse_scenario(value: object) -> Scenario:
    """Check a decoded scenario object and return it as a :class:`Scenario`.

    Raises:
        ScenarioError: The object does not follow ``spec/FORMAT.md``; the message names the field.
    """
    raw = _obj(value, "scenario")
    _keys(raw, "scenario", ("tools", "calls", "cap", "abortAtMs", "schedulerFailure", "approval"))
    tools_raw = raw.get("tools", [])
    calls_raw = raw.get("calls")
    if type(tools_raw) is not list:
        raise ScenarioError("scenario.tools must be a list")
    if type(calls_raw) is not list:
        raise ScenarioError("scenario.calls must be a list")
    tools = tuple(_tool(tool, f"scenario.tools[{i}]") for i, tool in enumerate(tools_raw))
    names = [tool.name for tool in tools]
    if len(set(names)) != len(names):
        raise ScenarioError("scenario.tools: tool names must be unique")
    calls = tuple(_call(call, f"scenario.calls[{i}]") for i, call in enumerate(calls_raw))
    ids = [call.id for call in calls]
    if len(set(ids)) != len(ids):
        raise ScenarioError("scenario.calls: call ids must be unique")
    abort_at = raw.get("abortAtMs")
    if abort_at is not None:
        abort_at = _ms(abort_at, "scenario.abortAtMs")
    failure = None
    if "schedulerFailure" in raw:
        where = "scenario.schedulerFailure"
        spec = _obj(raw["schedulerFailure"], where)
        _keys(spec, where, ("call", "phase", "ms", "message"))
        call_id = _str(spec.get("call"), f"{where}.call")
        if call_id not in ids:
            raise ScenarioError(f"{where}.call names no call of the scenario")
        phase = spec.get("phase")
        if phase not in _PHASES:
            raise ScenarioError(f'{where}.phase must be "prepare", "dispatch" or "commit"')
        ms = _opt_ms(spec, "ms", where)
        if phase == "commit" and ms:
            raise ScenarioError(f"{where}.ms must be 0 for the commit phase")
        message = spec.get("message", f"scheduler failure at {call_id} ({phase})")
        failure = FailureSpec(call_id, phase, ms, _str(message, f"{where}.message"))
    approval = raw.get("approval", True)
    if type(approval) is not bool:
        raise ScenarioError("scenario.approval must be a boolean")
    for call in calls:
        if call.body.outcome == "hangs" and abort_at is None:
            timeouts = [t.timeout_ms for t in tools if t.name == call.name]
            if not timeouts or timeouts[0] is None:
                raise ScenarioError(
                    f"call {call.id}: a hanging body needs scenario.abortAtMs or the tool's timeoutMs"
                )
    return Scenario(
        tools=tools,
        calls=calls,
        cap=raw.get("cap", DEFAULT_MAX_PARALLEL_TOOL_CALLS),
        abort_at_ms=abort_at,
        failure=failure,
        approval_service=approval,
    )


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ScenarioAnswer:
    """What the reference did with one scenario.

    Attributes:
        answer: The wire answer (``events``, ``calls``, ``contexts``, ``outcome``; see FORMAT.md).
        ties: Instants (ms) at which two or more scripted timers expired together; when non-empty
            the answer is one allowed outcome among others (upstream resolves ties differently).
    """

    answer: dict[str, Any]
    ties: tuple[int, ...]


class _TimedSession(Session):
    """A session that remembers the virtual time of every append."""

    def __init__(self, clock_start: float) -> None:
        super().__init__()
        self.start = clock_start
        self.times: list[int] = []

    def append(
        self, type: str, data: Any, *, source_event_seqs: Sequence[int] | None = None
    ) -> SessionEvent:
        self.times.append(_now(self.start))
        return super().append(type, data, source_event_seqs=source_event_seqs)


def _now(start: float) -> int:
    return round((trio.current_time() - start) * 1000)


async def _pause(ms: float) -> None:
    if ms:
        await trio.sleep(ms / 1000)


def _render(args: Any, value: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value if type(value) is str else js_json(value)}]


class _Run:
    """The state of one scenario run: the runtime it built and what it observed."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.calls = {call.id: call for call in scenario.calls}
        self.start = 0.0
        self.modes: dict[str, str] = {}
        self.body_started: dict[str, int] = {}
        self.prepared: dict[str, int] = {}
        self.settled: dict[str, int] = {}
        self.timers: list[int] = []
        self.cancelled: list[int] = []
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
        """Sleep ``ms`` and note the instant the timer expired (for tie detection)."""
        if ms:
            await trio.sleep(ms / 1000)
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
            try:
                if spec.outcome == "hangs":
                    await trio.sleep_forever()
                await self.timer(spec.ms)
            except trio.Cancelled:
                # Cut short by the abort or by the tool's deadline; a deadline is a timer too.
                self.cancelled.append(self.now())
                raise
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

    def __init__(self, run: _Run, inner: Scheduler) -> None:
        self._run = run
        self._inner = inner
        failure = run.scenario.failure
        self._failure = failure

    def _fails(self, call_id: str, phase: str) -> FailureSpec | None:
        failure = self._failure
        if failure is not None and failure.call == call_id and failure.phase == phase:
            return failure
        return None

    async def _raise(self, failure: FailureSpec) -> None:
        await self._run.timer(failure.ms)
        self._run.failed_at = self._run.now()
        raise RuntimeError(failure.message)

    async def prepare(self, input: ToolExecutionInput) -> Preparation:
        failure = self._fails(input.call_id, "prepare")
        if failure is not None:
            await self._raise(failure)
        preparation = await self._inner.prepare(input)
        self._run.prepared[input.call_id] = self._run.now()
        return preparation

    async def dispatch(self, exec: Any) -> DispatchOutcome:
        failure = self._fails(exec.call_id, "dispatch")
        if failure is not None:
            await self._raise(failure)
        outcome = await self._inner.dispatch(exec)
        self._run.settled[exec.call_id] = self._run.now()
        return outcome

    def _committed(self, exec: Any) -> None:
        call = self._run.calls.get(exec.call_id)
        if call is not None:
            for change in call.on_commit:
                self._run.apply(change)

    async def finalize(self, exec: Any, result: ToolExecutionResult) -> ToolExecutionResult:
        failure = self._fails(exec.call_id, "commit")
        if failure is not None:
            self._run.failed_at = self._run.now()
            raise RuntimeError(failure.message)
        final = await self._inner.finalize(exec, result)
        self._committed(exec)
        return final

    def finish(self, exec: Any, result: ToolExecutionResult) -> ToolExecutionResult:
        failure = self._fails(exec.call_id, "commit")
        if failure is not None:
            self._run.failed_at = self._run.now()
            raise RuntimeError(failure.message)
        final = self._inner.finish(exec, result)
        self._committed(exec)
        return final


def _times(run: _Run, session: _TimedSession) -> list[dict[str, Any]]:
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
            "prepared": run.prepared.get(call.id),
            "bodyStarted": run.body_started.get(call.id),
            "settled": run.settled.get(call.id),
            "committed": committed.get(call.id),
        }
        for call in run.scenario.calls
    ]


async def _step(run: _Run, session: _TimedSession, abort: trio.Event) -> dict[str, Any]:
    scenario = run.scenario
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
                        await run.timer(abort_at)
                        abort.set()

                    nursery.start_soon(abort_later)
            try:
                step = await execute_tool_calls(
                    run.runtime,
                    session,
                    blocks,
                    abort=abort if abort_at is not None else None,
                    max_parallel_tool_calls=scenario.cap,
                    accept_context=run.contexts.append,
                    agent=AGENT,
                )
            except ValueError as error:
                if run.failed_at is None and not session.events:
                    # The only ValueError before anything is logged: the cap was rejected.
                    outcome = {"rejectedCap": str(error)}
                else:
                    outcome = _raised(run, error)
            except RuntimeError as error:
                outcome = _raised(run, error)
            else:
                outcome = {
                    "concluded": step.concluded,
                    "aborted": step.aborted,
                    "endedAt": run.now(),
                }
            nursery.cancel_scope.cancel()
    if limit.cancelled_caught:
        return {"stuck": f"the step did not end within {VIRTUAL_LIMIT_MS} ms of virtual time"}
    return outcome


def _raised(run: _Run, error: Exception) -> dict[str, Any]:
    return {"raised": str(error), "failedAt": run.failed_at, "endedAt": run.now()}


def run_scenario(scenario: Scenario | Mapping[str, Any]) -> ScenarioAnswer:
    """Run one scenario through the real pool under ``MockClock`` and record what happened.

    Args:
        scenario: A :class:`Scenario`, or the decoded ``scenario`` object of a vector line.

    Returns:
        The wire answer and the instants of any timer ties.

    Raises:
        ScenarioError: ``scenario`` does not follow the format.
    """
    parsed = scenario if isinstance(scenario, Scenario) else parse_scenario(dict(scenario))
    run = _Run(parsed)
    holder: dict[str, Any] = {}

    async def main() -> None:
        run.start = trio.current_time()
        session = _TimedSession(run.start)
        abort = trio.Event()
        holder["outcome"] = await _step(run, session, abort)
        holder["session"] = session

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    session: _TimedSession = holder["session"]
    answer = {
        "events": [event.to_json() for event in session.events],
        "calls": _times(run, session),
        "contexts": list(run.contexts),
        "outcome": holder["outcome"],
    }
    abort_at = None if parsed.abort_at_ms is None else round(parsed.abort_at_ms)
    expiries = run.timers + [at for at in run.cancelled if at != abort_at]
    ties = sorted({at for at in expiries if expiries.count(at) > 1})
    return ScenarioAnswer(answer=answer, ties=tuple(ties))


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
        result = run_scenario(_obj(case["scenario"], "scenario"))
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
