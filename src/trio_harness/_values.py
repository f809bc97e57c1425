"""Plain values that cross the API between tools, the runtime, the pool and the session log.

A tool definition and its output contract, a result and its error, and a call's execution mode.
Everything here is an immutable value (``attrs.frozen``) that refers to nothing in flight: the
values bound to a running call (its input, the phase shapes the pool drives) live with the
execution in :mod:`trio_harness._runtime.execution`. No Trio import.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Literal, ParamSpec, TypeVar

import attrs

from ._errors import TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH, HarnessError, error_message

__all__ = [
    "ERROR_PREFIX",
    "UNSET",
    "ContentBlock",
    "ErrorInfo",
    "ExecutionMode",
    "ToolDefinition",
    "ToolError",
    "ToolExecutionResult",
    "ToolOutput",
    "aborted_before_dispatch_result",
    "aborted_result",
    "blocked_result",
    "denied_result",
    "error_content",
    "error_result",
    "is_timeout_ms",
    "is_well_formed_error",
]

_T = TypeVar("_T")
_P = ParamSpec("_P")

#: One content block, e.g. ``{"type": "text", "text": "..."}``.
ContentBlock = dict[str, Any]


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


#: Marks an absent field where ``None`` is a legitimate JSON value (a result's ``value``).
UNSET: Final = _Unset()


# ---------------------------------------------------------------------------------------------
# Tool definitions
# ---------------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ToolOutput:
    """A tool's output contract.

    Attributes:
        schema: For ``define_tool``, a value spec (compiled at definition time); on a
            ``ToolDefinition`` it is the compiled JSON Schema the value must satisfy.
        render: ``(args, value) -> content blocks`` shown to the model.
        presentation_meta: Optional ``(args, value) -> JSON`` projected into ``result.meta`` for
            top-level calls only.
    """

    schema: Any
    render: Callable[[Any, Any], Any]
    presentation_meta: Callable[[Any, Any], Any] | None = None


@attrs.frozen(kw_only=True)
class ToolDefinition:
    """A tool the runtime can register: from ``define_tool`` or written raw (MCP interop).

    A raw definition carries a raw JSON Schema in ``parameters`` and gets no argument validation;
    ``define_tool`` wraps ``execute`` with hard validation and the presenters/classifier with soft
    validation.

    Attributes:
        name: Model-facing name.
        description: Model-facing description.
        parameters: The compiled (or raw) JSON Schema of the arguments.
        output: The output contract; ``output.schema`` is a JSON Schema here.
        execute: ``async (args, ctx) -> JSON value``.
        is_concurrency_safe: ``(args) -> object``; only an exact ``True`` makes a call parallel.
        present_call: ``(args) -> object | None``.
        present_result: ``(args, result) -> object | None``.
        finalize_content: ``(exec, result) -> content blocks | None``, called once per result.
        timeout_ms: Declared timeout; the body is cancelled past it (``TOOL_TIMEOUT``).
    """

    name: str
    description: str
    parameters: Any
    output: ToolOutput
    execute: Callable[[Any, Any], Awaitable[Any]]
    is_concurrency_safe: Callable[[Any], object] | None = None
    present_call: Callable[[Any], Any] | None = None
    present_result: Callable[[Any, Any], Any] | None = None
    finalize_content: Callable[[Any, ToolExecutionResult], Any] | None = None
    timeout_ms: float | None = None


def is_timeout_ms(value: object) -> bool:
    """THE ``timeout_ms`` check (``define_tool`` and ``register`` both use it): a number, not a
    ``bool``, that is finite as a double and positive. ``int``/``float`` subclasses (an
    ``IntEnum``) count; an int too large for a double is not finite for the clock either."""
    if type(value) is bool or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value)) and value > 0
    except OverflowError:
        return False


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ErrorInfo:
    """Structured error identity (only for ``HarnessError`` failures)."""

    name: str
    code: str


@attrs.frozen
class ToolError:
    """A failed result's error: its message and, for ``HarnessError`` failures, ``info``."""

    message: str
    info: ErrorInfo | None = None

    @classmethod
    def from_exception(cls, error: object) -> ToolError:
        """The error of ``toolErrorResult(error)``: info only for ``HarnessError``."""
        info = None
        if isinstance(error, HarnessError):
            code = error.code
            info = ErrorInfo(error.name, code if type(code) is str else error_message(code))
        return cls(error_message(error), info)


