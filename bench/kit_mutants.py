"""Run the conformance kit against mutants of upstream: which mutants it kills, and by how many cases.

A mutant is a patch (``NNN.patch``, applied with ``patch -p1``) to a copy of upstream's source,
listed in ``index.jsonl`` (``{"id", "area", "file", "description"}`` per line). For each mutant
the script copies the upstream tree (hard links; ``patch`` writes new files, so the original is
never touched), applies the patch, runs ``conformance run`` with the port pointed at the copy
(``UPSTREAM_DIR``) and records the cases that fail *beyond* those that fail against unmutated
upstream (the documented rules): a mutant is killed when at least one case newly fails (or the
port crashes or hangs). Results are one JSON line per mutant in ``--out`` (resumable: mutants
already there are skipped), then a summary.

With ``--fuzz`` the question is another: does ``python -m trio_harness conformance fuzz`` find
the mutant? Per mutant the fuzzer runs on the area the mutant's code answers (``validation``,
``compile`` and ``parse`` mutants: ``validation``; ``runtime`` and ``pool``: ``scheduling``), one
seed after the other of ``--seeds`` with ``--examples`` each, and stops at the first seed that
finds a disagreement (or a crash, hang or garbage); when none does, the other area is tried on
every seed of ``--seeds`` in turn (the criterion is "found on some seed", in either area). Each line records the seed, the area and after how many cases the first
disagreement came (``first_found_after``). ``--fuzz-timeout`` caps one fuzz run (seconds).
Unmutated upstream is fuzzed first on the same seeds: it must agree (a false alarm stops the run).

Usage (paths are arguments; nothing here points at a machine's layout)::

    python bench/kit_mutants.py --upstream UPSTREAM_TREE --mutants MUTANTS_DIR \\
        --port "NODE LAUNCHER.mjs" --out results.jsonl [--work SCRATCH] [--only 001,002]
    python bench/kit_mutants.py ... --fuzz --out fuzz.jsonl [--seeds 1,2] [--examples 1000] \\
        [--skip 013,014,024]
"""

from __future__ import annotations

import argparse
import json
import os
import re
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


#: The fuzz area that answers a mutant's code, by the mutant's ``area``.
FUZZ_AREAS = {
    "validation": "validation",
    "compile": "validation",
    "parse": "validation",
    "runtime": "scheduling",
    "pool": "scheduling",
}
_FOUND = re.compile(r"DISAGREEMENT — first found after (\d+) cases")
_PORT_DOWN = re.compile(r"^\w+: (CRASH|HANG|MALFORMED) after (\d+) cases", re.MULTILINE)


def _fuzz_run(
    port: str, upstream: Path, area: str, seed: int, args: argparse.Namespace
) -> dict[str, Any]:
    """One ``conformance fuzz`` run: whether it found a disagreement, and after how many cases."""
    command = [
        sys.executable,
        "-m",
        "trio_harness",
        "conformance",
        "fuzz",
        "--port",
        port,
        "--area",
        area,
        "--examples",
        str(args.examples),
        "--seed",
        str(seed),
        "--timeout",
        str(args.timeout),
        "--no-shrink",  # how soon it is found is the question, not the minimal case
    ]
    env = {**os.environ, "UPSTREAM_DIR": str(upstream)}
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            env=env,
            capture_output=True,
            text=True,
            timeout=args.fuzz_timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"area": area, "seed": seed, "found": False, "verdict": "fuzz-timeout"}
    found = _FOUND.search(done.stdout)
    down = _PORT_DOWN.search(done.stdout)
    entry: dict[str, Any] = {
        "area": area,
        "seed": seed,
        "found": done.returncode != 0,
        "exit": done.returncode,
        "seconds": round(time.perf_counter() - started, 1),
    }
    if found:
        entry["first_found_after"] = int(found.group(1))
        lines = done.stdout.split("first difference:\n", 1)
        entry["difference"] = " ".join(lines[-1].split())[:300] if len(lines) == 2 else ""
    elif down:
        entry["verdict"] = down.group(1).lower()
        entry["first_found_after"] = int(down.group(2))
    elif done.returncode != 0:
        entry["error"] = (done.stdout + done.stderr)[-500:]
    return entry


