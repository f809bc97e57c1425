"""``conformance run`` against hostile ports: answers of the wrong shape, a wrapper whose child
never answers, an answer line that never ends. Every selected case is accounted for."""

from __future__ import annotations

import functools
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conformance.support import PORTS, SPEC, cli, kit_cases, port
from trio_harness._conformance import Case, load_cases, run_cases
from trio_harness._conformance.port import MAX_LINE_BYTES
from trio_harness._conformance.runner import judge

SELECTED = ("scheduling/edge/commit-order-example", "scheduling/edge/cap-null*")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status, out, _ = cli(capsys, "conformance", "run", "--spec", str(SPEC), *argv)
    return status, out


def only(*globs: str) -> list[str]:
    return [arg for glob in globs for arg in ("--only", glob)]


def accounted(area: dict[str, int]) -> int:
    return area["passed"] + area["failed"] + area["skipped"] + area["notRun"]


@pytest.mark.parametrize("how", ["string-block", "string-error", "list-call-id"])
def test_a_port_with_malformed_answers_fails_and_every_case_is_accounted_for(
    how: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    command = f"{port('malformed_answers')} {how}"
    status, out = run(capsys, "--port", command, *only(*SELECTED), "--json", str(report))
    assert status == 5, out
    assert "result: MALFORMED OUTPUT (not an answer line)" in out
    data = json.loads(report.read_text(encoding="utf-8"))
    selected = len(load_cases(SPEC, list(SELECTED)))
    assert selected == 4
    assert accounted(data["areas"]["scheduling"]) == selected
    assert data["areas"]["scheduling"]["passed"] == 0
    (failure,) = data["failures"]
    assert failure["kind"] == "malformed"
    assert "cannot be judged" in failure["diff"]


def test_malformed_answers_in_process_are_failures_too() -> None:
    cases = load_cases(SPEC, list(SELECTED))

    def broken(request: Any) -> Any:
        block = {"content": ["a content block that is a string"], "isError": False}
        event = {"type": "tool/result", "data": {"message": {"content": [block]}}}
        return {"expected": {"events": [event]}}

    report = run_cases(cases, answer=broken)
    assert report.verdict == "malformed"
    assert sum(report.failed.values()) == len(cases)


@functools.cache
def _expected_answer() -> Any:
    return kit_cases()[1]["expected"]


_JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["events", "calls", "data", "type", "error", "message", "content", "id", "seq"]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(expected=_JUNK)
def test_judging_any_answer_never_raises(expected: Any) -> None:
    case = Case("scheduling/x", "scheduling", {"op": "schedule"}, _expected_answer())
    outcome = judge(case, {"expected": expected})
    assert outcome == "pass" or outcome.kind in ("fail", "malformed")


def test_a_port_behind_a_wrapper_is_stopped_with_its_whole_process_group(tmp_path: Path) -> None:
    # The wrapper's child answers the first case and never another: on the hang the runner
    # kills the process group, so the child's open pipe does not keep it waiting.
    pidfile = tmp_path / "child.pid"
    wrapper = PORTS / "wrapper_child_hangs.sh"
    command = shlex.join(["sh", str(wrapper), sys.executable, str(pidfile)])
    argv = [sys.executable, "-m", "trio_harness", "conformance", "run", "--spec", str(SPEC)]
    argv += ["--port", command, "--timeout", "0.5", *only("validation/upstream/*/001*")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "no answer within 0.5 s" in done.stdout
    assert gone(int(pidfile.read_text(encoding="utf-8")))


def gone(pid: int) -> bool:
    """The process has ended (a zombie nobody reaped has ended too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.is_file() and stat.read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0] == "Z"


def test_an_answer_line_past_the_bound_is_malformed(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(capsys, "--port", port("endless_line"), *only("scheduling/edge/cap-zero"))
    assert status == 5
    assert f"answer line longer than {MAX_LINE_BYTES} bytes" in out
    assert "result: MALFORMED OUTPUT (not an answer line)" in out


def test_an_endless_standard_error_line_is_kept_short(capsys: pytest.CaptureFixture[str]) -> None:
    command = f"{port('endless_line')} stderr"
    glob = "scheduling/edge/cap-zero-*"
    status, out = run(capsys, "--port", command, "--timeout", "0.5", *only(glob))
    assert status == 4, out
    assert "no answer within 0.5 s; stderr: xxxx" in out
    assert len(out) < 20_000
