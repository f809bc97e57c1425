"""Shared DSL specs of the upstream §4 nested-object cases (no tests here)."""

from __future__ import annotations

from typing import Any


def host_port_spec(*, required: bool = False) -> dict[str, Any]:
    """The upstream open ``{host (required), port}`` object spec; ``required`` marks the object."""
    spec: dict[str, Any] = {"type": "object", "additionalProperties": True}
    if required:
        spec["required"] = True
    spec["properties"] = {"host": {"type": "string", "required": True}, "port": {"type": "number"}}
    return spec


def host_port_schema() -> dict[str, Any]:
    """The JSON Schema that ``host_port_spec`` compiles to (key order included)."""
    return {
        "type": "object",
        "additionalProperties": True,
        "properties": {"host": {"type": "string"}, "port": {"type": "number"}},
        "required": ["host"],
    }
