"""Seeing a pool step: a tracer that records phase instants, and two renderings of it.

:class:`StepTrace` is a :class:`~trio_harness.PoolTracer`: pass it as
``execute_tool_calls(..., tracer=trace)`` and it keeps every phase instant of every call on
Trio's clock. :meth:`StepTrace.lanes` turns them into one :class:`Lane` per call;
:func:`render_timeline_text` draws a text Gantt chart for terminals and
:func:`render_timeline_svg` a standalone SVG picture (one lane per call, the window occupancy,
the barriers where exclusive calls ran alone, times on an axis, names and outcomes).

Traces travel as JSON (:meth:`StepTrace.to_json`), one per line in a trace file, or as the data
of a ``trace/step`` event in a session log; ``python -m trio_harness timeline FILE`` reads both.

The JSON form is packed (:meth:`StepTrace.to_json`): an agent writes one trace a step into its
durable log, and an array per phase made that line cost as much as the rest of the step's
logging. :meth:`StepTrace.from_json` also reads the first form, so earlier logs and trace files
still draw.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs
import trio

from .._json import loads_any_depth
from .._runtime import ToolExecutionInput
from .._values import ToolExecutionResult

__all__ = [
    "TRACE_EVENT",
    "Lane",
    "StepTrace",
    "axis_scale",
    "lane_label",
    "printable",
    "seconds_text",
    "tick_step",
    "traces_from_lines",
]

#: Session event type under which an application may store a step's trace.
TRACE_EVENT: Final = "trace/step"
#: The packed form :meth:`StepTrace.to_json` writes (see the module docstring).
_FORMAT: Final = "trio_harness/step-trace/2"
#: The first form, still read: ``"phases"`` is a list of ``[time, phase, index, detail]``.
_FORMAT_V1: Final = "trio_harness/step-trace"
# A packed column of integers: decimal, separated by single spaces (none: the empty string).
_PACKED_INTS: Final = re.compile(r"(?:-?[0-9]{1,25}(?: -?[0-9]{1,25})*)?", re.ASCII)
_PHASES: Final = frozenset(
    {
        "begin",
        "arrived",
        "classified",
        "group-open",
        "started",
        "prepared",
        "body-started",
        "settled",
        "committed",
        "aborted",
        "group-close",
        "abort",
        "done",
    }
)


def _outcome(result: ToolExecutionResult) -> str:
    if not result.is_error:
        return "ok"
    error = result.error
    if error is not None and error.info is not None:
        return error.info.code
    return "error"


#: Largest turn, step or window a trace file may give (a bound, so titles stay short).
MAX_TRACE_INT: Final = 10**15
#: Largest absolute time (seconds) a trace file may give: beyond it, differences lose precision.
MAX_TRACE_TIME: Final = 1e12
# Phases that belong to the step, not to one call: their index is -1.
_STEP_PHASES: Final = frozenset({"begin", "abort", "done"})


def _phase_problem(item: object, count: int) -> str | None:
    """Why ``item`` is not a ``[time, phase, index, detail]`` entry of a step of ``count`` calls."""
    if not isinstance(item, list) or len(item) != 4:
        return "is not a list of four"
    at, name, index, detail = item
    if type(at) is not float and type(at) is not int:
        return "has a time that is not a number"
    if not -MAX_TRACE_TIME <= at <= MAX_TRACE_TIME:  # NaN fails both comparisons
        return f"has a time that is not a finite number within ±{MAX_TRACE_TIME:g} seconds"
    if at != 0 and abs(at) < sys.float_info.min:
        return "has a subnormal time"
    if type(name) is not str or name not in _PHASES:
        return "names no phase"
    if type(index) is not int:
        return "has an index that is not an integer"
    if name in _STEP_PHASES:
        if index != -1:
            return f"is a step phase with index {index}, not -1"
    elif not 0 <= index < count:
        return f"has index {index}, but the step has {count} calls"
    if detail is not None and type(detail) is not str and type(detail) is not bool:
        return "has a detail that is not null, a string or a boolean"
    return None


class StepTrace:
    """Records one pool step's phase instants (a :class:`~trio_harness.PoolTracer`).

    Args:
        turn: Turn number, for titles.
        step: Step number, for titles.
        clock: Where instants come from; Trio's clock by default (virtual under a
            ``MockClock``).

    Attributes:
        calls: ``(call_id, name)`` of every call, in model order (set by the pool).
        cap: The step's window (set by the pool).
        phases: ``(time, name, index, detail)`` in the order they happened; details are JSON
            (results become their outcome: ``"ok"``, the error code, or ``"error"``).
    """

    def __init__(
        self, *, turn: int = 0, step: int = 0, clock: Callable[[], float] = trio.current_time
    ) -> None:
        self.turn = turn
        self.step = step
        self.calls: list[tuple[str, str]] = []
        self.cap = 0
        self.phases: list[tuple[float, str, int, Any]] = []
        self._clock = clock

    def begin(self, calls: Sequence[ToolExecutionInput], cap: int, /) -> None:
        """Called by the pool when the step starts."""
        self.calls = [(call.call_id, call.name) for call in calls]
        self.cap = cap
        self.phases.append((self._clock(), "begin", -1, None))

    def phase(self, name: str, index: int, detail: object, /) -> None:
        """Called by the pool at each phase instant."""
        kind = type(detail)
        if (detail is None or kind is str or kind is bool) and name != "arrived":
            self.phases.append((self._clock(), name, index, detail))  # most phases: as they are
            return
        if name == "arrived" and isinstance(detail, tuple):
            # A streamed step: the call is known from now on (``begin`` listed the calls known
            # at the start).
            call_id, tool = detail
            self.calls.append((str(call_id), str(tool)))
            detail = None
        if isinstance(detail, ToolExecutionResult):
            detail = _outcome(detail)
        elif isinstance(detail, BaseException):
            detail = type(detail).__name__
        elif detail is not None and not isinstance(detail, str | bool):
            detail = str(detail)
        self.phases.append((self._clock(), name, index, detail))

    def to_json(self) -> dict[str, Any]:
        """The trace as a JSON object (read back by :meth:`from_json`), packed.

        The phase table is four columns, three of them one string each, and times are whole
        nanoseconds after the step's start (``from_json(to_json())`` gives each time back within
        1 ns; exactly, for a time a whole number of nanoseconds after the start)::

            {"format": "trio_harness/step-trace/2", "turn": 0, "step": 1, "cap": 10,
             "calls": [{"callId": "c1", "name": "read"}, ...],
             "start": 52311.250417,            # the begin phase's time, on the trace's clock
             "ns": "0 31200 40113 40113 ...",  # each phase's time: nanoseconds after start
             "phases": "begin classified group-open started ...",
             "index": "-1 0 0 0 ...",          # each phase's call (-1: the step's own)
             "details": [null, "parallel", true, null, ...]}

        The first form (``trio_harness/step-trace``) had ``"phases"`` as a list of
        ``[time, phase, index, detail]`` arrays.
        """
        phases = self.phases
        start = phases[0][0] if phases else 0.0
        if phases:
            times, names, indexes, details = zip(*phases, strict=True)
        else:
            times = names = indexes = details = ()
        return {
            "format": _FORMAT,
            "turn": self.turn,
            "step": self.step,
            "cap": self.cap,
            "calls": [{"callId": call_id, "name": name} for call_id, name in self.calls],
            "start": start,
            "ns": " ".join([str(round((at - start) * 1e9)) for at in times]),
            "phases": " ".join(names),
            "index": " ".join(map(str, indexes)),
            "details": list(details),
        }

    @classmethod
    def from_json(cls, raw: object) -> StepTrace:
        """Rebuild a trace from :meth:`to_json` output, or from the first form (phases as
        ``[time, phase, index, detail]`` arrays, format ``trio_harness/step-trace``).

        Everything a renderer relies on is checked here, so that whatever this accepts can be
        drawn: times are finite numbers within ``±1e12`` seconds (not subnormal), the first
        phase is the one ``begin`` and no phase is earlier than it, ``begin``/``abort``/``done``
        carry index ``-1`` and every other phase the index of a call, details are ``null``, a
        string or a boolean. In the packed form the columns are as long as each other, and
        ``ns`` and ``index`` hold decimal integers separated by single spaces.

        Raises:
            ValueError: ``raw`` is not a step trace; the message names the field.
        """
        if not isinstance(raw, dict) or raw.get("format") not in (_FORMAT, _FORMAT_V1):
            raise ValueError(
                f"not a step trace (field 'format' is not {_FORMAT!r} or {_FORMAT_V1!r})"
            )
        form = raw["format"]
        trace = cls()
        for key in ("turn", "step", "cap"):
            value = raw.get(key)
            if type(value) is not int or not 0 <= value <= MAX_TRACE_INT:
                raise ValueError(
                    f"step trace field {key!r} must be an integer from 0 to {MAX_TRACE_INT}"
                )
            setattr(trace, key, value)
        calls = raw.get("calls")
        if not isinstance(calls, list):
            raise ValueError("step trace field 'calls' must be an array")
        for number, call in enumerate(calls):
            if not (
                isinstance(call, dict)
                and isinstance(call.get("callId"), str)
                and isinstance(call.get("name"), str)
            ):
                raise ValueError(f"step trace field 'calls[{number}]' needs callId and name")
            trace.calls.append((call["callId"], call["name"]))
        phases = raw.get("phases") if form == _FORMAT_V1 else _unpacked(raw)
        if not isinstance(phases, list):
            raise ValueError("step trace field 'phases' must be an array")
        count = len(trace.calls)
        began: float | None = None
        for number, item in enumerate(phases):
            problem = _phase_problem(item, count)
            if problem is None:
                at = float(item[0])
                if item[1] == "begin":
                    if number != 0:
                        problem = "is a second 'begin' (only the first phase begins the step)"
                    began = at
                elif began is None:
                    problem = "comes before 'begin' (the first phase must be 'begin')"
                elif at < began:
                    problem = "is earlier than 'begin'"
            if problem is not None:
                what = (
                    "[time, phase, index, detail]"
                    if form == _FORMAT_V1
                    else "a time, a phase, an index and a detail"
                )
                raise ValueError(
                    f"step trace field 'phases[{number}]' must be {what}: it {problem}"
                )
            trace.phases.append((float(item[0]), item[1], item[2], item[3]))
        return trace

    @property
    def start(self) -> float:
        """When the step began."""
        return self.phases[0][0] if self.phases else 0.0

    @property
    def end(self) -> float:
        """When the step ended (its latest instant)."""
        return max(at for at, _, _, _ in self.phases) if self.phases else 0.0

    @property
    def aborted_at(self) -> float | None:
        """When the pool saw the step's abort (``None``: never aborted)."""
        for at, name, _, _ in self.phases:
            if name == "abort":
                return at
        return None

    def lanes(self) -> list[Lane]:
        """One :class:`Lane` per call, in model order."""
        lanes = [Lane(index, call_id, name) for index, (call_id, name) in enumerate(self.calls)]
        for at, name, index, detail in self.phases:
            if index < 0:
                continue
            lane = lanes[index]
            if name == "classified":
                lane.mode = str(detail)
            elif name == "started":
                lane.started = at
            elif name == "prepared":
                lane.prepared = at
            elif name == "body-started":
                lane.body_started = at
            elif name == "settled":
                lane.settled = at
            elif name == "committed":
                lane.committed = at
                lane.outcome = str(detail)
            elif name == "aborted":
                lane.committed = at
                lane.outcome = str(detail)
                lane.aborted = True
        return lanes

    def window(self) -> list[tuple[float, float, int]]:
        """``(from, to, bodies running)``: maximal intervals covering the step."""
        out: list[tuple[float, float, int]] = []
        running = 0
        last = self.start

        def close(at: float) -> None:
            if at <= last:
                return
            if out and out[-1][2] == running:
                out[-1] = (out[-1][0], at, running)
            else:
                out.append((last, at, running))

        for at, name, _, _ in self.phases:
            if name not in ("body-started", "settled"):
                continue
            close(at)
            last = max(last, at)
            running += 1 if name == "body-started" else -1
        close(self.end)
        return out

    def barriers(self) -> list[tuple[float, float, int]]:
        """``(from, to, index)`` of every exclusive group: the call ran alone in between."""
        out = []
        opened: tuple[float, int] | None = None
        for at, name, index, detail in self.phases:
            if name == "group-open":
                opened = None if detail else (at, index)
            elif name == "group-close" and opened is not None:
                out.append((opened[0], at, opened[1]))
                opened = None
        return out


