"""An agent app for the signal tests, run as a subprocess: ``python signal_app.py MODE [N] [WINDOW]``.

Every mode runs under :func:`trio_harness.run_app`, as the docs' agent does.

``turns N [WINDOW]``: ``N`` turns, one ``abort_on_sigint(again_within=WINDOW)`` block each, whose
one tool call waits until aborted (and ends at once when it is); prints ``ready I`` once turn
``I``'s tool runs, ``step I CODE`` once its step was answered, ``turn I STOP CODE`` after the
block (the next turn starts without a pause), then ``between`` and waits outside any block.
``stubborn``: a block that ignores its abort event; prints ``ready``, then ``abort requested``
on the first signal.
``linger``: a non-daemon thread outlives ``main`` (so the interpreter waits for it at exit);
prints ``ready``, and ``returned CODE`` once ``run_app`` returned.
"""

from __future__ import annotations

import sys
import threading
import time
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


def codes(results: Sequence[th.StepResult]) -> list[str]:
    return [r.result.error.info.code for r in results if r.result.error and r.result.error.info]


async def turns(count: int, window: dict[str, float]) -> None:
    runtime = th.ToolRuntime()
    runtime.register(wait)
    for index in range(count):

        def progress(event: th.turn.TurnEvent, index: int = index) -> None:
            if isinstance(event, th.turn.ToolStarted):
                print(f"ready {index}", flush=True)
            elif isinstance(event, th.turn.StepFinished):
                print(f"step {index}", *codes(event.outcome.results), flush=True)

        async with th.abort_on_sigint(**window) as abort:
            result = await th.run_turn(
                OneCall(), runtime, th.Session(), abort=abort, on_event=progress
            )
        print(f"turn {index} {result.stop}", *codes(result.results), flush=True)
    print("between", flush=True)
    await trio.sleep(60)


def linger() -> None:
    # Like a library's worker thread that finishes its job at exit: the interpreter joins it.
    threading.Thread(target=time.sleep, args=(20,)).start()

    async def main() -> None:
        print("ready", flush=True)
        await trio.sleep(60)

    code = th.run_app(main)
    print(f"returned {code}", flush=True)
    sys.exit(code)


async def stubborn() -> None:
    async with th.abort_on_sigint(on_abort=lambda: print("abort requested", flush=True)):
        print("ready", flush=True)
        await trio.sleep(60)  # does not watch the abort event
    print("unreachable", flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "linger":
        linger()
    elif mode == "stubborn":
        sys.exit(th.run_app(stubborn))
    else:
        window = {"again_within": float(sys.argv[3])} if len(sys.argv) > 3 else {}
        sys.exit(th.run_app(turns, int(sys.argv[2]), window))
