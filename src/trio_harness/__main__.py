"""Command line: ``python -m trio_harness demo``, ``timeline FILE`` and ``oracle``.

The demo shows both mechanisms on one screen:

1. a tool definition that rejects a bad model call with *all* its violations, and an author spec
   that is rejected at definition time because it leaves the supported subset;
2. one model step through the parallel pool: parallel reads, an exclusive write acting as a
   barrier, and reads that finish out of order but are committed in model order.

The pool runs on Trio's ``MockClock``, so the virtual times printed are exact and the demo takes
no wall-clock time. The step is traced and drawn as a text Gantt chart; ``--trace FILE`` writes
the trace so that ``timeline FILE`` (text) and ``timeline FILE --svg OUT.svg`` can draw it again.

``oracle`` answers recorded cases (the ``tests/data/upstream-vectors.jsonl`` format) read from stdin
or ``--input FILE``, one compact JavaScript-exact JSON line per case on stdout (see ``_oracle.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import trio
import trio.testing

import trio_harness as th
from trio_harness._oracle import answer_lines
from trio_harness.lowlevel import js_json


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


def demo_pool(out: list[str], trace: th.StepTrace | None = None) -> th.StepTrace:
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
    trace = th.StepTrace() if trace is None else trace

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
    out.extend(th.render_timeline_text(trace))
    return trace


def demo_trace() -> th.StepTrace:
    """The demo step's trace, recorded afresh (deterministic: virtual time)."""
    return demo_pool([])


def run_timeline(path: str, svg: str | None, width: int) -> int:
    """Draw every step trace of ``path`` as text, or the first one as SVG into ``svg``.

    Returns:
        ``0``; ``2`` when the file cannot be read or holds no trace (reported on standard error).
    """
    prog = "python -m trio_harness timeline"
    try:
        with open(path, encoding="utf-8") as file:
            traces = th.traces_from_lines(file.read().split("\n"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        sys.stderr.write(f"{prog}: cannot read {path}: {error}\n")
        return 2
    if not traces:
        sys.stderr.write(
            f"{prog}: {path} holds no step trace (write one with StepTrace.to_json, or "
            "python -m trio_harness demo --trace FILE)\n"
        )
        return 2
    if svg is not None:
        try:
            with open(svg, "w", encoding="utf-8") as file:
                file.write(th.render_timeline_svg(traces[0]))
        except OSError as error:
            sys.stderr.write(f"{prog}: cannot write {svg}: {error}\n")
            return 2
        sys.stdout.write(f"wrote {svg}\n")
        return 0
    lines: list[str] = []
    for trace in traces:
        if lines:
            lines.append("")
        lines.extend(th.render_timeline_text(trace, width=width))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _line_writer() -> Any:
    # Answers are UTF-8 whatever the locale says; flushed per line so a port can converse
    # case by case through a pipe.
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    stream.flush()

    def write(line: str) -> None:
        if buffer is None:
            stream.write(line + "\n")
            stream.flush()
        else:
            buffer.write(line.encode("utf-8") + b"\n")
            buffer.flush()

    return write


def run_oracle(input_path: str | None) -> int:
    """Answer every case of ``input_path`` (standard input if ``None``) on standard output.

    Returns:
        ``0``; ``2`` when the input cannot be read (reported on standard error).
    """
    write = _line_writer()
    try:
        if input_path is None:
            source: Any = getattr(sys.stdin, "buffer", sys.stdin)
            for line in answer_lines(source):
                write(line)
        else:
            with open(input_path, "rb") as source:
                for line in answer_lines(source):
                    write(line)
    except OSError as error:
        where = input_path if input_path is not None else "standard input"
        sys.stderr.write(f"python -m trio_harness oracle: cannot read {where}: {error}\n")
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m trio_harness``."""
    parser = argparse.ArgumentParser(prog="python -m trio_harness", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="show validation and the parallel pool")
    demo.add_argument("--trace", metavar="FILE", help="also write the step's trace to FILE")
    timeline = commands.add_parser(
        "timeline",
        help="draw the step traces of a file as a text Gantt chart (or an SVG)",
        description="Read step traces (StepTrace.to_json objects, one per line, or trace/step "
        "events of a session log) and draw each as a text Gantt chart.",
    )
    timeline.add_argument("file", metavar="FILE")
    timeline.add_argument(
        "--svg", metavar="OUT.svg", help="write the first trace as a standalone SVG instead"
    )
    timeline.add_argument("--width", type=int, default=48, help="columns of the time axis")
    oracle = commands.add_parser(
        "oracle",
        help="answer recorded cases (JSON Lines) as trio_harness would",
        description="Read cases in the upstream-vectors.jsonl format, one JSON object per line, "
        "and write each back with `expected` replaced by trio_harness's own answer.",
    )
    oracle.add_argument(
        "--input", metavar="FILE", help="read cases from FILE instead of standard input"
    )
    args = parser.parse_args(argv)
    if args.command == "oracle":
        return run_oracle(args.input)
    if args.command == "timeline":
        if args.width < 8:
            parser.error("--width must be at least 8")
        return run_timeline(args.file, args.svg, args.width)
    out: list[str] = []
    demo_validation(out)
    trace = demo_pool(out)
    sys.stdout.write("\n".join(out) + "\n")
    if args.trace is not None:
        with open(args.trace, "w", encoding="utf-8") as file:
            file.write(js_json(trace.to_json()) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
