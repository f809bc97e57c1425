"""The enforced raw JSON-Schema subset: ``assert_supported_json_schema`` and its object-root variant.

The subset (upstream ``json-schema.ts``) has eight constraint keywords (``type``, ``oneOf``,
``properties``, ``required``, ``additionalProperties``, ``items``, ``enum``, ``const``), four
annotation keywords (``description``, ``title``, ``default``, ``examples``) and seven types. The
assertion reports EVERY violation, in the order of an iterative depth-first walk, with upstream's
exact wording; the root is labelled ``schema``.

Python mapping of upstream's notions:

* a *schema record* is an exact ``dict`` whose keys are all exact ``str`` (subclasses, ``Mapping``
  look-alikes and dicts with other keys are not records);
* an *ordinary dense array* is an exact ``list``;
* an annotation payload must be lossless JSON (:func:`trio_harness.is_json_value`);
* scalar type correctness (for ``enum``/``const``) is the ``_SCALAR_CHECKS`` table: ``bool`` is never a
  number, ``2.0`` is an integer, ``-0.0``/``nan``/``inf`` and ints beyond double range are not numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from .._errors import JsonSchemaError
from .._json import (
    is_json_integer,
    is_json_number,
    is_json_value,
    json_node_count,
    json_node_limit,
    node_limit_message,
)
from .paths import Path, render_path

__all__ = [
    "ANNOTATION_KEYWORDS",
    "ANNOTATION_ORDER",
    "CONSTRAINT_KEYWORDS",
    "SCALAR_TYPES",
    "STRUCTURAL_BY_TYPE",
    "assert_object_json_schema",
    "assert_supported_json_schema",
    "is_schema_record",
    "js_same_value_zero",
]

CONSTRAINT_KEYWORDS: Final = frozenset(
    ("type", "oneOf", "properties", "required", "additionalProperties", "items", "enum", "const")
)
#: Annotation keywords, in the order the DSL lists them on a compiled node.
ANNOTATION_ORDER: Final = ("description", "title", "default", "examples")
ANNOTATION_KEYWORDS: Final = frozenset(ANNOTATION_ORDER)
SCALAR_TYPES: Final = frozenset(("string", "number", "integer", "boolean", "null"))

#: The structural keywords, in the fixed order in which upstream reports them.
_STRUCTURAL_ORDER: Final = (
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
)

#: Which structural keywords each type allows (step 9 reports the others as misplaced).
STRUCTURAL_BY_TYPE: Final[dict[str, frozenset[str]]] = {
    "object": frozenset(("properties", "required", "additionalProperties")),
    "array": frozenset(("items",)),
    **{scalar: frozenset(("enum", "const")) for scalar in SCALAR_TYPES},
}

_UNSUPPORTED_KEYWORD: Final = (
    " is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/"
    "items/enum/const + annotations)"
)


#: Type correctness of a scalar ``enum``/``const`` member, by declared type (a table, not a switch).
_SCALAR_CHECKS: Final[dict[str, Callable[[object], bool]]] = {
    "string": lambda value: type(value) is str,
    "number": is_json_number,
    "integer": is_json_integer,
    "boolean": lambda value: type(value) is bool,
    "null": lambda value: value is None,
}


_NUMBER_KINDS: Final = (int, float)


def js_same_value_zero(left: object, right: object) -> bool:
    """JavaScript SameValueZero/strict equality on JSON scalars: ``True`` never equals ``1``.

    Containers compare by identity (as JavaScript objects do); ``1 == 1.0`` holds.
    """
    lk, rk = type(left), type(right)
    if lk is rk:
        if lk is dict or lk is list:
            return left is right
        return bool(left == right)
    if lk in _NUMBER_KINDS and rk in _NUMBER_KINDS:
        return bool(left == right)
    return False


def is_schema_record(node: object) -> bool:
    """Whether ``node`` is a schema record: an exact ``dict`` with only exact ``str`` keys.

    Exact built-ins only: a subclass could run user code (``__getitem__``, ``__iter__``) or hide
    data while it is inspected.
    """
    if type(node) is not dict:
        return False
    return all(type(key) is str for key in node)


def _is_string_list(value: object) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


# Walk operations. Each stack item is (operation, node, path).
_VISIT: Final = 0
_LEAVE: Final = 1
_AFTER_ONE_OF: Final = 2
_AFTER_PROPERTIES: Final = 3


def _check_scalar(node: dict[str, object], type_name: str, at: Path, out: list[str]) -> None:
    ok = _SCALAR_CHECKS[type_name]
    enum_ok = False
    if "enum" in node:
        enum = node["enum"]
        enum_ok = type(enum) is list and len(enum) > 0 and all(ok(member) for member in enum)
        if not enum_ok:
            out.append(f"{render_path(at)}.enum must be a non-empty array of {type_name} values")
    if "const" in node:
        const = node["const"]
        if not ok(const):
            out.append(f"{render_path(at)}.const must be a {type_name} value")
        elif enum_ok and not any(
            js_same_value_zero(member, const)
            for member in node["enum"]  # type: ignore[attr-defined]
        ):
            path = render_path(at)
            out.append(f"{path}.const must be one of {path}.enum when both are declared")


def _after_properties(node: dict[str, object], at: Path, out: list[str]) -> None:
    # Runs after every property subtree, so these violations follow the children's. The path
    # is rendered only for a violation (paths are lazy chains, see paths.py).
    properties = node.get("properties")
    declared = properties if is_schema_record(properties) else {}
    if "required" in node:
        required = node["required"]
        if not _is_string_list(required):
            out.append(f"{render_path(at)}.required must be an array of strings")
        else:
            for name in required:  # type: ignore[attr-defined]
                if name not in declared:  # type: ignore[operator]
                    out.append(
                        f'{render_path(at)}.required names "{name}" which is not in properties'
                    )
    if "additionalProperties" in node and type(node["additionalProperties"]) is not bool:
        out.append(f"{render_path(at)}.additionalProperties must be a boolean")


def _collect_violations(schema: object) -> list[str]:
    out: list[str] = []
    # Invariant: ``ancestors`` holds the ids of the schema records on the current path from the
    # root; a _LEAVE item removes a record once its whole subtree (and post-checks) has run.
    # All visited records stay referenced by ``schema``, so their ids are stable during the walk.
    ancestors: set[int] = set()
    stack: list[tuple[int, object, Path]] = [(_VISIT, schema, "schema")]
    # Every visited node and annotation payload is charged: a schema sharing sub-schemas is
    # walked as the tree it expands to, so the walk stops at the JSON node limit.
    budget = json_node_limit()
    while stack:
        op, node, at = stack.pop()
        if op == _VISIT:
            budget -= 1
            if budget < 0:
                out.append(node_limit_message("schema", json_node_limit()))
                break
        if op == _LEAVE:
            ancestors.discard(id(node))
            continue
        if op == _AFTER_ONE_OF:
            for key in _STRUCTURAL_ORDER:
                if key in node:  # type: ignore[operator]
                    out.append(f"{render_path(at)}.{key} is not supported beside oneOf")
            continue
        if op == _AFTER_PROPERTIES:
            _after_properties(node, at, out)  # type: ignore[arg-type]
            continue

        # 1-2: record and cycle checks stop the node.
        if not is_schema_record(node):
            out.append(f"{render_path(at)} must be a schema object")
            continue
        if id(node) in ancestors:
            out.append(f"{render_path(at)} is circular")
            continue
        record: dict[str, object] = node  # type: ignore[assignment]
        # 3: vocabulary and annotation payloads, in key order.
        for key, payload in record.items():
            if key in CONSTRAINT_KEYWORDS:
                continue
            if key in ANNOTATION_KEYWORDS:
                if not is_json_value(payload):
                    out.append(f"{render_path(at)}.{key} annotation must be lossless JSON data")
                else:
                    budget -= json_node_count(payload, max(budget, 0))
            else:
                out.append(f"{render_path(at)}.{key}{_UNSUPPORTED_KEYWORD}")
        if budget < 0:
            out.append(node_limit_message("schema", json_node_limit()))
            break
        # 4: textual annotations.
        if "description" in record and type(record["description"]) is not str:
            out.append(f"{render_path(at)}.description must be a string")
        if "title" in record and type(record["title"]) is not str:
            out.append(f"{render_path(at)}.title must be a string")
        has_type = "type" in record
        has_one_of = "oneOf" in record
        # 5-6: node kind.
        if has_type and has_one_of:
            out.append(f"{render_path(at)} cannot declare both type and oneOf")
            continue
        if not has_type and not has_one_of:
            for key in _STRUCTURAL_ORDER:
                if key in record:
                    out.append(f"{render_path(at)}.{key} requires type or oneOf")
            continue
        ancestors.add(id(record))
        stack.append((_LEAVE, record, at))
        # 7: unions; branches first, then the keywords that may not sit beside oneOf.
        if has_one_of:
            stack.append((_AFTER_ONE_OF, record, at))
            branches = record["oneOf"]
            if type(branches) is not list or len(branches) < 2:
                out.append(f"{render_path(at)}.oneOf must be an array of at least two schemas")
            else:
                for index in range(len(branches) - 1, -1, -1):
                    stack.append((_VISIT, branches[index], (at, f".oneOf[{index}]", "")))
            continue
        # 8: the type itself.
        type_name = record["type"]
        if type(type_name) is not str or type_name not in STRUCTURAL_BY_TYPE:
            if type(type_name) is list:
                out.append(
                    f"{render_path(at)}.type must be a single type string (type arrays are not supported)"
                )
            else:
                out.append(
                    f"{render_path(at)}.type must be one of object/array/string/number/integer/boolean/null"
                )
            continue
        # 9: structural keywords on the wrong type.
        allowed = STRUCTURAL_BY_TYPE[type_name]
        for key in _STRUCTURAL_ORDER:
            if key in record and key not in allowed:
                out.append(f'{render_path(at)}.{key} is not supported on type "{type_name}"')
        # 10: kind-specific checks.
        if type_name == "object":
            stack.append((_AFTER_PROPERTIES, record, at))
            if "properties" in record:
                properties = record["properties"]
                if not is_schema_record(properties):
                    out.append(f"{render_path(at)}.properties must be an object of schemas")
                else:
                    entries = list(properties.items())  # type: ignore[attr-defined]
                    for key, child in reversed(entries):
                        stack.append((_VISIT, child, (at, ".properties." + key, "")))
        elif type_name == "array":
            if "items" in record:
                stack.append((_VISIT, record["items"], (at, ".items", "")))
        else:
            _check_scalar(record, type_name, at, out)
    return out


def assert_supported_json_schema(schema: object) -> None:
    """Assert that ``schema`` lies inside the supported JSON-Schema subset.

    Args:
        schema: The raw schema (nested ``dict``/``list`` data).

    Raises:
        JsonSchemaError: With every violation, in walk order, e.g.
            ``schema.properties.a.type must be one of object/array/string/number/integer/boolean/null``.
    """
    violations = _collect_violations(schema)
    if violations:
        raise JsonSchemaError(violations)


def assert_object_json_schema(schema: object) -> None:
    """Assert the subset, and additionally that the root is ``{"type": "object", ...}``.

    Structured outputs must be object-rooted. The object-root rule is reported only when the
    walk found nothing else.

    Raises:
        JsonSchemaError: As :func:`assert_supported_json_schema`, or with the single violation
            ``schema.type must be "object" (structured output is object-rooted)``.
    """
    violations = _collect_violations(schema)
    if not violations and not (
        is_schema_record(schema) and schema.get("type") == "object"  # type: ignore[attr-defined]
    ):
        violations = ['schema.type must be "object" (structured output is object-rooted)']
    if violations:
        raise JsonSchemaError(violations)
