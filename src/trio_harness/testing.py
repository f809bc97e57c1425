"""Property-based testing of ports and of Trio apps built on trio_harness (needs hypothesis).

Install with ``pip install 'trio_harness[testing]'``; the rest of the library never imports
hypothesis. What is here:

* hypothesis strategies: :func:`subset_schemas`, :func:`valid_values` / :func:`invalid_values`
  (drawn from a schema), :func:`parameter_maps`, :func:`argument_texts` (raw argument text of a
  tool, labelled by kind), :func:`scheduling_scenarios` (``spec/FORMAT.md`` scenarios), and
  :func:`json_values`;
* :func:`check_session`: every invariant violation of a session log (what ``check-log`` prints);
* :class:`PoolMonitor`: wraps a real :class:`~trio_harness.ToolRuntime`'s scheduler, records
  when every call's body ran, and reports what broke the pool's guarantees in a step.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

try:
    import hypothesis  # noqa: F401  (the extra this namespace needs, checked first)
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "trio_harness.testing needs hypothesis: pip install 'trio_harness[testing]'"
    ) from error

import attrs
import trio

from ._conformance import (
    ARGUMENT_KINDS,
    ArgumentText,
    ScenarioError,
    answer_scenario,
    argument_texts,
    check_log,
    invalid_values,
    json_values,
    parameter_maps,
    scheduling_scenarios,
    subset_schemas,
    valid_values,
)
from ._conformance import LogViolation as _LogViolation
from ._log import Session, SessionEvent
from ._pool import DEFAULT_MAX_PARALLEL_TOOL_CALLS, StepOutcome, ToolCallBlock, execute_tool_calls
from ._public import publish
from ._runtime import (
    DispatchOutcome,
    Preparation,
    Scheduler,
    ToolExecution,
    ToolExecutionInput,
    ToolRuntime,
)
from ._values import ToolExecutionResult

__all__ = [
    "ARGUMENT_KINDS",
    "ArgumentText",
    "BodyRecord",
    "PoolMonitor",
    "argument_texts",
    "check_session",
    "invalid_values",
    "json_values",
    "parameter_maps",
    "scheduling_scenarios",
    "subset_schemas",
    "valid_values",
]


def _expected_answer(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The reference answer to a scheduling scenario, exactly as the oracle answers it.

    Args:
        scenario: The ``scenario`` object of ``spec/FORMAT.md`` (decoded JSON).

    Returns:
        The ``expected`` object: ``events``, ``calls``, ``contexts``, ``outcome`` (and ``ties``
        when two scripted timers expired at one instant).

    Raises:
        ScenarioError: The scenario does not follow the format.
    """
    answered = answer_scenario({"op": "schedule", "scenario": dict(scenario)})
    if "expected" not in answered:
        raise ScenarioError(str(answered.get("error")))
    expected: dict[str, Any] = answered["expected"]
    return expected


def check_session(
    session_or_events: Session | Iterable[SessionEvent | Mapping[str, Any]],
    *,
    allow_unpaired: bool = False,
) -> list[_LogViolation]:
    """Every invariant violation of a session log (the rules of ``check-log``).

    Args:
        session_or_events: A :class:`~trio_harness.Session`, or its events (``SessionEvent``
            objects or their decoded wire form), in log order.
        allow_unpaired: Accept calls left without a result (a step that raised a scheduler
            failure leaves its started calls so).

    Returns:
        The violations (``seq``, ``rule``, ``message``) in log order; ``[]`` for a valid log.

    Raises:
        LogFormatError: An event is not a session event.
    """
    events = (
        session_or_events.events if isinstance(session_or_events, Session) else session_or_events
    )
    wire = [event.to_json() if isinstance(event, SessionEvent) else event for event in events]
    return check_log(wire, allow_unpaired=allow_unpaired)


