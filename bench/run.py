"""All benchmarks, summarised as one table of ratios against named baselines.

Usage: ``.venv/bin/python bench/run.py [--quick] [--details]``

Rows compare trio_harness with a named baseline on the workload the project's targets name:

* validation, per tool of ``bench/corpus.json`` (a copy of the shared corpus of realistic tool
  schemas with valid and invalid arguments; see ``bench_validation.py``): python-jsonschema
  ``iter_errors`` (target: trio_harness at least 10x faster on every tool), fastjsonschema on valid
  calls (at least as fast), jsonschema_rs on invalid calls (faster);
* the extended vocabulary on the 147 real-world MCP tool schemas read from
  ``../shared/mcp/`` (``bench_mcp_schemas.py``; skipped when absent): python-jsonschema (target:
  at least 10x, geometric mean) and jsonschema_rs on invalid calls (faster);
* the pool (``bench_pool.py``): ``execute_tool_calls`` with the real runtime, a ``define_tool``
  no-op, argument and output validation and session logging on, against a bare Trio pool (nursery,
  ``CapacityLimiter(10)``, ordered commit): at most 2x its time per call, with and without an
  abort event.

"ratio" is baseline time / trio_harness time for validation (above 1: trio_harness is faster) and
trio_harness time / bare-pool time for the pool (below the target: met). Timing on a shared
2-core machine is noisy: the per-tool minimum is reported, so one slow run shows as a miss; rerun
before trusting one. Benchmarks never run in the test suite.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_mcp_schemas
import bench_pool
import bench_validation


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    rows: list[tuple[str, str, float, float, str, bool]] = []

    validation = bench_validation.measure(["--quick"] if quick else [], show="--details" in argv)
    totals = validation["totals"]
    for kind, other, target in (
        ("valid", "jsonschema", 10.0),
        ("invalid", "jsonschema", 10.0),
        ("valid", "fastjsonschema", 1.0),
        ("invalid", "jsonschema_rs", 1.0),
    ):
        found = bench_validation.ratios(totals, kind, other)
        geo = statistics.geometric_mean(found)
        rows.append(
            (
                f"validation, {kind} calls",
                f"{other} (geomean; worst tool)",
                geo,
                min(found),
                f">= {target:g}x on every tool",
                min(found) >= target,
            )
        )

    mcp_rows = bench_mcp_schemas.measure(quick, show="--details" in argv)
    for kind, other, target in (
        ("valid", "js", 10.0),
        ("invalid", "js", 10.0),
        ("invalid", "rs", 1.0),
    ):
        found = [row[f"{other}_{kind}"] / row[f"th_{kind}"] for row in mcp_rows]
        if not found:
            break
        geo = statistics.geometric_mean(found)
        name = "jsonschema" if other == "js" else "jsonschema_rs"
        rows.append(
            (
                f"MCP schemas (extended), {kind}",
                f"{name} (geomean; worst tool)",
                geo,
                min(found),
                f">= {target:g}x (geomean)",
                geo >= target,
            )
        )

    calls, rounds = (2000, 3) if quick else (5000, 7)
    pool = trio.run(bench_pool.measure, calls, rounds)
    bare = pool["bare trio pool"]
    for name, label in (
        ("execute_tool_calls", "pool, no-op calls"),
        ("... + abort event", "pool, no-op calls, abort event"),
    ):
        ratio = pool[name] / bare
        rows.append(
            (
                label,
                f"bare Trio pool ({bare / calls * 1e6:.1f} us/call)",
                ratio,
                ratio,
                "<= 2x",
                ratio <= 2.0,
            )
        )

    print()
    print(f"{'workload':<32}{'baseline':<42}{'ratio':>8}{'worst':>8}  {'target':<22}met")
    for workload, baseline, ratio, worst, target, met in rows:
        print(
            f"{workload:<32}{baseline:<42}{ratio:>7.2f}x{worst:>7.2f}x  {target:<22}"
            f"{'yes' if met else 'NO'}"
        )
    misses = validation["misses"]
    print()
    print("validation per-tool misses:", ", ".join(misses) if misses else "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
