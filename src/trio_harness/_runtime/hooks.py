"""The runtime's extension seams: decisions, hook signatures, the approval service, hook lists.

Five seams surround every call (upstream names in brackets):

* pre-execute hooks [``tools/pre-execute``]: an async waterfall ``hook(exec, next) -> decision``
  whose innermost ``next()`` answers :class:`Allow`; a hook may answer :class:`Deny` or
  :class:`Ask` (route to the approval service) without calling ``next``;
* guards: synchronous ``guard(exec) -> str | None`` evaluated after the whole waterfall, so no hook
  can override a guard's denial;
* execute wrappers [``tools/execute``]: an async around-dispatch waterfall
  ``wrapper(exec, next) -> ToolExecutionResult``; ``next()`` runs the body (already normalized to
  a result) and a wrapper may short-circuit by not calling it;
* post-execute hooks [``tools/post-execute``]: an async waterfall ``hook(exec, result, next)``
  whose innermost ``next()`` answers ``Accept()``; the answer is :class:`Accept` or :class:`Block`;
* result observers [``tools/result``]: synchronous ``observer(exec, result)``, once per final result.

Every ``add_*`` returns a callable that removes exactly that registration (idempotent).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Generic, Literal, Protocol, TypeAlias, TypeVar

import attrs
import trio

from .._values import UNSET, ContentBlock, ToolExecutionResult
from .execution import ToolExecution

__all__ = [
    "ALLOW",
    "Accept",
    "Allow",
    "ApprovalOutcome",
    "ApprovalRequest",
    "ApprovalService",
    "Ask",
    "Block",
    "Deny",
    "ExecuteWrapper",
    "Guard",
    "HookList",
    "Policy",
    "PostExecuteHook",
    "PostToolDecision",
    "PreExecuteHook",
    "PreToolDecision",
    "ResultObserver",
    "refuse_awaitable",
]


# ---------------------------------------------------------------------------------------------
# Decisions
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Allow:
    """Pre-execute decision: let the call proceed (to the guards, then dispatch)."""


@attrs.frozen
class Deny:
    """Pre-execute decision: refuse the call; the result is the failure ``Error: <reason>``.

    Attributes:
        reason: The message the model sees (no ``error.info``).
    """

    reason: str


@attrs.frozen
class Ask:
    """Pre-execute decision: ask the approval service (a denial when none is mounted).

    Attributes:
        reason: Why approval is needed; forwarded to the service, and the denial reason when no
            service is mounted.
    """

    reason: str | None = None


#: The shared innermost answer of the pre-execute waterfall.
ALLOW: Final = Allow()

PreToolDecision: TypeAlias = Allow | Deny | Ask


@attrs.frozen(kw_only=True)
class Accept:
    """Post-execute decision: keep the result, optionally replacing its value OR its content.

    Attributes:
        value: A replacement value (success results only): re-validated against the output schema
            and re-rendered, meta recomputed. ``UNSET``: keep the value.
        content: Replacement content blocks (value and meta kept). ``UNSET``: keep the content.
        additional_contexts: Context messages appended after the result's own contexts.
    """

    value: Any = UNSET
    content: Any = UNSET
    additional_contexts: Sequence[Any] = ()


@attrs.frozen
class Block:
    """Post-execute decision: turn the result into a failure showing ``feedback``.

    The failure's message is the text of the text blocks (``[<type> content]`` for other blocks)
    joined by newlines, or ``tool result blocked by post-execute policy`` when that is empty.
    Contexts the body deferred are dropped; only ``additional_contexts`` remain.

    Attributes:
        feedback: The content blocks the model sees instead of the result.
        additional_contexts: Context messages carried by the failure.
    """

    feedback: Sequence[ContentBlock]
    additional_contexts: Sequence[Any] = ()


PostToolDecision: TypeAlias = Accept | Block


# ---------------------------------------------------------------------------------------------
# Approval
# ---------------------------------------------------------------------------------------------

#: What an approval service answers. Anything else is a bug in the service and becomes an error
#: result ``unreachable variant in ApprovalOutcome: "<x>"``.
ApprovalOutcome: TypeAlias = Literal["allowed-once", "rejected", "cancelled", "unavailable"]


@attrs.frozen(kw_only=True)
class ApprovalRequest:
    """One question to the approval service (the fields of an :class:`Ask` plus the call's identity).

    Attributes:
        agent: The agent the call runs for (never ``None``: agent-less calls are denied unasked).
        tool_name: The tool being called.
        call_id: The model's tool-call id.
        reason: The :class:`Ask` reason, if any.
        abort: The caller's abort event; the service decides how to honour it (typically by
            answering ``"cancelled"`` once it is set).
    """

    agent: object
    tool_name: str
    call_id: str
    reason: str | None
    abort: trio.Event | None


class ApprovalService(Protocol):
    """Where :class:`Ask` decisions are routed (``ToolRuntime(approval=...)``)."""

    async def request(self, request: ApprovalRequest, /) -> str:
        """Answer one of ``allowed-once``, ``rejected``, ``cancelled``, ``unavailable``."""
        ...


# ---------------------------------------------------------------------------------------------
# Hook signatures
# ---------------------------------------------------------------------------------------------

PreExecuteHook: TypeAlias = Callable[
    [ToolExecution, Callable[[], Awaitable[PreToolDecision]]], Awaitable[PreToolDecision]
]
ExecuteWrapper: TypeAlias = Callable[
    [ToolExecution, Callable[[], Awaitable[ToolExecutionResult]]],
    Awaitable[ToolExecutionResult],
]
PostExecuteHook: TypeAlias = Callable[
    [ToolExecution, ToolExecutionResult, Callable[[], Awaitable[PostToolDecision]]],
    Awaitable[PostToolDecision],
]
Guard: TypeAlias = Callable[[ToolExecution], str | None]
ResultObserver: TypeAlias = Callable[[ToolExecution, ToolExecutionResult], object]

_T = TypeVar("_T")


class HookList(Generic[_T]):
    """An ordered list of hooks with per-registration removal.

    ``items`` is a tuple rebuilt on every add/remove (copy-on-write): a waterfall that started
    keeps the hooks it started with, and the hot path reads one attribute without copying.
    Guards instead index ``items`` afresh at every step, which makes a guard added during the
    evaluation visible to that same evaluation.
    """

    __slots__ = ("_entries", "items")

    def __init__(self) -> None:
        self._entries: tuple[tuple[object, _T], ...] = ()
        self.items: tuple[_T, ...] = ()

    def add(self, hook: _T) -> Callable[[], None]:
        """Append ``hook``; the returned callable removes this registration (only once)."""
        key = object()
        self._entries = (*self._entries, (key, hook))
        self.items = (*self.items, hook)

        def remove() -> None:
            entries = tuple(entry for entry in self._entries if entry[0] is not key)
            if len(entries) != len(self._entries):
                self._entries = entries
                self.items = tuple(entry[1] for entry in entries)

        return remove


def refuse_awaitable(returned: object, message: str) -> None:
    """Raise ``TypeError(message)`` if a callback that must be synchronous returned an awaitable,
    closed first so that no "coroutine was never awaited" warning leaks."""
    if returned is not None and isinstance(returned, Awaitable):
        close: Callable[[], object] | None = getattr(returned, "close", None)
        if close is not None:
            close()
        raise TypeError(message)


@attrs.define(eq=False)
class Policy:
    """Everything a runtime consults around a call besides its registry: the five hook lists and
    the approval service. The pipeline reads it; :class:`~trio_harness.ToolRuntime` fills it."""

    approval: ApprovalService | None = None
    pre_execute: HookList[PreExecuteHook] = attrs.field(factory=HookList)
    execute_wrappers: HookList[ExecuteWrapper] = attrs.field(factory=HookList)
    post_execute: HookList[PostExecuteHook] = attrs.field(factory=HookList)
    guards: HookList[Guard] = attrs.field(factory=HookList)
    observers: HookList[ResultObserver] = attrs.field(factory=HookList)
