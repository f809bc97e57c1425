"""Values that cross the API between tools, the runtime and the pool.

These are the shared vocabulary of the package: a tool definition, one execution's input, its
result, and the shapes the three-phase scheduler hands to the pool. Everything here is a plain
value (``attrs.frozen``); behaviour lives in the modules that produce and consume them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

import attrs
import trio

from ._errors import TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH, HarnessError, error_message

if TYPE_CHECKING:
    from ._runtime.tool_runtime import ToolExecution

__all__ = [
    "UNSET",
    "ContentBlock",
    "DispatchOutcome",
    "ErrorInfo",
    "ExecutionMode",
    "JsonValue",
    "Preparation",
    "Scheduler",
    "ToolDefinition",
    "ToolError",
    "ToolExecutionInput",
    "ToolExecutionResult",
    "ToolOutput",
    "aborted_before_dispatch_result",
    "aborted_result",
    "error_result",
]

#: A lossless JSON value (``None``, ``bool``, ``int``, ``float``, ``str``, ``list``, ``dict``).
JsonValue = Any
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


# ---------------------------------------------------------------------------------------------
# One execution
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ToolExecutionInput:
    """One call as the runtime receives it.

    Attributes:
        call_id: The model's tool-call id.
        name: The tool name the model asked for.
        arguments: Parsed arguments (any object; snapshotted to lossless JSON by the runtime).
        abort: Setting this event aborts the call (``None``: never aborted).
        parent: The execution of the composite tool that issued this call, for nested calls.
        agent: The agent the call runs for (opaque; routed to the approval service).
        root_call_id: The top-level call id of a nested call tree (defaults to ``call_id``).
    """

    call_id: str
    name: str
    arguments: Any
    abort: trio.Event | None = None
    parent: ToolExecution | None = attrs.field(default=None, kw_only=True)
    agent: object | None = attrs.field(default=None, kw_only=True)
    root_call_id: str | None = attrs.field(default=None, kw_only=True)


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
        info = ErrorInfo(error.name, error.code) if isinstance(error, HarnessError) else None
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
    """

    is_error: bool
    content: tuple[ContentBlock, ...] | list[ContentBlock]
    value: Any = UNSET
    error: ToolError | None = None
    meta: Any = UNSET
    additional_contexts: tuple[Any, ...] = ()
    concludes_turn: bool = False

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


def error_result(
    error: object, *, additional_contexts: Sequence[Any] = (), meta: Any = UNSET
) -> ToolExecutionResult:
    """``toolErrorResult``: content ``Error: <message>``, error with info for ``HarnessError``."""
    tool_error = ToolError.from_exception(error)
    return ToolExecutionResult(
        is_error=True,
        content=({"type": "text", "text": "Error: " + tool_error.message},),
        error=tool_error,
        meta=meta,
        additional_contexts=tuple(additional_contexts),
    )


def _abort_result(message: str, code: str, contexts: Sequence[Any]) -> ToolExecutionResult:
    return ToolExecutionResult(
        is_error=True,
        content=({"type": "text", "text": "Error: " + message},),
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


# ---------------------------------------------------------------------------------------------
# The scheduler view the pool drives
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ExecutionMode:
    """How a call may run: ``"parallel"`` (only for an explicit ``True``) or ``"exclusive"``."""

    kind: Literal["parallel", "exclusive"]


PARALLEL: Final = ExecutionMode("parallel")
EXCLUSIVE: Final = ExecutionMode("exclusive")


@attrs.frozen
class Preparation:
    """What ``scheduler.prepare`` decided.

    ``kind`` is ``"dispatch"`` (run the body next; ``result`` is ``None``), ``"post-result"`` (a
    result that still goes through post-execute) or ``"final-result"`` (a result that bypasses
    post-execute and only needs ``finish``).
    """

    kind: Literal["dispatch", "post-result", "final-result"]
    exec: ToolExecution
    result: ToolExecutionResult | None = None


@attrs.frozen
class DispatchOutcome:
    """What ``scheduler.dispatch`` produced: a result, and whether post-execute still runs."""

    kind: Literal["post-result", "final-result"]
    result: ToolExecutionResult


class Scheduler(Protocol):
    """The four phases the pool drives; an exception escaping one is a scheduler failure."""

    async def prepare(self, input: ToolExecutionInput, /) -> Preparation: ...

    async def dispatch(self, exec: ToolExecution, /) -> DispatchOutcome: ...

    async def finalize(
        self, exec: ToolExecution, result: ToolExecutionResult, /
    ) -> ToolExecutionResult: ...

    def finish(
        self, exec: ToolExecution, result: ToolExecutionResult, /
    ) -> ToolExecutionResult: ...
