"""A terminal agent on Trio: file tools on a sandbox directory, optional MCP servers, any
OpenAI-compatible endpoint, and a durable log that resumes the conversation after any crash.

    OPENAI_API_KEY=... python examples/agent.py --base-url https://api.deepseek.com \\
        --model deepseek-v4-flash --sandbox ./sandbox --log agent.jsonl \\
        --mcp notes="python notes_server.py"

Type a request at the ``you>`` prompt (or pass ``--prompt`` one or more times). Each step prints
what the model asked for, grouped as the pool runs it (``||`` = in parallel), then each result as
it is committed. Ctrl-C once aborts the running turn (running tools are cancelled and recorded as
aborted, the conversation stays valid); twice quits, and so does Ctrl-C between turns, with one
line. The log (``--log``, ``agent.jsonl`` by default) holds the whole conversation and every tool
event as they happen: start the agent again, even after ``kill -9``, and it resumes.
``--replay`` prints a log without calling the model; ``python -m trio_harness timeline LOG
--turn T --step N`` draws a step.

Writes need approval. ``--approval ask`` (the default) asks at the terminal before each write,
showing the path and the text (``y``, ``n``, or ``n <why>`` to tell the model why); Ctrl-C at
the question aborts the turn and the write never runs. ``--approval defer`` ends the turn
*paused* instead and exits, listing the writes waiting; decide later, even after a restart or a
``kill -9``, with ``--approve ID``, ``--reject ID[=WHY]`` or ``--edit ID=JSON`` (new arguments),
and the turn resumes. ``--approval off`` lets writes run unasked.

Tools: ``read_file``, ``list_dir`` and ``search`` (parallel-safe) and ``write_file`` (exclusive,
deliberately slow: ``--write-delay``). Every path is resolved (symlinks included) and must stay
inside the sandbox; only regular files are read or written (a FIFO or a device is refused, never
waited on), reads are bounded (``--max-read``; longer files are cut with a note), and file work
runs in worker threads that an abort abandons. ``--mcp NAME=COMMAND`` adds an MCP server's tools
(named ``NAME_<tool>``; its stderr goes to ``--mcp-log``).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import json
import os
import shlex
import stat
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import trio

import trio_harness as th
from trio_harness.providers import openai as oai
from trio_harness.providers import result_text

SYSTEM = (
    "You are a careful assistant working in a sandbox directory. Use the tools to inspect and "
    "change files. Independent reads can be requested together in one step."
)

# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------

#: Files bigger than this are not searched (bytes).
SEARCH_FILE_LIMIT = 1_000_000
#: At most this many search hits are returned.
SEARCH_HITS_LIMIT = 200


class Sandbox:
    """Paths confined to a directory: resolved (symlinks followed), then checked."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def inside(self, path: str | Path) -> Path:
        target = (self.root / path).resolve()
        if target != self.root and self.root not in target.parents:
            raise PermissionError(f"{path} is outside the sandbox")
        return target

    def relative(self, path: Path) -> str:
        return str(path.relative_to(self.root))