def _packed_ints(raw: dict[str, Any], key: str) -> list[int]:
    text = raw.get(key)
    if type(text) is not str or not _PACKED_INTS.fullmatch(text):
        raise ValueError(
            f"step trace field {key!r} must be a string of integers separated by single spaces"
        )
    return [int(token) for token in text.split(" ")] if text else []


def _unpacked(raw: dict[str, Any]) -> list[list[Any]]:
    """The phases of a packed trace as ``[time, phase, index, detail]`` lists (unchecked)."""
    start = raw.get("start")
    if type(start) is not float and type(start) is not int:
        raise ValueError("step trace field 'start' must be a number")
    if not -MAX_TRACE_TIME <= start <= MAX_TRACE_TIME:  # NaN fails both comparisons
        raise ValueError(
            f"step trace field 'start' must be a finite number within ±{MAX_TRACE_TIME:g} seconds"
        )
    offsets = _packed_ints(raw, "ns")
    names = raw.get("phases")
    if type(names) is not str:
        raise ValueError("step trace field 'phases' must be a string of phase names")
    phases = names.split(" ") if names else []
    indexes = _packed_ints(raw, "index")
    details = raw.get("details")
    if not isinstance(details, list):
        raise ValueError("step trace field 'details' must be an array")
    if not len(offsets) == len(phases) == len(indexes) == len(details):
        raise ValueError(
            f"step trace fields 'ns', 'phases', 'index' and 'details' must be as long as each "
            f"other: {len(offsets)}, {len(phases)}, {len(indexes)} and {len(details)} entries"
        )
    return [
        [start + offset / 1e9, name, index, detail]
        for offset, name, index, detail in zip(offsets, phases, indexes, details, strict=True)
    ]


