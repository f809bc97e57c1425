"""What the pool's driver needs of its partners: a runtime, an optional tracer, a recorder.

Protocols only (structural types); the driver (:mod:`.driver`) runs against them, and
``execute_tool_calls`` (:mod:`.steps`) hands it the ready ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .._runtime import Scheduler, ToolExecutionInput
from .._values import ExecutionMode, ToolExecutionResult

__all__ = ["PoolRuntime", "PoolTracer", "Recorder"]


class PoolRuntime(Protocol):
    """What the pool needs of a runtime (``ToolRuntime`` is one); ``scheduler`` is read once per step."""

    @property
    def scheduler(self) -> Scheduler: ...

    def execution_mode(self, input: ToolExecutionInput, /) -> ExecutionMode: ...


class PoolTracer(Protocol):
    """Receives the pool's per-call phase instants (see ``StepTrace`` for a ready one).

    ``begin`` is called once when the step starts; ``phase(name, index, detail)`` at each
    instant, synchronously, from the driver or a dispatch task (read ``trio.current_time()``
    for the time). ``index`` is the call's position in the step (``-1`` for step phases).
    Names and details: ``arrived`` (a streamed step only: the call became known, after those
    ``begin`` listed; the detail is ``(call_id, name)``), ``classified`` (the mode kind,
    ``"parallel"``/``"exclusive"``; a call may be classified more than once), ``group-open``
    (whether the group is parallel), ``started`` (its ``tool/call`` was recorded; prepare, with
    the hooks and approval, begins), ``prepared`` (the preparation kind), ``body-started`` (its
    dispatch began: execute wrappers, then the body),
    ``settled`` (the dispatch returned; ``None``, or the scheduler failure it raised),
    ``committed`` (the ``ToolExecutionResult``), ``aborted`` (a synthetic result was
    recorded; the error code), ``group-close``, ``abort`` (the driver saw the step's abort
    event set; index ``-1``), ``done`` (whether the step was aborted).
    Exceptions must not escape.
    """

    def begin(self, calls: Sequence[ToolExecutionInput], cap: int, /) -> None: ...

    def phase(self, name: str, index: int, detail: object, /) -> None: ...


class Recorder(Protocol):
    """Where the driver reports what happened to each call (the session log, or a list).

    ``started``, ``committed``, ``skipped`` and ``cut_short`` only record (no application code);
    the driver runs them protected from ``KeyboardInterrupt`` together with its own bookkeeping.
    ``delivered`` runs afterwards and may call back into the application.
    """

    def started(self, index: int) -> None: ...
    def committed(self, index: int, result: ToolExecutionResult) -> None: ...
    def delivered(self, index: int, result: ToolExecutionResult) -> None: ...
    def skipped(self, index: int) -> None: ...
    def cut_short(self, index: int) -> None: ...