class NotRegularFile(OSError):
    """A FIFO, a device, a directory: never read or written by the tools."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path.name} is not a regular file")


def open_regular(path: Path, flags: int) -> int:
    """A descriptor of the regular file ``path``. Opened without blocking (opening a FIFO
    blocks until the other end comes) and checked once open (no race with a file swapped for a
    FIFO or a symlink between a check and the open)."""
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as error:
        if error.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO without reader; a directory
            raise NotRegularFile(path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegularFile(path)
    return fd


def read_regular(path: Path, limit: int) -> tuple[bytes, int]:
    """Up to ``limit`` bytes of the regular file ``path``, and its size."""
    with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as file:
        return file.read(limit), os.fstat(file.fileno()).st_size


def make_tools(
    sandbox_dir: Path, write_delay: float, max_read: int, approve_writes: bool = True
) -> list[th.ToolDefinition]:
    """The four tools, bound to ``sandbox_dir`` (``write_file`` needs approval)."""
    sandbox = Sandbox(sandbox_dir)

    async def in_thread(function: Callable[..., Any], *args: Any) -> Any:
        # Abandoned on abort: a slow disk never holds Ctrl-C up.
        return await trio.to_thread.run_sync(function, *args, abandon_on_cancel=True)

    @th.tool(parallel=True)
    async def read_file(path: Annotated[str, "File path, relative to the sandbox"]) -> str:
        """Read a text file (long files are cut, with a note saying so)."""
        data, size = await in_thread(read_regular, sandbox.inside(path), max_read)
        text = data.decode("utf-8", errors="replace")
        if size > len(data):
            text += f"\n[truncated: the first {len(data)} of {size} bytes]"
        return text

    @th.tool(parallel=True)
    async def list_dir(
        path: Annotated[str, "Directory, relative to the sandbox"] = ".",
    ) -> list[str]:
        """List a directory (sub-directories end with /)."""

        def listing(directory: Path) -> list[str]:
            return [
                entry.name + ("/" if entry.is_dir() else "")
                for entry in sorted(directory.iterdir())
            ]

        result: list[str] = await in_thread(listing, sandbox.inside(path))
        return result

    @th.tool(parallel=True)
    async def search(
        text: Annotated[str, "Text to find (case-sensitive)"],
        path: Annotated[str, "Directory to search"] = ".",
    ) -> list[str]:
        """Find the lines containing a text, as file:line: content."""

        def find(base: Path) -> list[str]:
            hits: list[str] = []
            for file in sorted(base.rglob("*")):
                try:
                    target = sandbox.inside(file)  # a symlink out of the sandbox is skipped
                    data, size = read_regular(target, SEARCH_FILE_LIMIT)
                except OSError:  # PermissionError, not a regular file, gone
                    continue
                if size > len(data):
                    continue
                lines = data.decode("utf-8", errors="replace").splitlines()
                name = sandbox.relative(file.absolute())
                hits += [f"{name}:{n}: {line}" for n, line in enumerate(lines, 1) if text in line]
                if len(hits) >= SEARCH_HITS_LIMIT:
                    return [*hits[:SEARCH_HITS_LIMIT], f"[stopped at {SEARCH_HITS_LIMIT} hits]"]
            return hits

        result: list[str] = await in_thread(find, sandbox.inside(path))
        return result

    @th.tool(needs_approval=approve_writes)
    async def write_file(path: str, text: str) -> str:
        """Create or overwrite a text file (runs alone, never in parallel with other tools)."""
        target = sandbox.inside(path)
        await trio.sleep(write_delay)  # a slow write, to show the barrier and Ctrl-C

        def write() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            with os.fdopen(open_regular(target, os.O_WRONLY | os.O_CREAT), "wb") as file:
                file.truncate(0)
                file.write(text.encode("utf-8"))

        await in_thread(write)
        return f"wrote {len(text)} characters to {path}"

    return [read_file, list_dir, search, write_file]


# ---------------------------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------------------------


def short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_label(call: th.ToolCallBlock) -> str:
    return f"{call.name}({short(call.arguments, 60)})"


def printer(out: Callable[[str], None]) -> Callable[[th.turn.TurnEvent], None]:
    """An ``on_event`` callback printing one line per step, tool start and committed result."""
    started_at: dict[str, float] = {}

    def on_event(event: th.turn.TurnEvent) -> None:
        if isinstance(event, th.turn.ModelReplied) and event.reply.text:
            out(f"assistant> {event.reply.text}")
        elif isinstance(event, th.turn.StepStarted):
            groups = [" || ".join(call_label(c) for c in group) for group in event.groups]
            more = "" if event.complete else "  ..."  # streamed: later calls start as they come
            out(f"step {event.step + 1}: " + "  ->  ".join(f"[{g}]" for g in groups) + more)
        elif isinstance(event, th.turn.ToolStarted):
            started_at[event.call_id] = event.time
            out(f"  started {event.name} ({event.call_id})")
        elif isinstance(event, th.turn.ToolCommitted):
            took = event.time - started_at.pop(event.call_id, event.time)
            mark = "error" if event.result.is_error else "ok"
            text = short(result_text(event.result))
            out(f"  {mark} {event.name} ({event.call_id}, {took:.2f}s): {text}")
        elif isinstance(event, th.turn.StepFinished) and event.outcome.aborted:
            for item in event.outcome.results:
                if item.result.error and item.result.error.info:
                    out(f"  {item.result.error.info.code.lower()} {item.name} ({item.call_id})")

    return on_event


def replay(path: Path, out: Callable[[str], None]) -> None:
    """Print a saved log: the conversation and every tool call and result."""
    for event in th.log.load_session_log(path).events:
        data = event.data
        if event.type == th.agent.CONVERSATION_EVENT:
            for message in data["messages"]:
                role, content = message.get("role"), message.get("content")
                if role in ("user", "assistant") and content:
                    out(f"{'you' if role == 'user' else 'assistant'}> {content}")
        elif event.type == "tool/call":
            out(f"  call {data.name} ({data.call_id}) {short(data.arguments, 60)}")
        elif event.type == "tool/result":
            block = data.message.content[0]
            text = " ".join(b.get("text", "") for b in block.content)
            out(f"  {'error' if block.is_error else 'ok'} ({block.tool_call_id}): {short(text)}")
        elif event.type == th.agent.TURN_END_EVENT:
            out(f"-- turn {data['turn']} ended: {data['stop']}")


# ---------------------------------------------------------------------------------------------
# The agent
# ---------------------------------------------------------------------------------------------


async def prompts(
    given: list[str] | None, terminal: th.agent.TerminalApproval
) -> AsyncIterator[str]:
    """The user's requests: ``--prompt`` values, or lines typed at the prompt until EOF (read
    by the approval prompt's reader, so a line typed after a Ctrl-C is never lost)."""
    if given is not None:
        for prompt in given:
            print(f"you> {prompt}", flush=True)
            yield prompt
        return
    while True:
        try:
            line = await terminal.ask("you> ")
        except EOFError:
            return
        if line.strip():
            yield line


