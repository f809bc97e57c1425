"""What a durable session log costs, per fsync policy.

Run: ``.venv/bin/python bench/bench_journal.py [--steps N] [--rounds N] [--ticker-steps N]
[--dir DIR]``.

Workload: pool steps of 10 no-op parallel calls (window 10) through ``execute_tool_calls`` with
the real ``ToolRuntime`` (the ``bench_pool.py`` tool), so each step logs 20 events (10
``tool/call`` + 10 ``tool/result``). Variants, interleaved round by round (best round kept):

* ``Session`` (in memory): the baseline;
* ``DurableSession fsync="never"``: each event written to the OS, no fsync;
* ``DurableSession fsync="step"``: plus an fsync requested per step (the log is replay-valid then);
* ``DurableSession fsync="event"``: plus an fsync requested per event (run on fewer steps).

The fsyncs run in the log's syncer thread; the time of a durable variant runs until
``await wait_synced()`` says every event is on stable storage, so it includes them.

Then reading a 20,000-event pool log back, with each reader (CPU time per event), and the Trio
loop's stalls: the same steps run beside a ticker task that only checkpoints
(``await trio.lowlevel.checkpoint()``) and records the gap between its wake-ups; a loop that
waits on the disk shows it as long gaps. Reported: the p50/p99/max gap per variant (all rounds pooled) and the p99
of ``fsync="event"`` against ``fsync="never"`` (issue 21's target: at most 2x).

The log files go to ``--dir`` (default: a temporary folder under the current directory, so the
figures are those of the disk the project lives on, not of a RAM-backed ``/tmp``); fsync cost is
a property of that disk and its filesystem, which are printed with the results.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import trio
import trio.lowlevel

import trio_harness as th

CALLS = 10


async def _noop(args: object, ctx: object) -> str:
    await trio.lowlevel.checkpoint()
    return "ok"


def _runtime() -> th.ToolRuntime:
    runtime = th.ToolRuntime()
    runtime.register(
        th.define_tool(
            name="noop",
            description="does nothing",
            parameters={"n": {"type": "integer"}},
            output=th.ToolOutput(
                schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
            ),
            execute=_noop,
            is_concurrency_safe=lambda args: True,
        )
    )
    return runtime


async def _steps(
    runtime: th.ToolRuntime, session: th.Session, steps: int, *, synced: bool = True
) -> float:
    start = time.perf_counter()
    for step in range(steps):
        calls = [th.ToolCallBlock(f"s{step}c{i}", "noop", '{"n":1}') for i in range(CALLS)]
        await th.execute_tool_calls(runtime, session, calls, step=step)
    if synced and isinstance(session, th.log.DurableSession):
        wait = getattr(session, "wait_synced", None)  # absent before issue 21: fsync was inline
        if wait is None:
            session.sync()
        else:
            await wait()
    return time.perf_counter() - start


async def _ticked_steps(runtime: th.ToolRuntime, session: th.Session, steps: int) -> list[float]:
    gaps: list[float] = []
    done = False

    async def ticker() -> None:
        last = time.perf_counter()
        while not done:
            await trio.lowlevel.checkpoint()
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ticker)
        await trio.lowlevel.checkpoint()
        await _steps(runtime, session, steps, synced=False)  # ticks while steps run, only
        done = True
    return gaps


def measure_gaps(steps: int, rounds: int, directory: Path) -> dict[str, list[float]]:
    """Every ticker gap (seconds) per variant, over ``rounds`` interleaved rounds."""
    runtime = _runtime()
    plan: dict[str, str | None] = {
        "Session (in memory)": None,
        'DurableSession fsync="never"': "never",
        'DurableSession fsync="step"': "step",
        'DurableSession fsync="event"': "event",
    }
    gaps: dict[str, list[float]] = {name: [] for name in plan}
    for round_number in range(rounds):
        for name, policy in plan.items():
            if policy is None:
                gaps[name] += trio.run(_ticked_steps, runtime, th.Session(), steps)
                continue
            path = directory / f"ticker-{round_number}-{policy}.jsonl"
            with th.log.DurableSession.open(path, fsync=policy) as durable:  # type: ignore[arg-type]
                gaps[name] += trio.run(_ticked_steps, runtime, durable, steps)
            path.unlink()
    return gaps


def measure_reload(events: int, rounds: int, directory: Path) -> dict[str, float]:
    """Best CPU microseconds per event to read a pool log back, by each reader."""
    path = directory / "reload.jsonl"
    content = ({"type": "text", "text": "ok"},)
    result = th.ToolExecutionResult(is_error=False, content=content)
    with th.log.DurableSession.open(path, fsync="never", clock=lambda: 1.5) as session:
        for number in range(events // 2):
            call = th.log.ToolCallData(0, number // 10, f"c{number}", "read", '{"path":"a.txt"}')
            seq = session.append("tool/call", call).seq
            data = th.log.ToolResultData.from_result(0, number // 10, f"c{number}", result)
            session.append("tool/result", data, source_event_seqs=(seq,))
    text = path.read_text(encoding="utf-8")
    readers: dict[str, Callable[[], object]] = {
        "load_session_log": lambda: th.log.load_session_log(path),
        "Session.from_jsonl": lambda: th.Session.from_jsonl(text),
    }
    best: dict[str, float] = {}
    for _ in range(rounds):
        for name, read in readers.items():
            start = time.process_time()
            read()
            took = (time.process_time() - start) / events * 1e6
            best[name] = min(best.get(name, took), took)
    path.unlink()
    return best


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _filesystem(directory: Path) -> str:
    try:
        out = (
            subprocess.run(
                ["df", "-T", str(directory)], capture_output=True, text=True, check=True, timeout=10
            )
            .stdout.splitlines()[-1]
            .split()
        )
        return f"{out[1]} on {out[0]}"
    except (OSError, subprocess.SubprocessError, IndexError):
        return "unknown filesystem"


def measure(steps: int, rounds: int, directory: Path) -> dict[str, tuple[float, int]]:
    """Best seconds per variant, and the number of steps each ran."""
    runtime = _runtime()
    plan = {
        "Session (in memory)": (None, steps),
        'DurableSession fsync="never"': ("never", steps),
        'DurableSession fsync="step"': ("step", steps),
        'DurableSession fsync="event"': ("event", max(1, steps // 10)),
    }
    best: dict[str, float] = {}
    for round_number in range(rounds):
        for name, (policy, count) in plan.items():
            if policy is None:
                session: th.Session = th.Session()
                took = trio.run(_steps, runtime, session, count)
            else:
                path = directory / f"bench-{round_number}-{policy}.jsonl"
                with th.log.DurableSession.open(path, fsync=policy) as durable:  # type: ignore[arg-type]
                    took = trio.run(_steps, runtime, durable, count)
                path.unlink()
            best[name] = min(best.get(name, took), took)
    return {name: (best[name], count) for name, (_, count) in plan.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ticker-steps", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    directory = args.dir or Path(tempfile.mkdtemp(prefix=".bench-journal-", dir=os.getcwd()))
    try:
        results = measure(args.steps, args.rounds, directory)
        print(f"disk: {_filesystem(directory)}; {CALLS} calls (20 events) per step")
        base = results["Session (in memory)"]
        base_step = base[0] / base[1]
        print(f"{'variant':32} {'steps':>6} {'us/step':>10} {'us/event':>10} {'vs memory':>10}")
        for name, (took, count) in results.items():
            per_step = took / count
            print(
                f"{name:32} {count:>6} {per_step * 1e6:>10.0f} {per_step / 20 * 1e6:>10.1f} "
                f"{per_step / base_step:>9.1f}x"
            )
        reload = measure_reload(20_000, args.rounds, directory)
        print("\nreading a 20,000-event pool log back (CPU time, best round)")
        for name, micros in reload.items():
            print(f"{name:32} {micros:>10.1f} us/event")
        ticker_steps = args.ticker_steps
        gaps = measure_gaps(ticker_steps, args.rounds, directory)
        print(f"\nTrio loop stalls: ticker gaps over {ticker_steps} steps x {args.rounds} rounds")
        print(f"{'variant':32} {'ticks':>8} {'p50 us':>9} {'p99 us':>9} {'max us':>9}")
        for name, values in gaps.items():
            print(
                f"{name:32} {len(values):>8} {_quantile(values, 0.5) * 1e6:>9.0f} "
                f"{_quantile(values, 0.99) * 1e6:>9.0f} {max(values) * 1e6:>9.0f}"
            )
        never = _quantile(gaps['DurableSession fsync="never"'], 0.99)
        event = _quantile(gaps['DurableSession fsync="event"'], 0.99)
        print(f'p99 gap, fsync="event" / fsync="never": {event / never:.2f}x (target: <= 2x)')
    finally:
        if args.dir is None:
            shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
