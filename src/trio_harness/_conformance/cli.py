"""The kit's command-line subcommands, attached to ``python -m trio_harness``.

``oracle``, ``conformance generate``, ``conformance run``, ``conformance fuzz`` and ``check-log``
are defined here, all in one pattern (an argparse sub-parser each, run by :func:`run_command`),
so that ``__main__`` only hands them the sub-parsers and their parsed arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Final

from .._testing import LogFormatError, check_log_text
from .oracle import answer_request_lines

__all__ = ["add_commands", "run_command"]

#: Exit statuses of ``oracle`` (argparse itself exits 2 on a usage error).
EXIT_OK: Final = 0
EXIT_OUTPUT_FAILED: Final = 1
EXIT_INPUT_FAILED: Final = 2

#: Width the oracle's description is wrapped to (its epilog's table keeps its own layout).
_HELP_WIDTH: Final = 78

_ORACLE_HELP = (
    "Read conformance cases, one JSON object per line, in the format of the "
    'recorded upstream vectors ("op", its inputs and optionally "expected") or scheduling '
    'scenarios ({"op": "schedule"}, spec/FORMAT.md), and write '
    'exactly one line per input line: the case with "expected" replaced by trio_harness\'s '
    'answer, or {"error": "..."} for a line that cannot be answered (blank, not JSON, not '
    "UTF-8, unknown op, missing input). Lines are read as JavaScript's JSON.parse reads "
    "them; answers are compact, JavaScript-exact JSON, flushed line by line so a port can "
    "converse through a pipe."
)
_ORACLE_EPILOG = (
    "exit status:\n"
    "  0  every line was answered\n"
    "  1  standard output could not be written (e.g. the reader closed the pipe)\n"
    "  2  usage error, or the input could not be read"
)

_RUN_HELP = (
    "Check a port (or, without --port, trio_harness itself) against the conformance kit: "
    "validation answers, scheduling scenarios and optionally the official JSON-Schema-Test-Suite. "
    "Exit status: 0 pass, 1 answers differ, 2 bad usage, 3 the port crashed, 4 the port hung, "
    "5 the port wrote something that is not an answer line."
)

_FUZZ_HELP = (
    "Draw random cases (hypothesis), send each to the port and to the reference, and stop at the "
    "first disagreement: the case is shrunk and printed as a ready-to-save vector line with both "
    "answers. Needs hypothesis (pip install trio_harness[testing]). Exit status: 0 the port "
    "agrees, 1 a disagreement, 2 bad usage, 3 the port crashed, 4 it hung, 5 it wrote garbage."
)


def add_commands(commands: Any) -> None:
    """Add ``oracle``, ``conformance`` (``generate``, ``run``, ``fuzz``) and ``check-log`` to the
    sub-parsers ``commands`` (what ``ArgumentParser.add_subparsers`` returned)."""
    oracle = commands.add_parser(
        "oracle",
        help="answer conformance cases and scheduling scenarios (JSON Lines) as trio_harness would",
        description=textwrap.fill(_ORACLE_HELP, _HELP_WIDTH),
        epilog=_ORACLE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    oracle.add_argument(
        "--input",
        metavar="FILE",
        default="-",
        help="read cases from FILE; '-' (the default) reads standard input",
    )
    # Its messages name the command as the user typed it (``trio-harness oracle`` or the -m form).
    oracle.set_defaults(oracle_prog=oracle.prog)
    conformance = commands.add_parser(
        "conformance", help="generate the conformance kit, or run a port against it"
    )
    actions = conformance.add_subparsers(dest="action", required=True)
    generate = actions.add_parser(
        "generate",
        help="write the scheduling vectors, the validation edges and COVERAGE.md from the reference",
        description="Regenerate spec/scheduling-vectors.jsonl, spec/validation-edges.jsonl and "
        "spec/COVERAGE.md.",
    )
    generate.add_argument("--spec", default="spec", metavar="DIR", help="kit directory (spec)")
    generate.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the files on disk differ from a fresh generation",
    )
    run = actions.add_parser("run", help="run a port against the kit", description=_RUN_HELP)
    run.add_argument(
        "--spec",
        metavar="DIR",
        help="kit directory (default: the kit installed with trio_harness)",
    )
    run.add_argument(
        "--port", metavar="CMD", help="the port's command line (JSON lines on stdin/stdout)"
    )
    run.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="GLOB",
        help="run only cases whose id matches GLOB (repeatable), e.g. 'scheduling/abort/*'",
    )
    run.add_argument("--jobs", type=int, default=1, metavar="N", help="port processes (1)")
    run.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="per-case answer timeout before the port is declared hung (10)",
    )
    run.add_argument(
        "--json-schema-test-suite",
        metavar="DIR",
        help="also run the official suite's draft 2020-12 cases that fall inside the subset",
    )
    run.add_argument(
        "--json",
        metavar="FILE",
        help="write a machine-readable report to FILE (every failure in full: input, both answers)",
    )
    run.add_argument(
        "--show",
        type=int,
        default=10,
        metavar="N",
        help="draw the N smallest failures in full, one line for each other (10; 0: all)",
    )
    fuzz = actions.add_parser(
        "fuzz",
        help="differential fuzzing: random cases to a port and to the reference",
        description=_FUZZ_HELP,
    )
    fuzz.add_argument(
        "--port", required=True, metavar="CMD", help="the port's command line (as for run)"
    )
    fuzz.add_argument(
        "--area",
        choices=["validation", "scheduling"],
        help="fuzz only this area (default: validation, then scheduling)",
    )
    fuzz.add_argument(
        "--examples", type=int, default=100, metavar="N", help="cases drawn per area (100)"
    )
    fuzz.add_argument(
        "--seed", type=int, metavar="S", help="hypothesis seed (default: random, printed)"
    )
    fuzz.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="per-case answer timeout before the port is declared hung (10)",
    )
    fuzz.add_argument(
        "--no-shrink",
        action="store_true",
        help="report the first disagreeing case as drawn, unshrunk (faster)",
    )
    check = commands.add_parser(
        "check-log",
        help="check a session log (JSON Lines) for the pool's invariants",
        description="Check a session log written by any port: results cite their calls, one "
        "result per call, model order, synthetic abort pairs, no call left unpaired. Exit "
        "status: 0 valid, 1 violations, 2 unreadable or malformed input.",
    )
    check.add_argument("file", metavar="FILE.jsonl")
    check.add_argument(
        "--allow-unpaired",
        action="store_true",
        help="accept calls without a result (steps that raised a scheduler failure)",
    )


def _generate(spec: str, check: bool) -> int:
    from .generate import EDGES_FILE, SCHEDULING_FILE, kit_files, write_kit

    spec_dir = Path(spec)
    if not check:
        files = write_kit(spec_dir)
        count = len(files[SCHEDULING_FILE].splitlines())
        edges = files[EDGES_FILE].count("\n")
        sys.stdout.write(
            f"wrote {count} scenarios to {spec_dir / SCHEDULING_FILE} and {edges} validation "
            f"cases to {spec_dir / EDGES_FILE}\n"
        )
        return 0
    fresh = kit_files()
    stale = []
    for name, text in fresh.items():
        path = spec_dir / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    for name in stale:
        sys.stdout.write(f"{spec_dir / name} differs from a fresh generation\n")
    return 1 if stale else 0


def _fuzz(args: argparse.Namespace) -> int:
    if args.examples < 1 or args.timeout <= 0:
        sys.stderr.write(
            "python -m trio_harness conformance fuzz: --examples and --timeout must be > 0\n"
        )
        return 2
    try:
        from .fuzz import AREAS, main_fuzz
    except ImportError as error:
        sys.stderr.write(
            f"python -m trio_harness conformance fuzz needs hypothesis ({error}); "
            "install it with: pip install 'trio_harness[testing]'\n"
        )
        return 2
    areas = AREAS if args.area is None else (args.area,)
    return main_fuzz(
        args.port,
        areas,
        args.examples,
        args.seed,
        args.timeout,
        sys.stdout,
        shrink=not args.no_shrink,
    )


class _OutputFailed(Exception):
    """Standard output could not be written (kept apart from errors reading the input)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


