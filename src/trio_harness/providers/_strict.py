"""When a tool's parameter schema can be sent in OpenAI's strict mode without changing its meaning.

Strict mode (structured outputs for function calling) needs every object closed
(``additionalProperties: false``) with every property listed in ``required``, no ``oneOf``, no
free-form values, and ``items`` on every array. A DSL schema meets that when all of its
properties are required and its nested objects are closed; its root is the DSL's implicit *open*
object, which is closed for the model (the model then sends no extra keys, which the harness would
have accepted anyway). Anything else is sent without ``strict``, never rewritten into something
with different validity.

:func:`function_tool` writes a function tool's fields for both OpenAI APIs (Chat Completions and
Responses) with ``strict`` set where the schema allows it.
"""

from __future__ import annotations

import copy
from typing import Any, Final

__all__ = ["function_tool", "strict_schema"]

_ALLOWED: Final = frozenset(
    {"type", "description", "title", "enum", "const", "items", "properties", "required"}
    | {"additionalProperties"}
)


def strict_schema(parameters: Any) -> dict[str, Any] | None:
    """A strict-mode copy of a tool's parameter schema, or ``None`` when it has no exact one."""
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        return None
    root: dict[str, Any] = copy.deepcopy(parameters)
    root.setdefault("properties", {})
    if root.get("additionalProperties", False) is not False and "additionalProperties" in root:
        return None
    root["additionalProperties"] = False
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or not set(node) <= _ALLOWED or "type" not in node:
            return None
        kind = node["type"]
        if kind == "object":
            properties = node.get("properties", {})
            if node.get("additionalProperties") is not False:
                return None
            required = node.get("required", [])
            if len(required) != len(properties) or set(required) != set(properties):
                return None
            node.setdefault("required", [])
            stack.extend(properties.values())
        elif kind == "array":
            if "items" not in node:
                return None
            stack.append(node["items"])
        elif kind not in ("string", "number", "integer", "boolean", "null"):
            return None
    return root


def function_tool(spec: dict[str, Any], strict: bool | None, explicit: bool) -> dict[str, Any]:
    """The fields of a function tool shared by both OpenAI APIs; ``strict`` only where the schema
    allows.

    ``explicit``: write ``"strict": false`` too (the Responses API makes a function tool strict
    when the field is absent).
    """
    out: dict[str, Any] = {
        "name": spec["name"],
        "description": spec["description"],
        "parameters": spec["parameters"],
    }
    tightened = None if strict is False else strict_schema(spec["parameters"])
    if tightened is None:
        if strict:
            raise ValueError(
                f'tool "{spec["name"]}" cannot use strict mode: every property must be required '
                "and every object closed, with no oneOf or free-form json values"
            )
        if explicit:
            out["strict"] = False
        return out
    out["parameters"] = tightened
    out["strict"] = True
    return out
