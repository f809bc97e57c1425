"""``conformance run``: the kit passes against trio_harness, in-process and through a real port
subprocess; each deliberately wrong port is caught, and the diff names the right call."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.support import SHARED, SHARED_REASON, SPEC, cli, port
from trio_harness._conformance import load_cases, run_cases

SPEC_ARG = ("--spec", str(SPEC))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status, out, _ = cli(capsys, "conformance", "run", *SPEC_ARG, *argv)
    return status, out


@pytest.mark.slow
def test_the_whole_kit_passes_against_trio_harness_in_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out = run(capsys)
    assert status == 0
    assert "PASS validation               4248 passed, 0 failed" in out
    text = (SPEC / "scheduling-vectors.jsonl").read_text(encoding="utf-8")
    scheduling = sum(1 for line in text.splitlines() if line.strip())
    assert f"{scheduling} passed, 0 failed" in out
    assert "result: PASS" in out


@pytest.mark.slow
def test_the_whole_kit_passes_through_a_forwarding_port(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    status, out = run(capsys, "--port", port("forwarding"), "--json", str(report))
    assert status == 0, out
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["verdict"] == "pass"
    assert data["areas"]["validation"] == {"passed": 4248, "failed": 0, "skipped": 0, "notRun": 0}
    assert data["areas"]["scheduling"]["failed"] == 0
    assert data["failures"] == []


def test_the_oracle_itself_is_a_port(capsys: pytest.CaptureFixture[str]) -> None:
    oracle = f"{sys.executable} -m trio_harness oracle"
    status, out = run(capsys, "--port", oracle, "--jobs", "2", "--only", "scheduling/edge/c*")
    assert status == 0, out


# (port, --only glob, failing case, the call the first difference must be about: the expected
# event's, text in the diff)
WRONG_PORTS = [
    (
        "commits_in_completion_order",
        "scheduling/edge/commit-order-example",
        "scheduling/edge/commit-order-example",
        "c0",
        "got:      #3 tool/result c1",
    ),
    (
        "no_exclusive_barrier",
        "scheduling/edge/conclude-then-continue",
        "scheduling/edge/conclude-then-continue",
        "c0",
        "got:      #1 tool/call c1 write",
    ),
    (
        "window_off_by_one",
        "scheduling/edge/default-cap-12-calls",
        "scheduling/edge/default-cap-12-calls",
        "c0",
        "got:      #10 tool/call c10",
    ),
    (
        "abort_marks_unstarted_aborted",
        "scheduling/edge/ask-cancelled-after-abort",
        "scheduling/edge/ask-cancelled-after-abort",
        "c1",
        "got:      #3 tool/result c1 (cites [2]) error ABORTED ",
    ),
    (
        "failure_before_settle",
        "scheduling/edge/failure-waits-for-in-flight",
        "scheduling/edge/failure-waits-for-in-flight",
        "c0",
        "call c0: settled expected 100 ms, got null",
    ),
]


@pytest.mark.parametrize(("name", "only", "case", "call", "text"), WRONG_PORTS)
def test_each_wrong_port_is_caught_at_the_right_call(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    name: str,
    only: str,
    case: str,
    call: str,
    text: str,
) -> None:
    report = tmp_path / "report.json"
    status, out = run(
        capsys,
        "--port",
        port(name),
        "--only",
        "scheduling/edge/*",
        "--only",
        "validation/upstream/*/000*",
        "--json",
        str(report),
    )
    assert status == 1
    assert f"FAIL {case} (call {call})" in out
    assert text in out
    assert "result: FAIL (answers differ)" in out
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["verdict"] == "fail"
    assert data["areas"]["validation"] == {"passed": 9, "failed": 0, "skipped": 0, "notRun": 0}
    [failure] = [failure for failure in data["failures"] if failure["id"] == case]
    assert (failure["call"], failure["kind"]) == (call, "fail")
    assert all(failure["area"] == "scheduling" for failure in data["failures"])


def test_validation_reporting_only_the_first_violation_is_caught(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    status, out = run(
        capsys,
        "--port",
        port("first_violation_only"),
        "--only",
        "validation/upstream/*/00*",
        "--json",
        str(report),
    )
    assert status == 1
    data = json.loads(report.read_text(encoding="utf-8"))
    expected = {case.id: case.expected for case in load_cases(SPEC, ["validation/upstream/*/00*"])}
    several = sorted(
        case_id for case_id, answer in expected.items() if len(answer.get("violations") or []) > 1
    )
    assert several  # the selection holds cases with more than one violation
    assert sorted(failure["id"] for failure in data["failures"]) == several
    for failure in data["failures"]:
        lost = expected[failure["id"]]["violations"][1:]
        shown = "; ".join(
            f"missing [{index}] {json.dumps(text, ensure_ascii=False)}"
            for index, text in enumerate(lost[:6], 1)
        )
        more = f"; and {len(lost) - 6} more" if len(lost) > 6 else ""
        assert failure["diff"] == f".violations: {shown}{more}"
    assert "FAIL validation/upstream/" in out


def test_a_crashing_port_is_reported_as_a_crash(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    status, out = run(
        capsys,
        "--port",
        port("crashes"),
        "--only",
        "validation/upstream/*/001*",
        "--json",
        str(report),
    )
    assert status == 3
    assert "crash at validation/upstream/validate/0012: the port exited with status 3" in out
    assert "stderr: port: internal error, giving up" in out
    assert "result: CRASH (the port exited)" in out
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["verdict"] == "crash"
    assert data["areas"]["validation"] == {"passed": 2, "failed": 1, "skipped": 0, "notRun": 7}


def test_a_hanging_port_is_reported_as_a_hang(capsys: pytest.CaptureFixture[str]) -> None:
    # The only test that waits in real time: the per-case timeout of a real subprocess.
    status, out = run(
        capsys, "--port", port("hangs"), "--only", "validation/upstream/*/001*", "--timeout", "0.5"
    )
    assert status == 4
    assert "hang at validation/upstream/validate/0011: no answer within 0.5 s" in out
    assert "result: HANG (no answer within the timeout)" in out


def test_a_port_printing_garbage_is_reported_as_malformed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out = run(capsys, "--port", port("garbage"), "--only", "scheduling/edge/*")
    assert status == 5
    assert (
        'malformed at scheduling/edge/cap-zero: not a JSON line: "INFO starting up the port' in out
    )
    assert "result: MALFORMED OUTPUT (not an answer line)" in out


def test_a_port_that_cannot_start_is_a_crash(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out = run(
        capsys, "--port", str(tmp_path / "no-such-port"), "--only", "scheduling/edge/*"
    )
    assert status == 3
    assert "crash: cannot start" in out


def test_error_answers_and_unallowed_skips_are_failures() -> None:
    [case] = load_cases(SPEC, ["validation/upstream/*/0001"])
    errors = run_cases([case], answer=lambda request: {"error": "unsupported op"})
    assert errors.verdict == "fail"
    assert errors.failures[0].kind == "error"
    skips = run_cases([case], answer=lambda request: {**request, "expected": {"skipped": "lazy"}})
    assert skips.failures[0].kind == "skipped"
    undefined = {**case.request, "value": {"$undefined": True}}
    allowed = run_cases(
        [type(case)(case.id, case.area, undefined, case.expected)],
        answer=lambda request: {**request, "expected": {"skipped": "no undefined here"}},
    )
    assert allowed.verdict == "pass"
    assert allowed.skipped == {"validation": 1}


def test_a_rejected_cap_compares_the_rejection_not_the_message() -> None:
    [case] = load_cases(SPEC, ["scheduling/edge/cap-zero"])

    def upstream_spelling(request: dict[str, Any]) -> dict[str, Any]:
        return {
            **request,
            "expected": {
                **case.expected,
                "outcome": {"rejectedCap": "maxParallelToolCalls must be a positive integer"},
            },
        }

    assert run_cases([case], answer=upstream_spelling).verdict == "pass"


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = cli(capsys, "conformance", "run", *SPEC_ARG, "--only", "nothing/*")
    assert status == 2
    assert "no case matches --only" in err
    status, _, err = cli(capsys, "conformance", "run", "--spec", str(tmp_path))
    assert status == 2
    assert "no conformance kit files in" in err
    assert cli(capsys, "conformance", "run", *SPEC_ARG, "--jobs", "0")[0] == 2


@pytest.mark.skipif(not (SHARED / "json-schema-test-suite").is_dir(), reason=SHARED_REASON)
def test_the_official_suite_cases_inside_the_subset(capsys: pytest.CaptureFixture[str]) -> None:
    suite = str(SHARED / "json-schema-test-suite")
    status, out = run(
        capsys, "--json-schema-test-suite", suite, "--only", "json-schema-test-suite/*"
    )
    assert status == 0
    assert "json-schema-test-suite   68 passed, 0 failed" in out
    status, out = run(
        capsys,
        "--port",
        port("forwarding"),
        "--json-schema-test-suite",
        suite,
        "--only",
        "json-schema-test-suite/*",
    )
    assert status == 0, out
