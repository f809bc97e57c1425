"""Human approval of an agent's tool calls, on upstream's own ``Ask`` / ``ApprovalService`` path.

Declaring it is one keyword: ``@th.tool(needs_approval=True)`` (always) or
``needs_approval=lambda args: ...`` (per call, over the validated arguments; a ``str`` it returns
is the reason shown), :func:`needs_approval` for any definition, and
``agent.require_approval(...)`` for tools registered later (an MCP server's, all of them or all
but the ``readOnlyHint`` ones).

:class:`AgentApproval` is what the agent mounts: a pre-execute hook that answers
``Ask(reason)`` for a call its rules select (after the inner hooks allowed it), the runtime's
:class:`~trio_harness.ApprovalService` that answers it, and a post-execute hook that adds a
rejection's message to what the model sees. The pool runs every call's policy phase in model
order, one at a time, so questions are asked, and decisions taken, in model order. Two ways to
decide:

* *inline*: an async callback ``decide(call) -> ApprovalDecision`` is awaited while the step
  waits (a terminal prompt, a web UI); the question and its answer are recorded in the log;
  an abort (Ctrl-C under ``abort_on_sigint``) cancels the wait and the call is answered
  ``ABORTED_BEFORE_DISPATCH``;
* *deferred*: the agent pauses the turn before the first undecided call (see
  :func:`~trio_harness.run_turn`'s ``hold``); decisions recorded later, in any process, are
  answered by the service in model order when the turn resumes. A call that reaches the
  service without a decision is answered ``"unavailable"`` (a denial): no call ever runs
  without its approval.

Fail-closed: a predicate is consulted only for arguments that pass the tool's schema; a call
whose arguments do not (or whose schema cannot be compiled here) needs approval.
"""

from __future__ import annotations

import collections
import contextvars
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Final, TypeAlias

import attrs

from .._errors import HarnessError
from .._json import js_json, parse_arguments
from .._log import Session
from .._pool import ToolCallBlock
from .._runtime import (
    Accept,
    Allow,
    ApprovalRequest,
    Ask,
    ToolExecution,
    cancel_on_abort,
    json_schema_validator,
)
from .._values import ToolDefinition, ToolExecutionResult, error_content
from .approval_log import ApprovalDecision, PendingCall, record_decision, record_pending

__all__ = [
    "AgentApproval",
    "ApprovalRule",
    "ApprovalToolDefinition",
    "DecisionCallback",
    "PendingApprovalError",
    "needs_approval",
]

#: When a tool needs approval: ``True`` (every call), ``False``, or a predicate over the call's
#: validated arguments (a JSON value, e.g. a dict) answering truthy (a ``str``: the reason).
ApprovalRule: TypeAlias = bool | Callable[[Any], object]

#: An inline decision: ``async (call) -> ApprovalDecision`` (``call.decision`` is ``None``).
DecisionCallback: TypeAlias = Callable[[PendingCall], Awaitable[ApprovalDecision]]


class PendingApprovalError(RuntimeError):
    """The agent's last turn is paused: calls wait for decisions (``agent.pending``)."""


@attrs.frozen(kw_only=True)
class ApprovalToolDefinition(ToolDefinition):
    """A :class:`~trio_harness.ToolDefinition` that needs a person's approval to run.

    Attributes:
        needs_approval: The rule (see :data:`ApprovalRule`).
        approval_reason: The reason shown when the rule gives none (default
            ``tool "<name>" needs approval``).
    """

    needs_approval: ApprovalRule = True
    approval_reason: str | None = None


def needs_approval(
    definition: ToolDefinition, when: ApprovalRule = True, *, reason: str | None = None
) -> ApprovalToolDefinition:
    """``definition``, marked as needing approval ``when`` (see :data:`ApprovalRule`).

    Usage::

        write = th.agent.needs_approval(raw_write_definition, lambda args: args["path"] != "tmp")

    Raises:
        TypeError: ``when`` is neither a bool nor callable.
    """
    _check_rule(when)
    fields = {field.name: getattr(definition, field.name) for field in attrs.fields(ToolDefinition)}
    return ApprovalToolDefinition(**fields, needs_approval=when, approval_reason=reason)


def _check_rule(when: object) -> None:
    if type(when) is not bool and not callable(when):
        raise TypeError(f"needs_approval must be a bool or a callable, got {type(when).__name__}")


@attrs.frozen
class _Rule:
    when: ApprovalRule
    reason: str | None


