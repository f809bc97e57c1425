"""A step trace as a text Gantt chart, for terminals."""

from __future__ import annotations

from typing import Final

from .trace import StepTrace, axis_scale, lane_label, printable, seconds_text, tick_step

__all__ = ["render_timeline_text"]

_CHARS: Final = {"queued": ".", "prepare": ":", "body": "#", "hold": "~"}


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
    scale = axis_scale(duration, width)

    def col(at: float) -> int:
        return min(width, round((at - start) * scale))

    label_width = max([len(lane_label(lane)) for lane in lanes] + [len("barriers")]) + 2
    pad = " " * label_width
    step = tick_step(duration, width, 8)
    out = [
        f"turn {trace.turn} step {trace.step}: {len(lanes)} calls, window {trace.cap}, "
        f"0s to {seconds_text(duration, step)}"
    ]
    axis = [" "] * (width + 8)
    rule = ["-"] * (width + 1)
    count = int(duration / step + 1e-9) if duration > 0 else 0
    for number in range(count + 1):
        position = col(start + number * step)
        text = seconds_text(number * step, step)
        if position + len(text) <= len(axis):
            axis[position : position + len(text)] = text
        rule[position] = "|"
    out.append(pad + "".join(axis).rstrip())
    out.append(pad + "".join(rule))
    for lane in lanes:
        row = [" "] * width
        # Bodies last, at least one column wide: a millisecond call in a long step stays
        # visible over the hold that follows it.
        for kind, a, b in sorted(lane.segments(start, end), key=lambda s: s[0] == "body"):
            first, last = col(a), col(b)
            if kind == "body" and first == last:
                first = min(first, width - 1)
                last = first + 1
            for column in range(first, last):
                row[column] = _CHARS[kind]
        if lane.aborted and lane.committed is not None:
            row[min(col(lane.committed), width - 1)] = "X"
        note = printable(lane.outcome or "(no result)")
        if lane.mode == "exclusive":
            note += "  exclusive"
        out.append(lane_label(lane).ljust(label_width) + "".join(row) + "  " + note)
    window = [" "] * width
    for a, b, running in trace.window():
        for column in range(col(a), col(b)):
            window[column] = " " if running <= 0 else str(running) if running < 10 else "+"
    out.append(("window".ljust(label_width) + "".join(window)).rstrip())
    barriers = trace.barriers()
    if barriers:
        row = [" "] * (width + 1)
        names = []
        for a, b, index in barriers:
            for column in range(col(a), col(b) + 1):
                row[column] = "="
            row[col(a)] = row[col(b)] = "|"
            names.append(printable(lanes[index].call_id))
        out.append(
            "barriers".ljust(label_width) + "".join(row) + "  " + ", ".join(names) + " ran alone"
        )
    aborted_at = trace.aborted_at
    if aborted_at is not None:
        position = min(col(aborted_at), width - 1)
        out.append(
            "abort".ljust(label_width)
            + " " * position
            + f"^ abort set at {seconds_text(aborted_at - start, step, finer=True)}"
        )
    out.append("legend: . queued (window or barrier)  : prepare  # body running")
    out.append("        ~ settled, waiting to commit in model order  X aborted (synthetic result)")
    return out
