"""``python -m trio_harness conformance generate``: write the scheduling vectors from the reference.

Scenarios come from seeded families (plain pools, hooks and approval, aborts and timeouts,
scheduler failures, registry changes at commit, edge cases). Each is answered by
:func:`~trio_harness._conformance.scenario.run_scenario`; a draw whose scripted timers tie is
dropped and redrawn, so every answer in the kit is the only allowed one. Tags are computed by
:func:`~trio_harness._conformance.behaviours.behaviours_of`. The output is deterministic: the test
suite regenerates it and fails on any difference from the committed files.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from .._json import js_json
from .behaviours import BEHAVIOURS, behaviours_of
from .scenario import ScenarioAnswer, run_scenario
from .scenario_format import parse_scenario

__all__ = [
    "COVERAGE_FILE",
    "SCHEDULING_FILE",
    "coverage_markdown",
    "generate_lines",
    "generate_scenarios",
    "write_kit",
]

#: The generated files, relative to the spec directory.
SCHEDULING_FILE: Final = "scheduling-vectors.jsonl"
COVERAGE_FILE: Final = "COVERAGE.md"

_PATH: Final = {"path": {"type": "string", "required": True}}

#: The tools a generated scenario may use (a scenario declares the ones its calls name).
_TOOLS: Final[dict[str, dict[str, Any]]] = {
    "read": {"name": "read", "parameters": _PATH, "parallel": "always"},
    "write": {"name": "write", "parameters": _PATH, "parallel": "never"},
    "maybe": {
        "name": "maybe",
        "parameters": {"path": {"type": "string"}, "parallel": {"type": "boolean"}},
        "parallel": {"argument": "parallel"},
    },
    "plain": {"name": "plain", "parallel": "absent"},
    "fuzzy": {"name": "fuzzy", "parallel": "truthy"},
    "flaky": {"name": "flaky", "parallel": "raises"},
    "count": {"name": "count", "output": {"type": "integer"}, "parallel": "always"},
    "slow": {"name": "slow", "parameters": _PATH, "parallel": "always", "timeoutMs": 250},
}


def _arguments(rng: random.Random, tool: str, bad: float) -> str:
    if rng.random() < bad:
        return rng.choice(
            ['{"path": 1}', "{}", "not json", "", "[1]", '{"path": "a", "parallel": 1}']
        )
    if tool == "maybe":
        flag = rng.choice(["true", "false", "true"])
        return f'{{"path": "m", "parallel": {flag}}}'
    if tool in ("read", "write", "slow"):
        return f'{{"path": "{rng.choice("abcdef")}.txt"}}'
    return "{}"


def _body(rng: random.Random, tool: str, *, hang: bool = False) -> dict[str, Any]:
    roll = rng.random()
    if hang and roll < 0.25:
        return {"hangs": True}
    body: dict[str, Any] = {"ms": rng.randint(1, 400)}
    if tool == "count":
        body["returns"] = rng.choice([3, "three", 7])
    elif roll < 0.1:
        body["throws"] = "disk on fire"
    elif roll < 0.15:
        body["harnessError"] = {"code": "E_BUSY", "message": "resource busy"}
    elif roll < 0.2:
        body["concludeTurn"] = True
    return body


def _pre(rng: random.Random) -> dict[str, Any]:
    pre: dict[str, Any] = {"ms": rng.choice([0, 0, rng.randint(1, 60)])}
    roll = rng.random()
    if roll < 0.5:
        return pre
    if roll < 0.62:
        return {**pre, "decision": "deny", "reason": "not in this directory"}
    if roll < 0.7:
        return {**pre, "decision": "raise", "reason": "policy store offline"}
    answer = rng.choice(["allowed-once", "allowed-once", "rejected", "cancelled", "unavailable"])
    ask: dict[str, Any] = {**pre, "decision": "ask", "approval": answer}
    if rng.random() < 0.5:
        ask["approvalMs"] = rng.randint(1, 80)
    if rng.random() < 0.3:
        ask["reason"] = "writes to disk"
    return ask


def _post(rng: random.Random, call_id: str) -> dict[str, Any]:
    post: dict[str, Any] = {"ms": rng.choice([0, rng.randint(1, 90)])}
    roll = rng.random()
    if rng.random() < 0.4:
        post["contexts"] = [f"note from {call_id}"] * rng.randint(1, 2)
    if roll < 0.45:
        return post
    if roll < 0.6:
        return {**post, "content": f"reviewed {call_id}"}
    if roll < 0.72:
        return {**post, "value": f"replaced {call_id}"}
    if roll < 0.88:
        return {**post, "decision": "block", "feedback": rng.choice(["blocked by policy", ""])}
    return {"ms": post["ms"], "decision": "raise", "message": "audit log full"}


def _wrapper(rng: random.Random) -> dict[str, Any]:
    roll = rng.random()
    wrapper: dict[str, Any] = {"beforeMs": rng.choice([0, rng.randint(1, 40)])}
    if roll < 0.6:
        return {**wrapper, "afterMs": rng.choice([0, rng.randint(1, 40)])}
    if roll < 0.8:
        return {**wrapper, "raise": "sandbox unavailable"}
    return {**wrapper, "returns": "from the wrapper"}


class _Draw:
    """Builds one random scenario."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.names: set[str] = set()

    def calls(
        self,
        count: int,
        pool: list[str],
        *,
        bad: float = 0.0,
        hang: bool = False,
        hooks: float = 0.0,
    ) -> list[dict[str, Any]]:
        rng = self.rng
        calls = []
        for index in range(count):
            tool = rng.choice(pool)
            self.names.add(tool)
            call: dict[str, Any] = {
                "id": f"c{index}",
                "name": tool,
                "arguments": _arguments(rng, tool, bad),
                "body": _body(rng, tool, hang=hang),
            }
            if rng.random() < hooks:
                call["pre"] = _pre(rng)
            if rng.random() < hooks / 4:
                call["guard"] = "outside the sandbox"
            if rng.random() < hooks / 2:
                call["wrapper"] = _wrapper(rng)
            if rng.random() < hooks:
                call["post"] = _post(rng, call["id"])
            calls.append(call)
        return calls

    def tools(self) -> list[dict[str, Any]]:
        return [_TOOLS[name] for name in sorted(self.names) if name in _TOOLS]