def show_pending(agent: th.agent.Agent, out: Callable[[str], None]) -> None:
    for call in agent.pending:
        state = "waiting" if call.decision is None else "decided"
        out(f"(approval {state}: {call.name} ({call.call_id}) {short(call.arguments, 60)})")


def decide(agent: th.agent.Agent, args: argparse.Namespace, out: Callable[[str], None]) -> None:
    """Record the ``--approve`` / ``--reject`` / ``--edit`` decisions for a paused turn."""
    wanted = [*args.approve, *args.reject, *args.edit]
    if wanted and agent.paused is None:
        out("(no turn is paused: nothing to decide)")
        return
    decisions: list[tuple[str, Callable[[], object]]] = []
    for call_id in args.approve:
        decisions.append((call_id, functools.partial(agent.approve, call_id)))
    for spec in args.reject:
        call_id, _, why = spec.partition("=")
        decisions.append((call_id, functools.partial(agent.reject, call_id, message=why or None)))
    for spec in args.edit:
        call_id, _, text = spec.partition("=")
        edit = functools.partial(agent.approve, call_id, arguments=json.loads(text))
        decisions.append((call_id, edit))
    for call_id, record in decisions:
        try:
            record()
        except (KeyError, ValueError) as error:  # not pending, decided otherwise, bad arguments
            out(f"(cannot decide {call_id}: {error})")


def mcp_server(spec: str) -> tuple[str, list[str]]:
    name, _, command = spec.partition("=")
    if not name.isidentifier() or not command.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=COMMAND, got {spec!r}")
    return name, shlex.split(command)


