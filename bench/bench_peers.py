"""One agent turn beside the peers an author would pick instead (issue 30).

Run: ``.venv/bin/python bench/bench_peers.py [--calls N] [--rounds N]`` (the peers come with the
``peers`` extra: ``pip install -e '.[bench,peers]'``; a peer that is not installed is skipped
and named).

A turn is two model requests and ``N`` tool calls: the first reply asks for ``N`` calls of one
tool at once, the second answers with text. The model is scripted in-process in each
framework's own model interface, so the figures are the frameworks' own work: turning the reply
into calls, validating the arguments against the tool's signature, running the bodies, and
handing the results back. Frameworks and workloads:

* **trio_harness** (under Trio): ``run_turn`` with a :class:`~trio_harness.TurnModel` and tools
  made by ``th.tool``, each call logged to a ``Session``;
* **pydantic-ai** (under asyncio): an ``Agent`` with a ``FunctionModel`` and plain tools;
* **OpenAI Agents SDK** (under asyncio): an ``Agent`` with a custom ``Model`` and
  ``function_tool`` tools, tracing off.

Two tools, the same in every framework:

* ``lookup(key: str, limit: int) -> str`` — no-op arguments;
* ``order(title, count, ratio, enabled, tags, items)`` — nested arguments: six properties, one
  of them an array of 20 objects of three fields (``TypedDict`` records).

Each round runs every framework once per workload, in a rotating order; the time of a turn is
the CPU time of the process from the start of the run to its result (every framework is pure
CPU work here). Reported per workload: each peer's median time per turn and the median of the
per-round ratios trio_harness / peer, with the targets of issue 30 (nested: at most 0.25x
pydantic-ai, lookup: at most 0.1x pydantic-ai; both at most 0.1x the Agents SDK).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import trio
from rounds import interleaved
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

import trio_harness as th

_clock = time.process_time


class Item(TypedDict):
    """One line of an order."""

    name: str
    qty: int
    price: float


def lookup_arguments(index: int) -> dict[str, Any]:
    return {"key": f"k{index}", "limit": 5}


def order_arguments(index: int) -> dict[str, Any]:
    return {
        "title": f"order {index}",
        "count": 20,
        "ratio": 0.5,
        "enabled": True,
        "tags": ["a", "b", "c"],
        "items": [{"name": f"item {i}", "qty": i, "price": i + 0.25} for i in range(20)],
    }


WORKLOADS: dict[str, Callable[[int], dict[str, Any]]] = {
    "lookup": lookup_arguments,
    "nested": order_arguments,
}

#: (workload, peer) -> the most a trio_harness turn may cost, as a fraction of the peer's.
TARGETS: dict[tuple[str, str], float] = {
    ("nested", "pydantic-ai"): 0.25,
    ("lookup", "pydantic-ai"): 0.1,
    ("nested", "agents-sdk"): 0.1,
    ("lookup", "agents-sdk"): 0.1,
}


def _script(workload: str, calls: int) -> list[tuple[str, str]]:
    """The first reply's calls: ``(tool name, argument text)``."""
    tool = "lookup" if workload == "lookup" else "order"
    make = WORKLOADS[workload]
    return [(tool, json.dumps(make(index))) for index in range(calls)]


# ---------------------------------------------------------------------------------------------
# trio_harness
# ---------------------------------------------------------------------------------------------


def _harness_runtime() -> th.ToolRuntime:
    @th.tool(parallel=True)
    async def lookup(key: str, limit: int) -> str:
        """Look a key up."""
        return "ok"

    @th.tool(parallel=True)
    async def order(
        title: str, count: int, ratio: float, enabled: bool, tags: list[str], items: list[Item]
    ) -> str:
        """Place an order."""
        return "ok"

    runtime = th.ToolRuntime()
    runtime.register(lookup)
    runtime.register(order)
    return runtime


class _HarnessModel:
    def __init__(self, calls: list[tuple[str, str]]) -> None:
        self._replies = [
            th.ModelStep(
                tool_calls=tuple(
                    th.ToolCallBlock(f"call_{i}", name, text)
                    for i, (name, text) in enumerate(calls)
                )
            ),
            th.ModelStep(text="done"),
        ]
        self.results = 0

    async def step(self, tools: Sequence[dict[str, Any]], /) -> th.ModelStep:
        return self._replies.pop(0)

    def add_tool_results(self, results: Sequence[th.StepResult], /) -> None:
        self.results += len(results)


async def _harness_turn(runtime: th.ToolRuntime, calls: list[tuple[str, str]]) -> float:
    model = _HarnessModel(calls)
    start = _clock()
    result = await th.run_turn(model, runtime, th.Session())
    elapsed = _clock() - start
    assert result.text == "done", result
    assert model.results == len(calls), model.results
    return elapsed


def _harness(calls: list[tuple[str, str]]) -> Callable[[], float]:
    runtime = _harness_runtime()  # built once, as an app builds its tools

    def turn() -> float:
        return trio.run(_harness_turn, runtime, calls)

    return turn


# ---------------------------------------------------------------------------------------------
# pydantic-ai
# ---------------------------------------------------------------------------------------------


