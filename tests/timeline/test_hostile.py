"""Traces from elsewhere (a file, a shared log): refused with ``ValueError`` or drawn safely.

Whatever ``StepTrace.from_json`` accepts, both renderers draw without raising, and the SVG is
well-formed XML holding the input's text only as text (no markup gets through).
"""

from __future__ import annotations

import math
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trio_harness as th
from tests.timeline.steps import demo_trace, first_form
from trio_harness.lowlevel import js_json

SVG = "{http://www.w3.org/2000/svg}"
FORMAT = "trio_harness/step-trace"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode("utf-8"))


def test_the_mode_detail_cannot_inject_markup_into_the_svg() -> None:
    raw = first_form(demo_trace())
    script = '"><script>alert(1)</script><x y="'
    for phase in raw["phases"]:
        if phase[1] == "classified" and phase[2] == 0:
            phase[3] = script
    root = parse(th.timeline.render_timeline_svg(th.timeline.StepTrace.from_json(raw)))
    assert not [element for element in root.iter() if element.tag.endswith("script")]
    lane = next(g for g in root.iter(SVG + "g") if g.get("class") == "lane")
    assert lane.get("data-mode") == script


@pytest.mark.parametrize(
    "text",
    ["a\x00b", "\x1b[31mred\x1b[0m", "lone \ud800 surrogate", "\ufffe", "tab\there", "ok"],
)
def test_text_xml_cannot_hold_is_replaced_in_both_pictures(text: str) -> None:
    raw = first_form(demo_trace())
    raw["calls"][0] = {"callId": text, "name": text}
    for phase in raw["phases"]:
        if phase[1] == "committed" and phase[2] == 0:
            phase[3] = text
    trace = th.timeline.StepTrace.from_json(raw)
    svg = th.timeline.render_timeline_svg(trace)
    svg.encode("utf-8")  # no lone surrogate left
    root = parse(svg)
    lane = next(g for g in root.iter(SVG + "g") if g.get("class") == "lane")
    assert lane.get("data-call") == "".join(c if c.isprintable() else "\ufffd" for c in text)
    lines = th.timeline.render_timeline_text(trace)
    assert all(line.isprintable() for line in lines)
    "\n".join(lines).encode("utf-8")


def trace_with(phases: list[Any], calls: int = 1) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "turn": 0,
        "step": 0,
        "cap": 1,
        "calls": [{"callId": f"c{i}", "name": "t"} for i in range(calls)],
        "phases": phases,
    }


@pytest.mark.parametrize(
    ("phases", "problem"),
    [
        ([[math.nan, "begin", -1, None]], "not a finite number"),
        ([[math.inf, "begin", -1, None]], "not a finite number"),
        ([[-math.inf, "begin", -1, None]], "not a finite number"),
        ([[10**400, "begin", -1, None]], "not a finite number"),
        ([[5e-324, "begin", -1, None]], "subnormal"),
        ([[0, "begin", -1, None], [1e-310, "started", 0, None]], "subnormal"),
        ([[True, "begin", -1, None]], "not a number"),
        ([[1, "started", 0, None], [2, "begin", -1, None]], "comes before 'begin'"),
        ([[1, "begin", -1, None], [0.5, "started", 0, None]], "earlier than 'begin'"),
        ([[1, "begin", -1, None], [1, "begin", -1, None]], "second 'begin'"),
        ([[0, "begin", -1, None], [0, "group-open", -1, False]], "index -1"),
        ([[0, "begin", -1, None], [0, "group-close", -1, None]], "index -1"),
        ([[0, "begin", 0, None]], "step phase with index 0"),
        ([[0, "begin", -1, None], [0, "done", 1, True]], "step phase with index 1"),
        ([[0, "begin", -1, None], [0, "classified", 0, {"a": 1}]], "detail"),
        ([[0, "begin", -1, None], [0, "classified", 0, ["parallel"]]], "detail"),
        ([[0, "begin", -1, None], [0, "classified", 0]], "list of four"),
    ],
)
def test_from_json_refuses_what_no_pool_writes(phases: list[Any], problem: str) -> None:
    with pytest.raises(ValueError, match="phases") as caught:
        th.timeline.StepTrace.from_json(trace_with(phases))
    assert problem in str(caught.value)