@attrs.define
class BodyRecord:
    """What :class:`PoolMonitor` saw of one call (times are ``trio.current_time()``).

    Attributes:
        call_id: The call id.
        name: The tool name.
        exclusive: Whether the call must run alone (the monitor's ``exclusive`` answer).
        prepared: When ``prepare`` was entered.
        body_started: When ``dispatch`` (wrappers and body) was entered; ``None`` if never.
        body_ended: When ``dispatch`` returned or raised; ``None`` if never.
        overlapped: Call ids whose body ran while this call's body started.
    """

    call_id: str
    name: str
    exclusive: bool
    prepared: float
    body_started: float | None = None
    body_ended: float | None = None
    overlapped: list[str] = attrs.field(factory=list)


class PoolMonitor:
    """Wraps ``runtime.scheduler`` and checks the pool's guarantees on every step it runs.

    Args:
        runtime: The real runtime; its ``scheduler`` is replaced by the monitor (which forwards
            every phase to the original).
        exclusive: ``(name, arguments) -> bool``: which calls must run alone. The default asks
            ``runtime.execution_mode`` (the tools' own classifiers); pass the truth about your
            tools to catch a classifier that claims a writer is parallel.

    Run a step through :meth:`execute_tool_calls` (or through ``trio_harness.execute_tool_calls``
    and then :meth:`check`); :meth:`violations` lists what broke.
    """

    def __init__(
        self,
        runtime: ToolRuntime,
        *,
        exclusive: Callable[[str, Any], bool] | None = None,
    ) -> None:
        self.runtime = runtime
        self.inner: Scheduler = runtime.scheduler
        self._exclusive = exclusive
        self.records: dict[str, BodyRecord] = {}
        self.max_in_flight = 0
        self._running: dict[str, BodyRecord] = {}
        self._violations: list[str] = []
        runtime.scheduler = self

    # -- the scheduler -------------------------------------------------------------------------

    def _is_exclusive(self, input: ToolExecutionInput) -> bool:
        if self._exclusive is not None:
            return bool(self._exclusive(input.name, input.arguments))
        return self.runtime.execution_mode(input).kind == "exclusive"

    async def prepare(self, input: ToolExecutionInput, /) -> Preparation:
        """Record the call (top-level calls only), then forward."""
        if input.parent is None:
            self.records[input.call_id] = BodyRecord(
                input.call_id, input.name, self._is_exclusive(input), trio.current_time()
            )
        return await self.inner.prepare(input)

    async def dispatch(self, exec: ToolExecution, /) -> DispatchOutcome:
        """Record the body's interval around the forwarded dispatch."""
        record = self.records.get(exec.call_id) if exec.parent is None else None
        if record is None:
            return await self.inner.dispatch(exec)
        record.body_started = trio.current_time()
        record.overlapped = sorted(self._running)
        self._running[record.call_id] = record
        self.max_in_flight = max(self.max_in_flight, len(self._running))
        try:
            return await self.inner.dispatch(exec)
        finally:
            del self._running[record.call_id]
            record.body_ended = trio.current_time()

    async def finalize(
        self, exec: ToolExecution, result: ToolExecutionResult, /
    ) -> ToolExecutionResult:
        """Forward."""
        return await self.inner.finalize(exec, result)

    def finish(self, exec: ToolExecution, result: ToolExecutionResult, /) -> ToolExecutionResult:
        """Forward."""
        return self.inner.finish(exec, result)

    # -- steps ---------------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the calls recorded so far (:meth:`execute_tool_calls` does this first)."""
        self.records = {}
        self.max_in_flight = 0
        self._violations = []

    async def execute_tool_calls(
        self,
        session: Session,
        tool_calls: Sequence[ToolCallBlock],
        *,
        max_parallel_tool_calls: int = DEFAULT_MAX_PARALLEL_TOOL_CALLS,
        **options: Any,
    ) -> StepOutcome:
        """Run one step with :func:`trio_harness.execute_tool_calls` and :meth:`check` it.

        ``options`` go to ``execute_tool_calls`` (``abort``, ``turn``, ``step``, ...). A
        scheduler failure is re-raised after the check (its calls may stay unpaired).
        """
        self.reset()
        first_seq = len(session.events)
        try:
            outcome = await execute_tool_calls(
                self.runtime,
                session,
                tool_calls,
                max_parallel_tool_calls=max_parallel_tool_calls,
                **options,
            )
        except BaseException:
            self.check(
                session, tool_calls, cap=max_parallel_tool_calls, first_seq=first_seq, raised=True
            )
            raise
        self.check(session, tool_calls, cap=max_parallel_tool_calls, first_seq=first_seq)
        return outcome

    def check(
        self,
        session: Session,
        tool_calls: Sequence[ToolCallBlock],
        *,
        cap: int = DEFAULT_MAX_PARALLEL_TOOL_CALLS,
        first_seq: int = 0,
        raised: bool = False,
    ) -> list[str]:
        """Check the step whose events start at ``first_seq``; returns (and keeps) the violations.

        Checked: no exclusive body overlaps another body; never more than ``cap`` bodies in
        flight; results committed in model order; every call answered exactly once (at most once
        when the step ``raised``); a call that never started was answered by its synthetic
        ``ABORTED_BEFORE_DISPATCH`` pair right after its ``tool/call``; and :func:`check_session`
        over the whole log (its violations from ``first_seq`` on).
        """
        found: list[str] = []
        for record in self.records.values():
            for other_id in record.overlapped:
                other = self.records[other_id]
                if record.exclusive or other.exclusive:
                    alone, partner = (
                        (record.call_id, other_id)
                        if record.exclusive
                        else (other_id, record.call_id)
                    )
                    found.append(
                        f"exclusive body of {alone} overlaps the body of {partner} "
                        f"({record.call_id} started at {record.body_started:g} while "
                        f"{other_id} was running)"
                    )
        if self.max_in_flight > cap:
            found.append(f"{self.max_in_flight} bodies in flight at once, cap {cap}")
        events = [event.to_json() for event in session.events[first_seq:]]
        ids = [block.id for block in tool_calls]
        position = {call_id: index for index, call_id in enumerate(ids)}
        results: dict[str, list[int]] = {call_id: [] for call_id in ids}
        call_seq: dict[str, int] = {}
        last = -1
        for index, event in enumerate(events):
            data = event["data"]
            if event["type"] == "tool/call" and data.get("callId") in position:
                call_seq[data["callId"]] = index
                continue
            if event["type"] != "tool/result":
                continue
            call_id = data["message"]["source"]["callId"]
            if call_id not in position:
                found.append(f"result for {call_id}, which is not a call of the step")
                continue
            results[call_id].append(index)
            if position[call_id] < last:
                found.append(f"result of {call_id} committed after a later call's result")
            last = max(last, position[call_id])
            if call_id not in self.records:
                code = (data.get("error") or {}).get("code")
                if code != "ABORTED_BEFORE_DISPATCH" or call_seq.get(call_id) != index - 1:
                    found.append(
                        f"{call_id} never started but its result is not the synthetic "
                        "ABORTED_BEFORE_DISPATCH pair"
                    )
        for call_id, seqs in results.items():
            if len(seqs) > 1:
                found.append(f"{call_id} answered {len(seqs)} times")
            elif not seqs and not raised:
                found.append(f"{call_id} never answered")
        found.extend(
            str(violation)
            for violation in check_session(session, allow_unpaired=raised)
            if violation.seq >= first_seq
        )
        self._violations = found
        return found

    def violations(self) -> list[str]:
        """The violations the last check found (``[]``: the step kept every guarantee)."""
        return list(self._violations)

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` listing the last check's violations, if any."""
        if self._violations:
            raise AssertionError("pool guarantees broken:\n  " + "\n  ".join(self._violations))


#: Old spellings (0.1) that still work for one release, with a ``DeprecationWarning``.
_DEPRECATED: dict[str, tuple[Callable[[], Any], str]] = {
    "run_scenario": (
        lambda: _expected_answer,
        "trio_harness.testing.run_scenario is deprecated: use "
        "trio_harness.lowlevel.run_scenario(scenario).answer",
    ),
    "LogViolation": (
        lambda: _LogViolation,
        "trio_harness.testing.LogViolation moved to trio_harness.lowlevel.LogViolation",
    ),
}


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        value, message = _DEPRECATED[name]
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return value()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


publish(__name__, globals(), __all__)