def _pydantic_ai(calls: list[tuple[str, str]]) -> Callable[[], Awaitable[float]] | None:
    try:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel
    except ImportError:
        return None

    def reply(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[
                    ToolCallPart(name, text, f"call_{i}") for i, (name, text) in enumerate(calls)
                ]
            )
        return ModelResponse(parts=[TextPart("done")])

    async def lookup(key: str, limit: int) -> str:
        """Look a key up."""
        return "ok"

    async def order(
        title: str, count: int, ratio: float, enabled: bool, tags: list[str], items: list[Item]
    ) -> str:
        """Place an order."""
        return "ok"

    agent = Agent(FunctionModel(reply), tools=[lookup, order])  # built once, as an app does

    async def turn() -> float:
        start = _clock()
        result = await agent.run("go")
        elapsed = _clock() - start
        assert result.output == "done", result.output
        return elapsed

    return turn


# ---------------------------------------------------------------------------------------------
# OpenAI Agents SDK
# ---------------------------------------------------------------------------------------------


def _agents_sdk(calls: list[tuple[str, str]]) -> Callable[[], Awaitable[float]] | None:
    try:
        import agents
        from agents.models.interface import Model
        from openai.types.responses import (
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
        )
    except ImportError:
        return None

    class Scripted(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> agents.ModelResponse:
            # The first request of a turn carries no tool output yet (the model is stateless,
            # so one agent serves every turn).
            given = kwargs.get("input", args[1] if len(args) > 1 else None)
            answered = isinstance(given, list) and any(
                isinstance(item, dict) and item.get("type") == "function_call_output"
                for item in given
            )
            if not answered:
                output: list[Any] = [
                    ResponseFunctionToolCall(
                        arguments=text,
                        call_id=f"call_{i}",
                        name=name,
                        type="function_call",
                        id=f"fc_{i}",
                        status="completed",
                    )
                    for i, (name, text) in enumerate(calls)
                ]
            else:
                output = [
                    ResponseOutputMessage(
                        id="msg_1",
                        content=[
                            ResponseOutputText(annotations=[], text="done", type="output_text")
                        ],
                        role="assistant",
                        status="completed",
                        type="message",
                    )
                ]
            return agents.ModelResponse(output=output, usage=agents.Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @agents.function_tool
    async def lookup(key: str, limit: int) -> str:
        """Look a key up."""
        return "ok"

    @agents.function_tool
    async def order(
        title: str, count: int, ratio: float, enabled: bool, tags: list[str], items: list[Item]
    ) -> str:
        """Place an order."""
        return "ok"

    config = agents.RunConfig(tracing_disabled=True)

    agent = agents.Agent(name="bench", model=Scripted(), tools=[lookup, order])

    async def turn() -> float:
        start = _clock()
        result = await agents.Runner.run(agent, "go", run_config=config, max_turns=4)
        elapsed = _clock() - start
        assert result.final_output == "done", result.final_output
        return elapsed

    return turn


PEERS: dict[str, Callable[[list[tuple[str, str]]], Callable[[], Awaitable[float]] | None]] = {
    "pydantic-ai": _pydantic_ai,
    "agents-sdk": _agents_sdk,
}


def _on_asyncio(turn: Callable[[], Awaitable[float]]) -> float:
    async def run() -> float:
        return await turn()

    return asyncio.run(run())


def measure(calls: int, rounds: int) -> dict[str, dict[str, list[float]]]:
    """Seconds per turn: ``{workload: {framework: [per round]}}`` (missing peers left out)."""
    found: dict[str, dict[str, list[float]]] = {}
    for workload in WORKLOADS:
        script = _script(workload, calls)
        runners: dict[str, Callable[[], float]] = {"trio_harness": _harness(script)}
        for peer, build in PEERS.items():
            turn = build(script)
            if turn is not None:
                runners[peer] = functools.partial(_on_asyncio, turn)
        found[workload] = interleaved(runners, rounds)
    return found


def ratios(times: dict[str, list[float]], peer: str) -> list[float]:
    """trio_harness / ``peer`` per round."""
    return sorted(h / p for h, p in zip(times["trio_harness"], times[peer], strict=True))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args(argv)
    found = measure(options.calls, options.rounds)
    missing = [peer for peer in PEERS if peer not in next(iter(found.values()))]
    if missing:
        print(f"not installed (skipped): {', '.join(missing)}; pip install -e '.[bench,peers]'")
    print(f"one turn: 2 requests + {options.calls} calls; {options.rounds} rounds; CPU time")
    print(f"{'workload':8} {'framework':14} {'ms/turn':>8} {'th/peer':>8}  target  met")
    for workload, times in found.items():
        for name, seconds in times.items():
            line = f"{workload:8} {name:14} {statistics.median(seconds) * 1e3:8.2f}"
            if name != "trio_harness":
                ratio = statistics.median(ratios(times, name))
                target = TARGETS[(workload, name)]
                line += f" {ratio:7.3f}x  <={target:g}x  {'yes' if ratio <= target else 'NO'}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
