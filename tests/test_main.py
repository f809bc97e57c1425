"""The command line: ``demo`` (the newcomer's first command shows both mechanisms), help, version.

The oracle command's own behaviour is tested with the oracle (``tests/conformance/test_oracle.py``).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

import trio_harness as th
from trio_harness.__main__ import build_parser, main


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


def test_a_command_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "the following arguments are required: COMMAND" in capsys.readouterr().err


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def _subcommands() -> list[str]:
    parser = build_parser()
    (commands,) = (
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    )
    return list(commands.choices)


# What a user's help must never show: the package's private modules and source files.
PRIVATE = re.compile(r"trio_harness\._|\b_[a-z]+\.py\b|\b_(oracle|session|arguments|json)\b")


def test_top_level_help_is_argparse_help_listing_every_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = _help(["--help"], capsys)
    assert out.startswith("usage: python -m trio_harness [-h] [--version] COMMAND ...\n")
    assert PRIVATE.search(out) is None, out
    assert {"demo", "oracle"} <= set(_subcommands())
    for name in _subcommands():
        # A long name gets its summary on the next line.
        assert re.search(rf"^    {name}(?: +|\n +)\S", out, re.MULTILINE), f"{name} is not listed"
    assert "python -m trio_harness COMMAND --help" in out


@pytest.mark.parametrize("command", _subcommands())
def test_every_command_has_its_own_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = _help([command, "--help"], capsys)
    usage, _, rest = out.partition("\n\n")
    assert usage.startswith(f"usage: python -m trio_harness {command} [-h]")
    description = rest.split("\n\n")[0]
    assert len(description) > 40, "a command's help says what it does"
    assert PRIVATE.search(out) is None, out


def test_oracle_help_documents_input_and_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    out = " ".join(_help(["oracle", "--help"], capsys).split())
    assert "--input FILE" in out
    assert "'-' (the default) reads standard input" in out
    assert "exactly one line per input line" in out
    assert (
        "exit status: 0 every line was answered 1 standard output could not be written "
        "(e.g. the reader closed the pipe) 2 usage error, or the input could not be read"
    ) in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    out = _help(["--version"], capsys)
    assert out == f"trio_harness {th.__version__}\n"


def test_the_module_runs_as_a_program() -> None:
    # The real thing: ``python -m trio_harness --version`` in a fresh interpreter.
    done = subprocess.run(
        [sys.executable, "-m", "trio_harness", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"trio_harness {th.__version__}\n",
        "",
    )
