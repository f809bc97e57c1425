"""``python -m trio_harness oracle`` answers scheduling scenarios and validation ops on one stream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance.support import SPEC, cli
from trio_harness._conformance.oracle import answer_line
from trio_harness.lowlevel import js_json, run_scenario


def test_one_stream_mixes_validation_and_scheduling_and_survives_bad_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    validation = (SPEC / "upstream-vectors.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    scenario = {
        "tools": [{"name": "read"}],
        "calls": [{"id": "c0", "name": "read", "body": {"ms": 5}}],
    }
    lines = [
        validation[0],
        json.dumps({"op": "schedule", "id": "mine", "scenario": scenario}),
        "not json",
        json.dumps({"op": "schedule", "scenario": {"calls": "x"}}),
        "",
        validation[1],
        json.dumps({"op": "schedule", "scenario": scenario, "expected": None}),
        validation[2],
    ]
    source = tmp_path / "cases.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, out, _ = cli(capsys, "oracle", "--input", str(source))
    assert status == 0
    answers = out.splitlines()
    answer = run_scenario(scenario).answer
    assert answers == [
        answer_line(validation[0]),
        js_json({"op": "schedule", "id": "mine", "scenario": scenario, "expected": answer}),
        '{"error":"malformed line: not JSON"}',
        '{"error":"invalid scenario: scenario.calls must be a list"}',
        '{"error":"malformed line: blank"}',  # every line gets exactly one answer
        answer_line(validation[1]),
        js_json({"op": "schedule", "scenario": scenario, "expected": answer}),
        answer_line(validation[2]),
    ]


def test_validation_answers_are_unchanged_by_the_scheduling_oracle(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = SPEC / "upstream-vectors.jsonl"
    expected = [answer_line(line) for line in path.read_text(encoding="utf-8").splitlines()]
    status, out, _ = cli(capsys, "oracle", "--input", str(path))
    assert status == 0
    assert out.splitlines() == expected
