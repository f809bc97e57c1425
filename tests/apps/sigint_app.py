"""A tiny app for the SIGINT tests, run as a subprocess: ``python sigint_app.py MODE``.

``turn``: a turn whose tool body runs until aborted; prints ``ready`` when the body started, then
the turn's stop reason and the result codes. ``stubborn``: a block that ignores the abort event;
prints ``ready``, ``abort requested`` on the first SIGINT, and is stopped by the second.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import trio

import trio_harness as th


class OneCall:
    """A model that asks for one ``wait`` call, then answers ``"done"``."""

    def __init__(self) -> None:
        self.calls = 0

    async def step(self, tools: Sequence[dict[str, Any]]) -> th.ModelStep:
        self.calls += 1
        if self.calls == 1:
            return th.ModelStep(tool_calls=(th.ToolCallBlock("c1", "wait", "{}"),))
        return th.ModelStep(text="done")

    def add_tool_results(self, results: Sequence[th.StepResult]) -> None:
        pass


@th.tool
async def wait() -> str:
    """Wait until aborted."""
    await trio.sleep_forever()


def progress(event: th.turn.TurnEvent) -> None:
    if isinstance(event, th.turn.ToolStarted):
        print("ready", flush=True)


async def turn() -> None:
    runtime = th.ToolRuntime()
    runtime.register(wait)
    session = th.Session()
    async with th.abort_on_sigint(on_abort=lambda: print("abort requested", flush=True)) as abort:
        result = await th.run_turn(OneCall(), runtime, session, abort=abort, on_event=progress)
    codes = [
        r.result.error.info.code for r in result.results if r.result.error and r.result.error.info
    ]
    print(result.stop, *codes, flush=True)


async def stubborn() -> None:
    async with th.abort_on_sigint(on_abort=lambda: print("abort requested", flush=True)):
        print("ready", flush=True)
        await trio.sleep(60)  # does not watch the abort event
    print("unreachable", flush=True)


if __name__ == "__main__":
    trio.run({"turn": turn, "stubborn": stubborn}[sys.argv[1]])
