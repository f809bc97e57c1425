"""What the durable log costs an agent's turn, and what a long conversation keeps in memory.

Run: ``.venv/bin/python bench/bench_agent_log.py [--calls N] [--rounds N] [--turns N]
[--dir DIR]``.

A turn is two model requests and ``N`` calls (default 10) of a typed no-op tool
``lookup(key, limit)``; the model is scripted in-process and keeps a Chat Completions-shaped
conversation (a ``messages`` list, ``add_user``), as the ready provider models do. Variants,
interleaved round by round:

* **in memory**: ``run_turn`` with a ``Session`` (the baseline);
* **durable**: ``agent.run`` of an agent from ``open_agent`` (``fsync="step"``, the default; the
  log on the disk of ``--dir``), timed until ``wait_synced`` says every event is on stable
  storage;
* **durable, no trace**: the same with ``trace=False`` (no ``trace/step`` event per step).

Each turn is timed twice: its CPU time (``time.process_time``: the process's threads, the
syncer's fsync thread included) and its wall time, until ``agent.run`` returns (the fsync of a
step runs beside the turn, in the syncer thread). Reported: the median per turn and the median of
the per-round ratios to the in-memory turn (issue 30's target: at most 2x with
``fsync="step"``).

Then memory: ``--turns`` turns (default 1,000) of one agent through ``open_agent``; the growth
of the process's traced memory (``tracemalloc``) beside the bytes of the log file (issue 30's
target: at most 2x).
"""

from __future__ import annotations

import argparse
import gc
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import trio
from rounds import interleaved

import trio_harness as th


@th.tool(parallel=True)
async def lookup(key: str, limit: int) -> str:
    """Look a key up."""
    return f"{key}:{limit}"


class ScriptedChatModel:
    """Replies from a script and keeps the conversation as Chat Completions messages."""

    def __init__(self, calls: int) -> None:
        self.messages: list[Any] = [{"role": "system", "content": "You look things up."}]
        self._calls = calls
        self._asked = 0

    def add_user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    async def step(self, tools: Sequence[dict[str, Any]], /) -> th.ModelStep:
        self._asked += 1
        if self._asked % 2 == 1:
            calls = tuple(
                th.ToolCallBlock(f"call_{self._asked}_{i}", "lookup", f'{{"key":"k{i}","limit":5}}')
                for i in range(self._calls)
            )
            raw = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                    for call in calls
                ],
            }
            self.messages.append(raw)
            return th.ModelStep(tool_calls=calls, raw=raw)
        raw = {"role": "assistant", "content": "done"}
        self.messages.append(raw)
        return th.ModelStep(text="done", raw=raw)

    def add_tool_results(self, results: Sequence[th.StepResult], /) -> None:
        for result in results:
            text = "".join(block.get("text", "") for block in result.result.content)
            self.messages.append({"role": "tool", "tool_call_id": result.call_id, "content": text})


Timing = tuple[float, float]  # (CPU seconds, wall seconds)


async def _memory_turn(calls: int) -> Timing:
    runtime = th.ToolRuntime()
    runtime.register(lookup)
    model = ScriptedChatModel(calls)
    model.add_user("go")
    cpu, wall = time.process_time(), time.perf_counter()
    result = await th.run_turn(model, runtime, th.Session())
    timing = (time.process_time() - cpu, time.perf_counter() - wall)
    assert result.text == "done", result
    return timing


async def _durable_turn(calls: int, path: Path, trace: bool) -> Timing:
    async with th.open_agent(path, ScriptedChatModel(calls), [lookup], trace=trace) as agent:
        cpu, wall = time.process_time(), time.perf_counter()
        result = await agent.run("go")
        timing = (time.process_time() - cpu, time.perf_counter() - wall)
        await agent.session.wait_synced()
    assert result.text == "done", result
    return timing


def measure_turns(calls: int, rounds: int, directory: Path) -> dict[str, list[Timing]]:
    """(CPU, wall) seconds per turn of every variant, per round (interleaved, rotating)."""
    counter = iter(range(1 << 30))

    def durable(trace: bool) -> Timing:
        path = directory / f"turn-{next(counter)}.jsonl"
        try:
            return trio.run(_durable_turn, calls, path, trace)
        finally:
            path.unlink(missing_ok=True)

    def memory() -> Timing:
        timing: Timing = trio.run(_memory_turn, calls)
        return timing

    variants: dict[str, Callable[[], Timing]] = {
        "in memory": memory,
        "durable": lambda: durable(True),
        "durable, no trace": lambda: durable(False),
    }
    return interleaved(variants, rounds)


async def _conversation(turns: int, calls: int, path: Path) -> int:
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    async with th.open_agent(path, ScriptedChatModel(calls), [lookup]) as agent:
        for _ in range(turns):
            await agent.run("go")
        await agent.session.wait_synced()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    return grown


def measure_memory(turns: int, calls: int, directory: Path) -> tuple[int, int]:
    """(traced memory grown while the agent is open, bytes of its log file)."""
    path = directory / "conversation.jsonl"
    tracemalloc.start()
    try:
        grown = trio.run(_conversation, turns, calls, path)
        return grown, path.stat().st_size
    finally:
        tracemalloc.stop()
        path.unlink(missing_ok=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--dir", type=Path, default=None)
    options = parser.parse_args(argv)
    directory = Path(tempfile.mkdtemp(prefix="bench-agent-log-", dir=options.dir or Path.cwd()))
    try:
        times = measure_turns(options.calls, options.rounds, directory)
        base = times["in memory"]
        print(f"one turn: 2 requests + {options.calls} calls; {options.rounds} rounds")
        print(f"{'':20} {'CPU ms':>8} {'x memory':>9} {'wall ms':>8} {'x memory':>9}")
        for name, found in times.items():
            line = f"{name:20}"
            for part in (0, 1):
                ratios = [t[part] / b[part] for t, b in zip(found, base, strict=True)]
                median = statistics.median(t[part] for t in found)
                line += f" {median * 1e3:8.2f} {statistics.median(ratios):8.2f}x"
            print(line)
        print("target: durable <= 2x in memory")
        if options.turns:
            grown, size = measure_memory(options.turns, options.calls, directory)
            print(
                f"{options.turns} turns: memory grew {grown / 2**20:.1f} MiB, log file"
                f" {size / 2**20:.1f} MiB: {grown / size:.2f}x (target <= 2x)"
            )
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
