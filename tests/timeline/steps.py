"""Traced steps for the timeline tests (no tests here)."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

import trio_harness as th
from tests.support.demo_steps import demo_calls, runtime

# The demo step (window 2) on virtual time, per call: (body start, body end, committed).
DEMO_LANES = {
    "c1": (0.0, 3.0, 3.0),
    "c2": (0.0, 1.0, 3.0),
    "c3": (1.0, 2.5, 3.0),
    "c4": (3.0, 4.0, 4.0),
    "c5": (4.0, 6.0, 6.0),
    "c6": (4.0, 5.0, 6.0),
}


def demo_trace() -> th.timeline.StepTrace:
    """The demo step, traced (its own runtime, so independent of ``__main__``)."""
    trace = th.timeline.StepTrace()

    async def step() -> None:
        await th.execute_tool_calls(
            runtime(), th.Session(), demo_calls(), max_parallel_tool_calls=2, tracer=trace
        )

    trio.run(step, clock=trio.testing.MockClock(autojump_threshold=0))
    return trace


def first_form(trace: th.timeline.StepTrace) -> dict[str, Any]:
    """``trace`` in the first JSON form (``trio_harness/step-trace``: phases as
    ``[time, phase, index, detail]`` arrays), as logs written before the packed form hold it;
    ``StepTrace.from_json`` still reads it, and tests edit its phases one by one."""
    return {
        "format": "trio_harness/step-trace",
        "turn": trace.turn,
        "step": trace.step,
        "cap": trace.cap,
        "calls": [{"callId": call_id, "name": name} for call_id, name in trace.calls],
        "phases": [list(phase) for phase in trace.phases],
    }
