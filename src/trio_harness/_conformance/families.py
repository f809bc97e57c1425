"""The scenarios of the kit: the tools they use, seeded random families, and the edge cases.

Each family draws scenarios of one kind from its own seeded ``random.Random`` (plain pools,
classification, structured parameters, classifiers returning truthy non-``true`` values, hooks
and approval, aborts and timeouts, scheduler failures, registry changes at commit, windows
refilled after a reclassification); the edge cases are written out (caps, argument texts, the
examples of the upstream description and the measured upstream differences). They are plain
``spec/FORMAT.md`` objects; :mod:`.generate` answers, tags and writes them.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from typing import Any, Final

from .pool_edges import pool_edges
from .union_edges import union_edges

__all__ = ["FAMILIES", "TOOLS", "edge_scenarios"]

_PATH: Final = {"path": {"type": "string", "required": True}}

#: The tools a generated scenario may use (a scenario declares the ones its calls name).
TOOLS: Final[dict[str, dict[str, Any]]] = {
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
    # A classifier reading an argument of any type: only an exact ``true`` is parallel.
    "flag": {"name": "flag", "parallel": {"argument": "p"}},
    # Structured parameters: arguments are validated by the full subset, not a fast path.
    "form": {
        "name": "form",
        "parallel": "always",
        "parameters": {
            "path": {"type": "string", "required": True},
            "mode": {"type": "string", "enum": ["r", "w"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "opts": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"depth": {"type": "integer"}, "follow": {"type": "boolean"}},
            },
            "size": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            "scale": {"type": "number", "enum": [1.0, 2.5]},
        },
    },
    # Starts exclusive; a commit may make it parallel (``setParallel``) inside an open group.
    "later": {"name": "later", "parallel": "never"},
}

#: Argument texts for ``form``: valid ones (numbers as written: ``2.0`` is an integer) and ones
#: breaking one or several parameters at once.
_FORM_ARGUMENTS: Final = (
    '{"path": "a"}',
    '{"path": "a", "mode": "w", "tags": ["x", "y"], "opts": {"depth": 2}, "size": 3}',
    '{"path": "b", "opts": {"depth": 2.0, "follow": true}, "size": "big", "scale": 1}',
    '{"path": "c", "scale": 2.5, "tags": []}',
    '{"path": "a", "mode": "x"}',
    '{"path": "a", "tags": ["x", 1, "y", 2]}',
    '{"path": "a", "opts": {"depth": 1.5, "other": 1}}',
    '{"path": "a", "opts": []}',
    '{"path": "a", "size": true}',
    '{"path": "a", "size": 1.5}',
    '{"path": "a", "scale": 2}',
    '{"mode": "r", "tags": "x", "size": null}',
    '{"path": 1, "mode": 2, "tags": [[]], "opts": {"depth": "1"}, "size": {}, "scale": "1"}',
)

#: Argument texts for ``flag``: its classifier returns ``args.p``; only ``true`` is parallel.
_FLAG_ARGUMENTS: Final = (
    '{"p": true}',
    '{"p": true}',
    '{"p": true}',
    '{"p": 1}',
    '{"p": 1.0}',
    '{"p": "true"}',
    '{"p": [true]}',
    '{"p": {}}',
    '{"p": false}',
    '{"p": null}',
    "{}",
)


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
        return [TOOLS[name] for name in sorted(self.names) if name in TOOLS]


def _pool(rng: random.Random) -> dict[str, Any]:
    draw = _Draw(rng)
    pool = rng.choice([["read", "write"], ["read", "read", "write", "maybe"], ["read", "plain"]])
    calls = draw.calls(rng.randint(2, 8), pool)
    return {"tools": draw.tools(), "calls": calls, "cap": rng.choice([1, 2, 2, 3, 3, 4, 10])}


def _params(rng: random.Random) -> dict[str, Any]:
    draw = _Draw(rng)
    calls = draw.calls(rng.randint(3, 7), ["form", "form", "form", "read", "write"])
    for call in calls:
        if call["name"] == "form":
            call["arguments"] = rng.choice(_FORM_ARGUMENTS)
    return {"tools": draw.tools(), "calls": calls, "cap": rng.choice([2, 3, 4])}


def _truthy(rng: random.Random) -> dict[str, Any]:
    draw = _Draw(rng)
    calls = draw.calls(rng.randint(4, 8), ["flag", "flag", "flag", "read"])
    for call in calls:
        if call["name"] == "flag":
            call["arguments"] = rng.choice(_FLAG_ARGUMENTS)
    return {"tools": draw.tools(), "calls": calls, "cap": rng.choice([2, 3, 4, 10])}


def _window(rng: random.Random) -> dict[str, Any]:
    """A parallel group still open when a commit makes ``later`` parallel: its calls join the
    group, and the window must still hold at most ``cap`` bodies."""
    draw = _Draw(rng)
    cap = rng.choice([1, 2, 2, 3, 3])
    count = rng.randint(cap + 3, cap + 6)
    calls = draw.calls(count, ["read", "read", "later"])
    changer = rng.randrange(0, min(3, count - 2))
    calls[changer]["name"] = "read"
    calls[changer]["arguments"] = '{"path": "a.txt"}'
    calls[changer]["body"] = {"ms": rng.randint(1, 30)}
    calls[changer]["onCommit"] = [
        {
            "op": "setParallel",
            "tool": "later",
            "parallel": rng.choice(["always", "always", "never"]),
        }
    ]
    for call in calls[changer + 1 :]:
        if rng.random() < 0.5:
            call["name"] = "later"
            call["arguments"] = "{}"
    draw.names.update({"read", "later"})
    return {"tools": draw.tools(), "calls": calls, "cap": cap}


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


#: Caps that are not positive integers, by label (JSON's ``2.0`` is one: see ``_ODD_CAPS``).
_INVALID_CAPS: Final = (
    ("zero", 0),
    ("negative", -1),
    ("fraction", 1.5),
    ("boolean", True),
    ("false", False),
    ("string", "2"),
    ("list", [2]),
    ("negative-zero", -0.0),
)
#: Valid caps written oddly: an integral number is an integer, ``null`` is "not given".
_ODD_CAPS: Final[tuple[tuple[str, Any], ...]] = (
    ("integral-float", 2.0),
    ("one-as-float", 1.0),
    ("huge", 1e30),
    ("null", None),
)


def _call(call_id: str, name: str, ms: float, arguments: str = '{"path": "p"}') -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments, "body": {"ms": ms}}


def _cap_edges() -> Iterator[tuple[str, dict[str, Any]]]:
    """Invalid caps are rejected before anything is logged, whatever the calls would do (a port
    that checks the cap only when a parallel group opens fails the shapes without one)."""
    read, write = TOOLS["read"], TOOLS["write"]
    shapes: tuple[tuple[str, dict[str, Any]], ...] = (
        (
            "exclusive",
            {"tools": [write], "calls": [_call("c0", "write", 5), _call("c1", "write", 7)]},
        ),
        (
            "exclusive-first",
            {
                "tools": [read, write],
                "calls": [_call("c0", "write", 5), _call("c1", "read", 7), _call("c2", "read", 9)],
            },
        ),
        ("single", {"tools": [read], "calls": [_call("c0", "read", 5)]}),
        ("no-calls", {"tools": [read], "calls": []}),
        (
            "pre-aborted",
            {
                "tools": [read],
                "calls": [_call("c0", "read", 5), _call("c1", "read", 7)],
                "abortAtMs": 0,
            },
        ),
    )
    for label, cap in _INVALID_CAPS:
        for shape, scenario in shapes:
            yield f"cap-{label}-{shape}", {**scenario, "cap": cap}
    three = [_call("c0", "read", 30), _call("c1", "read", 10), _call("c2", "read", 25)]
    for label, cap in _ODD_CAPS:
        yield f"cap-{label}-three", {"tools": [read], "calls": three, "cap": cap}
    twelve = [_call(f"c{i}", "read", 100 + i) for i in range(12)]
    yield "cap-null-12-calls", {"tools": [read], "calls": twelve, "cap": None}


def _argument_edges() -> Iterator[tuple[str, dict[str, Any]]]:
    """Argument texts that are JSON only in part, numbers as written, and classifiers returning
    values that are truthy but not ``true``."""
    read, plain, form, flag = (TOOLS[name] for name in ("read", "plain", "form", "flag"))
    texts = (
        ("whitespace", " "),
        ("whitespace-mixed", " \t\r\n"),
        ("padded", ' {"path": "a"} '),
        ("trailing-text", '{"path": "a"} x'),
        ("two-objects", '{"path": "a"}{}'),
        ("non-json-space", '\u00a0{"path": "a"}'),
        ("byte-order-mark", '\ufeff{"path": "a"}'),
    )
    for label, text in texts:
        yield (
            f"arguments-{label}",
            {
                "tools": [read, plain],
                "calls": [
                    _call("c0", "read", 20),
                    _call("c1", "read", 10, text),
                    _call("c2", "plain", 5, text),
                    _call("c3", "read", 15),
                ],
                "cap": 3,
            },
        )
    numbers = ('{"path": "a", "n": -0}', '{"path": "b", "n": 1e400}', '{"path": "c", "n": 2.0}')
    yield (
        "arguments-lossy-numbers",
        {
            "tools": [{**read, "parameters": {**_PATH, "n": {"type": "number"}}}],
            "calls": [_call(f"c{i}", "read", 5 + 4 * i, text) for i, text in enumerate(numbers)],
        },
    )
    yield (
        "arguments-structured",
        {
            "tools": [form],
            "calls": [
                _call(f"c{i}", "form", 40 - 3 * i, text) for i, text in enumerate(_FORM_ARGUMENTS)
            ],
            "cap": 3,
        },
    )
    for label, value in (("one", "1"), ("one-as-float", "1.0"), ("string-true", '"true"')):
        flags = ("true", "true", value, "true", "true")
        yield (
            f"classifier-returns-{label}",
            {
                "tools": [flag],
                "calls": [
                    _call(f"c{i}", "flag", (30, 10, 20, 25, 15)[i], f'{{"p": {text}}}')
                    for i, text in enumerate(flags)
                ],
                "cap": 4,
            },
        )


def _edge_cases() -> Iterator[tuple[str, dict[str, Any]]]:
    read = TOOLS["read"]
    two = [
        {"id": "c0", "name": "read", "arguments": '{"path": "a"}', "body": {"ms": 30}},
        {"id": "c1", "name": "read", "arguments": '{"path": "b"}', "body": {"ms": 10}},
    ]
    for label, cap in _INVALID_CAPS:
        yield f"cap-{label}", {"tools": [read], "calls": two, "cap": cap}
    yield "cap-null", {"tools": [read], "calls": two, "cap": None}
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
    # RULES.md f.4: cap 2, four parallel calls, c1 released first.
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
            "tools": [read, TOOLS["write"]],
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
            "tools": [TOOLS["plain"], read],
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
    # The same rule (the abort is checked again after the pre-execute and guard stage: the body
    # never starts) through an approval, and an allowing pre-execute hook in a window.
    yield (
        "abort-during-approval",
        {
            "tools": [read],
            "calls": [
                {
                    "id": "c0",
                    "name": "read",
                    "arguments": '{"path": "a"}',
                    "pre": {"ms": 5, "decision": "ask", "approvalMs": 30},
                    "body": {"ms": 5},
                },
                {"id": "c1", "name": "read", "arguments": '{"path": "b"}', "body": {"ms": 50}},
            ],
            "abortAtMs": 10,
        },
    )
    yield (
        "abort-during-allowing-pre-execute",
        {
            "tools": [read],
            "calls": [
                {"id": "c0", "name": "read", "arguments": '{"path": "a"}', "body": {"ms": 60}},
                {
                    "id": "c1",
                    "name": "read",
                    "arguments": '{"path": "b"}',
                    "pre": {"ms": 25, "decision": "allow"},
                    "body": {"ms": 5},
                },
                {"id": "c2", "name": "read", "arguments": '{"path": "c"}', "body": {"ms": 5}},
            ],
            "cap": 3,
            "abortAtMs": 12,
        },
    )


def _wrapper_abort_edges() -> Iterator[tuple[str, dict[str, Any]]]:
    """An abort while an execute wrapper waits before ``next()``: the body was never invoked, so
    the call is ``ABORTED_BEFORE_DISPATCH`` beside a running body's ``ABORTED``; and a tenth
    parallel call under the default window of 10."""
    read = {"name": "read", "parallel": "always"}
    for label, before, abort_at in (("early", 30, 10), ("late", 45, 40)):
        yield (
            f"abort-in-wrapper-{label}",
            {
                "tools": [read],
                "calls": [
                    {
                        "id": "c0",
                        "name": "read",
                        "wrapper": {"beforeMs": before},
                        "body": {"ms": 5},
                    },
                    {"id": "c1", "name": "read", "body": {"ms": 60}},
                ],
                "abortAtMs": abort_at,
            },
        )
    yield (
        "default-cap-11-calls",
        {"tools": [read], "calls": [_call(f"c{i}", "read", 100 - 3 * i, "{}") for i in range(11)]},
    )


FAMILIES: Final[tuple[tuple[str, Callable[[random.Random], dict[str, Any]], int], ...]] = (
    ("pool", _pool, 80),
    ("classify", _classify, 45),
    ("hooks", _hooks, 90),
    ("abort", _abort, 70),
    ("timeout", _timeout, 25),
    ("failure", _failure, 60),
    ("registry", _registry, 40),
    ("params", _params, 30),
    ("truthy", _truthy, 25),
    ("window", _window, 30),
)


def edge_scenarios() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every edge case as ``(name, scenario)``, in file order (ids ``edge/<name>``)."""
    return itertools.chain(
        _edge_cases(),
        _cap_edges(),
        _argument_edges(),
        union_edges(),
        _wrapper_abort_edges(),
        pool_edges(),
    )
