"""The scheduling-scenario format: its values as types, and the parser (``spec/FORMAT.md``).

A scenario scripts one model step in virtual time: the tools, the calls in model order, what
every callback does and how long it takes, and what happens to the step (an abort, a scheduler
failure, the window size). ``spec/FORMAT.md`` is the normative description of the JSON object;
this module is its reading: :func:`parse_scenario` checks a decoded object and turns it into a
frozen :class:`Scenario`, or raises :class:`ScenarioError` naming the offending field. Playing a
scenario on the real pool is :mod:`.scenario`'s job.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final, Literal

import attrs

from .._pool import DEFAULT_MAX_PARALLEL_TOOL_CALLS
from .._values import UNSET

__all__ = [
    "BodySpec",
    "CallSpec",
    "FailureSpec",
    "PostSpec",
    "PreSpec",
    "RegistryChange",
    "Scenario",
    "ScenarioError",
    "ToolSpec",
    "WrapperSpec",
    "parse_scenario",
]

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
    added = [change.spec for call in calls for change in call.on_commit if change.spec is not None]
    for call in calls:
        if call.body.outcome == "hangs" and abort_at is None:
            # Every definition the call may meet (the registered one, or one added at a commit)
            # must end the body by its deadline.
            timeouts = [t.timeout_ms for t in (*tools, *added) if t.name == call.name]
            if not timeouts or None in timeouts:
                raise ScenarioError(
                    f"call {call.id}: a hanging body needs scenario.abortAtMs or the tool's "
                    "timeoutMs (on every definition of the tool)"
                )
    cap = raw.get("cap", DEFAULT_MAX_PARALLEL_TOOL_CALLS)
    if type(cap) is float and cap.is_integer():
        # JSON has one number type: ``2.0`` is the integer 2, as JavaScript reads it.
        cap = int(cap)
    return Scenario(
        tools=tools,
        calls=calls,
        cap=cap,
        abort_at_ms=abort_at,
        failure=failure,
        approval_service=approval,
    )