def _pool(rng: random.Random) -> dict[str, Any]:
    draw = _Draw(rng)
    pool = rng.choice([["read", "write"], ["read", "read", "write", "maybe"], ["read", "plain"]])
    calls = draw.calls(rng.randint(2, 8), pool)
    return {"tools": draw.tools(), "calls": calls, "cap": rng.choice([1, 2, 2, 3, 3, 4, 10])}


def _classify(rng: random.Random) -> dict[str, Any]:
    draw = _Draw(rng)
    pool = ["read", "read", "maybe", "plain", "fuzzy", "flaky", "count", "nowhere"]
    calls = draw.calls(rng.randint(3, 8), pool, bad=0.2)
    return {"tools": draw.tools(), "calls": calls, "cap": rng.choice([2, 3, 4])}


def _hooks(rng: random.Random) -> dict[str, Any]:
    draw = _Draw(rng)
    calls = draw.calls(rng.randint(2, 7), ["read", "read", "write", "maybe"], hooks=0.7)
    scenario: dict[str, Any] = {
        "tools": draw.tools(),
        "calls": calls,
        "cap": rng.choice([1, 2, 3, 4]),
    }
    if rng.random() < 0.15:
        scenario["approval"] = False
    return scenario


def _abort(rng: random.Random) -> dict[str, Any]:
    draw = _Draw(rng)
    calls = draw.calls(
        rng.randint(2, 8), ["read", "read", "write", "slow", "maybe"], hang=True, hooks=0.35
    )
    abort_at = 0 if rng.random() < 0.08 else rng.randint(1, 600)
    return {
        "tools": draw.tools(),
        "calls": calls,
        "cap": rng.choice([1, 2, 3, 4]),
        "abortAtMs": abort_at,
    }


def _timeout(rng: random.Random) -> dict[str, Any]:
    draw = _Draw(rng)
    calls = draw.calls(rng.randint(2, 6), ["slow", "slow", "read", "write"], hooks=0.2)
    for call in calls:
        if call["name"] == "slow" and rng.random() < 0.3:
            call["body"] = {"hangs": True}
    return {"tools": draw.tools(), "calls": calls, "cap": rng.choice([1, 2, 3])}


def _failure(rng: random.Random) -> dict[str, Any]:
    draw = _Draw(rng)
    calls = draw.calls(rng.randint(2, 7), ["read", "read", "write", "maybe"], hooks=0.3)
    phase = rng.choice(["prepare", "dispatch", "dispatch", "commit"])
    failure: dict[str, Any] = {"call": rng.choice(calls)["id"], "phase": phase}
    if phase != "commit":
        failure["ms"] = rng.choice([0, rng.randint(1, 120)])
    return {
        "tools": draw.tools(),
        "calls": calls,
        "cap": rng.choice([2, 3, 4]),
        "schedulerFailure": failure,
    }


