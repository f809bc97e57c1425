"""Every validator of the package on one strict schema, and the answer they must all give.

The package validates a value with several engines that derive their checks and messages from
:mod:`.rules`: the generic walker, the generated code of ``compile_validator`` (what
``define_tool`` runs), and the extended vocabulary's walker, its generated check and its
closures. :func:`checked_violations` answers with the validator ``define_tool`` runs and asks
every other engine the same question; a difference raises :class:`ValidatorsDisagree`. The
conformance oracle answers its validation cases through it, so the kit's vectors judge every
engine, not one.

The extended engines are asked on a *neutral extension* of the schema: the same schema with
bounds that every value of the node's type meets (``minProperties: 0`` on objects,
``minItems: 0`` on arrays, ``minLength: 0`` on strings; ``uniqueItems: false`` too for the
closures' check-only pass). Those keywords make the extended engines walk the objects, arrays,
strings and unions themselves, and cannot change an answer: any difference is an engine's bug.
"""

from __future__ import annotations

from typing import Any, Final

from .compiled import Validator, compilable, compile_validator
from .extended import validate_extended_value
from .extended_compiled import compile_extended_validator
from .walker import validate_json_schema_value

__all__ = ["ValidatorsDisagree", "checked_violations", "engines", "neutral_extension"]


class ValidatorsDisagree(AssertionError):
    """Two validators of the package gave different answers on one case (a bug of one)."""


#: Keywords every value of the node's type satisfies, by type (the closures' set adds one).
_NEUTRAL: Final[dict[str, dict[str, object]]] = {
    "object": {"minProperties": 0},
    "array": {"minItems": 0},
    "string": {"minLength": 0},
}
_NEUTRAL_CLOSURES: Final[dict[str, dict[str, object]]] = {
    **_NEUTRAL,
    "array": {"minItems": 0, "uniqueItems": False},
}


def neutral_extension(schema: dict[str, Any], *, closures: bool = False) -> dict[str, Any]:
    """A copy of an asserted strict ``schema`` with neutral extension keywords on every object,
    array and string node (see the module docstring); shared sub-schemas stay shared.

    Post-order over an explicit stack (an asserted schema is acyclic).
    """
    extra = _NEUTRAL_CLOSURES if closures else _NEUTRAL
    copies: dict[int, dict[str, Any]] = {}
    stack: list[tuple[dict[str, Any], bool]] = [(schema, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in copies:
            continue
        children: list[dict[str, Any]] = []
        if "oneOf" in node:
            children = list(node["oneOf"])
        elif node.get("type") == "object":
            children = list((node.get("properties") or {}).values())
        elif node.get("type") == "array" and "items" in node:
            children = [node["items"]]
        if not done:
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in copies)
            continue
        copy = dict(node)
        if "oneOf" in node:
            copy["oneOf"] = [copies[id(branch)] for branch in node["oneOf"]]
        elif node.get("type") == "object" and node.get("properties"):
            copy["properties"] = {
                key: copies[id(child)] for key, child in node["properties"].items()
            }
        elif node.get("type") == "array" and "items" in node:
            copy["items"] = copies[id(node["items"])]
        if "oneOf" not in node:
            copy.update(extra.get(node.get("type"), {}))  # type: ignore[arg-type]
        copies[id(node)] = copy
    return copies[id(schema)]


def _walker(schema: object) -> Validator:
    return lambda value, path: validate_json_schema_value(schema, value, path)


def engines(schema: object) -> dict[str, Validator]:
    """Every validator of the package for ``schema``, by name; ``compiled`` first (the one
    ``define_tool`` runs). A schema the generated code does not take (rejected, forged, nested
    deeper than ``MAX_COMPILED_DEPTH``) has the walker only: every engine answers with it."""
    if not compilable(schema):
        return {"compiled": compile_validator(schema)}
    bounds = neutral_extension(schema)  # type: ignore[arg-type]
    closures = neutral_extension(schema, closures=True)  # type: ignore[arg-type]

    def extended_walker(value: object, path: str) -> list[str]:
        return validate_extended_value(bounds, value, path)

    return {
        "compiled": compile_validator(schema),
        "walker": _walker(schema),
        "extended walker": extended_walker,
        "extended generated check": compile_extended_validator(bounds),
        "extended closures": compile_extended_validator(closures),
    }


def checked_violations(schema: object, value: object, path: str) -> list[str]:
    """What ``compile_validator(schema)(value, path)`` returns, once every engine agrees.

    For JSON data (what the oracle decodes). On a value whose inspection raises (a hostile dict
    key), the engines may each report the lossless violation at a different node.

    Raises:
        ValidatorsDisagree: An engine answered differently (names it and both answers).
    """
    validators = engines(schema)
    answer = validators.pop("compiled")(value, path)
    for name, validate in validators.items():
        other = validate(value, path)
        if other != answer:
            raise ValidatorsDisagree(
                f"the {name} answers {other!r} where compile_validator answers {answer!r}"
            )
    return answer
