"""Reporting a step's progress as turn events: body starts and commits, for ``run_turn``.

:class:`observe_step` adds an execute wrapper (when the runtime takes one) that reports each
top-level body start of *this* step (a context variable tells two turns on one runtime apart),
and gives the step's tracer (:class:`CommitEvents`): a ``ToolCommitted`` per committed result,
emitted after the pool logged it, every phase forwarded to the step's own tracer.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from typing import Any

import trio

from .._pool import PoolTracer
from .._runtime import ToolExecutionInput
from .._values import ToolExecutionResult
from .turn_events import ToolCommitted, ToolStarted, TurnEvent

__all__ = ["CommitEvents", "observe_step"]


# The step being observed in this task's context. Dispatch tasks inherit the context of the step's
# nursery, so a hook sees the marker of the turn that started the call: two turns running on one
# runtime each report only their own calls.
_observed_step: contextvars.ContextVar[object] = contextvars.ContextVar(
    "trio_harness_observed_step", default=None
)


class observe_step:
    """Reports body starts (through an execute wrapper, if the runtime takes one) and commits
    (through the step's tracer: the pool tells ``committed`` once the log has the result) of
    one step."""

    def __init__(
        self,
        runtime: Any,
        turn: int,
        step: int,
        emit: Callable[[TurnEvent], object],
        *,
        listening: bool = True,
    ) -> None:
        self._disposers: list[Callable[[], None]] = []
        self._token: contextvars.Token[object] | None = None
        self._turn, self._step, self._emit = turn, step, emit
        self._listening = listening
        add_wrapper = getattr(runtime, "add_execute_wrapper", None)
        if add_wrapper is None or not listening:
            # Nobody listens: no wrapper in the call chain, no tracer of ours (nothing is
            # built for an event nobody would receive).
            return
        marker = self._marker = object()

        async def wrapper(exec: Any, next: Callable[[], Any]) -> Any:
            if exec.parent is None and _observed_step.get() is marker:
                emit(ToolStarted(turn, step, exec.call_id, exec.name, trio.current_time()))
            return await next()

        self._disposers = [add_wrapper(wrapper)]

    def tracer(self, inner: PoolTracer | None) -> PoolTracer | None:
        """The step's tracer: ``inner`` (if any), told every phase, and a ``ToolCommitted`` per
        committed result, emitted after the result was logged; without a listener, ``inner``
        itself."""
        if not self._listening:
            return inner
        return CommitEvents(self._turn, self._step, self._emit, inner)

    def __enter__(self) -> None:
        if self._disposers:
            self._token = _observed_step.set(self._marker)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _observed_step.reset(self._token)
        for dispose in self._disposers:
            dispose()


class CommitEvents:
    """A :class:`PoolTracer` that emits ``ToolCommitted`` when the pool tells ``committed`` (the
    ``tool/result`` is in the log then) and forwards every phase to the step's own tracer."""

    def __init__(
        self,
        turn: int,
        step: int,
        emit: Callable[[TurnEvent], object],
        inner: PoolTracer | None,
    ) -> None:
        self._turn, self._step, self._emit, self._inner = turn, step, emit, inner
        self._calls: Sequence[ToolExecutionInput] = ()

    def begin(self, calls: Sequence[ToolExecutionInput], cap: int, /) -> None:
        self._calls = calls  # a streamed step appends its later calls to this very list
        if self._inner is not None:
            self._inner.begin(calls, cap)

    def phase(self, name: str, index: int, detail: object, /) -> None:
        if self._inner is not None:
            self._inner.phase(name, index, detail)
        if name == "committed" and isinstance(detail, ToolExecutionResult):
            call = self._calls[index]
            self._emit(
                ToolCommitted(
                    self._turn, self._step, call.call_id, call.name, detail, trio.current_time()
                )
            )