def _registry(rng: random.Random) -> dict[str, Any]:
    draw = _Draw(rng)
    calls = draw.calls(rng.randint(3, 7), ["read", "read", "maybe", "write"])
    changer = rng.choice(calls[:-1])
    kind = rng.choice(["flip", "flip", "remove", "add"])
    if kind == "flip":
        changer["onCommit"] = [
            {"op": "setParallel", "tool": "read", "parallel": rng.choice(["never", "always"])}
        ]
        draw.names.add("read")
    elif kind == "remove":
        changer["onCommit"] = [{"op": "remove", "tool": "read"}]
        draw.names.add("read")
    else:
        changer["onCommit"] = [
            {"op": "add", "tool": {"name": "late", "parallel": rng.choice(["always", "never"])}}
        ]
        for call in calls[calls.index(changer) + 1 :]:
            if rng.random() < 0.5:
                call["name"] = "late"
                call["arguments"] = "{}"
    return {"tools": draw.tools(), "calls": calls, "cap": rng.choice([1, 2, 3, 4])}


def _edge_cases() -> Iterator[tuple[str, dict[str, Any]]]:
    read = _TOOLS["read"]
    two = [
        {"id": "c0", "name": "read", "arguments": '{"path": "a"}', "body": {"ms": 30}},
        {"id": "c1", "name": "read", "arguments": '{"path": "b"}', "body": {"ms": 10}},
    ]
    for label, cap in (
        ("zero", 0),
        ("negative", -1),
        ("fraction", 1.5),
        ("boolean", True),
        ("string", "2"),
        ("null", None),
    ):
        yield f"cap-{label}", {"tools": [read], "calls": two, "cap": cap}
    yield "no-calls", {"tools": [read], "calls": []}
    yield (
        "default-cap-12-calls",
        {
            "tools": [read],
            "calls": [
                {
                    "id": f"c{i}",
                    "name": "read",
                    "arguments": '{"path": "p"}',
                    "body": {"ms": 100 + i},
                }
                for i in range(12)
            ],
        },
    )
    # upstream-behavior.md f.4: cap 2, four parallel calls, c1 released first.
    yield (
        "commit-order-example",
        {
            "tools": [read],
            "calls": [
                {"id": f"c{i}", "name": "read", "arguments": '{"path": "p"}', "body": {"ms": ms}}
                for i, ms in enumerate((50, 20, 70, 10))
            ],
            "cap": 2,
        },
    )
    # upstream-timing-facts.md 1 (post-failure commits), cap 3: trio_harness commits c0 only.
    yield (
        "post-failure-commit-rule",
        {
            "tools": [read],
            "calls": [
                {
                    "id": "c0",
                    "name": "read",
                    "arguments": '{"path": "a"}',
                    "body": {"ms": 10000},
                    "post": {"ms": 100000},
                },
                {
                    "id": "c1",
                    "name": "read",
                    "arguments": '{"path": "b"}',
                    "body": {"ms": 20000},
                    "post": {"ms": 4000},
                },
                {"id": "c2", "name": "read", "arguments": '{"path": "c"}', "body": {"ms": 5000}},
            ],
            "cap": 3,
            "schedulerFailure": {"call": "c2", "phase": "dispatch", "ms": 30000},
        },
    )
    # f.5: the failure is raised only after the in-flight bodies settled; nothing more commits.
    yield (
        "failure-waits-for-in-flight",
        {
            "tools": [read],
            "calls": [
                {"id": "c0", "name": "read", "arguments": '{"path": "a"}', "body": {"ms": 100}},
                {"id": "c1", "name": "read", "arguments": '{"path": "b"}', "body": {"ms": 300}},
                {"id": "c2", "name": "read", "arguments": '{"path": "c"}', "body": {"ms": 10}},
            ],
            "cap": 3,
            "schedulerFailure": {"call": "c2", "phase": "dispatch", "ms": 50},
        },
    )
    # A concluding result does not stop later calls (f.2).
    yield (
        "conclude-then-continue",
        {
            "tools": [read, _TOOLS["write"]],
            "calls": [
                {
                    "id": "c0",
                    "name": "read",
                    "arguments": '{"path": "a"}',
                    "body": {"ms": 10, "concludeTurn": True},
                },
                {"id": "c1", "name": "write", "arguments": '{"path": "b"}', "body": {"ms": 5}},
            ],
        },
    )
    yield (
        "empty-and-non-object-arguments",
        {
            "tools": [_TOOLS["plain"], read],
            "calls": [
                {"id": "c0", "name": "plain", "arguments": "", "body": {"ms": 5}},
                {"id": "c1", "name": "read", "arguments": '"a.txt"', "body": {"ms": 5}},
                {"id": "c2", "name": "read", "arguments": "null", "body": {"ms": 5}},
            ],
        },
    )
    yield (
        "ask-cancelled-after-abort",
        {
            "tools": [read],
            "calls": [
                {
                    "id": "c0",
                    "name": "read",
                    "arguments": '{"path": "a"}',
                    "pre": {"decision": "ask", "approval": "cancelled", "approvalMs": 50},
                },
                {"id": "c1", "name": "read", "arguments": '{"path": "b"}', "body": {"ms": 5}},
            ],
            "abortAtMs": 20,
        },
    )
    yield (
        "abort-during-pre-execute",
        {
            "tools": [read],
            "calls": [
                {
                    "id": "c0",
                    "name": "read",
                    "arguments": '{"path": "a"}',
                    "pre": {"ms": 40},
                    "post": {"contexts": ["kept although aborted"]},
                },
                {"id": "c1", "name": "read", "arguments": '{"path": "b"}', "body": {"ms": 5}},
            ],
            "abortAtMs": 15,
        },
    )