def test_from_json_refuses_huge_numbers_in_the_header() -> None:
    for key in ("turn", "step", "cap"):
        raw = trace_with([[0, "begin", -1, None]])
        raw[key] = 10**400
        with pytest.raises(ValueError, match=key):
            th.timeline.StepTrace.from_json(raw)


def deep_line(depth: int) -> str:
    trace = trace_with([[0, "begin", -1, None], [0, "classified", 0, "X"]])
    return js_json(trace).replace('"X"', "[" * depth + "]" * depth)


def test_a_deeply_nested_line_is_a_value_error_naming_the_line() -> None:
    with pytest.raises(ValueError, match=r"line 2: .*detail"):
        th.timeline.traces_from_lines(["", deep_line(100_000)])
    # A deep line that is not a trace at all is passed over, like any other non-trace line.
    assert th.timeline.traces_from_lines(["[" * 100_000 + "]" * 100_000]) == []


@pytest.mark.parametrize(
    "line",
    [
        '{"format": "trio_harness/step-trace", "turn": 0, "step": 0, "cap": 1, "calls": [], '
        '"phases": [[NaN, "begin", -1, null]]}',
        '{"format": "trio_harness/step-trace", "turn": 0, "step": 0, "cap": 1, "calls": [], '
        '"phases": [[Infinity, "begin", -1, null]]}',
        js_json(trace_with([[10**400, "begin", -1, None]])),
        js_json(trace_with([[5e-324, "begin", -1, None]])),
        js_json(trace_with([[0, "begin", -1, None], [0, "group-open", -1, True]])),
        js_json(trace_with([[1, "settled", 0, None], [2, "begin", -1, None]])),
        deep_line(100_000),
    ],
)
def test_the_command_exits_2_with_one_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "trio_harness", "timeline", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("python -m trio_harness timeline: cannot read ")
    assert done.stderr.count("\n") == 1, done.stderr


# Times a hostile file may give: extremes that from_json keeps.
times = st.one_of(
    st.floats(-1e12, 1e12, allow_nan=False, allow_infinity=False, allow_subnormal=False),
    st.integers(-(10**12), 10**12),
    st.sampled_from([0.0, 1e-300, 2.3e-308, 1e-9, 1e12, -1e12, 1e-12]),
)
details = st.one_of(st.none(), st.booleans(), st.text(max_size=8))
phase_names = st.sampled_from(
    [
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
    ]
)


@st.composite
def accepted_traces(draw: st.DrawFn) -> th.timeline.StepTrace:
    calls = draw(st.integers(0, 4))
    begin = draw(times)
    phases: list[Any] = [[begin, "begin", -1, None]]
    for _ in range(draw(st.integers(0, 30))):
        name = draw(phase_names)
        if name in ("abort", "done"):
            index = -1
        elif calls:
            index = draw(st.integers(0, calls - 1))
        else:
            continue
        at = draw(st.one_of(times, st.floats(0, 1e-6), st.floats(0, 1e3)))
        at = at + begin if at + begin >= begin else begin
        if not -1e12 <= at <= 1e12 or (at != 0 and abs(at) < sys.float_info.min):
            at = begin
        phases.append([at, name, index, draw(details)])
    raw = trace_with(phases, calls)
    raw["cap"] = draw(st.integers(0, 10**15))
    raw["calls"] = [
        {"callId": draw(st.text(max_size=30)), "name": draw(st.text(max_size=30))}
        for _ in range(calls)
    ]
    return th.timeline.StepTrace.from_json(raw)


@settings(max_examples=300, deadline=None)
@given(accepted_traces(), st.integers(8, 120))
def test_the_renderers_draw_whatever_from_json_accepts(
    trace: th.timeline.StepTrace, width: int
) -> None:
    lines = th.timeline.render_timeline_text(trace, width=width)
    assert all(line.isprintable() for line in lines)
    svg = th.timeline.render_timeline_svg(trace)
    root = parse(svg)
    assert root.tag == SVG + "svg"
