"""Seeing a pool step: a tracer that records phase instants, and two renderings of it.

:class:`StepTrace` is a :class:`~trio_harness.PoolTracer`: pass it as
``execute_tool_calls(..., tracer=trace)`` and it keeps every phase instant of every call on
Trio's clock. :meth:`StepTrace.lanes` turns them into one :class:`Lane` per call;
:func:`render_timeline_text` draws a text Gantt chart for terminals and
:func:`render_timeline_svg` a standalone SVG picture (one lane per call, the window occupancy,
the barriers where exclusive calls ran alone, times on an axis, names and outcomes).

Traces travel as JSON (:meth:`StepTrace.to_json`), one per line in a trace file, or as the data
of a ``trace/step`` event in a session log; ``python -m trio_harness timeline FILE`` reads both.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Final
from xml.sax.saxutils import escape, quoteattr

import attrs
import trio

from ._runtime import ToolExecutionInput
from ._values import ToolExecutionResult

__all__ = [
    "TRACE_EVENT",
    "Lane",
    "StepTrace",
    "render_timeline_svg",
    "render_timeline_text",
    "traces_from_lines",
]

#: Session event type under which an application may store a step's trace.
TRACE_EVENT: Final = "trace/step"
_FORMAT: Final = "trio_harness/step-trace"
_PHASES: Final = frozenset(
    {
        "begin",
        "classified",
        "group-open",
        "started",
        "prepared",
        "body-started",
        "settled",
        "committed",
        "aborted",
        "group-close",
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
        if isinstance(detail, ToolExecutionResult):
            detail = _outcome(detail)
        elif isinstance(detail, BaseException):
            detail = type(detail).__name__
        elif detail is not None and not isinstance(detail, str | bool):
            detail = str(detail)
        self.phases.append((self._clock(), name, index, detail))

    def to_json(self) -> dict[str, Any]:
        """The trace as a JSON object (see :meth:`from_json`)."""
        return {
            "format": _FORMAT,
            "turn": self.turn,
            "step": self.step,
            "cap": self.cap,
            "calls": [{"callId": call_id, "name": name} for call_id, name in self.calls],
            "phases": [list(item) for item in self.phases],
        }

    @classmethod
    def from_json(cls, raw: object) -> StepTrace:
        """Rebuild a trace from :meth:`to_json` output.

        Raises:
            ValueError: ``raw`` is not a step trace; the message names the field.
        """
        if not isinstance(raw, dict) or raw.get("format") != _FORMAT:
            raise ValueError(f"not a step trace (field 'format' is not {_FORMAT!r})")
        trace = cls()
        for key in ("turn", "step", "cap"):
            value = raw.get(key)
            if type(value) is not int:
                raise ValueError(f"step trace field {key!r} must be an integer")
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
        phases = raw.get("phases")
        if not isinstance(phases, list):
            raise ValueError("step trace field 'phases' must be an array")
        for number, item in enumerate(phases):
            if not (
                isinstance(item, list)
                and len(item) == 4
                and isinstance(item[0], int | float)
                and not isinstance(item[0], bool)
                and item[1] in _PHASES
                and type(item[2]) is int
                and -1 <= item[2] < len(trace.calls)
            ):
                raise ValueError(
                    f"step trace field 'phases[{number}]' must be [time, phase, index, detail]"
                )
            trace.phases.append((float(item[0]), item[1], item[2], item[3]))
        return trace

    @property
    def start(self) -> float:
        """When the step began."""
        return self.phases[0][0] if self.phases else 0.0

    @property
    def end(self) -> float:
        """When the step ended (its last instant)."""
        return self.phases[-1][0] if self.phases else 0.0

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
        body_started: Its dispatch (hooks, approval, body) began.
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

    Raises:
        ValueError: A line is not JSON, or a trace in it is malformed (the message names the
            line); lines that are neither are skipped.
    """
    import json

    traces = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
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
# Text
# ---------------------------------------------------------------------------------------------

_CHARS: Final = {"queued": ".", "prepare": ":", "body": "#", "hold": "~"}
_NICE: Final = (1, 2, 5)


