"""A traced pool step and its pictures.

Modules, in dependency order:

* :mod:`.trace`: :class:`StepTrace` (a ``PoolTracer``), :class:`Lane`, the JSON codec of a trace
  and the time axis both pictures share;
* :mod:`.text`: :func:`render_timeline_text`, a text Gantt chart;
* :mod:`.svg`: :func:`render_timeline_svg`, a standalone SVG picture.
"""

from __future__ import annotations

from .svg import render_timeline_svg
from .text import render_timeline_text
from .trace import TRACE_EVENT, Lane, StepTrace, traces_from_lines

__all__ = [
    "TRACE_EVENT",
    "Lane",
    "StepTrace",
    "render_timeline_svg",
    "render_timeline_text",
    "traces_from_lines",
]
