"""The report of ``conformance run`` leads to the bug: the case's input, both answers side by side
with the first difference marked (missing and extra items shown), the expected call named, the
behaviour tags, per-call times of both sides, smallest case first, all of it in ``--json``; and
``timeline`` draws a kit case's answers."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.support import SPEC, cli, port
from trio_harness._conformance import load_cases, run_cases
from trio_harness._conformance.compare import compare_scheduling, first_difference
from trio_harness._conformance.failure_view import print_report, side_by_side
from trio_harness._conformance.oracle import answer_request


def test_a_missing_list_item_is_shown_with_its_index_and_text() -> None:
    expected = {"violations": ["a must be a string", "b must be a number", "c is required"]}
    actual = {"violations": ["a must be a string", "c is required"]}
    assert first_difference(expected, actual) == '.violations: missing [1] "b must be a number"'


def test_an_extra_list_item_is_shown_with_its_index_and_text() -> None:
    expected: dict[str, list[str]] = {"violations": []}
    actual = {"violations": ['"x" must be null']}
    assert first_difference(expected, actual) == '.violations: extra [0] "\\"x\\" must be null"'


def test_a_changed_item_is_described_inside_it() -> None:
    expected = {"value": {"a": [1, 2]}}
    actual = {"value": {"a": [1, 3]}}
    assert first_difference(expected, actual) == ".value.a[1]: expected 2, got 3"


def test_a_key_order_difference_is_named() -> None:
    assert first_difference({"a": 1, "b": 2}, {"b": 2, "a": 1}) == (
        ".: key order differs: expected ['a', 'b'], got ['b', 'a']"
    )


def _lose_result(answer: dict[str, Any], call_id: str) -> dict[str, Any]:
    lost = copy.deepcopy(answer)
    lost["events"] = [
        event
        for event in lost["events"]
        if not (
            event["type"] == "tool/result"
            and event["data"]["message"]["content"][0]["toolCallId"] == call_id
        )
    ]
    for seq, event in enumerate(lost["events"]):
        event["seq"] = seq
    return lost


def test_a_lost_result_is_reported_at_the_expected_call_not_the_ports() -> None:
    [case] = load_cases(SPEC, ["scheduling/edge/commit-order-example"])
    # c0's result is lost: in its place the port wrote c1's, but the bug is about c0.
    difference = compare_scheduling(case.expected, _lose_result(case.expected, "c0"))
    assert difference is not None
    call, text = difference
    assert call == "c0"
    assert text.startswith("first differing event is #3 (call c0):")
    assert "  expected: #3 tool/result c0" in text
    assert "  got:      #3 tool/result c1" in text


def test_side_by_side_marks_the_first_difference_and_shows_missing_and_extra_rows() -> None:
    assert side_by_side(["a", "b", "c", "d"], ["a", "c", "d", "e"]) == [
        "   expected | actual",
        "   a        | a",
        ">- b        | ",
        "   c        | c",
        "   d        | d",
        " +          | e",
    ]
    assert side_by_side(["x", "b"], ["y", "b"]) == [
        "   expected | actual",
        ">! x        | y",
        "   b        | b",
    ]


def _drop_second_violation(request: dict[str, Any]) -> dict[str, Any]:
    answer = answer_request(request)
    violations = (answer.get("expected") or {}).get("violations")
    if type(violations) is list and len(violations) > 1:
        del violations[1]
    return answer


def test_a_validation_failure_carries_input_both_answers_and_its_kit_line() -> None:
    cases = load_cases(SPEC, ["validation/upstream/validate/3525"])
    report = run_cases(cases, answer=_drop_second_violation)
    [failure] = report.failures
    assert failure.request == cases[0].request
    assert failure.expected == cases[0].expected
    assert failure.actual == {"violations": ['"[0]" must be null']}
    assert failure.source == "upstream-vectors.jsonl:3525"
    data = report.to_json()["failures"][0]
    assert data["request"]["schema"] == {
        "type": "array",
        "items": {"type": "null", "default": None},
    }
    assert data["expected"] == cases[0].expected
    assert data["actual"] == failure.actual


def test_the_text_report_shows_the_input_and_the_answers_side_by_side() -> None:
    report = run_cases(
        load_cases(SPEC, ["validation/upstream/validate/3525"]), answer=_drop_second_violation
    )
    out = io.StringIO()
    print_report(report, out)
    text = out.getvalue()
    assert "kit line: upstream-vectors.jsonl:3525" in text
    assert '.violations: missing [1] "\\"[1]\\" must be null"' in text
    assert '"schema": {"type":"array","items":{"type":"null","default":null}}' in text
    rows = text.splitlines()
    start = rows.index("    answers:")
    assert [row.strip() for row in rows[start + 1 : start + 8]] == [
        "expected                   | actual",
        "{                          | {",
        '"violations": [          |   "violations": [',
        '"\\"[0]\\" must be null" |     "\\"[0]\\" must be null"',
        '>-     "\\"[1]\\" must be null" |',
        "]                        |   ]",
        "}                          | }",
    ]


def test_failures_are_listed_smallest_case_first_and_every_one_is_named() -> None:
    cases = load_cases(SPEC, ["validation/upstream/validate/00*"])
    report = run_cases(cases, answer=lambda request: {**request, "expected": {"wrong": True}})
    sizes = [failure.size for failure in report.failures]
    assert len(sizes) == len(cases) > 20
    assert sizes == sorted(sizes)
    assert sizes[0] < sizes[-1]
    out = io.StringIO()
    print_report(report, out, detailed=3)
    text = out.getvalue()
    assert text.count("    input:") == 3
    for failure in report.failures:
        assert f"FAIL {failure.id}" in text
    assert text.index(f"FAIL {report.failures[0].id}") < text.index(
        f"FAIL {report.failures[-1].id}"
    )


def test_a_scheduling_failure_shows_tags_and_the_per_call_times_of_both(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report_file = tmp_path / "report.json"
    status, out, _ = cli(
        capsys,
        "conformance",
        "run",
        "--spec",
        str(SPEC),
        "--port",
        port("failure_before_settle"),
        "--only",
        "scheduling/edge/failure-waits-for-in-flight",
        "--json",
        str(report_file),
    )
    assert status == 1
    assert "FAIL scheduling/edge/failure-waits-for-in-flight (call c0)" in out
    assert "behaviours: " in out
    assert "f.5 failure-waits-for-in-flight" in out
    [first] = [line for line in out.splitlines() if line.lstrip().startswith(">")]
    assert first.split("|")[0].split()[-6:] == ["c0:", "0", "0", "0", "100", "-"]
    assert first.split("|")[1].split() == ["c0:", "0", "0", "0", "-", "-"]
    data = json.loads(report_file.read_text(encoding="utf-8"))
    [failure] = data["failures"]
    assert "f.5 failure-waits-for-in-flight" in failure["tags"]
    assert failure["request"]["scenario"]["schedulerFailure"]["call"] == "c2"
    assert failure["expected"]["calls"][0]["settled"] == 100
    assert failure["actual"]["calls"][0]["settled"] is None
    assert failure["source"].startswith("scheduling-vectors.jsonl:")


def test_timeline_draws_the_expected_and_actual_answers_of_a_reported_case(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report_file = tmp_path / "report.json"
    cli(
        capsys,
        "conformance",
        "run",
        "--spec",
        str(SPEC),
        "--port",
        port("failure_before_settle"),
        "--only",
        "scheduling/edge/failure-waits-for-in-flight",
        "--json",
        str(report_file),
    )
    status, out, err = cli(capsys, "timeline", str(report_file), "--width", "30")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("scheduling/edge/failure-waits-for-in-flight (fail): call c0")
    rows = {line[:13].strip(): line[13:] for line in lines[3:9]}
    # 300 ms over 30 columns: c0's body (0-100 ms) is 10 columns; the port's never settles.
    assert rows["expected c0"].startswith("#" * 10 + " ")
    assert rows["expected c0"].rstrip().endswith("0 0 0 100 -")
    assert rows["actual c0"].startswith("#" * 30)
    assert rows["actual c0"].rstrip().endswith("0 0 0 - -")


def test_timeline_draws_a_kit_case_by_id(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(
        capsys,
        "timeline",
        str(SPEC / "scheduling-vectors.jsonl"),
        "--case",
        "scheduling/edge/commit-order-example",
        "--width",
        "45",
    )
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("scheduling/edge/commit-order-example [")
    c1 = next(line for line in lines if line.startswith("expected c1"))
    # 90 ms over 45 columns: body 0-20 ms, then waiting to commit until c0 commits at 50 ms.
    assert c1[13:].startswith("#" * 10 + "~" * 15 + "*")
    status, _, err = cli(
        capsys, "timeline", str(SPEC / "scheduling-vectors.jsonl"), "--case", "nothing/*"
    )
    assert status == 2
    assert "holds no scheduling case matching nothing/*" in err
