"""Building the results that need a call or a tool: successes, timeouts, cancellations, and
materialization. The pure factories (failures, aborts, denials, blocks) live beside the result
type in :mod:`trio_harness._values`.

Every success goes through :func:`create_success_result` (body returns, wrapper-authored
successes, post-execute value replacements): the value is snapshotted to lossless JSON, validated
against the tool's output schema, rendered, and (for top-level calls) projected into ``meta``.
Every final result is either built here from fresh snapshots (the pipeline marks it as its
execution's fresh result, and ``finish`` passes it through) or goes through :func:`materialize`,
which snapshots the JSON-facing fields; either way the result a caller receives shares no mutable
container with tool or hook code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, NoReturn

import attrs

from .._errors import ToolOutputError, ToolTimeoutError, error_message
from .._json import NOT_JSON, snapshot_json_value
from .._values import (
    UNSET,
    ToolError,
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
    error_result,
    is_well_formed_error,
)
from .execution import ToolExecution
from .registry import RegisteredTool

__all__ = [
    "cancellation_result",
    "create_success_result",
    "materialize",
    "timeout_result",
    "with_contexts",
]

_NOT_LOSSLESS_RESULT: Final = "tool result must be losslessly JSON-serializable"


def _project(tool: RegisteredTool, label: str, project: Any, args: Any, value: Any) -> Any:
    """Run ``render`` / ``presentation_meta`` and snapshot what it returns."""
    try:
        projected = project(args, value)
    except Exception as error:
        raise ToolOutputError(tool.name, [f"{label} failed: {error_message(error)}"]) from error
    snapshot = snapshot_json_value(projected)
    if snapshot is NOT_JSON:
        _not_lossless(tool, label, projected)
    return snapshot


def _not_lossless(tool: RegisteredTool, label: str, projected: object) -> NoReturn:
    # The snapshot again, for its reason (the same verdict: the walk is deterministic).
    problems: list[str] = []
    snapshot_json_value(projected, problems)
    reason = f"{label}: {problems[0]}" if problems else f"{label} returned non-lossless JSON"
    raise ToolOutputError(tool.name, [reason])


def create_success_result(
    exec: ToolExecution, tool: RegisteredTool, candidate: object
) -> ToolExecutionResult:
    """The canonical success for ``candidate`` as ``tool``'s output (upstream ``createSuccessResult``).

    Raises:
        ToolOutputError: The value is not lossless JSON (``value is not lossless JSON``), fails the
            output schema (the validator's violations, root ``value``), or a projector failed
            (``output.render failed: <m>``, ``output.render returned non-lossless JSON``, and the
            same for ``output.presentationMeta``).
    """
    # A string is its own snapshot (the commonest value, checked in place).
    value = candidate if type(candidate) is str else snapshot_json_value(candidate)
    if value is NOT_JSON:
        problems: list[str] = []
        snapshot_json_value(candidate, problems)
        raise ToolOutputError(tool.name, problems or ["value is not lossless JSON"])
    violations = tool.check(value, "value")
    if violations:
        raise ToolOutputError(tool.name, violations)
    args = exec._arguments
    # ``_project`` for ``render``, written out (once per call).
    try:
        rendered = tool.render(args, value)
    except Exception as error:
        raise ToolOutputError(
            tool.name, [f"output.render failed: {error_message(error)}"]
        ) from error
    content = snapshot_json_value(rendered)
    if content is NOT_JSON:
        _not_lossless(tool, "output.render", rendered)
    if type(content) is not list:
        # Upstream's type system guarantees an array; a Python render can return any JSON.
        raise ToolOutputError(tool.name, ["output.render must return a list of content blocks"])
    meta: Any = UNSET
    # Presentation metadata is for what a user sees: top-level calls only, never nested ones.
    if tool.presentation_meta is not None and exec._parent is None:
        meta = _project(tool, "output.presentationMeta", tool.presentation_meta, args, value)
    return ToolExecutionResult(
        is_error=False,
        content=tuple(content),
        value=value,
        meta=meta,
        concludes_turn=exec._concluded,
    )


def timeout_result(tool: RegisteredTool) -> ToolExecutionResult:
    """The failure of a body cut short by ``tool``'s ``timeout_ms`` (``TOOL_TIMEOUT``)."""
    return error_result(ToolTimeoutError(tool.name, tool.definition.timeout_ms or 0))


def with_contexts(
    result: ToolExecutionResult, before: Sequence[Any] = (), after: Sequence[Any] = ()
) -> ToolExecutionResult:
    """``result`` with ``before`` + its own contexts + ``after`` (the same object when both empty)."""
    if not before and not after:
        return result
    return attrs.evolve(result, additional_contexts=(*before, *result.additional_contexts, *after))


def cancellation_result(exec: ToolExecution, result: ToolExecutionResult) -> ToolExecutionResult:
    """A success that lost the race with the caller's abort: ``ABORTED`` if the body started,
    else ``ABORTED_BEFORE_DISPATCH``; the result's contexts are kept."""
    if exec._body_invoked:
        return aborted_result(result.additional_contexts)
    return aborted_before_dispatch_result(result.additional_contexts)


def _snapshot_fields(result: ToolExecutionResult) -> ToolExecutionResult | None:
    content = result.content
    snapshot = snapshot_json_value(list(content) if type(content) is tuple else content)
    if type(snapshot) is not list:
        return None
    meta = result.meta
    if meta is not UNSET:
        meta = snapshot_json_value(meta)
        if meta is NOT_JSON:
            return None
    contexts: tuple[Any, ...] = ()
    if result.additional_contexts:
        copied = snapshot_json_value(list(result.additional_contexts))
        if copied is NOT_JSON:
            return None
        contexts = tuple(copied)
    error = result.error
    if error is not None and not is_well_formed_error(error):
        return None
    if not result.is_error:
        return ToolExecutionResult(
            is_error=False,
            content=tuple(snapshot),
            value=result.value,
            meta=meta,
            additional_contexts=contexts,
            concludes_turn=result.concludes_turn,
        )
    # A failure never carries a value nor a conclusion.
    return ToolExecutionResult(
        is_error=True,
        content=tuple(snapshot),
        error=error if error is not None else ToolError(""),
        meta=meta,
        additional_contexts=contexts,
        exception=result.exception,
    )


def materialize(result: ToolExecutionResult) -> ToolExecutionResult:
    """Snapshot ``result``'s JSON-facing fields; a non-lossless result becomes the failure
    ``tool result must be losslessly JSON-serializable``.

    The value of a success was snapshotted when it was created and is kept as is.
    """
    materialized = _snapshot_fields(result)
    if materialized is None:
        return error_result(TypeError(_NOT_LOSSLESS_RESULT))
    return materialized
