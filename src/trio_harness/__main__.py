"""The command line: ``python -m trio_harness <command>`` (also installed as ``trio-harness``).

Commands (each has its own ``--help``):

* ``demo`` shows both mechanisms on one screen: a tool definition that rejects a bad model call
  with *all* its violations (and an author spec rejected at definition time), then one model step
  through the parallel pool on Trio's ``MockClock`` (exact virtual times, no wall-clock time);
* ``timeline FILE [--turn T] [--step N] [--svg OUT.svg]`` draws step traces: a trace file
  (``demo --trace FILE`` writes one) or the ``trace/step`` events of a session log (an
  ``Agent`` records one per step);
* ``oracle``, ``conformance generate|run|fuzz`` and ``check-log`` are the conformance kit
  (``spec/PROTOCOL.md``), defined in ``trio_harness._conformance.cli``: ``oracle`` answers
  conformance cases read as JSON Lines, one answer line per input line (the recorded validation
  ops and scheduling scenarios, ``{"op": "schedule"}``, ``spec/FORMAT.md``).

Adding a command is a few lines: write its ``run(args) -> int`` (and, if it takes options, an
``arguments(parser)`` function), then append a :class:`Command` to :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import attrs
import trio
import trio.testing

import trio_harness as th
from trio_harness._conformance import add_commands as add_conformance_commands
from trio_harness._conformance import kit_timelines
from trio_harness._conformance import run_command as run_conformance_command
from trio_harness.lowlevel import js_json

#: Exit statuses (argparse itself exits 2 on a usage error).
EXIT_OK: Final = 0
EXIT_OUTPUT_FAILED: Final = 1
EXIT_INPUT_FAILED: Final = 2


def _render_text(args: Any, value: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


async def _open_file(args: Any, ctx: Any) -> str:
    return f"opened {args['path']}"


def demo_validation(out: list[str]) -> None:
    """Define a tool, then call it badly."""
    tool = th.define_tool(
        name="open_file",
        description="Open a file for reading",
        parameters={
            "path": {"type": "string", "required": True, "description": "Absolute path"},
            "mode": {"type": "string", "enum": ["r", "rb"]},
            "offset": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "options": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"follow": {"type": "boolean"}},
            },
        },
        output=th.ToolOutput(schema={"type": "string"}, render=_render_text),
        execute=_open_file,
    )
    out.append("== 1. Validation ==")
    out.append("compiled parameters (JSON Schema subset):")
    out.append("  " + js_json(tool.parameters))
    bad_call = '{"mode": "w", "offset": 1.5, "tags": ["a", 2], "options": {"follow": 1, "x": 0}}'
    out.append(f"model call: open_file {bad_call}")
    try:
        trio.run(tool.execute, th.parse_arguments(bad_call), None)
    except th.ToolArgsError as error:
        out.append(f"rejected before the body ran ({error.code}), every violation by path:")
        out.extend(f"  - {violation}" for violation in error.violations)
    out.append('author spec {"query": {"type": "string", "pattern": "^a"}} at definition time:')
    try:
        th.parameter_schema_spec_to_json_schema({"query": {"type": "string", "pattern": "^a"}})
    except th.JsonSchemaError as error:
        out.append(f"  {error.code}: {error}")


def _pool_runtime(timeline: list[str]) -> th.ToolRuntime:
    """A runtime with a parallel-safe ``read`` and an exclusive ``write``; bodies log to ``timeline``."""
    params = {
        "path": {"type": "string", "required": True},
        "seconds": {"type": "number", "required": True},
    }
    output = th.ToolOutput(schema={"type": "string"}, render=_render_text)
    runtime = th.ToolRuntime()
    for name, verb, parallel in (("read", "read", True), ("write", "wrote", False)):

        async def body(args: Any, ctx: Any, name: str = name, verb: str = verb) -> str:
            note = "" if name == "read" else "  (exclusive: runs alone)"
            timeline.append(
                f"  t={trio.current_time():4.1f}s  body start  {ctx.call_id} {name} {args['path']}{note}"
            )
            await trio.sleep(args["seconds"])
            timeline.append(f"  t={trio.current_time():4.1f}s  body end    {ctx.call_id}")
            return f"{verb} {args['path']}"

        runtime.register(
            th.define_tool(
                name=name,
                description=f"{name.capitalize()} a file",
                parameters=params,
                output=output,
                execute=body,
                # Only an explicit True is parallel; the write tool declares no classifier.
                is_concurrency_safe=(lambda args: True) if parallel else None,
            )
        )
    return runtime


def demo_pool(out: list[str], trace: th.timeline.StepTrace | None = None) -> th.timeline.StepTrace:
    """One step: three parallel reads (out-of-order finish), a write barrier, two more reads.

    Returns:
        The step's trace (``trace`` if given, else a new one).
    """
    timeline: list[str] = []
    runtime = _pool_runtime(timeline)

    def call(call_id: str, name: str, path: str, seconds: float) -> th.ToolCallBlock:
        return th.ToolCallBlock(call_id, name, json.dumps({"path": path, "seconds": seconds}))

    calls = [
        call("c1", "read", "a.txt", 3),
        call("c2", "read", "b.txt", 1),
        call("c3", "read", "c.txt", 1.5),
        call("c4", "write", "out.txt", 1),
        call("c5", "read", "d.txt", 2),
        call("c6", "read", "e.txt", 1),
    ]
    session = th.Session()
    trace = th.timeline.StepTrace() if trace is None else trace

    async def step() -> th.StepOutcome:
        return await th.execute_tool_calls(
            runtime, session, calls, max_parallel_tool_calls=2, tracer=trace
        )

    outcome = trio.run(step, clock=trio.testing.MockClock(autojump_threshold=0))
    out.append("")
    out.append("== 2. The parallel pool (cap 2, virtual time) ==")
    out.append("model order: " + ", ".join(f"{c.id}={c.name}" for c in calls))
    out.extend(timeline)
    out.append("session log (always model order, each result cites its call's seq):")
    for event in session.events:
        wire = event.to_json()
        data = wire["data"]
        if event.type == "tool/call":
            out.append(f"  #{event.seq:<2} tool/call    {data['callId']} {data['name']}")
        else:
            block = data["message"]["content"][0]
            text = block["content"][0]["text"]
            out.append(
                f"  #{event.seq:<2} tool/result  {block['toolCallId']} "
                f"(cites #{wire['sourceEventSeqs'][0]}) {text!r}"
            )
    out.append(f"outcome: concluded={outcome.concluded} aborted={outcome.aborted}")
    out.append("")
    out.append("== 3. The step's timeline (python -m trio_harness timeline, or --svg) ==")
    out.extend(th.timeline.render_timeline_text(trace))
    return trace


def demo_trace() -> th.timeline.StepTrace:
    """The demo step's trace, recorded afresh (deterministic: virtual time)."""
    return demo_pool([])


