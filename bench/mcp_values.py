"""Seeded values for any normalised schema (the extended vocabulary too), and their mutants.

``trio_harness.testing``'s strategies take schemas of the strict subset only; real MCP schemas
have bounds, lengths and patterns. :func:`random_value` aims at a valid value (a branch of a
union, the required properties and some optional ones, strings within their lengths, numbers
within their bounds); a ``pattern`` it cannot honour gives a string that may not match, which is
still a value to compare on. :func:`mutants` breaks one thing each: a required property left
out, a property of another type, an undeclared property, a bound crossed.
"""

from __future__ import annotations

import copy
import random
import string
from typing import Any

#: How deep a value is built; past it, the simplest value of the type.
MAX_DEPTH = 8
_OTHER: dict[str, Any] = {
    "string": 7,
    "number": "7",
    "integer": 1.5,
    "boolean": "true",
    "null": 0,
    "array": {"not": "an array"},
    "object": ["not", "an", "object"],
}


def _string(node: dict[str, Any], rng: random.Random) -> str:
    low = node.get("minLength", 0)
    high = node.get("maxLength", max(low, 12))
    size = rng.randint(low, max(low, min(high, low + 12)))
    fmt = node.get("format")
    if fmt == "uri":
        return "https://example.invalid/" + "a" * max(0, size - 24)
    if fmt == "date-time":
        return "2026-01-02T03:04:05Z"
    if fmt == "date":
        return "2026-01-02"
    alphabet = string.ascii_lowercase + string.digits + " _-./"
    return "".join(rng.choice(alphabet) for _ in range(size))


def _number(node: dict[str, Any], rng: random.Random, integer: bool) -> Any:
    low = node.get("minimum", node.get("exclusiveMinimum", -1000))
    high = node.get("maximum", node.get("exclusiveMaximum", 1000))
    if "exclusiveMinimum" in node:
        low = low + 1
    if "exclusiveMaximum" in node:
        high = high - 1
    if low > high:
        low, high = high, low
    if integer or rng.random() < 0.5:
        value: Any = rng.randint(int(-(-low // 1)), int(high // 1)) if int(high) >= low else low
    else:
        value = rng.uniform(low, high)
    step = node.get("multipleOf")
    if step:
        value = round(value / step) * step
    return value


def random_value(node: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value aimed at ``node`` (a normalised schema)."""
    if type(node) is not dict:
        return None
    if "oneOf" in node:
        return random_value(rng.choice(node["oneOf"]), rng, depth)
    if "const" in node:
        return copy.deepcopy(node["const"])
    if node.get("enum"):
        return copy.deepcopy(rng.choice(node["enum"]))
    kind = node.get("type")
    if kind is None:
        return rng.choice([None, 1, "x", True, [], {}])
    deeper = depth >= MAX_DEPTH
    if kind == "object":
        properties = node.get("properties", {})
        required = set(node.get("required", []))
        out: dict[str, Any] = {}
        for name, child in properties.items():
            if name in required or (not deeper and rng.random() < 0.5):
                out[name] = random_value(child, rng, depth + 1)
        extra = node.get("additionalProperties", True)
        if type(extra) is dict and not deeper and rng.random() < 0.5:
            out[f"extra{rng.randint(0, 9)}"] = random_value(extra, rng, depth + 1)
        return out
    if kind == "array":
        prefix = node.get("prefixItems", [])
        low = max(node.get("minItems", 0), 0)
        high = node.get("maxItems", low + 3)
        size = low if deeper else rng.randint(low, max(low, min(high, low + 3)))
        items = [random_value(child, rng, depth + 1) for child in prefix[:size]]
        items += [
            random_value(node.get("items", {}), rng, depth + 1) for _ in range(size - len(items))
        ]
        if node.get("uniqueItems") and len(items) > 1:
            items = items[:1]
        return items
    if kind == "string":
        return _string(node, rng)
    if kind in ("number", "integer"):
        return _number(node, rng, kind == "integer")
    if kind == "boolean":
        return rng.random() < 0.5
    return None


def mutants(node: Any, value: Any, rng: random.Random) -> list[Any]:
    """``value`` broken one way at a time (at the top level or one property down)."""
    out: list[Any] = []
    if type(node) is not dict:
        return out
    kind = node.get("type")
    out.append(_OTHER.get(kind) if type(kind) is str else None)
    if type(value) is dict and kind == "object":
        properties = node.get("properties", {})
        for name in node.get("required", []):
            broken = dict(value)
            broken.pop(name, None)
            out.append(broken)
            break
        names = [name for name in value if name in properties]
        if names:
            name = rng.choice(names)
            child = properties[name]
            child_kind = child.get("type") if type(child) is dict else None
            broken = dict(value)
            broken[name] = _OTHER.get(child_kind) if type(child_kind) is str else None
            out.append(broken)
            deeper = mutants(child, value[name], rng)
            if deeper:
                nested = dict(value)
                nested[name] = rng.choice(deeper)
                out.append(nested)
        out.append({**value, "undeclaredProperty": 1})
    if type(value) in (int, float) and type(value) is not bool:
        for bound, delta in (("minimum", -1), ("maximum", 1), ("exclusiveMaximum", 0)):
            if bound in node:
                out.append(node[bound] + delta)
    if type(value) is str and "maxLength" in node:
        out.append("x" * (node["maxLength"] + 1))
    return out
