"""Any step of a log drawn (``--turn``/``--step``), the abort instant marked, the window lane
numbered, millisecond calls visible."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import trio
import trio.testing

import trio_harness as th
from tests.support.demo_steps import call, runtime
from tests.timeline.steps import demo_trace
from trio_harness.__main__ import main

SVG = "{http://www.w3.org/2000/svg}"


def traced(turn: int, step: int) -> dict[str, object]:
    raw = demo_trace().to_json()
    raw["turn"], raw["step"] = turn, step
    return raw


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "agent.jsonl"
    with th.log.DurableSession.open(path) as session:
        for turn, step in ((0, 0), (0, 1), (1, 0), (1, 1), (1, 2)):
            session.append("note", {"between": [turn, step]})
            session.append(th.timeline.TRACE_EVENT, traced(turn, step))
    return path


def test_the_command_draws_the_chosen_step_of_a_log(
    log: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["timeline", str(log), "--turn", "1", "--step", "2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "turn 1 step 2: 6 calls, window 2, 0s to 6s"
    assert out.count("calls, window") == 1
    assert main(["timeline", str(log), "--step", "1"]) == 0
    titles = [line for line in capsys.readouterr().out.splitlines() if "calls, window" in line]
    assert [title.split(":")[0] for title in titles] == ["turn 0 step 1", "turn 1 step 1"]
    picture = tmp_path / "step.svg"
    assert main(["timeline", str(log), "--turn", "0", "--step", "1", "--svg", str(picture)]) == 0
    root = ET.fromstring(picture.read_bytes())
    assert root.findtext(SVG + "title") == "turn 0 step 1: 6 tool calls"


def test_a_missing_step_or_an_ambiguous_svg_is_one_line_and_exit_2(
    log: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["timeline", str(log), "--turn", "3"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"python -m trio_harness timeline: {log} has no trace of turn 3; it has turn 0 step 0, "
        "turn 0 step 1, turn 1 step 0, turn 1 step 1, turn 1 step 2\n"
    )
    assert main(["timeline", str(log), "--step", "0", "--svg", str(tmp_path / "x.svg")]) == 2
    assert capsys.readouterr().err == (
        f"python -m trio_harness timeline: 2 traces of {log} match step 0; choose one with "
        "--turn and --step\n"
    )


async def test_the_abort_instant_is_marked(autojump_clock: trio.testing.MockClock) -> None:
    trace = th.timeline.StepTrace()
    abort = trio.Event()
    calls = [call("c1", "read", "a", 1), call("c2", "read", "b", 3), call("c3", "write", "c", 1)]
    async with trio.open_nursery() as nursery:

        async def abort_at(seconds: float) -> None:
            await trio.sleep(seconds)
            abort.set()

        nursery.start_soon(abort_at, 1.5)
        await th.execute_tool_calls(runtime(), th.Session(), calls, abort=abort, tracer=trace)
    assert trace.aborted_at == 1.5
    lines = th.timeline.render_timeline_text(trace, width=30)
    abort_line = next(line for line in lines if line.startswith("abort"))
    column = round(1.5 / 1.5 * 30)  # the step ends at the abort: the last column
    assert abort_line.index("^") == lines[2].index("|") + min(column, 29)
    assert abort_line.endswith("^ abort set at 1.5s")
    root = ET.fromstring(th.timeline.render_timeline_svg(trace).encode())
    marks = [line for line in root.iter(SVG + "line") if line.get("class") == "abort"]
    assert [mark.get("data-time") for mark in marks if mark.get("data-time")] == ["1.5"]
    labels = [t.text for t in root.iter(SVG + "text") if t.get("class") == "abort-label"]
    assert labels == ["abort 1.5s"]


def test_a_step_that_was_never_aborted_has_no_abort_mark() -> None:
    trace = demo_trace()
    assert trace.aborted_at is None
    assert not [
        line for line in th.timeline.render_timeline_text(trace) if line.startswith("abort")
    ]


def test_the_window_lane_is_labelled_with_numbers() -> None:
    root = ET.fromstring(th.timeline.render_timeline_svg(demo_trace()).encode())
    counts = [t.text for t in root.iter(SVG + "text") if t.get("class") == "window-count"]
    assert counts == [str(running) for _, _, running in demo_trace().window() if running > 0]
    caps = [t.text for t in root.iter(SVG + "text") if t.get("class") == "cap-label"]
    assert caps == ["cap 2"]


async def test_a_millisecond_call_in_a_long_step_stays_visible(
    autojump_clock: trio.testing.MockClock,
) -> None:
    trace = th.timeline.StepTrace()
    calls = [call("slow", "read", "a", 60), call("quick", "read", "b", 0.001)]
    await th.execute_tool_calls(runtime(), th.Session(), calls, tracer=trace)
    row = next(line for line in th.timeline.render_timeline_text(trace) if line.startswith("quick"))
    assert row.count("#") == 1
    root = ET.fromstring(th.timeline.render_timeline_svg(trace).encode())
    lane = next(
        g
        for g in root.iter(SVG + "g")
        if g.get("class") == "lane" and g.get("data-call") == "quick"
    )
    body = next(r for r in lane.iter(SVG + "rect") if r.get("class") == "body")
    assert float(body.get("width", "")) == 2.0
    assert body.get("data-end") == "0"  # the true times are kept (0.001 s rounds to 0.00)
