"""The scheduling decisions of the parallel tool-call pool, as a pure state machine.

:class:`StepCore` knows nothing about Trio, tools or session logs. It tracks the calls of one
step by index (model order) and answers one question, :meth:`StepCore.next_action`: *what should
the driver do now?* The driver (:mod:`.driver`) performs the action, reports what happened
(``classified``, ``prepared``, ``settled``, ``dispatch_failed``, ``committed_call``, ``fail``,
``abort``) and asks again. Every rule of upstream's ``executeToolCalls``/``runGroup`` lives here:

* **Groups.** The first call of a group is classified; an exclusive call forms a one-call group
  (a barrier), a parallel call opens a group over the rest of the step.
* **Rolling window.** At most ``cap`` dispatches are in flight. Every later call of a parallel
  group is reclassified right before it would start; a call that is no longer parallel stops the
  filling until something settles (it is reclassified again then), and ends the group once the
  pool drains, becoming the first call of the next group.
* **Commit before start.** A settled call at the commit cursor is always committed before
  anything is classified or started, so a registry change made while committing is seen by the
  next classification.
* **Abort.** Nothing starts after an abort; started calls drain and commit in order; the calls
  that never started are handed back as one :data:`Op.SKIP` range (synthetic pairs).
* **Scheduler failure.** The first failure is kept, nothing more starts or commits, every
  in-flight dispatch is awaited, then :data:`Op.RAISE`.
* **Streaming.** A core built with ``stream=True`` starts with the calls known so far and learns
  each later one from :meth:`StepCore.arrived` (the end from :meth:`StepCore.end_stream`). Every
  decision that depends on a call not yet known waits for it: :data:`Op.RECEIVE` is returned
  exactly where a core given the whole list would classify that call, end a parallel group or
  finish the step. Nothing else changes, so a streaming core fed each call no later than a
  list core needs it makes the list core's decisions, action for action.

Per call the states go ``PENDING → PREPARING → IN_FLIGHT → SETTLED → COMMITTING → COMMITTED``
(``PREPARING → SETTLED`` when prepare already produced a result). Invariants, checked by the
tests: ``committed <= started <= count``; ``in_flight <= cap``; calls in ``[committed, started)``
are the only started-but-uncommitted ones; outside a group nothing is in flight.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["CallState", "Op", "StepCore", "validate_cap"]


class Op(enum.Enum):
    """What the driver must do next (see :meth:`StepCore.next_action`)."""

    #: Classify call ``index`` (``execution_mode``) and report :meth:`StepCore.classified`.
    CLASSIFY = "classify"
    #: A group starts at ``index``: open its nursery and keep asking.
    OPEN_GROUP = "open-group"
    #: Record call ``index`` as started, prepare it, report :meth:`StepCore.prepared`.
    START = "start"
    #: Finalize/finish call ``index``, record its result, report :meth:`StepCore.committed_call`.
    COMMIT = "commit"
    #: Wait for one in-flight dispatch to settle and report it.
    WAIT = "wait"
    #: The group drained: close its nursery.
    CLOSE_GROUP = "close-group"
    #: Aborted: record a synthetic pair for every call in ``[index, count)``, report ``skipped``.
    SKIP = "skip"
    #: Raise :attr:`StepCore.failure` (nothing is in flight any more).
    RAISE = "raise"
    #: Streaming only: the next decision needs call ``index`` (``== count``) or the end of the
    #: stream. Wait for either and report it (:meth:`StepCore.arrived`,
    #: :meth:`StepCore.end_stream`); dispatches may settle meanwhile (report those too).
    RECEIVE = "receive"
    #: The step is complete; :attr:`StepCore.aborted` tells how.
    DONE = "done"


class CallState(enum.IntEnum):
    """Where one call is in its life."""

    PENDING = 0
    PREPARING = 1
    IN_FLIGHT = 2
    SETTLED = 3
    COMMITTING = 4
    COMMITTED = 5
    SKIPPED = 6
    #: Prepared for dispatch after a scheduler failure was recorded: never dispatched.
    ABANDONED = 7
    #: Its dispatch raised (a scheduler failure).
    FAILED = 8


_CAP_MESSAGE: Final = "max_parallel_tool_calls must be a positive integer"
_UNCOMMITTED_MESSAGE: Final = "tool-call scheduler: uncommitted settled calls"


def validate_cap(cap: object, message: str = _CAP_MESSAGE) -> int:
    """Return ``cap`` if it is a positive ``int`` (``bool`` excluded), else raise ``ValueError``."""
    if isinstance(cap, int) and not isinstance(cap, bool) and cap >= 1:
        return cap
    raise ValueError(message)


class StepCore:
    """The scheduling state of one step of ``count`` calls (see the module docstring).

    Args:
        count: Number of calls in the step, in model order.
        cap: The rolling-window size (a positive int; see :func:`validate_cap`).
        aborted: Whether the step's abort was already set (then nothing ever starts).
        stream: More calls may still come: ``count`` is the number known so far, each later one
            is reported with :meth:`arrived`, the end with :meth:`end_stream`.
    """

    __slots__ = (
        "_aborted",
        "_blocked",
        "_cap",
        "_count",
        "_cursor",
        "_failure",
        "_first_mode",
        "_group_end",
        "_group_start",
        "_has_failure",
        "_in_flight",
        "_in_group",
        "_next",
        "_next_mode",
        "_open",
        "_parallel",
        "_state",
    )

    def __init__(
        self, count: int, cap: int, *, aborted: bool = False, stream: bool = False
    ) -> None:
        self._count = count
        self._cap = validate_cap(cap)
        self._state = [CallState.PENDING] * count
        self._next = 0  # first call not started
        self._cursor = 0  # first call not committed; invariant: cursor <= next
        self._in_flight = 0
        self._in_group = False
        self._group_start = 0
        self._group_end = 0
        self._parallel = False
        self._first_mode: bool | None = None  # classification of the next group's first call
        self._next_mode: bool | None = None  # reclassification of ``_next`` inside a group
        self._blocked = False  # ``_next`` is no longer parallel: stop filling until a settle
        self._aborted = aborted
        self._has_failure = False
        self._failure: object = None
        self._open = stream  # more calls may still arrive

    # -- queries --------------------------------------------------------------------------------

    @property
    def count(self) -> int:
        """Number of calls in the step (in a streaming step: known so far)."""
        return self._count

    @property
    def stream_open(self) -> bool:
        """Whether more calls may still arrive (a streaming step before :meth:`end_stream`)."""
        return self._open

    @property
    def cap(self) -> int:
        """The rolling-window size."""
        return self._cap

    @property
    def started(self) -> int:
        """Calls started so far (they are ``[0, started)``)."""
        return self._next

    @property
    def committed(self) -> int:
        """Calls committed so far (they are ``[0, committed)``)."""
        return self._cursor

    @property
    def in_flight(self) -> int:
        """Dispatches started and not yet reported settled."""
        return self._in_flight

    @property
    def aborted(self) -> bool:
        """Whether an abort was reported (or given at construction)."""
        return self._aborted

    @property
    def has_failure(self) -> bool:
        """Whether a scheduler failure was recorded."""
        return self._has_failure

    @property
    def failure(self) -> object:
        """The first scheduler failure recorded (``None`` if none)."""
        return self._failure

    @property
    def in_group(self) -> bool:
        """Whether a group is open."""
        return self._in_group

    @property
    def group_parallel(self) -> bool:
        """Whether the open (or last) group is a parallel one."""
        return self._parallel

    def state(self, index: int) -> CallState:
        """The state of call ``index``."""
        return self._state[index]

    # -- the decision ---------------------------------------------------------------------------

    def next_action(self) -> tuple[Op, int]:
        """What the driver must do now, and for which call index.

        ``START`` and ``COMMIT`` are taken at once (the call moves to ``PREPARING`` /
        ``COMMITTING``); the driver must then report the outcome before asking again.
        """
        if not self._in_group:
            return self._between_groups()
        if self._has_failure:
            # Drain: no commit, no start, until every in-flight dispatch settled.
            if self._in_flight:
                return (Op.WAIT, -1)
            self._in_group = False
            return Op.CLOSE_GROUP, self._group_start
        cursor = self._cursor
        state = self._state
        if cursor < self._next and state[cursor] == CallState.SETTLED:
            state[cursor] = CallState.COMMITTING
            return Op.COMMIT, cursor
        nxt = self._next
        if (
            not self._aborted
            and not self._blocked
            and nxt < self._group_end
            and self._in_flight < self._cap
        ):
            mode = self._next_mode
            if nxt == self._group_start or mode is True:
                self._next_mode = None
                self._next = nxt + 1
                state[nxt] = CallState.PREPARING
                return Op.START, nxt
            if mode is None:
                return Op.CLASSIFY, nxt
            # No longer parallel: a barrier. Filling stops until a dispatch settles; the call
            # is classified afresh then (upstream reclassifies on every fill attempt).
            self._next_mode = None
            self._blocked = True
        elif (
            self._open
            and self._parallel
            and nxt == self._count
            and not self._aborted
            and not self._blocked
            and self._in_flight < self._cap
        ):
            # The window has room and the group goes on with the next call: wait for it (or
            # for the end of the stream, which ends the group once it drains).
            return Op.RECEIVE, nxt
        if self._in_flight:
            return (Op.WAIT, -1)
        # Quiescent: every started call must be committed by now.
        if cursor != nxt:
            raise RuntimeError(_UNCOMMITTED_MESSAGE)
        self._in_group = False
        return Op.CLOSE_GROUP, self._group_start

    def _between_groups(self) -> tuple[Op, int]:
        if self._has_failure:
            return (Op.RAISE, -1)
        nxt = self._next
        if nxt == self._count:
            # Streaming: even an aborted step still answers every call that arrives.
            return (Op.RECEIVE if self._open else Op.DONE), nxt
        if self._aborted:
            return Op.SKIP, nxt
        first = self._first_mode
        if first is None:
            return Op.CLASSIFY, nxt
        self._first_mode = None
        self._in_group = True
        self._parallel = first
        self._group_start = nxt
        self._group_end = self._count if first else nxt + 1
        self._blocked = False
        self._next_mode = None
        return Op.OPEN_GROUP, nxt

    # -- reports --------------------------------------------------------------------------------

    def arrived(self) -> int:
        """Report that one more call arrived (a streaming step); returns its index."""
        if not self._open:
            raise RuntimeError("arrived() after the end of the stream (or in a list step)")
        index = self._count
        self._count = index + 1
        self._state.append(CallState.PENDING)
        if self._in_group and self._parallel:
            self._group_end = index + 1  # a parallel group runs over the rest of the step
        return index

    def end_stream(self) -> None:
        """Report that no more calls will arrive (a streaming step)."""
        self._open = False

    def classified(self, index: int, parallel: bool) -> None:
        """Report the execution mode of the call a ``CLASSIFY`` action named."""
        if index != self._next:
            raise ValueError(f"classified call {index}, expected {self._next}")
        if self._in_group:
            self._next_mode = parallel
        else:
            self._first_mode = parallel

    def prepared(self, index: int, *, dispatch: bool) -> bool:
        """Report that call ``index`` was prepared; return whether to dispatch it now.

        ``dispatch`` is false when prepare already produced a result (the call is settled). A
        call prepared for dispatch after a scheduler failure was recorded is abandoned.
        """
        self._expect(index, CallState.PREPARING)
        state = self._state
        if not dispatch:
            state[index] = CallState.SETTLED
            return False
        if self._has_failure:
            state[index] = CallState.ABANDONED
            return False
        state[index] = CallState.IN_FLIGHT
        self._in_flight += 1
        return True

    def settled(self, index: int) -> None:
        """Report that the dispatch of call ``index`` produced a result."""
        self._expect(index, CallState.IN_FLIGHT)
        self._state[index] = CallState.SETTLED
        self._in_flight -= 1
        self._blocked = False

    def dispatch_failed(self, index: int, error: object) -> None:
        """Report that the dispatch of call ``index`` raised ``error`` (a scheduler failure)."""
        self._expect(index, CallState.IN_FLIGHT)
        self._state[index] = CallState.FAILED
        self._in_flight -= 1
        self._blocked = False
        self.fail(error)

    def committed_call(self, index: int) -> None:
        """Report that the result of call ``index`` was committed."""
        self._expect(index, CallState.COMMITTING)
        self._state[index] = CallState.COMMITTED
        self._cursor = index + 1

    def fail(self, error: object) -> None:
        """Record a scheduler failure; only the first one is kept."""
        if not self._has_failure:
            self._has_failure = True
            self._failure = error

    def abort(self) -> None:
        """Report that the step's abort was set: nothing starts any more."""
        self._aborted = True

    def skipped(self) -> None:
        """Report that the synthetic pairs of a ``SKIP`` action were recorded."""
        if self._in_group or not self._aborted:
            raise RuntimeError("skipped() outside an aborted step")
        state = self._state
        for index in range(self._next, self._count):
            state[index] = CallState.SKIPPED
        self._next = self._cursor = self._count

    def seal(self) -> tuple[range, range]:
        """Close the step while unwinding (cancellation from outside).

        Returns ``(started_uncommitted, never_started)``; the driver records a cut-short result
        for the first range and a synthetic pair for the second. The core is then finished.
        """
        started = range(self._cursor, self._next)
        unstarted = range(self._next, self._count)
        state = self._state
        for index in started:
            state[index] = CallState.COMMITTED
        for index in unstarted:
            state[index] = CallState.SKIPPED
        self._next = self._cursor = self._count
        self._in_flight = 0
        self._in_group = False
        return started, unstarted

    def _expect(self, index: int, state: CallState) -> None:
        if self._state[index] is not state:
            raise RuntimeError(f"call {index} is {self._state[index].name}, expected {state.name}")
