"""A terminal agent on Trio: real tools on a sandbox directory, any OpenAI-compatible endpoint.

    OPENAI_API_KEY=... python examples/agent.py --base-url https://api.deepseek.com \\
        --model deepseek-v4-flash --sandbox ./sandbox --session agent.jsonl

Type a request at the ``you>`` prompt (or pass ``--prompt`` one or more times). Each step prints
what the model asked for, grouped as the pool runs it (``||`` = in parallel), then each result as
it is committed. Ctrl-C once aborts the running turn (running tools are cancelled and recorded as
aborted, the conversation stays valid); twice quits. With ``--session`` the conversation is saved
as JSON Lines after every turn and resumed on the next start; ``--replay FILE`` prints a saved
session without calling the model.

Tools: ``read_file``, ``list_dir`` and ``search`` (parallel-safe) and ``write_file`` (exclusive,
deliberately slow: ``--write-delay``). Paths are confined to the sandbox.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import trio

import trio_harness as th
from trio_harness.providers import openai as oai
from trio_harness.providers import result_text

SYSTEM = (
    "You are a careful assistant working in a sandbox directory. Use the tools to inspect and "
    "change files. Independent reads can be requested together in one step."
)
MESSAGE = "chat/message"  # session event type of the conversation's messages


# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------


def make_tools(sandbox: Path, write_delay: float) -> list[th.ToolDefinition]:
    """The four tools, bound to ``sandbox``."""
    root = sandbox.resolve()

    def inside(path: str) -> trio.Path:
        target = (root / path).resolve()
        if target != root and root not in target.parents:
            raise PermissionError(f"{path} is outside the sandbox")
        return trio.Path(target)

    @th.tool(parallel=True)
    async def read_file(path: Annotated[str, "File path, relative to the sandbox"]) -> str:
        """Read a text file."""
        return await inside(path).read_text(encoding="utf-8")

    @th.tool(parallel=True)
    async def list_dir(
        path: Annotated[str, "Directory, relative to the sandbox"] = ".",
    ) -> list[str]:
        """List a directory (sub-directories end with /)."""
        entries = []
        for entry in sorted(await inside(path).iterdir()):
            entries.append(entry.name + ("/" if await entry.is_dir() else ""))
        return entries

    @th.tool(parallel=True)
    async def search(
        text: Annotated[str, "Text to find (case-sensitive)"],
        path: Annotated[str, "Directory to search"] = ".",
    ) -> list[str]:
        """Find the lines containing a text, as file:line: content."""
        hits = []
        base = inside(path)
        for file in sorted(await base.rglob("*")):
            if not await file.is_file():
                continue
            lines = (await file.read_text(encoding="utf-8", errors="replace")).splitlines()
            relative = Path(file).relative_to(root)
            hits += [f"{relative}:{n}: {line}" for n, line in enumerate(lines, 1) if text in line]
        return hits

    @th.tool
    async def write_file(path: str, text: str) -> str:
        """Create or overwrite a text file (runs alone, never in parallel with other tools)."""
        target = inside(path)
        await trio.sleep(write_delay)  # a slow write, to show the barrier and Ctrl-C
        await target.parent.mkdir(parents=True, exist_ok=True)
        await target.write_text(text, encoding="utf-8")
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
            out(f"step {event.step + 1}: " + "  ->  ".join(f"[{g}]" for g in groups))
        elif isinstance(event, th.turn.ToolStarted):
            started_at[event.call_id] = event.time
            out(f"  started {event.name} ({event.call_id})")
        elif isinstance(event, th.turn.ToolCommitted):
            took = event.time - started_at.pop(event.call_id, event.time)
            mark = "error" if event.result.is_error else "ok"
            out(
                f"  {mark} {event.name} ({event.call_id}, {took:.2f}s): {short(result_text(event.result))}"
            )
        elif isinstance(event, th.turn.StepFinished) and event.outcome.aborted:
            for item in event.outcome.results:
                if item.result.error and item.result.error.info:
                    out(f"  {item.result.error.info.code.lower()} {item.name} ({item.call_id})")

    return on_event


# ---------------------------------------------------------------------------------------------
# Sessions
# ---------------------------------------------------------------------------------------------


def load_session(path: Path | None) -> th.Session:
    if path is None or not path.exists():
        return th.Session()
    return th.Session.from_jsonl(path.read_text(encoding="utf-8"))


def save_session(path: Path | None, session: th.Session) -> None:
    if path is not None:
        temporary = path.with_suffix(path.suffix + ".tmp")
        temporary.write_text(session.to_jsonl(), encoding="utf-8")
        temporary.replace(path)


def messages_of(session: th.Session) -> list[dict[str, Any]]:
    """The conversation recorded in a session (the model's own messages, in order)."""
    return [event.data for event in session.events if event.type == MESSAGE]


def next_turn(session: th.Session) -> int:
    turns = [e.data.turn for e in session.events if e.type in ("tool/call", "tool/result")]
    turns += [e.data.get("turn", 0) for e in session.events if e.type == "turn/end"]
    return max(turns, default=-1) + 1


def replay(path: Path, out: Callable[[str], None]) -> None:
    """Print a saved session: the conversation and every tool call and result."""
    session = load_session(path)
    for event in session.events:
        if event.type == MESSAGE:
            role, content = event.data["role"], event.data.get("content")
            if role in ("user", "assistant") and content:
                out(f"{'you' if role == 'user' else 'assistant'}> {content}")
        elif event.type == "tool/call":
            data = event.data
            out(f"  call {data.name} ({data.call_id}) {short(data.arguments, 60)}")
        elif event.type == "tool/result":
            block = event.data.message.content[0]
            text = " ".join(b.get("text", "") for b in block.content)
            mark = "error" if block.is_error else "ok"
            out(f"  {mark} ({block.tool_call_id}): {short(text)}")
        elif event.type == "turn/end":
            out(f"-- turn {event.data['turn']} ended: {event.data['stop']}")


# ---------------------------------------------------------------------------------------------
# The agent
# ---------------------------------------------------------------------------------------------


async def prompts(given: list[str] | None) -> Any:
    """The user's requests: ``--prompt`` values, or lines typed at the prompt until EOF."""
    if given is not None:
        for prompt in given:
            print(f"you> {prompt}", flush=True)
            yield prompt
        return
    while True:
        try:
            line = await trio.to_thread.run_sync(input, "you> ")
        except EOFError:
            return
        if line.strip():
            yield line


async def agent(args: argparse.Namespace) -> None:
    import openai  # the app's dependency, not the library's

    out = lambda line: print(line, flush=True)  # noqa: E731
    sandbox = Path(args.sandbox)
    runtime = th.ToolRuntime()
    for tool in make_tools(sandbox, args.write_delay):
        runtime.register(tool)

    session_path = Path(args.session) if args.session else None
    session = load_session(session_path)
    history = messages_of(session)
    if history:
        out(f"(resumed {len(history)} messages from {session_path})")
    else:
        session.append(MESSAGE, {"role": "system", "content": SYSTEM})
    api_key = os.environ.get(args.api_key_env, "")
    async with openai.AsyncOpenAI(
        base_url=args.base_url, api_key=api_key, max_retries=args.max_retries
    ) as client:
        model = oai.ChatCompletionsModel(
            client, args.model, messages_of(session), stream=args.stream
        )
        show = printer(out)

        def record(event: th.turn.TurnEvent) -> None:
            # Log the conversation as it grows, so the session alone resumes it.
            show(event)
            sync_messages()

        def sync_messages() -> None:
            logged = len(messages_of(session))
            for message in model.messages[logged:]:
                session.append(MESSAGE, message)

        async for prompt in prompts(args.prompt):
            model.add_user(prompt)
            sync_messages()
            turn = next_turn(session)
            try:
                async with th.abort_on_sigint(
                    on_abort=lambda: out("aborting the turn... (Ctrl-C again to quit)")
                ) as abort:
                    result = await th.run_turn(
                        model,
                        runtime,
                        session,
                        turn=turn,
                        max_steps=args.max_steps,
                        abort=abort,
                        on_event=record,
                    )
            except openai.APIError as error:
                # The request failed (after the SDK's retries): report it, keep the session.
                out(f"(model request failed: {error})")
                continue
            finally:
                sync_messages()
                save_session(session_path, session)
            session.append("turn/end", {"turn": turn, "stop": result.stop, "steps": result.steps})
            save_session(session_path, session)
            if result.stop != "done":
                out(f"(turn ended: {result.stop} after {result.steps} steps)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", default="https://api.openai.com/v1")
    parser.add_argument("--model", default="gpt-4.1-mini")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable with the key")
    parser.add_argument("--sandbox", default="sandbox")
    parser.add_argument("--session", help="JSONL file: resumed if it exists, saved every turn")
    parser.add_argument("--replay", metavar="FILE", help="print a saved session and exit")
    parser.add_argument("--prompt", action="append", help="a request (repeatable); no stdin")
    parser.add_argument("--stream", action="store_true", help="stream the model's replies")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--max-retries", type=int, default=2)
    parser.add_argument("--write-delay", type=float, default=1.0, help="seconds per write")
    args = parser.parse_args(argv)
    if args.replay:
        replay(Path(args.replay), lambda line: print(line))
        return 0
    if not os.environ.get(args.api_key_env):
        print(f"set {args.api_key_env} to your API key (or use --api-key-env)", file=sys.stderr)
        return 2
    Path(args.sandbox).mkdir(parents=True, exist_ok=True)
    try:
        trio.run(agent, args)
    except KeyboardInterrupt:
        print("\ninterrupted; the session was saved", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