async def agent(args: argparse.Namespace) -> int:
    import openai  # the app's dependency, not the library's

    out = lambda line: print(line, flush=True)  # noqa: E731
    show = printer(out)
    tools = make_tools(
        Path(args.sandbox), args.write_delay, args.max_read, approve_writes=args.approval != "off"
    )
    terminal = th.agent.TerminalApproval()
    async with contextlib.AsyncExitStack() as stack:
        client = await stack.enter_async_context(
            openai.AsyncOpenAI(
                base_url=args.base_url,
                api_key=os.environ[args.api_key_env],
                max_retries=args.max_retries,
            )
        )
        model = oai.ChatCompletionsModel(client, args.model, system=SYSTEM, stream=args.stream)
        approval: th.agent.DecisionCallback | Literal["defer"] = (
            terminal if args.approval == "ask" else "defer"
        )
        agent = await stack.enter_async_context(
            th.open_agent(args.log, model, tools, max_steps=args.max_steps, approval=approval)
        )
        out(f"({agent.recovery})")
        decide(agent, args, out)
        if args.mcp:
            from trio_harness.mcp import open_stdio

            for name, command in args.mcp:
                server = await stack.enter_async_context(
                    open_stdio(
                        agent.runtime, *command, name=name, prefix=f"{name}_", stderr=args.mcp_log
                    )
                )
                out(f"(mcp {name}: {len(server.names)} tools)")
                for report in server.unregistered:
                    out(f"(mcp {name}: left out {report.name}: {'; '.join(report.reasons)})")

        async def turn(prompt: str | None) -> bool:
            """One turn (``None``: resume the paused one); whether the agent may go on."""
            try:
                async with th.abort_on_sigint(
                    on_abort=lambda: out("aborting the turn... (Ctrl-C again to quit)")
                ) as abort:
                    result = await agent.run(prompt, abort=abort, on_event=show)
            except openai.APIError as error:
                # The request failed (after the SDK's retries): the log is complete; go on.
                out(f"(model request failed: {error})")
                return True
            if result.stop != "done":
                steps = f"{result.steps} step" + ("" if result.steps == 1 else "s")
                out(f"(turn ended: {result.stop} after {steps})")
            return result.stop != "paused"

        if agent.paused is not None:
            show_pending(agent, out)
            if agent.paused.undecided or not await turn(None):
                out("(decide with --approve ID, --reject ID[=WHY] or --edit ID=JSON)")
                return 0
        async for prompt in prompts(args.prompt, terminal):
            if not await turn(prompt):
                show_pending(agent, out)
                out("(decide with --approve ID, --reject ID[=WHY] or --edit ID=JSON)")
                break
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--base-url", default="https://api.openai.com/v1")
    parser.add_argument("--model", default="gpt-4.1-mini")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable with the key")
    parser.add_argument("--sandbox", default="sandbox")
    parser.add_argument("--log", default="agent.jsonl", help="the durable log (resumed)")
    parser.add_argument("--replay", metavar="FILE", help="print a saved log and exit")
    parser.add_argument("--prompt", action="append", help="a request (repeatable); no stdin")
    parser.add_argument("--stream", action="store_true", help="stream the model's replies")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--max-retries", type=int, default=2)
    parser.add_argument("--write-delay", type=float, default=1.0, help="seconds per write")
    parser.add_argument("--max-read", type=int, default=100_000, help="bytes read_file returns")
    parser.add_argument(
        "--mcp", action="append", type=mcp_server, metavar="NAME=COMMAND", help="an MCP server"
    )
    parser.add_argument("--mcp-log", default=None, help="file for the MCP servers' stderr")
    parser.add_argument(
        "--approval",
        choices=["ask", "defer", "off"],
        default="ask",
        help="writes: ask at the terminal, pause the turn (decide later), or run unasked",
    )
    parser.add_argument("--approve", action="append", default=[], metavar="ID")
    parser.add_argument("--reject", action="append", default=[], metavar="ID[=WHY]")
    parser.add_argument("--edit", action="append", default=[], metavar="ID=JSON")
    args = parser.parse_args(argv)
    if args.replay:
        replay(Path(args.replay), print)
        return 0
    if not os.environ.get(args.api_key_env):
        print(f"set {args.api_key_env} to your API key (or use --api-key-env)", file=sys.stderr)
        return 2
    Path(args.sandbox).mkdir(parents=True, exist_ok=True)
    return th.run_app(agent, args, interrupted="interrupted; the log is saved")


if __name__ == "__main__":
    sys.exit(main())
