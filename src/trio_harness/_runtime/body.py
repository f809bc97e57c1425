"""The body of one call: run under its abort and its deadline, and its ending made a result.

:func:`dispatch_body` is the one place a body is awaited (the innermost ``next()`` of the
pipeline's execute wrappers). A run gives ``(value, failure, ending)``: the body's value, or the
failure it raised (a tool-owned exception, or a ``trio.Cancelled`` that no cancelled scope
delivered), and whether its cancel scope was cancelled while it ran (:data:`RAN`,
:data:`STOPPED`, :data:`OVERRAN`); that triple is mapped to a result once (aborted, timed out,
the body's failure, or its value through the output contract).

The body runs in a cancel scope of its own when it has an abort event or a deadline (with
neither, nothing but the caller's scope can cancel it, so it needs none): cancelled when its
abort event is set (:func:`~.abort.watch_scope`: through the step's :func:`~.abort.abort_relay`
when the pool opened one for that event, else a private watcher), and given the tool's
deadline; a fused event when an execute wrapper replaced the event, so the body sees either of
two.

The body sees ``exec.abort`` as the event that cancels it; whatever it assigns there is undone
when it returns.
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import trio

from .._errors import HarnessError, ToolArgsError, ToolNotFoundError, error_message
from .._values import (
    UNSET,
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
    error_result,
)
from .abort import watch_scope
from .define import ARGS_ROOT
from .execution import ToolExecution
from .registry import RegisteredTool, Registry
from .results import create_success_result, timeout_result

__all__ = ["OVERRAN", "RAN", "STOPPED", "dispatch_body", "stale_cancellation"]

#: Where tool failures are logged for the developer (the pipeline's logger).
logger: Final = logging.getLogger("trio_harness.runtime")

#: The body ran to its end (returned or raised) and nothing cancelled its scope.
RAN: Final = 0
#: The body stopped at a checkpoint because its scope was cancelled (the abort or the deadline).
STOPPED: Final = 1
#: The body ran to its end, but its scope was cancelled meanwhile: it lost the race.
OVERRAN: Final = 2


def stale_cancellation(cancelled: trio.Cancelled) -> BaseException | None:
    """``None`` when ``cancelled`` is a real cancellation of the current task (re-raise it), else
    the failure it stands for: a ``trio.Cancelled`` that no cancelled scope delivered (a body or a
    callback kept one from an earlier cancellation and raised it again)."""
    if trio.current_effective_deadline() == -math.inf:
        return None
    failure = RuntimeError("a trio.Cancelled was raised that no cancelled scope delivered")
    failure.__cause__ = cancelled
    return failure


@asynccontextmanager
async def _fused(first: trio.Event, second: trio.Event) -> AsyncIterator[trio.Event]:
    """An event set as soon as either ``first`` or ``second`` is (rare path: a wrapper replaced
    the abort event). One system task watches both for the duration of the block."""
    fused = trio.Event()
    watch_scope = trio.CancelScope()

    async def relay(source: trio.Event) -> None:
        await source.wait()
        fused.set()

    async def watch() -> None:
        with watch_scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(relay, first)
                nursery.start_soon(relay, second)

    trio.lowlevel.spawn_system_task(watch, name="trio_harness.fused-abort")
    try:
        yield fused
    finally:
        watch_scope.cancel()


def _begin(entry: RegisteredTool, exec: ToolExecution) -> Any:
    """Call the body: what awaiting it runs. With a plan (``define_tool``'s validating wrapper),
    the wrapper's steps are run here instead of in its own coroutine: the argument check
    (``ToolArgsError``), the author's ``execute``, and the check that it gave an awaitable."""
    plan = entry.plan
    if plan is None:
        return entry.definition.execute(exec._arguments, exec)
    check, execute, owner = plan
    args = exec._arguments
    checked = exec._checked
    if checked is not None and checked[0] is check and not exec._arguments_shared:
        # The classification checked exactly this value with this check, and no phase was
        # handed it since: the verdict stands (a check's verdict depends on the value alone).
        violations = checked[1]
    else:
        violations = check(args, ARGS_ROOT)
    if violations:
        raise ToolArgsError(violations)
    pending = execute(args, exec)
    if not (inspect.iscoroutine(pending) or inspect.isawaitable(pending)):
        raise TypeError(
            f"{owner}: execute must be an async function (it returned {type(pending).__name__})"
        )
    return pending


def _ending(scope: trio.CancelScope) -> int:
    if scope.cancelled_caught:
        return STOPPED
    return OVERRAN if scope.cancel_called else RAN


async def _run(entry: RegisteredTool, exec: ToolExecution) -> tuple[Any, BaseException | None]:
    """Await the body: its value, or the failure it raised (a tool-owned exception, or a
    ``trio.Cancelled`` that no cancelled scope delivered)."""
    try:
        return await _begin(entry, exec), None
    except Exception as error:
        return UNSET, error
    except trio.Cancelled as cancelled:
        failure = stale_cancellation(cancelled)
        if failure is None:
            raise
        return UNSET, failure


async def _guarded(
    exec: ToolExecution, abort: trio.Event | None, timeout_s: float | None, entry: RegisteredTool
) -> tuple[Any, BaseException | None, int]:
    """Run the body in a cancel scope cancelled by ``abort`` (through a relay when there is one,
    else a private watcher) and by the deadline."""
    if abort is None and timeout_s is None:
        # Nothing but the caller's own scope can cancel the body: it needs no scope of its own.
        return (*await _run(entry, exec), RAN)
    # ``UNSET``/``None`` stay when the scope's cancellation stopped the body.
    value: Any = UNSET
    failure: BaseException | None = None
    with trio.CancelScope() as scope:
        if timeout_s is not None:
            scope.deadline = trio.current_time() + timeout_s
        stop = watch_scope(abort, scope)
        try:
            value, failure = await _run(entry, exec)
        finally:
            stop()
    return value, failure, _ending(scope)


def _log_failure(exec: ToolExecution, error: BaseException) -> None:
    """Tell the developer what the model only sees as ``Error: <message>``."""
    if isinstance(error, HarnessError):
        logger.debug('tool "%s" (%s) failed: %s', exec.name, exec.call_id, error_message(error))
    else:
        logger.warning(
            'tool "%s" (%s) raised %s',
            exec.name,
            exec.call_id,
            type(error).__name__,
            exc_info=error,
        )


async def dispatch_body(registry: Registry, exec: ToolExecution) -> ToolExecutionResult:
    """Run the body of ``exec``'s tool and make its ending a result (stored on ``exec``).

    The innermost ``next()`` of the execute wrappers. A call whose event is already set gets
    ``ABORTED_BEFORE_DISPATCH`` and an unregistered tool ``TOOL_NOT_FOUND``, without a body.

    Raises:
        trio.Cancelled: The caller's own scope was cancelled (never turned into a result).
    """
    caller = exec._caller_abort
    current = exec._abort
    if (caller is not None and caller.is_set()) or (
        current is not caller and current is not None and current.is_set()
    ):
        result = aborted_before_dispatch_result()
    elif (entry := registry.lookup(exec._name)) is None:
        result = error_result(ToolNotFoundError(exec._name))
    else:
        exec._body_invoked = True
        timeout_s = entry.timeout_s
        value: Any
        failure: BaseException | None
        try:
            if current is caller or current is None or caller is None:
                # One event (or none): the body sees it unchanged.
                exec._abort = caller if current is None else current
                value, failure, ending = await _guarded(exec, exec._abort, timeout_s, entry)
            else:
                # A wrapper replaced the event: the body sees a third event set by either.
                async with _fused(caller, current) as fused:
                    exec._abort = fused
                    value, failure, ending = await _guarded(exec, fused, timeout_s, entry)
        finally:
            exec._abort = current  # the body may have replaced it
        # Map the ending, once.
        if failure is not None:
            # A tool-owned failure is kept even when it was raised in reaction to the abort.
            _log_failure(exec, failure)
            result = error_result(failure)
        elif ending == STOPPED:
            # The body stopped at a checkpoint: the abort, or else the deadline, cancelled it.
            aborted = (caller is not None and caller.is_set()) or (
                current is not None and current.is_set()
            )
            result = aborted_result() if aborted else timeout_result(entry)
        else:
            try:
                result = create_success_result(exec, entry, value)
            except Exception as error:
                # A broken output contract is the call's failure.
                result = error_result(error)
            else:
                # A body that returned after the abort (or past its deadline) lost the race.
                if (caller is not None and caller.is_set()) or (
                    current is not caller and current is not None and current.is_set()
                ):
                    result = aborted_result()
                elif ending == OVERRAN:
                    result = timeout_result(entry)
    exec._body_result = exec._fresh_result = result
    return result