def run_timeline(
    path: str,
    svg: str | None,
    width: int,
    turn: int | None = None,
    step: int | None = None,
    case: str | None = None,
) -> int:
    """Draw the step traces of ``path`` (all, or those of ``turn``/``step``) as text, or one as SVG.

    A file of conformance kit lines, or a ``conformance run --json`` report, is drawn as its
    scheduling cases' answers (those matching the ``case`` glob): expected above actual.

    Returns:
        ``0``; ``2`` when the file cannot be read, holds no (matching) trace, or ``--svg`` would
        have to choose between several (reported on standard error, in one line).
    """
    prog = "python -m trio_harness timeline"

    def fail(message: str) -> int:
        sys.stderr.write(f"{prog}: {' '.join(message.split())}\n")
        return 2

    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError, MemoryError) as error:
        return fail(f"cannot read {path}: {error}")
    if case is not None or _kit_text(text):
        charts = kit_timelines(text, case, width=width)
        if charts is None:
            return fail(f"{path} holds no scheduling case matching {case or '*'}")
        sys.stdout.write("\n".join(charts) + "\n")
        return 0
    try:
        traces = th.timeline.traces_from_lines(text.split("\n"))
    except (ValueError, MemoryError) as error:
        return fail(f"cannot read {path}: {error}")
    if not traces:
        return fail(
            f"{path} holds no step trace (write one with StepTrace.to_json, run an Agent with "
            "trace=True, or python -m trio_harness demo --trace FILE)"
        )
    chosen = [
        trace
        for trace in traces
        if (turn is None or trace.turn == turn) and (step is None or trace.step == step)
    ]
    if not chosen:
        steps = ", ".join(f"turn {t.turn} step {t.step}" for t in traces[:20])
        more = ", ..." if len(traces) > 20 else ""
        return fail(f"{path} has no trace of {_which(turn, step)}; it has {steps}{more}")
    if svg is not None:
        if len(chosen) > 1 and (turn is not None or step is not None):
            return fail(
                f"{len(chosen)} traces of {path} match {_which(turn, step)}; "
                "choose one with --turn and --step"
            )
        try:
            with open(svg, "w", encoding="utf-8") as file:
                file.write(th.timeline.render_timeline_svg(chosen[0]))
        except OSError as error:
            return fail(f"cannot write {svg}: {error}")
        sys.stdout.write(f"wrote {svg}\n")
        return 0
    lines: list[str] = []
    for trace in chosen:
        if lines:
            lines.append("")
        lines.extend(th.timeline.render_timeline_text(trace, width=width))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _kit_text(text: str) -> bool:
    """Whether ``text`` is kit lines or a conformance report rather than step traces."""
    head = text.lstrip()[:200]
    return head.startswith('{"op":"schedule"') or head.startswith('{"port":')