def _outcome(rule: _Rule, name: str, valid: bool, arguments: Any) -> str | None:
    """The reason ``rule`` gives for one call, or ``None`` (no approval needed)."""
    default = rule.reason or f'tool "{name}" needs approval'
    if rule.when is True:
        return default
    if rule.when is False:
        return None
    if not valid:
        return f"{default} (its arguments do not match the tool's schema)"
    answer = rule.when(arguments)
    if isinstance(answer, str) and answer:
        return answer
    return default if answer else None


class _Selection:
    """Tools chosen by name, or every tool of a live source (an ``McpConnection``)."""

    def __init__(self, tools: object, unless_read_only: bool) -> None:
        self._names: frozenset[str] | None = None
        self._source: Any = None
        if isinstance(tools, str):
            self._names = frozenset((tools,))
        elif hasattr(tools, "names"):
            self._source = tools
        elif isinstance(tools, Iterable):
            self._names = frozenset(tools)
        else:
            raise TypeError(
                "tools must be a name, names, or an object with .names (an McpConnection), got "
                f"{type(tools).__name__}"
            )
        if unless_read_only and self._source is None:
            raise TypeError("unless_read_only needs an MCP connection (its tools' readOnlyHint)")
        self._unless_read_only = unless_read_only

    def __contains__(self, name: str) -> bool:
        if self._names is not None:
            return name in self._names
        names: list[str] = list(self._source.names)
        if name not in names:
            return False
        if not self._unless_read_only:
            return True
        # The registered reports are in the order the names were registered; `parallel` is
        # the server's readOnlyHint (the MCP bridge's own reading of it).
        reports = [report for report in self._source.reports if report.registered]
        return not any(n == name and r.parallel for n, r in zip(names, reports, strict=False))


# The question the pre-execute hook is about to ask, for the service awaited next in the same
# task (the pool prepares one call at a time; the hook's coroutine runs in the caller's context).
_asking: contextvars.ContextVar[PendingCall | None] = contextvars.ContextVar(
    "trio_harness_approval_question", default=None
)

_REJECTED: Final = 'the user rejected tool "{}"'