def _tick_step(duration: float, columns: int, min_gap: int) -> float:
    if duration <= 0:
        return 1.0
    per_column = duration / columns
    exponent = math.floor(math.log10(per_column * min_gap))
    while True:
        for nice in _NICE:
            step = nice * 10.0**exponent
            if step / per_column >= min_gap:
                return step
        exponent += 1


def _seconds(value: float, step: float) -> str:
    """``value`` seconds in the unit and precision of an axis ticking every ``step`` seconds."""
    if step >= 0.1:
        unit, scale = "s", 1.0
    elif step >= 1e-4:
        unit, scale = "ms", 1e3
    else:
        unit, scale = "us", 1e6
    places = max(0, -math.floor(math.log10(step * scale) + 1e-9)) if step > 0 else 0
    text = f"{value * scale:.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return ("0" if text in ("", "-0") else text) + unit


def _label(lane: Lane) -> str:
    text = f"{lane.call_id} {lane.name}"
    return text if len(text) <= 24 else text[:23] + "…"


def render_timeline_text(trace: StepTrace, *, width: int = 48) -> list[str]:
    """A text Gantt chart of ``trace``: one row per call, then the window and the barriers.

    Args:
        trace: A recorded step.
        width: Columns of the time axis.

    Returns:
        The lines (without newlines).
    """
    lanes = trace.lanes()
    start, end = trace.start, trace.end
    duration = end - start
    scale = width / duration if duration > 0 else 0.0

    def col(at: float) -> int:
        return min(width, round((at - start) * scale))

    label_width = max([len(_label(lane)) for lane in lanes] + [len("barriers")]) + 2
    pad = " " * label_width
    step = _tick_step(duration, width, 8)
    out = [
        f"turn {trace.turn} step {trace.step}: {len(lanes)} calls, window {trace.cap}, "
        f"0s to {_seconds(duration, step)}"
    ]
    axis = [" "] * (width + 8)
    rule = ["-"] * (width + 1)
    count = int(duration / step + 1e-9) if duration > 0 else 0
    for number in range(count + 1):
        position = col(start + number * step)
        text = _seconds(number * step, step)
        if position + len(text) <= len(axis):
            axis[position : position + len(text)] = text
        rule[position] = "|"
    out.append(pad + "".join(axis).rstrip())
    out.append(pad + "".join(rule))
    for lane in lanes:
        row = [" "] * width
        for kind, a, b in lane.segments(start, end):
            for column in range(col(a), col(b)):
                row[column] = _CHARS[kind]
        if lane.aborted and lane.committed is not None:
            row[min(col(lane.committed), width - 1)] = "X"
        note = lane.outcome or "(no result)"
        if lane.mode == "exclusive":
            note += "  exclusive"
        out.append(_label(lane).ljust(label_width) + "".join(row) + "  " + note)
    window = [" "] * width
    for a, b, running in trace.window():
        for column in range(col(a), col(b)):
            window[column] = str(running) if running < 10 else "+"
    out.append(("window".ljust(label_width) + "".join(window)).rstrip())
    barriers = trace.barriers()
    if barriers:
        row = [" "] * (width + 1)
        names = []
        for a, b, index in barriers:
            for column in range(col(a), col(b) + 1):
                row[column] = "="
            row[col(a)] = row[col(b)] = "|"
            names.append(lanes[index].call_id)
        out.append(
            "barriers".ljust(label_width) + "".join(row) + "  " + ", ".join(names) + " ran alone"
        )
    out.append("legend: . queued (window or barrier)  : prepare  # body running")
    out.append("        ~ settled, waiting to commit in model order  X aborted (synthetic result)")
    return out


# ---------------------------------------------------------------------------------------------
# SVG
# ---------------------------------------------------------------------------------------------