def _which(turn: int | None, step: int | None) -> str:
    parts = [f"turn {turn}" if turn is not None else "", f"step {step}" if step is not None else ""]
    return " ".join(part for part in parts if part)


def run_demo(args: argparse.Namespace) -> int:
    """``demo``: print both demonstrations (and write the step's trace with ``--trace FILE``)."""
    out: list[str] = []
    demo_validation(out)
    trace = demo_pool(out)
    sys.stdout.write("\n".join(out) + "\n")
    if args.trace is not None:
        with open(args.trace, "w", encoding="utf-8") as file:
            file.write(js_json(trace.to_json()) + "\n")
    return EXIT_OK


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", metavar="FILE", help="also write the step's trace to FILE")


def _timeline_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--turn", type=int, metavar="T", help="only the steps of turn T")
    parser.add_argument(
        "--step", type=int, metavar="N", help="only step N (of every turn, or of T)"
    )
    parser.add_argument(
        "--svg",
        metavar="OUT.svg",
        help="write one trace as a standalone SVG instead (the chosen one, else the first)",
    )
    parser.add_argument("--width", type=int, default=48, help="columns of the time axis (>= 8)")
    parser.add_argument(
        "--case",
        metavar="GLOB",
        help="FILE is kit lines or a 'conformance run --json' report: draw the scheduling cases "
        "whose id matches GLOB (expected and, from a report, actual answers)",
    )


def _run_timeline(args: argparse.Namespace) -> int:
    if args.width < 8:
        sys.stderr.write(f"{_prog()} timeline: --width must be at least 8\n")
        return EXIT_INPUT_FAILED
    return run_timeline(args.file, args.svg, args.width, args.turn, args.step, args.case)


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    pass


@attrs.frozen
class Command:
    """One subcommand of the command line.

    Attributes:
        name: What the user types (``python -m trio_harness <name>``).
        summary: One line for the command list of the top-level ``--help``.
        description: What ``<name> --help`` says the command does.
        run: Runs the command with the parsed arguments; returns the exit status.
        arguments: Adds the command's options to its parser.
        epilog: Text after the options in ``<name> --help`` (exit statuses, examples).
    """

    name: str
    summary: str
    description: str
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    epilog: str | None = None


#: The subcommands, in the order the top-level help lists them.
COMMANDS: list[Command] = [
    Command(
        name="demo",
        summary="show argument validation and the parallel tool-call pool on one screen",
        description="Define a tool and call it badly (every violation is reported, by path), "
        "reject an author spec that leaves the supported schema subset, then run one model step "
        "through the parallel pool (cap 2) on a virtual clock: parallel reads finishing out of "
        "order, an exclusive write acting as a barrier, and the session log in model order.",
        run=run_demo,
        arguments=_demo_arguments,
    ),
    Command(
        name="timeline",
        summary="draw step traces as a text Gantt chart (or an SVG)",
        description="Read step traces (StepTrace.to_json objects, one per line, or trace/step "
        "events of a session log, such as an Agent's) and draw each as a text Gantt chart: one "
        "lane per call, the window, the barriers and the abort instant visible. --turn and "
        "--step choose the steps; with --svg, write the chosen (or first) trace as a standalone "
        "SVG.",
        run=_run_timeline,
        arguments=_timeline_arguments,
        epilog="exit status:\n  0  drawn\n  2  usage error, or the file holds no readable trace",
    ),
]


def _prog() -> str:
    # ``trio-harness`` when run through the installed script, else the ``-m`` form.
    return "trio-harness" if Path(sys.argv[0]).name == "trio-harness" else "python -m trio_harness"


_HELP_WIDTH: Final = 78


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: ``--version`` and one subparser per :data:`COMMANDS` entry."""
    prog = _prog()
    parser = argparse.ArgumentParser(
        prog=prog,
        description="trio_harness: tool-argument validation and the parallel tool-call pool, "
        "on Trio.",
        epilog=f"Run '{prog} COMMAND --help' for a command's own help.",
    )
    parser.add_argument("--version", action="version", version=f"trio_harness {th.__version__}")
    commands = parser.add_subparsers(
        title="commands", dest="command", metavar="COMMAND", required=True
    )
    for command in COMMANDS:
        sub = commands.add_parser(
            command.name,
            help=command.summary,
            # Wrapped here, so that the epilog's layout (a table of exit statuses) is kept.
            description=textwrap.fill(command.description, _HELP_WIDTH),
            epilog=command.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.arguments(sub)
        sub.set_defaults(run=command.run)
    add_conformance_commands(commands)  # ``oracle``, ``conformance`` and ``check-log``
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m trio_harness`` and ``trio-harness``; returns the exit status."""
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = getattr(args, "run", run_conformance_command)
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
