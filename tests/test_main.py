"""``python -m trio_harness demo``: the newcomer's first command shows both mechanisms."""

from __future__ import annotations

import pytest

from trio_harness.__main__ import main


def test_demo_shows_every_violation_and_an_ordered_step(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    violations = [line.strip()[2:] for line in out.splitlines() if line.startswith("  - ")]
    assert violations == [
        'missing required property "path"',
        '"mode" must be one of ["r","rb"]',
        '"offset" must be an integer',
        '"tags[1]" must be a string',
        '"options.follow" must be a boolean',
        '"options.x" is not a declared property (additionalProperties: false)',
    ]
    assert "parameters.query.pattern is not supported by the value schema DSL" in out
    log = [line.split()[1:3] for line in out.splitlines() if line.startswith("  #")]
    assert log == [
        ["tool/call", "c1"],
        ["tool/call", "c2"],
        ["tool/call", "c3"],
        ["tool/result", "c1"],
        ["tool/result", "c2"],
        ["tool/result", "c3"],
        ["tool/call", "c4"],
        ["tool/result", "c4"],
        ["tool/call", "c5"],
        ["tool/call", "c6"],
        ["tool/result", "c5"],
        ["tool/result", "c6"],
    ]
    # c2 finished first (t=1.0) yet c1's result was committed first; the write ran alone.
    assert "t= 1.0s  body end    c2" in out
    assert "t= 3.0s  body start  c4 write out.txt  (exclusive: runs alone)" in out
    assert "outcome: concluded=False aborted=False\n" in out
    # The step's timeline: one row per call (body #, held for in-order commit ~), the window
    # occupancy and the barrier where the exclusive write ran alone.
    timeline = out.split("== 3. The step's timeline", 1)[1].splitlines()[1:]
    assert timeline[0] == "turn 0 step 0: 6 calls, window 2, 0s to 6s"
    assert timeline[3:12] == [
        "c1 read   ########################                          ok",
        "c2 read   ########~~~~~~~~~~~~~~~~                          ok",
        "c3 read   ........############~~~~                          ok",
        "c4 write  ........................########                  ok  exclusive",
        "c5 read   ................................################  ok",
        "c6 read   ................................########~~~~~~~~  ok",
        "window    222222222222222222221111111111112222222211111111",
        "barriers                          |=======|                  c4 ran alone",
        "legend: . queued (window or barrier)  : prepare  # body running",
    ]


def test_a_command_is_required() -> None:
    with pytest.raises(SystemExit):
        main([])