_LANE_HEIGHT: Final = 24
_BAR_HEIGHT: Final = 14
_PLOT_WIDTH: Final = 600
_CHAR_WIDTH: Final = 7.8
_STYLE: Final = """
text { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; fill: #1f2328; }
.title { font-size: 14px; font-weight: bold; }
.tick { stroke: #d0d7de; }
.axis { stroke: #57606a; }
.queued { fill: #eaeef2; }
.prepare { fill: #bf8700; }
.body { fill: #0969da; }
.hold { fill: #8fc1ff; }
.aborted-mark { stroke: #cf222e; stroke-width: 2.5; }
.outcome-error { fill: #cf222e; }
.barrier { stroke: #8250df; stroke-width: 1.5; stroke-dasharray: 5 3; }
.barrier-label { fill: #8250df; }
.window { fill: #2da44e; }
.cap { stroke: #2da44e; stroke-dasharray: 2 2; }
"""


_LEGEND: Final = (
    ("queued", "queued"),
    ("prepare", "prepare"),
    ("body", "body running"),
    ("hold", "waiting to commit"),
    ("aborted-mark", "aborted"),
    ("window", "window"),
    ("barrier", "barrier"),
)


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def render_timeline_svg(trace: StepTrace) -> str:
    """A standalone SVG picture of ``trace``.

    One lane per call (its label, the queued/prepare/body/hold bars, an ``X`` where a synthetic
    abort result was recorded, its outcome), dashed barriers around every exclusive call, the
    window occupancy under the lanes, and a time axis on top. Elements carry ``data-*``
    attributes (``data-call``, ``data-start``/``data-end`` in seconds from the step's start)
    so tools and tests can read the picture back.
    """
    lanes = trace.lanes()
    start, end = trace.start, trace.end
    duration = end - start
    label_width = max([len(_label(lane)) for lane in lanes] + [len("window")]) * _CHAR_WIDTH + 16
    outcome_width = max([len(lane.outcome or "(no result)") for lane in lanes] + [6]) + 13
    left = 10 + label_width
    scale = _PLOT_WIDTH / duration if duration > 0 else 0.0
    top = 60
    window_height = 30
    lanes_bottom = top + _LANE_HEIGHT * len(lanes)
    height = lanes_bottom + window_height + 70
    legend_width = 10 + sum(28 + len(text) * _CHAR_WIDTH for _, text in _LEGEND)
    total_width = max(left + _PLOT_WIDTH + outcome_width * _CHAR_WIDTH + 10, legend_width)

    def x(at: float) -> str:
        return _num(left + (at - start) * scale)

    step = _tick_step(duration, _PLOT_WIDTH, 60)
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(total_width)}" '
        f'height="{height}" viewBox="0 0 {_num(total_width)} {height}" '
        f'data-start="0" data-end="{_num(duration)}" data-cap="{trace.cap}">',
        f"<title>turn {trace.turn} step {trace.step}: {len(lanes)} tool calls</title>",
        f"<style>{_STYLE}</style>",
        '<rect width="100%" height="100%" fill="#ffffff"/>',
        f'<text class="title" x="10" y="20">turn {trace.turn} step {trace.step}: '
        f"{len(lanes)} calls, window {trace.cap}, {_seconds(duration, step)}</text>",
    ]
    count = int(duration / step + 1e-9) if duration > 0 else 0
    parts.append(
        f'<line class="axis" x1="{x(start)}" y1="{top - 8}" x2="{x(end)}" y2="{top - 8}"/>'
    )
    for number in range(count + 1):
        at = start + number * step
        parts.append(
            f'<line class="tick" data-time="{_num(number * step)}" x1="{x(at)}" y1="{top - 12}" '
            f'x2="{x(at)}" y2="{lanes_bottom + window_height}"/>'
        )
        parts.append(
            f'<text class="tick-label" x="{x(at)}" y="{top - 16}" text-anchor="middle">'
            f"{_seconds(number * step, step)}</text>"
        )
    for row, lane in enumerate(lanes):
        y = top + row * _LANE_HEIGHT
        bar_y = y + (_LANE_HEIGHT - _BAR_HEIGHT) / 2
        outcome = lane.outcome or "(no result)"
        parts.append(
            f'<g class="lane" data-call={quoteattr(lane.call_id)} data-index="{lane.index}" '
            f'data-name={quoteattr(lane.name)} data-mode="{lane.mode or ""}" '
            f"data-outcome={quoteattr(outcome)}>"
        )
        parts.append(
            f'<text class="label" x="10" y="{_num(y + _LANE_HEIGHT / 2 + 4)}">'
            f"{escape(_label(lane))}</text>"
        )
        for kind, a, b in lane.segments(start, end):
            parts.append(
                f'<rect class="{kind}" data-start="{_num(a - start)}" data-end="{_num(b - start)}" '
                f'x="{x(a)}" y="{_num(bar_y)}" width="{_num((b - a) * scale)}" '
                f'height="{_BAR_HEIGHT}"><title>{escape(lane.call_id)} {kind} '
                f"{_seconds(a - start, step / 10)}–{_seconds(b - start, step / 10)}</title></rect>"
            )
        if lane.aborted and lane.committed is not None:
            cx = left + (lane.committed - start) * scale
            parts.append(
                f'<path class="aborted-mark" data-time="{_num(lane.committed - start)}" '
                f'd="M{_num(cx - 5)} {_num(bar_y)} l10 {_BAR_HEIGHT} m0 -{_BAR_HEIGHT} '
                f'l-10 {_BAR_HEIGHT}"/>'
            )
        css = "outcome" if outcome == "ok" else "outcome outcome-error"
        note = outcome + ("  exclusive" if lane.mode == "exclusive" else "")
        parts.append(
            f'<text class="{css}" x="{_num(left + _PLOT_WIDTH + 10)}" '
            f'y="{_num(y + _LANE_HEIGHT / 2 + 4)}">{escape(note)}</text>'
        )
        parts.append("</g>")
    for a, b, index in trace.barriers():
        for at in (a, b):
            parts.append(
                f'<line class="barrier" data-call={quoteattr(lanes[index].call_id)} '
                f'data-time="{_num(at - start)}" x1="{x(at)}" y1="{top - 4}" x2="{x(at)}" '
                f'y2="{lanes_bottom}"/>'
            )
        parts.append(
            f'<text class="barrier-label" x="{x(a)}" y="{lanes_bottom + window_height + 16}">'
            f"barrier: {escape(lanes[index].call_id)} ran alone</text>"
        )
    window_top = lanes_bottom + 4
    parts.append(
        f'<text class="label" x="10" y="{window_top + window_height / 2 + 2}">window</text>'
    )
    cap = max(trace.cap, 1)
    parts.append(
        f'<line class="cap" x1="{x(start)}" y1="{window_top}" x2="{x(end)}" y2="{window_top}"/>'
    )
    for a, b, running in trace.window():
        if running <= 0:
            continue
        bar = (window_height - 6) * min(running, cap) / cap
        parts.append(
            f'<rect class="window" data-count="{running}" data-start="{_num(a - start)}" '
            f'data-end="{_num(b - start)}" x="{x(a)}" '
            f'y="{_num(window_top + window_height - 6 - bar)}" width="{_num((b - a) * scale)}" '
            f'height="{_num(bar)}"/>'
        )
    legend_y = lanes_bottom + window_height + 40
    legend_x = 10.0
    parts.append('<g class="legend">')
    for kind, text in _LEGEND:
        if kind == "aborted-mark":
            parts.append(
                f'<path class="aborted-mark" d="M{_num(legend_x)} {legend_y - 10} l10 10 m0 -10 '
                f'l-10 10"/>'
            )
        elif kind == "barrier":
            parts.append(
                f'<line class="barrier" x1="{_num(legend_x + 5)}" y1="{legend_y - 12}" '
                f'x2="{_num(legend_x + 5)}" y2="{legend_y + 2}"/>'
            )
        else:
            parts.append(
                f'<rect class="{kind}" x="{_num(legend_x)}" y="{legend_y - 10}" width="10" '
                f'height="10"/>'
            )
        parts.append(f'<text class="legend" x="{_num(legend_x + 14)}" y="{legend_y}">{text}</text>')
        legend_x += 14 + len(text) * _CHAR_WIDTH + 14
    parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
