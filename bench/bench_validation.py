"""Per-call validation speed on realistic tool schemas, against the usual Python validators.

Usage: ``.venv/bin/python bench/bench_validation.py [corpus.json] [--quick] [--raw] [--tools=a,b]``

For every tool of the corpus (default ``bench/corpus.json``, a copy of the shared
``../shared/bench/corpus.json``) it times one call on its valid and on its invalid arguments:

* ``trio_harness``: ``compile_validator(schema)(args, "")`` (all violations);
* ``generic``: ``validate_json_schema_value(schema, args, "")`` (the reference walker);
* ``jsonschema``: ``Draft202012Validator(schema).iter_errors`` collected into a list;
* ``fastjsonschema``: the compiled validator (raises on the first error, so it does less work on
  invalid input than the others);
* ``jsonschema_rs``: ``validator_for(schema).iter_errors`` collected into a list.

The corpus is plain draft 2020-12; some of its nodes carry an ``enum``/``const`` without ``type``,
which the enforced subset rejects (upstream's validator would ignore such an enum). By default
every such node gets the ``type`` its members share (all strings → ``"string"``), so that all
validators do the same work and the schemas pass ``assert_supported_json_schema``;
``--raw`` benchmarks the corpus unchanged.

Each figure is the best-of-N mean time per call in nanoseconds (``time.perf_counter_ns``).
Validator construction is excluded for everyone. The summary lines give the geometric-mean
ratios; the targets are held per tool, so a last section lists every tool below one of them:
``jsonschema / trio_harness >= 10`` (valid and invalid), ``fastjsonschema / trio_harness >= 1`` on
valid calls, ``jsonschema_rs / trio_harness >= 1`` on invalid calls. The machine may be noisy:
rerun a reported miss before trusting it.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema
import jsonschema_rs

from trio_harness import (
    assert_supported_json_schema,
    compile_validator,
    validate_json_schema_value,
)

_CANDIDATES = (
    Path(__file__).resolve().parent / "corpus.json",  # a copy of the shared corpus, kept in-tree
    Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "corpus.json",
)


def time_per_call(fn: Callable[[], object], rounds: int, number: int) -> float:
    # Calibrate: at most ``number`` calls per round, and about 20 ms per round for slow calls.
    start = time.perf_counter_ns()
    fn()
    once = max(time.perf_counter_ns() - start, 1)
    number = max(1, min(number, 20_000_000 // once))
    best = math.inf
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter_ns() - start) / number)
    return best


def _fastjsonschema_call(validate: Callable[[Any], Any], value: object) -> Callable[[], object]:
    def call() -> object:
        try:
            validate(value)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return call


def _json_type(value: object) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return None


def to_subset(schema: Any) -> Any:
    """Copy ``schema``, giving every untyped ``enum``/``const`` node its members' common type."""
    if isinstance(schema, list):
        return [to_subset(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    node = {key: to_subset(value) for key, value in schema.items()}
    if "type" not in node and "oneOf" not in node and ("enum" in node or "const" in node):
        members = list(node.get("enum", [])) + ([node["const"]] if "const" in node else [])
        kinds = {_json_type(member) for member in members}
        if kinds == {"integer", "number"}:
            kinds = {"number"}
        if len(kinds) == 1 and None not in kinds:
            node = {"type": kinds.pop(), **node}
    return node


NAMES = ("trio_harness", "generic", "jsonschema", "fastjsonschema", "jsonschema_rs")


def _runners(schema: dict[str, Any]) -> dict[str, Callable[[object], Callable[[], object]]]:
    ours = compile_validator(schema)
    draft = jsonschema.Draft202012Validator(schema)
    fast = fastjsonschema.compile(schema)
    rust = jsonschema_rs.validator_for(schema)
    return {
        "trio_harness": lambda v: lambda: ours(v, ""),
        "generic": lambda v: lambda: validate_json_schema_value(schema, v, ""),
        "jsonschema": lambda v: lambda: list(draft.iter_errors(v)),
        "fastjsonschema": lambda v: _fastjsonschema_call(fast, v),
        "jsonschema_rs": lambda v: lambda: list(rust.iter_errors(v)),
    }


def measure(argv: list[str], *, show: bool = True) -> dict[str, Any]:
    """Time every tool; print the per-tool table when ``show``; return the figures.

    Returns:
        ``{"totals": {kind: {validator: [ns per tool]}}, "misses": [...], "rounds": r,
        "number": n, "tools": [tool names, in the order of the totals]}``.
    """
    quick = "--quick" in argv
    paths = [Path(arg) for arg in argv if not arg.startswith("--")]
    corpus_path = paths[0] if paths else next(p for p in _CANDIDATES if p.exists())
    corpus = json.loads(corpus_path.read_text(encoding="utf-8"))
    if "--raw" not in argv:
        for tool in corpus["tools"]:
            tool["schema"] = to_subset(tool["schema"])
            assert_supported_json_schema(tool["schema"])
    only = [arg.split("=", 1)[1].split(",") for arg in argv if arg.startswith("--tools=")]
    if only:
        corpus["tools"] = [tool for tool in corpus["tools"] if tool["name"] in only[0]]
    rounds, number = (3, 200) if quick else (7, 1000)
    totals: dict[str, dict[str, list[float]]] = {"valid": {}, "invalid": {}}
    if show:
        print(f"per-call ns, best of {rounds} x {number} (mean over the tool's cases)")
        print(f"{'tool':<22}{'kind':<8}" + "".join(f"{n:>16}" for n in NAMES))
    misses: list[str] = []
    for tool in corpus["tools"]:
        runners = _runners(tool["schema"])
        for kind in ("valid", "invalid"):
            cases = tool[kind]
            row: dict[str, float] = {}
            for name in NAMES:
                per_case = [time_per_call(runners[name](case), rounds, number) for case in cases]
                row[name] = statistics.fmean(per_case)
                totals[kind].setdefault(name, []).append(row[name])
            if show:
                print(f"{tool['name']:<22}{kind:<8}" + "".join(f"{row[n]:>16.0f}" for n in NAMES))
            misses += _misses(tool["name"], kind, row)
    names = [tool["name"] for tool in corpus["tools"]]
    return {"totals": totals, "misses": misses, "rounds": rounds, "number": number, "tools": names}


def ratios(totals: dict[str, dict[str, list[float]]], kind: str, other: str) -> list[float]:
    """Per-tool ``other / trio_harness`` time ratios (above 1: trio_harness is faster)."""
    return [o / t for o, t in zip(totals[kind][other], totals[kind]["trio_harness"], strict=True)]


def main(argv: list[str]) -> None:
    result = measure(argv)
    print()
    for kind in ("valid", "invalid"):
        for other in NAMES[1:]:
            found = ratios(result["totals"], kind, other)
            print(
                f"{kind:<8} {other:<15} / trio_harness: geometric mean "
                f"x{statistics.geometric_mean(found):.2f} "
                f"(min x{min(found):.2f}, max x{max(found):.2f})"
            )
    print()
    misses = result["misses"]
    print("per-tool target misses:", ", ".join(misses) if misses else "none")


def _misses(tool: str, kind: str, row: dict[str, float]) -> list[str]:
    ours = row["trio_harness"]
    found = []
    if row["jsonschema"] / ours < 10:
        found.append(f"{tool}/{kind} jsonschema x{row['jsonschema'] / ours:.1f} < x10")
    other = "fastjsonschema" if kind == "valid" else "jsonschema_rs"
    if row[other] / ours < 1:
        found.append(f"{tool}/{kind} {other} x{row[other] / ours:.2f} < x1")
    return found


if __name__ == "__main__":
    main(sys.argv[1:])