class AgentApproval:
    """An agent's approval: its rules, the hooks and the service (see the module docstring).

    Args:
        agent: The agent the calls run for (``ApprovalRequest.agent`` must be it).
        session: Where questions and decisions are recorded.
        decide: The inline callback; ``None`` defers every decision (the turn pauses).
    """

    def __init__(self, agent: object, session: Session, decide: DecisionCallback | None) -> None:
        if decide is not None and not callable(decide):
            raise TypeError(f"approval must be an async callable or 'defer', got {decide!r}")
        self._agent = agent
        self._session = session
        self._decide = decide
        self._selections: list[tuple[_Selection, _Rule]] = []
        self._checks: dict[int, tuple[object, Callable[[Any, str], list[str]] | None]] = {}
        self._decisions: dict[str, collections.deque[ApprovalDecision]] = {}
        self._messages: dict[str, collections.deque[str]] = {}
        self.position = (0, 0)  # (turn, step) of the step running now

    @property
    def deferred(self) -> bool:
        """Whether decisions are deferred (the turn pauses) rather than asked inline."""
        return self._decide is None

    def require(
        self,
        tools: object,
        *,
        when: ApprovalRule = True,
        unless_read_only: bool = False,
        reason: str | None = None,
    ) -> Callable[[], None]:
        """Add a rule for ``tools`` (see ``Agent.require_approval``); returns its remover."""
        _check_rule(when)
        entry = (_Selection(tools, unless_read_only), _Rule(when, reason))
        self._selections.append(entry)

        def remove() -> None:
            if entry in self._selections:
                self._selections.remove(entry)

        return remove

    def has_rules(self, runtime: Any) -> bool:
        """Whether any rule could select a call on ``runtime`` now."""
        if self._selections:
            return True
        get = getattr(runtime, "get", None)
        if get is None:
            return False
        return any(
            isinstance(get(schema["name"]), ApprovalToolDefinition) for schema in runtime.schemas()
        )

    # -- the rules -----------------------------------------------------------------------------

    def _valid(self, definition: ToolDefinition | None, arguments: Any) -> bool:
        if definition is None:
            return False
        key = id(definition)
        cached = self._checks.get(key)
        if cached is None or cached[0] is not definition:
            try:
                check: Callable[[Any, str], list[str]] | None = json_schema_validator(
                    definition.parameters
                )
            except (HarnessError, TypeError, ValueError):
                check = None  # fail-closed: a schema this cannot compile needs approval
            cached = self._checks[key] = (definition, check)
        check = cached[1]
        return check is not None and not check(arguments, "arguments")

    def reason(self, runtime: Any, name: str, arguments: Any) -> str | None:
        """Why the call ``name(arguments)`` needs approval, or ``None`` (it does not)."""
        definition = runtime.get(name) if hasattr(runtime, "get") else None
        rules = [rule for selection, rule in self._selections if name in selection]
        if isinstance(definition, ApprovalToolDefinition):
            rules.append(_Rule(definition.needs_approval, definition.approval_reason))
        if not rules:
            return None
        valid = self._valid(definition, arguments)
        for rule in rules:
            reason = _outcome(rule, name, valid, arguments)
            if reason is not None:
                return reason
        return None

    def hold(
        self,
        runtime: Any,
        turn: int,
        step: int,
        calls: Sequence[ToolCallBlock],
        known: Sequence[PendingCall] = (),
    ) -> tuple[PendingCall, ...]:
        """The calls of a reply that need approval (``run_turn``'s ``hold``), with the
        decisions in ``known`` (by index)."""
        decided = {call.index: call.decision for call in known}
        pending = []
        for index, call in enumerate(calls):
            reason = self.reason(runtime, call.name, parse_arguments(call.arguments))
            if reason is not None:
                pending.append(
                    PendingCall(
                        turn=turn,
                        step=step,
                        index=index,
                        call_id=call.id,
                        name=call.name,
                        arguments=call.arguments,
                        reason=reason,
                        decision=decided.get(index),
                    )
                )
        return tuple(pending)

    def load(self, pending: Sequence[PendingCall]) -> None:
        """The decisions the service answers in the next part of a paused step, model order."""
        self._decisions = {}
        for call in pending:
            if call.decision is not None:
                self._decisions.setdefault(call.call_id, collections.deque()).append(call.decision)

    # -- the hooks and the service ------------------------------------------------------------

    async def pre_execute(self, exec: ToolExecution, next: Callable[[], Awaitable[Any]]) -> Any:
        """The pre-execute hook: ``Ask(reason)`` for a call the rules select (once the inner
        hooks allowed it; their own ``Ask`` is asked the same way)."""
        decision = await next()
        if exec.agent is not self._agent:
            return decision
        if isinstance(decision, Allow):
            reason = self.reason(exec.runtime, exec.name, exec.arguments)
            if reason is None:
                return decision
            decision = Ask(reason)
        if isinstance(decision, Ask):
            turn, step = self.position
            _asking.set(
                PendingCall(
                    turn=turn,
                    step=step,
                    index=-1,
                    call_id=exec.call_id,
                    name=exec.name,
                    arguments=js_json(exec.arguments),
                    reason=decision.reason,
                )
            )
        return decision

    async def request(self, request: ApprovalRequest, /) -> str:
        """The approval service: the decision for one asked call (see the module docstring)."""
        question = _asking.get()
        _asking.set(None)
        if request.agent is not self._agent or question is None:
            return "unavailable"
        if question.call_id != request.call_id:
            return "unavailable"
        if self._decide is None:
            queue = self._decisions.get(request.call_id)
            if not queue:
                return "unavailable"  # never decided: it does not run
            decision = queue.popleft()
        else:
            record_pending(self._session, [question], inline=True)
            answer: ApprovalDecision | None = None
            async with cancel_on_abort(request.abort):
                answer = await self._decide(question)
            if answer is None:
                return "cancelled"  # the abort came first: nothing recorded, nothing ran
            if not isinstance(answer, ApprovalDecision):
                raise TypeError(
                    f"the approval callback must return an ApprovalDecision, got {answer!r}"
                )
            if answer.arguments is not None:
                raise ValueError("edited arguments need deferred approval (the turn pauses)")
            decision = answer
            record_decision(self._session, question, decision)
        if decision.approved:
            return "allowed-once"
        if decision.message:
            self._messages.setdefault(request.call_id, collections.deque()).append(decision.message)
        return "rejected"

    async def post_execute(
        self,
        exec: ToolExecution,
        result: ToolExecutionResult,
        next: Callable[[], Awaitable[Any]],
    ) -> Any:
        """The post-execute hook: a rejection shows the person's message after upstream's."""
        queue = self._messages.get(exec.call_id)
        denial = _REJECTED.format(exec.name)
        if queue and result.is_error and result.error and result.error.message == denial:
            message = queue.popleft()
            return Accept(content=error_content(f"{denial}: {message}"))
        return await next()
