"""A step trace as a standalone SVG picture."""

from __future__ import annotations

from typing import Final

from .trace import StepTrace, axis_scale, lane_label, printable, seconds_text, tick_step

__all__ = ["render_timeline_svg"]


def escape(text: str) -> str:
    """``text`` safe inside an XML element: ``&``, ``<``, ``>`` escaped, and every character XML
    cannot hold (control characters, lone surrogates) replaced (see ``printable``)."""
    return printable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoteattr(text: str) -> str:
    """``text`` as a double-quoted XML attribute value."""
    return (
        '"'
        + escape(text)
        .replace('"', "&quot;")
        .replace("\n", "&#10;")
        .replace("\r", "&#13;")
        .replace("\t", "&#9;")
        + '"'
    )


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
.window-count { font-size: 10px; fill: #ffffff; }
.cap { stroke: #2da44e; stroke-dasharray: 2 2; }
.cap-label { font-size: 10px; fill: #2da44e; }
.abort { stroke: #cf222e; stroke-width: 1.5; }
.abort-label { fill: #cf222e; }
"""

#: Narrowest drawn body bar (pixels): a millisecond call in a minute-long step stays visible.
MIN_BAR_WIDTH: Final = 2.0
# Narrowest window segment that gets its count written inside.
_COUNT_WIDTH: Final = 9.0


_LEGEND: Final = (
    ("queued", "queued"),
    ("prepare", "prepare"),
    ("body", "body running"),
    ("hold", "waiting to commit"),
    ("aborted-mark", "aborted"),
    ("abort", "abort set"),
    ("window", "window"),
    ("barrier", "barrier"),
)


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


#: Rows between two lines of barrier labels, and the room kept between two labels on a row.
_LABEL_ROW: Final = 14
_LABEL_GAP: Final = 8.0


def label_rows(spans: list[tuple[float, float]]) -> list[int]:
    """The row of each label ``(left, right)``, in order: the first row whose last label ends
    (with a gap) before this one begins, so that labels of nearby barriers never overlap."""
    ends: list[float] = []  # Invariant: ends[row] is where the last label put on row ends.
    rows = []
    for left, right in spans:
        row = next((r for r, end in enumerate(ends) if left >= end + _LABEL_GAP), len(ends))
        if row == len(ends):
            ends.append(right)
        else:
            ends[row] = right
        rows.append(row)
    return rows


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
    label_width = (
        max([len(lane_label(lane)) for lane in lanes] + [len("window")]) * _CHAR_WIDTH + 16
    )
    outcome_width = max([len(lane.outcome or "(no result)") for lane in lanes] + [6]) + 13
    left = 10 + label_width
    scale = axis_scale(duration, _PLOT_WIDTH)
    top = 60
    window_height = 30
    lanes_bottom = top + _LANE_HEIGHT * len(lanes)
    barriers = trace.barriers()
    barrier_labels = [f"barrier: {lanes[index].call_id} ran alone" for _, _, index in barriers]
    spans = [
        (left + (a - start) * scale, left + (a - start) * scale + len(text) * _CHAR_WIDTH)
        for (a, _, _), text in zip(barriers, barrier_labels, strict=True)
    ]
    rows = label_rows(spans)
    extra = _LABEL_ROW * (max(rows) if rows else 0)  # label rows below the first
    height = lanes_bottom + window_height + 70 + extra
    legend_width = 10 + sum(28 + len(text) * _CHAR_WIDTH for _, text in _LEGEND)
    total_width = max(left + _PLOT_WIDTH + outcome_width * _CHAR_WIDTH + 10, legend_width)

    def x(at: float) -> str:
        return _num(left + (at - start) * scale)

    step = tick_step(duration, _PLOT_WIDTH, 60)
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(total_width)}" '
        f'height="{height}" viewBox="0 0 {_num(total_width)} {height}" '
        f'data-start="0" data-end="{_num(duration)}" data-cap="{trace.cap}">',
        f"<title>turn {trace.turn} step {trace.step}: {len(lanes)} tool calls</title>",
        f"<style>{_STYLE}</style>",
        '<rect width="100%" height="100%" fill="#ffffff"/>',
        f'<text class="title" x="10" y="20">turn {trace.turn} step {trace.step}: '
        f"{len(lanes)} calls, window {trace.cap}, {seconds_text(duration, step)}</text>",
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
            f"{seconds_text(number * step, step)}</text>"
        )
    for row, lane in enumerate(lanes):
        y = top + row * _LANE_HEIGHT
        bar_y = y + (_LANE_HEIGHT - _BAR_HEIGHT) / 2
        outcome = lane.outcome or "(no result)"
        parts.append(
            f'<g class="lane" data-call={quoteattr(lane.call_id)} data-index="{lane.index}" '
            f"data-name={quoteattr(lane.name)} data-mode={quoteattr(lane.mode or '')} "
            f"data-outcome={quoteattr(outcome)}>"
        )
        parts.append(
            f'<text class="label" x="10" y="{_num(y + _LANE_HEIGHT / 2 + 4)}">'
            f"{escape(lane_label(lane))}</text>"
        )
        # The body last, over the hold that follows it: a short body stays visible.
        for kind, a, b in sorted(lane.segments(start, end), key=lambda s: s[0] == "body"):
            width = (b - a) * scale
            if kind == "body":
                width = max(width, MIN_BAR_WIDTH)
            parts.append(
                f'<rect class="{kind}" data-start="{_num(a - start)}" data-end="{_num(b - start)}" '
                f'x="{x(a)}" y="{_num(bar_y)}" width="{_num(width)}" '
                f'height="{_BAR_HEIGHT}"><title>{escape(lane.call_id)} {kind} '
                f"{seconds_text(a - start, step / 10)}–{seconds_text(b - start, step / 10)}</title></rect>"
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
    for (a, b, index), label, row in zip(barriers, barrier_labels, rows, strict=True):
        for at in (a, b):
            parts.append(
                f'<line class="barrier" data-call={quoteattr(lanes[index].call_id)} '
                f'data-time="{_num(at - start)}" x1="{x(at)}" y1="{top - 4}" x2="{x(at)}" '
                f'y2="{lanes_bottom}"/>'
            )
        label_y = lanes_bottom + window_height + 16 + _LABEL_ROW * row
        parts.append(
            f'<text class="barrier-label" data-call={quoteattr(lanes[index].call_id)} '
            f'x="{x(a)}" y="{label_y}">{escape(label)}</text>'
        )
    window_top = lanes_bottom + 4
    parts.append(
        f'<text class="label" x="10" y="{window_top + window_height / 2 + 2}">window</text>'
    )
    cap = max(trace.cap, 1)
    parts.append(
        f'<line class="cap" x1="{x(start)}" y1="{window_top}" x2="{x(end)}" y2="{window_top}"/>'
    )
    parts.append(
        f'<text class="cap-label" x="{_num(left + _PLOT_WIDTH + 10)}" y="{window_top + 4}">'
        f"cap {trace.cap}</text>"
    )
    baseline = window_top + window_height - 6
    for a, b, running in trace.window():
        if running <= 0:
            continue
        bar = (window_height - 6) * min(running, cap) / cap
        width = (b - a) * scale
        parts.append(
            f'<rect class="window" data-count="{running}" data-start="{_num(a - start)}" '
            f'data-end="{_num(b - start)}" x="{x(a)}" '
            f'y="{_num(baseline - bar)}" width="{_num(width)}" '
            f'height="{_num(bar)}"/>'
        )
        if width >= _COUNT_WIDTH:
            parts.append(
                f'<text class="window-count" x="{_num(left + (a - start) * scale + width / 2)}" '
                f'y="{_num(baseline - 2)}" text-anchor="middle">{running}</text>'
            )
    aborted_at = trace.aborted_at
    if aborted_at is not None:
        parts.append(
            f'<line class="abort" data-time="{_num(aborted_at - start)}" x1="{x(aborted_at)}" '
            f'y1="{top - 12}" x2="{x(aborted_at)}" y2="{lanes_bottom + window_height}"/>'
        )
        parts.append(
            f'<text class="abort-label" x="{_num(left + (aborted_at - start) * scale + 3)}" '
            f'y="{top - 26}">abort {seconds_text(aborted_at - start, step, finer=True)}</text>'
        )
    legend_y = lanes_bottom + window_height + 40 + extra
    legend_x = 10.0
    parts.append('<g class="legend">')
    for kind, text in _LEGEND:
        if kind == "aborted-mark":
            parts.append(
                f'<path class="aborted-mark" d="M{_num(legend_x)} {legend_y - 10} l10 10 m0 -10 '
                f'l-10 10"/>'
            )
        elif kind == "abort":
            parts.append(
                f'<line class="abort" x1="{_num(legend_x + 5)}" y1="{legend_y - 12}" '
                f'x2="{_num(legend_x + 5)}" y2="{legend_y + 2}"/>'
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