_FAMILIES: Final[tuple[tuple[str, Callable[[random.Random], dict[str, Any]], int], ...]] = (
    ("pool", _pool, 80),
    ("classify", _classify, 45),
    ("hooks", _hooks, 90),
    ("abort", _abort, 70),
    ("timeout", _timeout, 25),
    ("failure", _failure, 60),
    ("registry", _registry, 40),
)


def generate_scenarios() -> Iterator[tuple[str, dict[str, Any], ScenarioAnswer]]:
    """Every scenario of the kit as ``(id, scenario, answer)``, in file order; ties redrawn."""
    for name, case in _edge_cases():
        yield f"edge/{name}", case, run_scenario(case)
    for family, draw, count in _FAMILIES:
        rng = random.Random(f"trio_harness conformance {family}")
        made = 0
        while made < count:
            scenario = draw(rng)
            result = run_scenario(scenario)
            if result.ties:
                continue
            made += 1
            yield f"{family}/{made:03d}", scenario, result


def generate_lines() -> list[str]:
    """The lines of ``scheduling-vectors.jsonl``: ``{"op", "id", "tags", "scenario", "expected"}``."""
    lines = []
    for case_id, scenario, result in generate_scenarios():
        if result.ties:  # pragma: no cover - edge cases are written without ties
            raise AssertionError(f"{case_id}: scripted timers tie at {result.ties}")
        tags = behaviours_of(parse_scenario(scenario), result.answer)
        case = {
            "op": "schedule",
            "id": case_id,
            "tags": tags,
            "scenario": scenario,
            "expected": result.answer,
        }
        lines.append(js_json(case))
    return lines


def coverage_markdown(lines: list[str]) -> str:
    """``COVERAGE.md``: every behaviour with the scenarios tagged with it."""
    import json

    tagged: dict[str, list[str]] = {behaviour.id: [] for behaviour in BEHAVIOURS}
    for line in lines:
        case = json.loads(line)
        for tag in case["tags"]:
            tagged[tag].append(case["id"])
    covered = sum(1 for ids in tagged.values() if ids)
    out = [
        "# Scheduling behaviour coverage",
        "",
        "Generated by `python -m trio_harness conformance generate`; do not edit.",
        "",
        f"{len(lines)} scheduling scenarios; {covered} of {len(BEHAVIOURS)} behaviours covered. "
        "Sections refer to `upstream-behavior.md` (e: pipeline, f: pool, g: argument parsing).",
        "",
        "| behaviour | what it checks | scenarios | examples |",
        "|---|---|---|---|",
    ]
    for behaviour in BEHAVIOURS:
        ids = tagged[behaviour.id]
        examples = ", ".join(f"`{case_id}`" for case_id in ids[:4])
        if len(ids) > 4:
            examples += f", … {len(ids) - 4} more"
        out.append(f"| `{behaviour.id}` | {behaviour.summary} | {len(ids)} | {examples or '—'} |")
    return "\n".join(out) + "\n"


def write_kit(spec_dir: Path) -> dict[str, str]:
    """Write the generated files into ``spec_dir``; returns ``{file name: content}``."""
    lines = generate_lines()
    files = {
        SCHEDULING_FILE: "".join(line + "\n" for line in lines),
        COVERAGE_FILE: coverage_markdown(lines),
    }
    spec_dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (spec_dir / name).write_text(text, encoding="utf-8", newline="\n")
    return files
