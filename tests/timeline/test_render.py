"""The text Gantt chart, the SVG picture (parsed, geometry against the trace), a real render,
and ``python -m trio_harness timeline``."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import trio_harness as th
from tests.timeline.png import pixel, read_png
from tests.timeline.steps import DEMO_LANES, demo_trace, first_form
from trio_harness.__main__ import main

SVG = "{http://www.w3.org/2000/svg}"

DEMO_TEXT = """\
turn 0 step 0: 6 calls, window 2, 0s to 6s
          0s      1s      2s      3s      4s      5s      6s
          |-------|-------|-------|-------|-------|-------|
c1 read   ########################                          ok
c2 read   ########~~~~~~~~~~~~~~~~                          ok
c3 read   ........############~~~~                          ok
c4 write  ........................########                  ok  exclusive
c5 read   ................................################  ok
c6 read   ................................########~~~~~~~~  ok
window    222222222222222222221111111111112222222211111111
barriers                          |=======|                  c4 ran alone
legend: . queued (window or barrier)  : prepare  # body running
        ~ settled, waiting to commit in model order  X aborted (synthetic result)"""


def test_the_text_gantt_of_the_demo_step() -> None:
    assert "\n".join(th.timeline.render_timeline_text(demo_trace())) == DEMO_TEXT


def test_the_text_gantt_scales_to_its_width() -> None:
    lines = th.timeline.render_timeline_text(demo_trace(), width=24)
    assert lines[3] == "c1 read   ############              ok"
    assert lines[6] == "c4 write  ............####          ok  exclusive"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode("utf-8"))


def scale_of(root: ET.Element) -> tuple[float, float]:
    """(x of t=0, pixels per second), read from the axis ticks."""
    ticks = {
        float(t.get("data-time", "")): float(t.get("x1", ""))
        for t in root.iter(SVG + "line")
        if t.get("class") == "tick"
    }
    assert sorted(ticks) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    return ticks[0.0], ticks[1.0] - ticks[0.0]


def test_the_svg_has_one_lane_per_call_drawn_at_the_traced_times() -> None:
    trace = demo_trace()
    root = parse(th.timeline.render_timeline_svg(trace))
    assert root.tag == SVG + "svg"
    assert root.findtext(SVG + "title") == "turn 0 step 0: 6 tool calls"
    x0, px = scale_of(root)
    lanes = [g for g in root.iter(SVG + "g") if g.get("class") == "lane"]
    assert [g.get("data-call") for g in lanes] == ["c1", "c2", "c3", "c4", "c5", "c6"]
    previous_y = -1.0
    for g in lanes:
        call = g.get("data-call", "")
        body_start, body_end, committed = DEMO_LANES[call]
        assert g.get("data-outcome") == "ok"
        assert g.get("data-mode") == ("exclusive" if call == "c4" else "parallel")
        texts = [t.text for t in g.iter(SVG + "text")]
        assert texts[0] == f"{call} {'write' if call == 'c4' else 'read'}"
        assert texts[1] == ("ok  exclusive" if call == "c4" else "ok")
        rects = {r.get("class"): r for r in g.iter(SVG + "rect")}
        body = rects["body"]
        assert float(body.get("x", "")) == pytest.approx(x0 + body_start * px, abs=0.01)
        assert float(body.get("width", "")) == pytest.approx((body_end - body_start) * px, abs=0.01)
        if committed > body_end:
            hold = rects["hold"]
            assert float(hold.get("x", "")) == pytest.approx(x0 + body_end * px, abs=0.01)
            assert float(hold.get("width", "")) == pytest.approx(
                (committed - body_end) * px, abs=0.01
            )
        else:
            assert "hold" not in rects
        if body_start > 0:
            assert float(rects["queued"].get("width", "")) == pytest.approx(
                body_start * px, abs=0.01
            )
        # Lanes are stacked top to bottom in model order, bars inside their lane.
        y = float(body.get("y", ""))
        assert y > previous_y
        previous_y = y
    # The barrier: where the exclusive call ran, alone.
    barriers = [
        line
        for line in root.iter(SVG + "line")
        if line.get("class") == "barrier" and line.get("data-call")
    ]
    assert [(b.get("data-call"), float(b.get("x1", ""))) for b in barriers] == [
        ("c4", pytest.approx(x0 + 3 * px, abs=0.01)),
        ("c4", pytest.approx(x0 + 4 * px, abs=0.01)),
    ]
    labels = [t.text for t in root.iter(SVG + "text") if t.get("class") == "barrier-label"]
    assert labels == ["barrier: c4 ran alone"]
    window = [
        (float(r.get("data-start", "")), float(r.get("data-end", "")), int(r.get("data-count", "")))
        for r in root.iter(SVG + "rect")
        if r.get("class") == "window" and r.get("data-count")
    ]
    assert window == trace.window()
    assert int(root.get("data-cap", "")) == 2


def test_the_svg_of_an_aborted_step_marks_the_synthetic_results() -> None:
    trace = demo_trace()
    raw = first_form(trace)
    # Cut the step at t=0.5 the way the pool does: the calls not started get synthetic results.
    raw["phases"] = [p for p in raw["phases"] if p[0] == 0.0 and p[1] != "done"]
    started = {p[2] for p in raw["phases"] if p[1] == "started"}
    raw["phases"] += [[0.5, "committed", i, "ABORTED"] for i in sorted(started)]
    raw["phases"] += [
        [0.5, "aborted", i, "ABORTED_BEFORE_DISPATCH"] for i in range(6) if i not in started
    ]
    raw["phases"].append([0.5, "done", -1, True])
    cut = th.timeline.StepTrace.from_json(raw)
    root = parse(th.timeline.render_timeline_svg(cut))
    marks = [
        p
        for p in root.iter(SVG + "path")
        if p.get("class") == "aborted-mark" and p.get("data-time")
    ]
    assert len(marks) == 4
    outcomes = [g.get("data-outcome") for g in root.iter(SVG + "g") if g.get("class") == "lane"]
    assert outcomes == ["ABORTED", "ABORTED"] + ["ABORTED_BEFORE_DISPATCH"] * 4
    text = th.timeline.render_timeline_text(cut)
    assert text[5].endswith("X  ABORTED_BEFORE_DISPATCH")


def test_names_are_escaped_in_the_svg() -> None:
    raw = demo_trace().to_json()
    raw["calls"][0]["callId"] = 'a<b>&"c'
    root = parse(th.timeline.render_timeline_svg(th.timeline.StepTrace.from_json(raw)))
    lane = next(g for g in root.iter(SVG + "g") if g.get("class") == "lane")
    assert lane.get("data-call") == 'a<b>&"c'


CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="headless Chromium (/usr/bin/chromium) is not installed"
)
def test_chromium_renders_the_demo_svg(tmp_path: Path) -> None:
    svg_text = th.timeline.render_timeline_svg(demo_trace())
    root = parse(svg_text)
    width, height = float(root.get("width", "")), float(root.get("height", ""))
    svg = tmp_path / "demo.svg"
    svg.write_text(svg_text, encoding="utf-8")
    shot = tmp_path / "demo.png"
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--force-device-scale-factor=1",
            f"--screenshot={shot}",
            f"--window-size={int(width) + 1},{int(height) + 1}",
            svg.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    image = read_png(shot.read_bytes())
    assert image[:2] == (int(width) + 1, int(height) + 1)
    x0, px = scale_of(root)
    lanes = [g for g in root.iter(SVG + "g") if g.get("class") == "lane"]
    for g in lanes:
        body = next(r for r in g.iter(SVG + "rect") if r.get("class") == "body")
        middle_y = float(body.get("y", "")) + float(body.get("height", "")) / 2
        start, end, _ = DEMO_LANES[g.get("data-call", "")]
        # The body bar is drawn in its colour (#0969da) inside its span, and not before it.
        assert pixel(image, x0 + (start + end) / 2 * px, middle_y) == (0x09, 0x69, 0xDA)
        if start > 0:
            assert pixel(image, x0 + start / 2 * px, middle_y) == (0xEA, 0xEE, 0xF2)
    assert pixel(image, 5, 5) == (255, 255, 255)


def test_the_timeline_command_draws_the_demo_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace_file = tmp_path / "trace.jsonl"
    assert main(["demo", "--trace", str(trace_file)]) == 0
    demo_out = capsys.readouterr().out
    assert DEMO_TEXT in demo_out
    assert main(["timeline", str(trace_file)]) == 0
    assert capsys.readouterr().out == DEMO_TEXT + "\n"
    out_svg = tmp_path / "out.svg"
    assert main(["timeline", str(trace_file), "--svg", str(out_svg)]) == 0
    assert capsys.readouterr().out == f"wrote {out_svg}\n"
    assert out_svg.read_text(encoding="utf-8") == th.timeline.render_timeline_svg(demo_trace())


def test_the_timeline_command_reads_trace_events_of_a_session_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "session.jsonl"
    with th.log.DurableSession.open(path) as session:
        session.append(th.timeline.TRACE_EVENT, demo_trace().to_json())
        session.append(th.timeline.TRACE_EVENT, demo_trace().to_json())
    assert main(["timeline", str(path), "--width", "24"]) == 0
    out = capsys.readouterr().out
    assert out.count("turn 0 step 0: 6 calls") == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00", "cannot read {path}: "),
        (b'{"seq":0,"type":"note","data":{}}\n', "{path} holds no step trace"),
        (b"", "{path} holds no step trace"),
        (
            b'{"format": "trio_harness/step-trace", "turn": 0}\n',
            "cannot read {path}: line 1: step trace field 'step'",
        ),
    ],
)
def test_the_timeline_command_explains_bad_files_without_a_traceback(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "input.jsonl"
    path.write_bytes(content)
    done = subprocess.run(
        [sys.executable, "-m", "trio_harness", "timeline", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("python -m trio_harness timeline: " + message.format(path=path))
    assert "Traceback" not in done.stderr


def test_the_timeline_command_reports_a_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["timeline", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_docs_picture_is_the_demo_step() -> None:
    # Regenerate with: python -m trio_harness demo --trace t.jsonl &&
    #   python -m trio_harness timeline t.jsonl --svg docs/_static/demo-timeline.svg
    from trio_harness.__main__ import demo_trace as main_demo_trace

    picture = Path(__file__).resolve().parents[2] / "docs" / "_static" / "demo-timeline.svg"
    assert picture.read_text(encoding="utf-8") == th.timeline.render_timeline_svg(main_demo_trace())


def test_sub_second_steps_are_labelled_in_their_unit() -> None:
    raw = first_form(demo_trace())
    raw["phases"] = [[t / 1000, *rest] for t, *rest in raw["phases"]]
    lines = th.timeline.render_timeline_text(th.timeline.StepTrace.from_json(raw))
    assert lines[0] == "turn 0 step 0: 6 calls, window 2, 0s to 6ms"
    assert lines[1].split() == ["0ms", "1ms", "2ms", "3ms", "4ms", "5ms", "6ms"]
    assert lines[3:9] == DEMO_TEXT.splitlines()[3:9]
    raw["phases"] = [[t / 1000, *rest] for t, *rest in raw["phases"]]
    micro = th.timeline.render_timeline_text(th.timeline.StepTrace.from_json(raw))
    assert micro[1].split() == ["0us", "1us", "2us", "3us", "4us", "5us", "6us"]


def test_the_labels_of_nearby_barriers_never_overlap() -> None:
    # Two writes of 0.1 s each, then a long read: the two barriers are 0.1 s apart, closer than
    # a label is wide, so the second label goes one row down; the legend moves down with it.
    import trio
    import trio.testing

    from tests.support.demo_steps import call, runtime

    trace = th.timeline.StepTrace()
    calls = [
        call("c1", "write", "a", 0.1),
        call("c2", "write", "b", 0.1),
        call("c3", "read", "c", 2.0),
        call("c4", "write", "d", 0.1),
    ]

    async def step() -> None:
        await th.execute_tool_calls(runtime(), th.Session(), calls, tracer=trace)

    trio.run(step, clock=trio.testing.MockClock(autojump_threshold=0))
    root = parse(th.timeline.render_timeline_svg(trace))
    labels = [t for t in root.iter(SVG + "text") if t.get("class") == "barrier-label"]
    assert [t.get("data-call") for t in labels] == ["c1", "c2", "c4"]
    boxes = [
        (float(t.get("x", "")), float(t.get("y", "")), len(t.text or "") * 7.8) for t in labels
    ]
    for i, (x1, y1, w1) in enumerate(boxes):
        for x2, y2, w2 in boxes[i + 1 :]:
            assert y1 != y2 or x1 + w1 <= x2 or x2 + w2 <= x1, (boxes, i)
    rows = sorted({y for _, y, _ in boxes})
    assert [y for _, y, _ in boxes] == [rows[0], rows[1], rows[0]]  # c4's label is far enough
    legend = [t for t in root.iter(SVG + "text") if t.get("class") == "legend"]
    assert min(float(t.get("y", "")) for t in legend) > rows[1] + 10
    assert float(root.get("height", "")) > max(float(t.get("y", "")) for t in legend)


def test_label_rows_reuse_the_first_row_with_room() -> None:
    from trio_harness._timeline.svg import label_rows

    assert label_rows([]) == []
    assert label_rows([(0, 100), (10, 110), (20, 120)]) == [0, 1, 2]
    assert label_rows([(0, 100), (50, 150), (120, 200), (200, 300)]) == [0, 1, 0, 1]
    assert label_rows([(0, 100), (108, 150)]) == [0, 0]  # the gap (8 px) is enough