@attrs.define
class Lane:
    """One call's life in a traced step (times on the trace's clock; ``None``: not reached).

    Attributes:
        index: Position in the step.
        call_id: The model's call id.
        name: The tool name.
        mode: ``"parallel"`` or ``"exclusive"`` (the last classification), ``None`` if never
            classified.
        started: Its ``tool/call`` was recorded and prepare began.
        prepared: Prepare returned.
        body_started: Its dispatch (execute wrappers, then the body) began.
        settled: The dispatch returned.
        committed: Its result (or synthetic abort result) was recorded.
        outcome: ``"ok"``, an error code (``"ABORTED"``, ...), ``"error"``, or ``None``.
        aborted: Its result is a synthetic abort result recorded by the pool.
    """

    index: int
    call_id: str
    name: str
    mode: str | None = None
    started: float | None = None
    prepared: float | None = None
    body_started: float | None = None
    settled: float | None = None
    committed: float | None = None
    outcome: str | None = None
    aborted: bool = False

    def segments(self, step_start: float, step_end: float) -> list[tuple[str, float, float]]:
        """``(kind, from, to)``: ``queued`` (not started: window or barrier), ``prepare``,
        ``body`` (dispatch running), ``hold`` (settled, waiting to commit in model order)."""
        out: list[tuple[str, float, float]] = []
        end = self.committed if self.committed is not None else step_end
        first = self.started if self.started is not None else end
        out.append(("queued", step_start, first))
        if self.started is not None:
            ready = self.prepared if self.prepared is not None else end
            out.append(("prepare", self.started, ready))
            if self.body_started is not None:
                settled = self.settled if self.settled is not None else end
                out.append(("prepare", ready, self.body_started))
                out.append(("body", self.body_started, settled))
                out.append(("hold", settled, end))
            else:
                out.append(("hold", ready, end))
        return [(kind, a, b) for kind, a, b in out if b > a]


