"""The rules of :class:`~.monitor.PoolMonitor`: every guarantee the pool gives, checked over
what the monitor saw of one step (its events, in order, and the step's log).

Each broken rule is one :class:`PoolViolation` naming its rule; the rules are listed in
:meth:`PoolMonitor.check <.monitor.PoolMonitor.check>`.
"""

from __future__ import annotations

import collections
from typing import Final

import attrs
import trio

from .._errors import TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH
from .._log import TOOL_CALL, TOOL_RESULT, Session, SessionEvent, ToolCallData, ToolResultData
from .._pool import DEFAULT_MAX_PARALLEL_TOOL_CALLS, StepOutcome, ToolCallBlock
from .._values import (
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
)
from .checklog import check_log

__all__ = [
    "CANCELLED",
    "BodyRecord",
    "Event",
    "PoolViolation",
    "StepCheck",
    "Watched",
    "error_code",
    "is_cancel",
    "valid_cap",
]


@attrs.define
class BodyRecord:
    """What :class:`PoolMonitor` saw of one call (times are ``trio.current_time()``).

    Attributes:
        call_id: The call id.
        name: The tool name.
        exclusive: Whether the call must run alone (the monitor's ``exclusive`` answer, or the
            pool's own classification).
        prepared: When ``prepare`` was entered.
        body_started: When ``dispatch`` (wrappers and body) was entered; ``None`` if never.
        body_ended: When ``dispatch`` returned or raised; ``None`` if never.
        overlapped: Call ids whose body ran while this call's body started.
        index: The call's position in the step (call ids may repeat; records are keyed by it).
        overlapping: The positions of the calls in ``overlapped``.
    """

    call_id: str
    name: str
    exclusive: bool
    prepared: float
    body_started: float | None = None
    body_ended: float | None = None
    overlapped: list[str] = attrs.field(factory=list)
    index: int = -1
    overlapping: list[int] = attrs.field(factory=list)


@attrs.frozen
class PoolViolation:
    """One broken pool guarantee, as :class:`PoolMonitor` reports it.

    Attributes:
        rule: Which guarantee (see :meth:`PoolMonitor.check`); ``log/<rule>`` for a rule of
            :func:`check_session`.
        message: What happened, naming the calls.
        call_id: The call it is about, when there is one.
    """

    rule: str
    message: str
    call_id: str | None = None

    def __str__(self) -> str:
        return f"[{self.rule}] {self.message}"


CANCELLED: Final = "cancelled"


@attrs.frozen
class Event:
    kind: str
    index: int
    detail: object
    time: float
    busy: bool  # the driver was inside prepare or finalize
    aborted: bool  # the step's abort event was set
    by_driver: bool = True  # recorded in the task that began the step


def valid_cap(cap: object) -> bool:
    # The pool's promise, written out independently of its own ``validate_cap``.
    return type(cap) is int and cap >= 1


@attrs.frozen
class Watched:
    """What a :class:`~.monitor.PoolMonitor` saw of one step, as the rules read it."""

    events: list[Event]
    began: int  # how many times the pool began a step
    cap: int | None  # the window the pool began with
    initial: int  # the calls the step had when it began
    records: dict[int, BodyRecord]
    max_in_flight: int
    wrapped_dispatch: bool  # the runtime had execute wrappers (they may wait before the body)
    own_scheduler: bool  # the monitor wraps the runtime's own ToolScheduler directly
    contexts_given: bool  # the step was given an accept_context the monitor watched


def is_cancel(error: BaseException) -> bool:
    return isinstance(error, trio.Cancelled | KeyboardInterrupt) or (
        isinstance(error, BaseExceptionGroup)
        and all(is_cancel(inner) for inner in error.exceptions)
    )


_READY: Final = "ready"

#: The phases (and monitor events) whose telling is tracked per call for the ``trace`` rule.
_TRACED: Final = frozenset(
    {
        "classified",
        "started",
        "prepared",
        "body-started",
        "dispatch>",
        "dispatch<",
        "settled",
        "committed",
        "aborted",
        "finalize>",
        "finalize<",
        "finish",
    }
)
#: ``(needed, after)``: a call that went through ``after`` must have been told ``needed``.
_PHASE_NEEDS: Final = (
    ("started", "prepare<"),
    ("prepared", "prepare<"),
    ("body-started", "dispatch>"),
    ("settled", "dispatch<"),
    ("committed", "finish"),
    ("committed", "finalize<"),
)