def _fuzz_mutant(mutant: dict[str, Any], args: argparse.Namespace, copy: Path) -> dict[str, Any]:
    area = FUZZ_AREAS[mutant["area"]]
    other = "scheduling" if area == "validation" else "validation"
    tries = [(area, seed) for seed in args.seed_list] + [(other, seed) for seed in args.seed_list]
    runs = []
    for run_area, seed in tries:
        runs.append(_fuzz_run(args.port, copy, run_area, seed, args))
        if runs[-1]["found"]:
            break
    found = runs[-1] if runs[-1]["found"] else None
    return {
        **mutant,
        "status": "found" if found else "missed",
        "found": None
        if found is None
        else {key: found.get(key) for key in ("area", "seed", "first_found_after", "verdict")},
        "runs": runs,
    }


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
        if args.fuzz:
            fuzzed = _fuzz_mutant(mutant, args, copy)
            return {**fuzzed, "seconds": round(time.perf_counter() - started, 1)}
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


def _arguments(argv: list[str] | None) -> argparse.Namespace:
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
    parser.add_argument("--skip", help="comma-separated mutant ids left out (e.g. equivalent ones)")
    parser.add_argument("--timeout", type=float, default=20.0, help="per-case timeout (20 s)")
    parser.add_argument("--fuzz", action="store_true", help="fuzz each mutant instead of the kit")
    parser.add_argument("--seeds", default="1,2", help="fuzz seeds, tried in order (1,2)")
    parser.add_argument("--examples", type=int, default=1000, help="fuzz examples per run (1000)")
    parser.add_argument(
        "--fuzz-timeout", type=float, default=300.0, help="seconds per fuzz run (300)"
    )
    parser.add_argument(
        "--redo-missed", action="store_true", help="fuzz again the mutants recorded as missed"
    )
    args = parser.parse_args(argv)
    args.seed_list = [int(seed) for seed in args.seeds.split(",")]
    return args


def _fuzz_baseline(args: argparse.Namespace) -> bool:
    """Fuzz unmutated upstream on every seed and area: ``True`` when it agrees everywhere."""
    clean = True
    for area in ("validation", "scheduling"):
        for seed in args.seed_list:
            entry = _fuzz_run(args.port, args.upstream, area, seed, args)
            print(f"unmutated upstream: fuzz {area} seed {seed}: {entry}", flush=True)
            clean = clean and not entry["found"]
    return clean


def _report(args: argparse.Namespace, results: list[dict[str, Any]]) -> None:
    if args.fuzz:
        found = [entry for entry in results if entry["status"] == "found"]
        print(f"fuzz found {len(found)} / {len(results)}")
        for entry in results:
            if entry["status"] != "found":
                print(
                    f"  {entry['status']} {entry['id']} ({entry['area']}): {entry['description']}"
                )
        return
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


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    mutants = [
        json.loads(line)
        for line in (Path(args.mutants) / "index.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    if args.only:
        wanted = set(args.only.split(","))
        mutants = [mutant for mutant in mutants if mutant["id"] in wanted]
    if args.skip:
        unwanted = set(args.skip.split(","))
        mutants = [mutant for mutant in mutants if mutant["id"] not in unwanted]
    done: dict[str, dict[str, Any]] = {}
    if args.out.exists():
        for line in args.out.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                done[entry["id"]] = entry  # a later line (a redo) replaces an earlier one
    if args.redo_missed:
        done = {key: entry for key, entry in done.items() if entry["status"] != "missed"}
    with tempfile.TemporaryDirectory() as temporary:
        scratch = args.work or Path(temporary)
        scratch.mkdir(parents=True, exist_ok=True)
        baseline: set[str] = set()
        if args.fuzz:
            if not _fuzz_baseline(args):
                print("unmutated upstream disagrees with the reference: no mutant fuzzed")
                return 1
        else:
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
                first = result.get("first") or result.get("found") or {}
                print(
                    f"{mutant['id']} {result['status']:<9} {result.get('killing_cases', '-'):>5} "
                    f"{first.get('id', '')}{first.get('area', '')} {first.get('seed', '')} "
                    f"{first.get('first_found_after', '')}",
                    flush=True,
                )
    _report(args, [done[mutant["id"]] for mutant in mutants if mutant["id"] in done])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
