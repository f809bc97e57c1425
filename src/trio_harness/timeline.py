"""Seeing a pool step: a tracer that records every phase of every call, and two pictures of it.

Pass a :class:`StepTrace` as ``execute_tool_calls(..., tracer=trace)``; :meth:`StepTrace.lanes`
gives one :class:`Lane` per call; :func:`render_timeline_text` draws a text Gantt chart and
:func:`render_timeline_svg` a standalone SVG. Traces travel as JSON lines
(:func:`traces_from_lines`) or as :data:`TRACE_EVENT` events of a session log;
``python -m trio_harness timeline FILE`` draws both.
"""

from __future__ import annotations

from ._public import publish
from ._timeline import (
    TRACE_EVENT,
    Lane,
    StepTrace,
    render_timeline_svg,
    render_timeline_text,
    traces_from_lines,
)

__all__ = [
    "TRACE_EVENT",
    "Lane",
    "StepTrace",
    "render_timeline_svg",
    "render_timeline_text",
    "traces_from_lines",
]

publish(__name__, globals(), __all__)
