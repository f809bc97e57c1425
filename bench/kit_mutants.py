"""Run the conformance kit against mutants of upstream: which mutants it kills, and by how many cases.

A mutant is a patch (``NNN.patch``, applied with ``patch -p1``) to a copy of upstream's source,
listed in ``index.jsonl`` (``{"id", "area", "file", "description"}`` per line). For each mutant
the script copies the upstream tree (hard links; ``patch`` writes new files, so the original is
never touched), applies the patch, runs ``conformance run`` with the port pointed at the copy
(``UPSTREAM_DIR``) and records the cases that fail *beyond* those that fail against unmutated
upstream (the documented rules): a mutant is killed when at least one case newly fails (or the
port crashes or hangs). Results are one JSON line per mutant in ``--out`` (resumable: mutants
already there are skipped), then a summary.

Usage (paths are arguments; nothing here points at a machine's layout)::

    python bench/kit_mutants.py --upstream UPSTREAM_TREE --mutants MUTANTS_DIR \\
        --port "NODE LAUNCHER.mjs" --out results.jsonl [--work SCRATCH] [--only 001,002]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _kit_run(
    port: str, upstream: Path, report: Path, timeout: float, kit: str | None
) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "trio_harness",
        "conformance",
        "run",
        "--port",
        port,
        "--json",
        str(report),
        "--show",
        "1",
        "--timeout",
        str(timeout),
    ]
    if kit is not None:
        command += ["--spec", kit]
    env = {**os.environ, "UPSTREAM_DIR": str(upstream)}
    subprocess.run(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return data


def _failing(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {failure["id"]: failure for failure in data["failures"]}


def _summary(failure: dict[str, Any]) -> str:
    lines = str(failure.get("diff", "")).splitlines()
    return " ".join(line.strip() for line in lines[:3])[:300]


def run_mutant(
    mutant: dict[str, Any],
    args: argparse.Namespace,
    baseline: set[str],
    scratch: Path,
) -> dict[str, Any]:
    patch_file = Path(args.mutants) / f"{mutant['id']}.patch"
    copy = scratch / f"upstream-{mutant['id']}"
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["cp", "-al", str(args.upstream), str(copy)], check=True)
    started = time.perf_counter()
    try:
        applied = subprocess.run(
            ["patch", "-p1", "-s", "-d", str(copy), "-i", str(patch_file.resolve())],
            capture_output=True,
            text=True,
            check=False,
        )
        if applied.returncode != 0:
            return {**mutant, "status": "not-applied", "error": applied.stdout + applied.stderr}
        data = _kit_run(
            args.port, copy, scratch / f"report-{mutant['id']}.json", args.timeout, args.kit
        )
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    failing = _failing(data)
    new = [failure for case_id, failure in failing.items() if case_id not in baseline]
    # The report lists failures smallest first: the first new one is what a maintainer reads.
    crashed = data["verdict"] in ("crash", "hang", "malformed")
    return {
        **mutant,
        "status": "killed" if new or crashed else "survived",
        "verdict": data["verdict"],
        "killing_cases": len(new),
        "killing_by_area": {
            area: sum(1 for failure in new if failure["area"] == area)
            for area in sorted({failure["area"] for failure in new})
        },
        "first": None
        if not new
        else {"id": new[0]["id"], "call": new[0]["call"], "diff": _summary(new[0])},
        "killing_ids": [failure["id"] for failure in new][:200],
        "problems": data["problems"][:5],
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, type=Path, help="the unmutated upstream tree")
    parser.add_argument("--mutants", required=True, help="folder with index.jsonl and NNN.patch")
    parser.add_argument(
        "--port", required=True, help="the port's command line (reads UPSTREAM_DIR)"
    )
    parser.add_argument("--out", required=True, type=Path, help="results, one JSON line per mutant")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--kit", help="kit directory (default: the installed kit)")
    parser.add_argument("--only", help="comma-separated mutant ids")
    parser.add_argument("--timeout", type=float, default=20.0, help="per-case timeout (20 s)")
    args = parser.parse_args(argv)
    mutants = [
        json.loads(line)
        for line in (Path(args.mutants) / "index.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    if args.only:
        wanted = set(args.only.split(","))
        mutants = [mutant for mutant in mutants if mutant["id"] in wanted]
    done: dict[str, dict[str, Any]] = {}
    if args.out.exists():
        for line in args.out.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                done[entry["id"]] = entry
    with tempfile.TemporaryDirectory() as temporary:
        scratch = args.work or Path(temporary)
        scratch.mkdir(parents=True, exist_ok=True)
        base = _kit_run(
            args.port, args.upstream, scratch / "report-base.json", args.timeout, args.kit
        )
        baseline = set(_failing(base))
        print(f"unmutated upstream: {base['areas']} failing {sorted(baseline)}", flush=True)
        with args.out.open("a", encoding="utf-8") as out:
            for mutant in mutants:
                if mutant["id"] in done:
                    continue
                result = run_mutant(mutant, args, baseline, scratch)
                done[mutant["id"]] = result
                out.write(json.dumps(result) + "\n")
                out.flush()
                first = result.get("first") or {}
                print(
                    f"{mutant['id']} {result['status']:<9} {result.get('killing_cases', '-'):>5} "
                    f"{first.get('id', '')}",
                    flush=True,
                )
    results = [done[mutant["id"]] for mutant in mutants if mutant["id"] in done]
    killed = [entry for entry in results if entry["status"] == "killed"]
    print(f"killed {len(killed)} / {len(results)}")
    for entry in results:
        if entry["status"] != "killed":
            print(f"  {entry['status']} {entry['id']} ({entry['area']}): {entry['description']}")
    thin = sorted(
        (entry["killing_cases"], entry["id"]) for entry in killed if entry["killing_cases"] < 3
    )
    for count, mutant_id in thin:
        print(f"  thin kill {mutant_id}: {count} case(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
