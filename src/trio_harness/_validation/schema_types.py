"""JSON types of schema nodes and values, as :mod:`.normalize` reasons about them: the keywords
each type owns, the type of a value, and whether union branches are disjoint by type."""

from __future__ import annotations

from typing import Any, Final

from .extended import EXTENSION_BY_TYPE
from .subset import STRUCTURAL_BY_TYPE

__all__ = [
    "ANY_TYPE_KEYWORDS",
    "KNOWN_TYPES",
    "TYPE_KEYWORDS",
    "branch_types",
    "json_type",
    "member_fits",
    "types_disjoint",
]

KNOWN_TYPES: Final = ("object", "array", "string", "number", "integer", "boolean", "null")
#: The keywords each type owns (the rest are annotations or belong to another type): the strict
#: subset's structural keywords of the type plus the extension keywords of the type.
TYPE_KEYWORDS: Final[dict[str, frozenset[str]]] = {
    name: STRUCTURAL_BY_TYPE[name] | frozenset(EXTENSION_BY_TYPE.get(name, ()))
    for name in KNOWN_TYPES
}
ANY_TYPE_KEYWORDS: Final = frozenset().union(*TYPE_KEYWORDS.values())


def json_type(value: object) -> str:
    """The JSON type of a JSON value (an integral float is an ``integer``, as in JSON Schema)."""
    if value is None:
        return "null"
    kind = type(value)
    if kind is bool:
        return "boolean"
    if kind is int or (type(value) is float and value.is_integer()):
        return "integer"
    if kind is float:
        return "number"
    if kind is str:
        return "string"
    return "array" if kind is list else "object"


def member_fits(type_name: str, value: object) -> bool:
    """Whether an ``enum``/``const`` member can match a node of ``type_name``."""
    actual = json_type(value)
    return actual == type_name or (type_name == "number" and actual == "integer")


def branch_types(branch: object) -> set[str] | None:
    """The JSON types a union branch can match (``number`` and ``integer`` together), or
    ``None`` when the branch is not typed."""
    if type(branch) is not dict:
        return None
    kind = branch.get("type")
    if type(kind) is str:
        return {"number", "integer"} if kind in ("number", "integer") else {kind}
    if "oneOf" in branch:
        found: set[str] = set()
        for inner in branch["oneOf"]:
            inner_types = branch_types(inner)
            if inner_types is None:
                return None
            found |= inner_types
        return found
    return None


def types_disjoint(branches: list[Any]) -> bool:
    """Whether no two branches can match a value of the same JSON type."""
    seen: set[str] = set()
    for branch in branches:
        types = branch_types(branch)
        if types is None or types & seen:
            return False
        seen |= types
    return True