def _line_writer() -> Callable[[str], None]:
    # Answers are UTF-8 whatever the locale says; flushed per line so a port can converse
    # case by case through a pipe.
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    try:
        stream.flush()
    except OSError as error:
        raise _OutputFailed(error) from error

    def write(line: str) -> None:
        try:
            if buffer is None:
                stream.write(line + "\n")
                stream.flush()
            else:
                buffer.write(line.encode("utf-8") + b"\n")
                buffer.flush()
        except OSError as error:
            raise _OutputFailed(error) from error

    return write


@contextlib.contextmanager
def _open_input(path: str) -> Iterator[IO[bytes] | IO[str]]:
    if path == "-":
        yield getattr(sys.stdin, "buffer", sys.stdin)
    else:
        with open(path, "rb") as source:
            yield source


def _discard_pending_output() -> None:
    """Point the process's standard output at ``os.devnull`` after a failed write.

    The unwritten bytes stay in ``sys.stdout``'s buffer; the interpreter's final flush would fail
    again and print "Exception ignored ..." (and exit 120). Only the real standard output is
    redirected: a replaced ``sys.stdout`` (a test's capture) is left alone.
    """
    stdout = sys.__stdout__
    if stdout is None or sys.stdout is not stdout:
        return
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stdout.fileno())
        os.close(devnull)


