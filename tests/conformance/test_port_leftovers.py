"""A port that leaves a daemonised helper holding its standard output (issue 32): the runner
neither hangs at the end nor calls a port that exited a hang. The helper escapes the port's
process group (it is its own session), lives at most 30 s, and the test kills it."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from trio_harness._conformance.port import PortError, PortProcess

pytestmark = pytest.mark.skipif(os.name != "posix", reason="daemonising needs fork and setsid")

# Forks a helper into a session of its own (out of the port's process group), which keeps the
# port's stdout open for 30 s and writes its pid to PIDFILE; then the port answers one line per
# request ("answer") or exits at once ("exit").
PORT = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open(sys.argv[2], "w").write(str(os.getpid()))
        time.sleep(30)
    os._exit(0)
os.wait()
if sys.argv[1] == "exit":
    sys.exit(7)
for line in sys.stdin:
    print('{"answer": 1}', flush=True)
"""

BOUND = 20


def kill_helper(path: Path) -> None:
    if path.exists() and path.read_text():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(path.read_text()), signal.SIGKILL)


@pytest.fixture
def pidfile(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "helper.pid"
    yield path
    kill_helper(path)


def command(mode: str, pidfile: Path) -> str:
    return shlex.join([sys.executable, "-c", PORT, mode, str(pidfile)])


def bounded(work: object) -> None:
    thread = threading.Thread(target=work, daemon=True)  # type: ignore[arg-type]
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), "still waiting"


def test_closing_a_port_whose_helper_holds_its_output_does_not_wait_for_the_helper(
    pidfile: Path,
) -> None:
    port = PortProcess(command("answer", pidfile), timeout=10)
    assert port.ask({"case": 1}) == {"answer": 1}
    bounded(port.close)
    kill_helper(pidfile)  # the helper gone, the reader sees the end and closes the pipe
    port.threads[0].join(BOUND)
    assert port.process.stdout is not None
    assert port.process.stdout.closed


def test_a_port_that_exits_while_its_helper_lives_is_a_crash_not_a_hang(pidfile: Path) -> None:
    port = PortProcess(command("exit", pidfile), timeout=BOUND)
    errors: list[PortError] = []

    def ask() -> None:
        try:
            port.ask({"case": 1})
        except PortError as error:
            errors.append(error)

    bounded(ask)
    (error,) = errors
    assert error.verdict == "crash"
    assert "exited with status 7" in str(error)
    bounded(port.close)
    kill_helper(pidfile)
    port.threads[0].join(BOUND)
    port.threads[2].join(BOUND)


def test_fuzz_reports_a_wrong_answer_nested_past_the_json_modules_depth() -> None:
    # `conformance run` reported it; `fuzz` crashed with RecursionError printing it.
    import io

    from trio_harness._conformance.fuzz import FuzzResult, print_result

    deep: object = []
    for _ in range(5000):
        deep = [deep]
    vector = {"op": "validate", "expected": {"violations": []}}
    result = FuzzResult("validation", 0, cases=1, first_found_after=1, seconds_to_find=0.0)
    result.vector, result.port_answer, result.difference = vector, deep, "differs"
    out = io.StringIO()
    print_result(result, "port", 1, out)
    assert "[" * 5001 + "]" * 5001 in out.getvalue()