@attrs.frozen(kw_only=True)
class ToolExecutionResult:
    """The outcome of one call, success or failure.

    Attributes:
        is_error: Whether the call failed.
        content: Content blocks the model sees.
        value: The validated output value (success only; ``UNSET`` on failure).
        error: The failure (``None`` on success).
        meta: Presentation metadata (``UNSET`` when absent).
        additional_contexts: Context messages to hand to the agent after the step.
        concludes_turn: The body asked to end the turn after this step.
        exception: The exception a failure was made from, for the developer (its traceback is
            logged by the ``trio_harness`` logger); never part of the wire form nor of equality.
    """

    is_error: bool
    content: tuple[ContentBlock, ...] | list[ContentBlock]
    value: Any = UNSET
    error: ToolError | None = None
    meta: Any = UNSET
    additional_contexts: tuple[Any, ...] = ()
    concludes_turn: bool = False
    exception: BaseException | None = attrs.field(default=None, eq=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The upstream object form (camelCase keys, absent fields omitted)."""
        out: dict[str, Any] = {"content": list(self.content), "isError": self.is_error}
        if self.error is not None:
            err: dict[str, Any] = {"message": self.error.message}
            if self.error.info is not None:
                err["info"] = {"name": self.error.info.name, "code": self.error.info.code}
            out["error"] = err
        if self.meta is not UNSET:
            out["meta"] = self.meta
        if self.additional_contexts:
            out["additionalContexts"] = list(self.additional_contexts)
        if self.concludes_turn:
            out["concludesTurn"] = True
        if self.value is not UNSET:
            out["value"] = self.value
        return out


#: What the model reads before a failure's message.
ERROR_PREFIX: Final = "Error: "


def error_content(message: str) -> tuple[ContentBlock, ...]:
    """THE content of a failure the runtime words: one text block ``Error: <message>``."""
    return ({"type": "text", "text": ERROR_PREFIX + message},)


def error_result(
    error: object, *, additional_contexts: Sequence[Any] = (), meta: Any = UNSET
) -> ToolExecutionResult:
    """``toolErrorResult``: content ``Error: <message>``, error with info for ``HarnessError``."""
    tool_error = ToolError.from_exception(error)
    return ToolExecutionResult(
        is_error=True,
        content=error_content(tool_error.message),
        error=tool_error,
        meta=meta,
        additional_contexts=tuple(additional_contexts),
        exception=error if isinstance(error, BaseException) else None,
    )


def is_well_formed_error(error: object) -> bool:
    """Whether ``error`` is a ``ToolError`` the log can keep: a ``str`` message and ``info``
    either ``None`` or an ``ErrorInfo`` of two ``str``."""
    if not isinstance(error, ToolError) or type(error.message) is not str:
        return False
    info = error.info
    return info is None or (
        isinstance(info, ErrorInfo) and type(info.name) is str and type(info.code) is str
    )


def _abort_result(message: str, code: str, contexts: Sequence[Any]) -> ToolExecutionResult:
    return ToolExecutionResult(
        is_error=True,
        content=error_content(message),
        error=ToolError(message, ErrorInfo("AbortError", code)),
        additional_contexts=tuple(contexts),
    )


def aborted_result(additional_contexts: Sequence[Any] = ()) -> ToolExecutionResult:
    """The result of a call whose body was cut short by an abort (code ``ABORTED``)."""
    return _abort_result("tool call aborted", TOOL_ABORTED, additional_contexts)


def aborted_before_dispatch_result(additional_contexts: Sequence[Any] = ()) -> ToolExecutionResult:
    """The result of a call aborted before its body started (code ``ABORTED_BEFORE_DISPATCH``)."""
    return _abort_result(
        "tool call aborted before dispatch", TOOL_ABORTED_BEFORE_DISPATCH, additional_contexts
    )


def denied_result(reason: str) -> ToolExecutionResult:
    """A policy denial: ``Error: <reason>`` with no ``error.info``."""
    return ToolExecutionResult(
        is_error=True, content=error_content(reason), error=ToolError(reason)
    )


_BLOCKED_DEFAULT: Final = "tool result blocked by post-execute policy"


def _feedback_message(feedback: object) -> str:
    parts: list[str] = []
    if isinstance(feedback, list | tuple):
        for block in feedback:
            kind = block.get("type") if isinstance(block, dict) else None
            text = block.get("text") if isinstance(block, dict) else None
            if kind == "text" and isinstance(text, str):
                parts.append(text)
            else:
                parts.append(f"[{kind if isinstance(kind, str) else 'unknown'} content]")
    return "\n".join(parts) or _BLOCKED_DEFAULT


def blocked_result(
    feedback: Sequence[Any], contexts: tuple[dict[str, Any], ...]
) -> ToolExecutionResult:
    """The failure a post-execute ``Block`` produces (feedback becomes the content)."""
    return ToolExecutionResult(
        is_error=True,
        content=tuple(feedback) if isinstance(feedback, list | tuple) else feedback,  # type: ignore[arg-type]
        error=ToolError(_feedback_message(feedback)),
        additional_contexts=contexts,
    )


# ---------------------------------------------------------------------------------------------
# Classification
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ExecutionMode:
    """How a call may run: ``"parallel"`` (only for an explicit ``True``) or ``"exclusive"``."""

    kind: Literal["parallel", "exclusive"]


PARALLEL: Final = ExecutionMode("parallel")
EXCLUSIVE: Final = ExecutionMode("exclusive")
