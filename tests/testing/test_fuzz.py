"""``conformance fuzz``: finds and shrinks planted port bugs, passes a correct port; and the
library imports without hypothesis."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trio_harness import testing
from trio_harness.__main__ import main

PORTS = Path(__file__).resolve().parents[1] / "conformance" / "ports"


def port(name: str) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(PORTS / f'{name}.py'))}"


def fuzz(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, float]:
    started = time.perf_counter()
    status = main(["conformance", "fuzz", *argv])
    return status, capsys.readouterr().out, time.perf_counter() - started


def minimal_vector(out: str) -> dict[str, object]:
    lines = out.splitlines()
    at = lines.index(
        "minimal case (a ready-to-save vector line; expected = the reference's answer):"
    )
    vector: dict[str, object] = json.loads(lines[at + 1])
    return vector


@pytest.mark.slow
def test_fuzz_shrinks_a_port_that_drops_the_last_violation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--port", port("first_violation_only"), "--area", "validation"]
    status, out, _ = fuzz(capsys, *argv, "--examples", "100", "--seed", "2")
    assert status == 1
    assert "validation: DISAGREEMENT" in out
    vector = minimal_vector(out)
    violations = vector["expected"]["violations"]  # type: ignore[index]
    assert len(violations) == 2  # shrunk: just enough to have a last violation to drop
    assert "port answer:\n" + json.dumps({"violations": violations[:1]}) in out
    # The seed makes the run reproducible: the same minimal case again.
    again, out_again, _ = fuzz(capsys, *argv, "--examples", "100", "--seed", "2")
    assert again == 1
    assert minimal_vector(out_again) == vector


@pytest.mark.slow
def test_fuzz_shrinks_a_port_without_exclusive_barriers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--port", port("no_exclusive_barrier"), "--area", "scheduling"]
    status, out, _ = fuzz(capsys, *argv, "--examples", "50", "--seed", "1")
    assert status == 1
    vector = minimal_vector(out)
    assert vector["op"] == "schedule"
    # Shrunk to the essence: a parallel call, then an exclusive one started while it runs.
    assert len(vector["scenario"]["calls"]) == 2  # type: ignore[index]
    assert "first differing event" in out
    assert "reproduce: python -m trio_harness conformance fuzz" in out
    # The printed vector is a kit line: the reference answers it with its own expected.
    assert testing.run_scenario(vector["scenario"]) == vector["expected"]  # type: ignore[arg-type]


@pytest.mark.slow
def test_fuzz_shrinks_a_port_that_marks_unstarted_calls_aborted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--port", port("abort_marks_unstarted_aborted"), "--area", "scheduling"]
    status, out, _ = fuzz(capsys, *argv, "--examples", "50", "--seed", "1")
    assert status == 1
    vector = minimal_vector(out)
    assert len(vector["scenario"]["calls"]) == 1  # type: ignore[index]
    assert vector["scenario"]["abortAtMs"] == 0  # type: ignore[index]
    assert "ABORTED_BEFORE_DISPATCH" in out


def test_fuzz_passes_a_correct_forwarding_port(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = fuzz(capsys, "--port", port("forwarding"), "--examples", "20", "--seed", "7")
    assert status == 0
    assert "validation: 20 cases, the port agrees" in out
    assert "scheduling: 20 cases, the port agrees" in out


def test_fuzz_reports_a_crashing_port(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = fuzz(
        capsys, "--port", port("crashes"), "--area", "validation", "--examples", "10", "--seed", "1"
    )
    assert status == 3
    assert "validation: CRASH after 3 cases" in out


BLOCK_HYPOTHESIS = """
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "hypothesis" or name.startswith("hypothesis."):
            raise ImportError("hypothesis is blocked")
        return None

sys.meta_path.insert(0, Block())
import trio_harness, trio_harness.lowlevel, trio_harness.providers
import trio_harness._conformance as kit
assert not any(m == "hypothesis" or m.startswith("hypothesis.") for m in sys.modules)
from trio_harness.__main__ import main
status = main(["conformance", "fuzz", "--port", "true"])
assert status == 2, status
try:
    import trio_harness.testing
except ImportError as error:
    print("testing needs hypothesis:", error)
"""


def test_the_library_imports_without_hypothesis() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_HYPOTHESIS],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "testing needs hypothesis: hypothesis is blocked" in done.stdout
    assert "pip install 'trio_harness[testing]'" in done.stderr