def traces_from_lines(lines: Sequence[str]) -> list[StepTrace]:
    """Every step trace in JSON Lines text: trace objects, or ``trace/step`` session events.

    Lines are read as the session log reads them (``NaN``/``Infinity`` are not JSON, any nesting
    depth, exact integers).

    Raises:
        ValueError: A line is not JSON, or a trace in it is malformed (the message names the
            line); lines that are neither are skipped.
    """
    traces = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = loads_any_depth(line, js_key_order=False)
        except ValueError as exc:
            raise ValueError(f"line {number}: not JSON ({exc})") from None
        if isinstance(raw, dict) and raw.get("type") == TRACE_EVENT:
            raw = raw.get("data")
        elif not (isinstance(raw, dict) and "format" in raw):
            continue
        try:
            traces.append(StepTrace.from_json(raw))
        except ValueError as exc:
            raise ValueError(f"line {number}: {exc}") from None
    return traces


# ---------------------------------------------------------------------------------------------
# The time axis, shared by both pictures
# ---------------------------------------------------------------------------------------------

_NICE: Final = (1, 2, 5)


def tick_step(duration: float, columns: int, min_gap: int) -> float:
    if duration < MIN_DURATION:
        return 1.0
    per_column = duration / columns
    exponent = math.floor(math.log10(per_column * min_gap))
    while True:
        for nice in _NICE:
            step = nice * 10.0**exponent
            if step / per_column >= min_gap:
                return step
        exponent += 1


def seconds_text(value: float, step: float, *, finer: bool = False) -> str:
    """``value`` seconds in the unit and precision of an axis ticking every ``step`` seconds
    (``finer``: one more decimal place, for an instant between ticks)."""
    if step >= 0.1:
        unit, scale = "s", 1.0
    elif step >= 1e-4:
        unit, scale = "ms", 1e3
    else:
        unit, scale = "us", 1e6
    places = max(0, -math.floor(math.log10(step * scale) + 1e-9)) if step > 0 else 0
    places += finer
    text = f"{value * scale:.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return ("0" if text in ("", "-0") else text) + unit


#: Steps shorter than this (seconds) are drawn as one instant: no axis can resolve them.
MIN_DURATION: Final = 1e-9


def axis_scale(duration: float, extent: float) -> float:
    """Units of ``extent`` per second for a step of ``duration`` (``0`` for an instant)."""
    return extent / duration if duration >= MIN_DURATION else 0.0


def printable(text: str) -> str:
    """``text`` with every character a terminal or an XML file cannot show as text replaced.

    Control characters (terminal escape sequences among them), lone surrogates and other
    non-printable code points become U+FFFD, so a call id from a model or a trace file can
    neither drive the terminal nor break the SVG.
    """
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else "\ufffd" for char in text)


def lane_label(lane: Lane) -> str:
    text = printable(f"{lane.call_id} {lane.name}")
    return text if len(text) <= 24 else text[:23] + "…"