class StepCheck:
    """One run of the rules over a monitored step (see :meth:`PoolMonitor.check`)."""

    def __init__(
        self,
        monitor: Watched,
        session: Session,
        calls: list[ToolCallBlock],
        cap: object,
        first_seq: int,
        raised: bool,
        error: BaseException | None,
        outcome: StepOutcome | None,
    ) -> None:
        self.m = monitor
        self.session = session
        self.calls = calls
        self.ids = [getattr(call, "id", "?") for call in calls]
        # ``None`` is no cap given: the default window (as upstream has it).
        self.cap = DEFAULT_MAX_PARALLEL_TOOL_CALLS if cap is None else cap
        self.first_seq = first_seq
        self.raised = raised
        self.error = error
        self.outcome = outcome
        self.cut = error is not None and is_cancel(error)
        self.found: list[PoolViolation] = []
        self._said: set[tuple[str, str]] = set()

    def say(self, rule: str, message: str, index: int | None = None) -> None:
        if (rule, message) in self._said:
            return
        self._said.add((rule, message))
        call_id = self.ids[index] if index is not None and 0 <= index < len(self.ids) else None
        self.found.append(PoolViolation(rule, message, call_id))

    def name(self, index: int) -> str:
        if not 0 <= index < len(self.ids):
            return f"#{index}"
        call_id = self.ids[index]
        if self.ids.count(call_id) > 1:
            # Models reuse ids ("" or a fixed one): name the call by its position too.
            return f"{call_id!r} (call {index})"
        return call_id

    def run(self, complete: bool) -> list[PoolViolation]:
        m = self.m
        logged = len(self.session.events) > self.first_seq
        if not valid_cap(self.cap):
            if not isinstance(self.error, ValueError):
                what = "raised " + type(self.error).__name__ if self.error is not None else "ran"
                self.say("cap", f"invalid cap {self.cap!r} was not refused: the step {what}")
            if m.began or logged or any(e.kind in ("prepare>", "mode") for e in m.events):
                self.say("cap", f"invalid cap {self.cap!r} was refused only after the step began")
            return self.found
        if not m.began:
            if self.error is not None and not logged:
                # Refused up front (a bad option or call): only the cap's refusal is wrong.
                if isinstance(self.error, ValueError) and "max_parallel" in str(self.error):
                    self.say("cap", f"valid cap {self.cap!r} was refused: {self.error}")
                return self.found
            self.say(
                "trace",
                "the step ran without the monitor as its tracer (run it through "
                "monitor.execute_tool_calls, or pass tracer=monitor)",
            )
            return self.found
        if m.cap != self.cap:
            self.say("window", f"the pool ran with a window of {m.cap}, asked {self.cap}")
        self.walk()
        self.after(complete)
        self.log()
        return self.found

    # -- the events, in order --------------------------------------------------------------------

    def walk(self) -> None:
        m = self.m
        n = len(self.calls)
        cap = self.cap
        assert isinstance(cap, int)
        self.started: list[int] = []
        self.terminal: dict[int, tuple[str, object]] = {}
        self.ready: set[int] = set()
        self.produced: dict[int, object] = {}
        self.exclusive: dict[int, bool] = {}
        classified: dict[int, tuple[int, object]] = {}
        in_flight = 0
        group_open = False
        group_parallel = False
        group_at = -1
        last_commit = -1  # a commit may change the registry: a classification older is stale
        # The pool classifies the next call afresh after every settle too (upstream: on every
        # fill attempt): a classification older is stale if the call may run in parallel now.
        last_settle = -1
        self.failure: tuple[int, BaseException] | None = None
        self.source_failure: BaseException | None = None
        finalizing: dict[int, int] = {}
        preparing: int | None = None
        running: set[int] = set()
        self.cancelled: list[int] = []
        body_order: list[int] = []
        dispatch_order: list[int] = []
        seen_begin = False
        known = m.initial  # calls the step had; a streaming step admits more as they arrive
        idle: tuple[float, str, int] | None = None  # a wait that breaks window-idle if time passes
        arrivals = 0  # the calls the pool admitted from a streamed step's source
        # The source's failure and how many calls it gave before it: the pool takes the failure
        # once it admitted those (the pump hands both on in order); from then on it may wait
        # without committing (nothing commits after a failure).
        source_given: int | None = None
        self.phases: dict[int, set[str]] = {}  # the phases told per call
        finalized: list[int] = []  # calls whose post-execute (or finish) began, in that order
        approving: int | None = None  # the call whose approval request is open
        approved: list[int] = []
        self.accepted: list[int] = []  # the call of each context handed to accept_context
        dispatch_began_unaborted: set[int] = set()
        settled_told: set[int] = set()  # the calls whose ``settled`` phase was told
        prepared_at: dict[int, int] = {}  # the event at which each call's prepared was told
        finalize_input: dict[int, object] = {}

        def cursor() -> int | None:
            for index in self.started:
                if index not in self.terminal:
                    return index
            return None

        def ready_at_cursor() -> int | None:
            at = cursor()
            return at if at is not None and at in self.ready else None

        def fail(at: int, error: object) -> None:
            if self.failure is None and isinstance(error, BaseException) and not is_cancel(error):
                self.failure = (at, error)

        for at, event in enumerate(m.events):
            kind, index = event.kind, event.index
            if kind == "begin":
                if seen_begin:
                    self.say("trace", "the pool began the step twice")
                seen_begin = True
                continue
            if kind == "arrived":
                known = max(known, index + 1)
                arrivals += 1
                continue
            if idle is not None and kind == "prepare>":
                idle = None  # the next call is being started (perhaps in another task)
            if idle is not None and event.by_driver:
                # The driver yielded with work it could do; it was idle only if virtual time
                # passed before anything else happened (a yield to let a task start, as
                # ``nursery.start`` does, is not a wait).
                if event.time > idle[0]:
                    self.say("window-idle", idle[1], idle[2])
                idle = None
            if kind == "yield":
                if (
                    event.busy
                    or preparing is not None
                    or self.cut
                    or self.failure is not None
                    or (source_given is not None and arrivals >= source_given)
                    or event.aborted
                    or not (group_open and group_parallel)
                ):
                    continue
                # The driver yielded outside prepare and post-execute: it is waiting for a
                # body to settle, so it must have had nothing else to do.
                waiting = ready_at_cursor()
                if waiting is not None:
                    idle = (
                        event.time,
                        f"the pool waited with the result of {self.name(waiting)} ready to commit",
                        waiting,
                    )
                    continue
                nxt = len(self.started)
                if nxt < min(n, known) and in_flight < cap:
                    mode = classified.get(nxt)
                    blocked = (
                        mode is not None
                        and mode[1] == "exclusive"
                        and mode[0] > max(last_commit, group_at)
                        and not (mode[0] < last_settle and event.detail is False)
                    )
                    if not blocked:
                        idle = (
                            event.time,
                            f"the pool waited with {in_flight} of {cap} bodies running while "
                            f"{self.name(nxt)} could start",
                            nxt,
                        )
                continue
            if kind in _TRACED:
                told = self.phases.setdefault(index, set())
                if kind == "started" and "classified" not in told:
                    self.say(
                        "trace", f"{self.name(index)} started without a classified phase", index
                    )
                if kind == "dispatch>" and "body-started" not in told:
                    self.say(
                        "trace",
                        f"the body of {self.name(index)} began without a body-started phase",
                        index,
                    )
                told.add(kind)
            if kind in ("classified", "started"):
                waiting = ready_at_cursor()
                if waiting is not None and self.failure is None:
                    self.say(
                        "commit-first",
                        f"{self.name(index)} was {kind} while the result of "
                        f"{self.name(waiting)} was ready to commit",
                        index,
                    )
            if kind == "classified":
                classified[index] = (at, event.detail)
            elif kind == "group-open":
                group_open, group_parallel, group_at = True, bool(event.detail), at
            elif kind == "group-close":
                group_open = False
                unsettled = sorted(set(body_order) - settled_told)
                if unsettled and not self.cut:
                    self.say(
                        "trace",
                        f"the group was closed before {self.name(unsettled[0])} settled (a group "
                        "closes once every dispatch of it settled)",
                        unsettled[0],
                    )
            elif kind == "started":
                if index >= known:
                    self.say(
                        "trace",
                        f"call {index} of the stream started without an arrived phase",
                        index,
                    )
                self._started(at, event, index, classified)
            elif kind == "prepare>":
                if index not in self.started:
                    self.say("trace", f"{self.name(index)} was prepared without a started phase")
                if preparing is not None:
                    self.say(
                        "order",
                        f"{self.name(index)} was prepared while {self.name(preparing)} was "
                        "still being prepared",
                        index,
                    )
                preparing = index
            elif kind == "prepare<":
                preparing = None
                fail(at, event.detail)
                if not isinstance(event.detail, BaseException):
                    self.phases.setdefault(index, set()).add("prepare<")
            elif kind == "prepared":
                prepared_at[index] = at
                if event.detail == "dispatch":
                    in_flight += 1
                    dispatch_order.append(index)
                    if event.aborted and m.own_scheduler and self.failure is None:
                        self.say(
                            "abort",
                            f"{self.name(index)} was prepared for dispatch though the abort was "
                            "set during its policy phase",
                            index,
                        )
                else:
                    self.ready.add(index)
            elif kind == "body-started":
                body_order.append(index)
            elif kind == "dispatch>":
                if self.failure is not None and self.failure[0] < prepared_at.get(index, -1):
                    self.say(
                        "failure",
                        f"{self.name(index)} was dispatched after the scheduler failure "
                        f"{self.failure[1]!r} (a call prepared then is abandoned)",
                        index,
                    )
                running.add(index)
                if not event.aborted:
                    dispatch_began_unaborted.add(index)
            elif kind == "dispatch<":
                running.discard(index)
                if event.detail == CANCELLED:
                    self.cancelled.append(index)
                fail(at, event.detail)
                result = getattr(event.detail, "result", None)
                if (
                    index in dispatch_began_unaborted
                    and m.own_scheduler
                    and not m.wrapped_dispatch
                    and isinstance(result, ToolExecutionResult)
                    and error_code(result) == TOOL_ABORTED_BEFORE_DISPATCH
                ):
                    self.say(
                        "abort",
                        f"the body of {self.name(index)} began before the abort but was answered "
                        "ABORTED_BEFORE_DISPATCH (a started body is answered ABORTED)",
                        index,
                    )
            elif kind == "settled":
                settled_told.add(index)
                last_settle = at
                in_flight -= 1
                if event.detail is None:
                    self.ready.add(index)
                else:
                    fail(at, event.detail)
            elif kind == "finalize>" or (kind == "finish" and index not in finalizing):
                if kind == "finalize>":
                    finalizing[index] = at
                    finalize_input[index] = event.detail
                open_post = [i for i in finalized if i in finalizing and i not in self.produced]
                if open_post:
                    self.say(
                        "post-execute",
                        f"the post-execute phase of {self.name(index)} began while that of "
                        f"{self.name(open_post[0])} was still running",
                        index,
                    )
                if index in finalized:
                    self.say("post-execute", f"{self.name(index)} was finalized twice", index)
                elif finalized and index < finalized[-1]:
                    self.say(
                        "post-execute",
                        f"the post-execute phase of {self.name(index)} began after that of "
                        f"{self.name(finalized[-1])} (not in model order)",
                        index,
                    )
                finalized.append(index)
                if kind == "finish":
                    if isinstance(event.detail, BaseException):
                        fail(at, event.detail)
                    else:
                        self.produced[index] = event.detail
            elif kind in ("finalize<", "finish"):
                if isinstance(event.detail, BaseException):
                    fail(at, event.detail)
                else:
                    self.produced[index] = event.detail
                    given = finalize_input.get(index)
                    if (
                        kind == "finalize<"
                        and m.own_scheduler
                        and isinstance(given, ToolExecutionResult)
                        and isinstance(event.detail, ToolExecutionResult)
                        and given.is_error
                        and error_code(given) not in (TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH)
                        and error_code(event.detail) == TOOL_ABORTED
                    ):
                        self.say(
                            "abort",
                            f"the failure of {self.name(index)} was turned into ABORTED (only a "
                            "success that lost the race with the abort is)",
                            index,
                        )
            elif kind in ("mode", "accept"):
                fail(at, event.detail)
            elif kind == "source" and isinstance(event.detail, BaseException):
                # The stream's own exception: the driver takes it after what the pump handed
                # on before it (``index`` calls), so it bounds nothing in the walk but the
                # driver's waits once those arrived; it is the step's failure when no
                # scheduler phase failed first.
                self.source_failure = event.detail
                source_given = index
            elif kind == "approval>":
                if index < 0 or index != preparing:
                    self.say(
                        "approval",
                        f"an approval was requested for {event.detail!r} outside its call's "
                        "policy phase (approvals run inside prepare, one call at a time)",
                    )
                elif approving is not None:
                    self.say(
                        "approval",
                        f"the approval of {self.name(index)} was requested while that of "
                        f"{self.name(approving)} was still open",
                        index,
                    )
                elif approved and index < approved[-1]:
                    self.say(
                        "approval",
                        f"the approval of {self.name(index)} was requested after that of "
                        f"{self.name(approved[-1])} (not in model order)",
                        index,
                    )
                approving = index
                approved.append(index)
            elif kind == "approval<":
                approving = None
            elif kind == "context":
                self._context(event, index)
            elif kind == "committed":
                last_commit = at
                self._committed(at, event, index, finalizing)
            elif kind == "aborted":
                self._aborted(at, event, index)
            elif (
                kind == "done"
                and self.outcome is not None
                and self.outcome.aborted != event.aborted
            ):
                self.say(
                    "abort",
                    f"outcome.aborted is {self.outcome.aborted} but the abort was "
                    f"{'set' if event.aborted else 'not set'} when the step ended",
                )
        self.running_at_end = running
        if body_order != dispatch_order[: len(body_order)]:
            for position, index in enumerate(body_order):
                if position >= len(dispatch_order):
                    self.say(
                        "trace",
                        f"the body of {self.name(index)} began but the pool never told the "
                        "tracer it was prepared for dispatch",
                        index,
                    )
                    break
                if dispatch_order[position] != index:
                    self.say(
                        "order",
                        f"the dispatch of {self.name(index)} was entered before that of "
                        f"{self.name(dispatch_order[position])}, which started first",
                        index,
                    )
                    break
        if self.failure is None and self.source_failure is not None:
            self.failure = (len(m.events), self.source_failure)

    def _started(
        self, at: int, event: Event, index: int, classified: dict[int, tuple[int, object]]
    ) -> None:
        expected = len(self.started)
        if index in self.started:
            self.say("order", f"{self.name(index)} was started twice", index)
            return
        if index != expected:
            self.say(
                "order",
                f"{self.name(index)} started before {self.name(expected)} (not in model order)",
                index,
            )
        if event.aborted:
            self.say("abort", f"{self.name(index)} started after the abort was set", index)
        if self.failure is not None:
            self.say(
                "failure",
                f"{self.name(index)} started after the scheduler failure {self.failure[1]!r}",
                index,
            )
        mode = classified.get(index)
        alone = event.detail is True or (mode is not None and mode[1] == "exclusive")
        self.exclusive[index] = alone
        for earlier in self.started:
            if earlier in self.terminal:
                continue
            if alone:
                self.say(
                    "barrier",
                    f"{self.name(index)} must run alone but started before the result of "
                    f"{self.name(earlier)} was committed",
                    index,
                )
                break
            if self.exclusive.get(earlier):
                self.say(
                    "barrier",
                    f"{self.name(index)} started before the result of {self.name(earlier)}, "
                    "which must run alone, was committed",
                    index,
                )
                break
        self.started.append(index)

    def _committed(self, at: int, event: Event, index: int, finalizing: dict[int, int]) -> None:
        if index in self.terminal:
            self.say("answered-once", f"{self.name(index)} was answered twice", index)
        if self.failure is not None:
            began = finalizing.get(index)
            if began is None or began > self.failure[0]:
                self.say(
                    "failure",
                    f"{self.name(index)} was committed after the scheduler failure "
                    f"{self.failure[1]!r}",
                    index,
                )
        if index not in self.produced:
            self.say("result", f"{self.name(index)} was committed without being finished", index)
        elif event.detail is not self.produced[index]:
            self.say(
                "result",
                f"the result committed for {self.name(index)} is not the one the scheduler "
                "produced",
                index,
            )
        self.terminal[index] = ("committed", event.detail)

    def _aborted(self, at: int, event: Event, index: int) -> None:
        code = event.detail
        if index in self.terminal:
            self.say("answered-once", f"{self.name(index)} was answered twice", index)
        if self.failure is not None:
            self.say(
                "failure",
                f"{self.name(index)} got a synthetic result after the scheduler failure "
                f"{self.failure[1]!r}",
                index,
            )
        started = index in self.started
        if code == TOOL_ABORTED_BEFORE_DISPATCH and started:
            self.say(
                "abort",
                f"{self.name(index)} had started but was answered ABORTED_BEFORE_DISPATCH",
                index,
            )
        if code == TOOL_ABORTED and not started:
            self.say("abort", f"{self.name(index)} never started but was answered ABORTED", index)
        if not started and not event.aborted and not self.cut:
            self.say(
                "abort",
                f"{self.name(index)} was skipped (a synthetic pair) without an abort",
                index,
            )
        self.terminal[index] = ("aborted", code)

    def _context(self, event: Event, index: int) -> None:
        # ``index``: the committed call whose result holds this context (-1: none does).
        if index < 0:
            self.say(
                "contexts",
                "accept_context was handed a context no committed result holds (yet)",
            )
            return
        if self.accepted and index < self.accepted[-1]:
            self.say(
                "contexts",
                f"a context of {self.name(index)} reached accept_context after one of "
                f"{self.name(self.accepted[-1])} (not in model order)",
                index,
            )
        self.accepted.append(index)

    def told(self) -> None:
        # ``trace``: every phase of every call was told to the tracer (after a failure, the
        # settle of every dispatch that returned or raised still is), and ``abort`` before a
        # ``done`` that says the step was aborted when a call was answered for the abort (an
        # abort set after the last commit changes no answer: a pool need not have noticed it).
        if self.cut:
            return
        kinds = {event.kind for event in self.m.events}
        if (
            "abort" not in kinds
            and self.calls
            and any(event.kind == "done" and event.detail is True for event in self.m.events)
            and any(
                event.kind == "aborted"
                or (
                    event.kind == "committed"
                    and isinstance(event.detail, ToolExecutionResult)
                    and _aborted_code(event.detail)
                )
                for event in self.m.events
            )
        ):
            self.say("trace", "the step ended aborted but the pool never told the abort phase")
        for index, phases in sorted(self.phases.items()):
            for needed, after in _PHASE_NEEDS:
                if self.failure is not None and needed != "settled":
                    continue
                if after in phases and needed not in phases:
                    self.say(
                        "trace",
                        f"the pool never told the tracer the {needed} phase of {self.name(index)}",
                        index,
                    )

    # -- after the step --------------------------------------------------------------------------

    def after(self, complete: bool) -> None:
        m = self.m
        self.told()
        if m.contexts_given and self.failure is None and not self.raised:
            delivered = collections.Counter(self.accepted)
            for index, (how, detail) in sorted(self.terminal.items()):
                if how != "committed" or not isinstance(detail, ToolExecutionResult):
                    continue
                count = len(detail.additional_contexts)
                if delivered[index] != count:
                    self.say(
                        "contexts",
                        f"{self.name(index)} committed {count} contexts but accept_context got "
                        f"{delivered[index]}",
                        index,
                    )
        cap = self.cap
        assert isinstance(cap, int)
        if m.max_in_flight > cap:
            self.say("window", f"{m.max_in_flight} bodies in flight at once, cap {cap}")
        for record in m.records.values():
            for other_index in record.overlapping:
                other = m.records[other_index]
                if record.exclusive or other.exclusive:
                    alone, partner = (record, other) if record.exclusive else (other, record)
                    self.say(
                        "exclusive",
                        f"the body of {self.name(alone.index)}, which must run alone, overlaps "
                        f"the body of {self.name(partner.index)} ({self.name(record.index)} "
                        f"started at {record.body_started:g} while {self.name(other.index)} "
                        "was running)",
                        alone.index,
                    )
        failure = self.failure
        error = self.error
        if failure is not None:
            if not self.raised:
                self.say(
                    "failure",
                    f"the scheduler failure {failure[1]!r} was swallowed: the step returned",
                )
            elif (
                error is not None
                and error is not failure[1]
                and error is not self.source_failure
                and not self.cut
            ):
                self.say(
                    "failure",
                    f"the step raised {error!r}, not the first scheduler failure {failure[1]!r}",
                )
            if self.raised and not self.cut:
                for index in sorted(self.running_at_end):
                    self.say(
                        "failure",
                        f"the failure was raised while the body of {self.name(index)} still ran",
                        index,
                    )
                for index in self.cancelled:
                    self.say(
                        "failure",
                        f"the body of {self.name(index)} was cancelled instead of settling "
                        "before the failure was raised",
                        index,
                    )
        elif (
            complete
            and error is not None
            and isinstance(error, Exception)
            and not isinstance(error, ValueError | TypeError)
        ):
            self.say(
                "failure",
                f"the step raised {error!r} though no scheduler phase, classifier or "
                "accept_context failed",
            )
        n = len(self.calls)
        if failure is None and (not self.raised or self.cut):
            for index in range(n):
                if index not in self.terminal:
                    self.say("answered-once", f"{self.name(index)} was never answered", index)
        if failure is not None and failure[1] is not self.source_failure:
            # (a stream that raised after an abort leaves the calls it handed on answered)
            for index in range(n):
                if index not in self.started and index in self.terminal:
                    self.say(
                        "failure",
                        f"{self.name(index)} never started but was answered though the step failed",
                        index,
                    )
        if self.cut:
            for index, (how, detail) in self.terminal.items():
                if how != "aborted":
                    continue
                expected = TOOL_ABORTED if index in self.started else TOOL_ABORTED_BEFORE_DISPATCH
                if detail != expected:
                    self.say(
                        "abort",
                        f"{self.name(index)} was cut short by a cancellation but answered "
                        f"{detail}, not {expected}",
                        index,
                    )
        outcome = self.outcome
        if outcome is not None:
            results = outcome.results
            if len(results) != n:
                self.say(
                    "answered-once", f"outcome.results holds {len(results)} results for {n} calls"
                )
            for index, entry in enumerate(results[:n]):
                call = self.calls[index]
                if entry.call_id != call.id or entry.name != call.name:
                    self.say(
                        "result",
                        f"outcome.results[{index}] is for {entry.call_id}, not {call.id}",
                        index,
                    )
                how, detail = self.terminal.get(index, ("", None))
                if how == "committed" and entry.result is not detail:
                    self.say(
                        "result",
                        f"outcome.results[{index}] is not the result committed for {call.id}",
                        index,
                    )
                if how == "aborted" and error_code(entry.result) != detail:
                    self.say(
                        "result",
                        f"outcome.results[{index}] is not the {detail} result of {call.id}",
                        index,
                    )

    def log(self) -> None:
        events = self.session.events[self.first_seq :]
        # By call id, in log order (a model may reuse an id: the k-th call with an id is
        # answered by the k-th result with it).
        call_at: dict[str, list[int]] = {}
        answers: dict[str, list[tuple[int, SessionEvent]]] = {}
        for position, event in enumerate(events):
            data = event.data
            if event.type == TOOL_CALL and isinstance(data, ToolCallData):
                call_at.setdefault(data.call_id, []).append(position)
            elif event.type == TOOL_RESULT and isinstance(data, ToolResultData):
                answers.setdefault(data.message.source.call_id, []).append((position, event))
        seen: dict[str, int] = {}
        for index, call in enumerate(self.calls):
            occurrence = seen[call.id] = seen.get(call.id, -1) + 1
            how, detail = self.terminal.get(index, ("", None))
            if not how:
                continue
            logged = answers.get(call.id, [])
            if len(logged) <= occurrence:
                self.say("result", f"the result of {call.id} is not in the log", index)
                continue
            position, event = logged[occurrence]
            data = event.data
            if how == "committed":
                expected = detail
            else:
                expected = (
                    aborted_result() if detail == TOOL_ABORTED else aborted_before_dispatch_result()
                )
            if isinstance(expected, ToolExecutionResult) and data != ToolResultData.from_result(
                data.turn, data.step, call.id, expected
            ):
                self.say(
                    "result",
                    f"the log's result for {call.id} is not the result the pool committed",
                    index,
                )
            if how == "aborted" and index not in self.started:
                calls_at = call_at.get(call.id, [])
                if position - 1 not in calls_at:
                    self.say(
                        "abort",
                        f"{call.id} never started but its result is not the synthetic pair "
                        "(its tool/call directly followed by its result)",
                        index,
                    )
        wire = [event.to_json() for event in self.session.events]
        for violation in check_log(
            wire, allow_unpaired=self.raised and (not self.cut or self.failure is not None)
        ):
            if violation.seq >= self.first_seq:
                self.say(f"log/{violation.rule}", f"seq {violation.seq}: {violation.message}")


def _aborted_code(result: ToolExecutionResult) -> bool:
    """Whether ``result`` answers its call for the abort (``ABORTED`` or before dispatch)."""
    code = error_code(result)
    return code is not None and code in (TOOL_ABORTED, TOOL_ABORTED_BEFORE_DISPATCH)


def error_code(result: ToolExecutionResult) -> str | None:
    error = result.error
    return None if error is None or error.info is None else error.info.code