def run_oracle(input_path: str | None = "-", prog: str = "python -m trio_harness oracle") -> int:
    """Answer every case of ``input_path`` (``"-"`` or ``None``: standard input) on standard output.

    Returns:
        :data:`EXIT_OK`; :data:`EXIT_OUTPUT_FAILED` when standard output cannot be written (a
        closed pipe, a full disk); :data:`EXIT_INPUT_FAILED` when the input cannot be read. The
        reason goes to standard error, once, after ``prog``.
    """

    def complain(message: str) -> None:
        with contextlib.suppress(OSError):  # standard error may be gone too
            sys.stderr.write(f"{prog}: {message}\n")
            sys.stderr.flush()

    path = "-" if input_path is None else input_path
    try:
        write = _line_writer()
        with _open_input(path) as source:
            for line in answer_request_lines(source):
                write(line)
    except _OutputFailed as failure:
        complain(f"cannot write standard output: {failure.error}")
        _discard_pending_output()
        return EXIT_OUTPUT_FAILED
    except OSError as error:
        complain(f"cannot read {'standard input' if path == '-' else path}: {error}")
        return EXIT_INPUT_FAILED
    return EXIT_OK


def main_check_log(path: str, allow_unpaired: bool, out: Any, err: Any) -> int:
    """``check-log``: 0 valid, 1 violations (each printed), 2 unreadable or malformed input."""
    try:
        with open(path, encoding="utf-8") as source:
            text = source.read()
    except (OSError, UnicodeDecodeError) as error:
        err.write(f"python -m trio_harness check-log: cannot read {path}: {error}\n")
        return 2
    try:
        violations = check_log_text(text, allow_unpaired=allow_unpaired)
    except LogFormatError as error:
        err.write(f"python -m trio_harness check-log: {path}: {error}\n")
        return 2
    for violation in violations:
        out.write(f"{path}: {violation}\n")
    if violations:
        out.write(f"{len(violations)} violation(s)\n")
        return 1
    out.write(f"{path}: ok\n")
    return 0


def run_command(args: argparse.Namespace) -> int:
    """Run a subcommand added by :func:`add_commands`; returns the exit status."""
    if args.command == "oracle":
        return run_oracle(args.input, args.oracle_prog)
    if args.command == "check-log":
        return main_check_log(args.file, args.allow_unpaired, sys.stdout, sys.stderr)
    if args.action == "generate":
        return _generate(args.spec, args.check)
    if args.action == "fuzz":
        return _fuzz(args)
    from .runner import main_run

    if args.jobs < 1 or args.timeout <= 0:
        sys.stderr.write(
            "python -m trio_harness conformance run: --jobs and --timeout must be > 0\n"
        )
        return 2
    return main_run(
        args.spec,
        args.port,
        args.only,
        args.jobs,
        args.timeout,
        args.json_schema_test_suite,
        args.json,
        detailed=args.show,
    )
