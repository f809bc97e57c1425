"""The extended vocabulary (opt-in): the strict subset plus the keywords real tool schemas use.

Strict mode (the subset of :mod:`.subset`) is upstream's and is never changed; this module is
used only when a caller asks for it (``vocabulary="extended"``).

Keywords added, by the type they sit on (each is reported as misplaced elsewhere):

* ``number``/``integer``: ``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``
  (numbers, draft 2020-12 form), ``multipleOf`` (a number > 0; decimal-exact, see below);
* ``string``: ``minLength``, ``maxLength`` (Unicode code points, as JSON Schema and Ajv count;
  not JavaScript's ``.length``, which counts UTF-16 code units), ``pattern``
  (:mod:`.pattern`'s ECMA-262 subset, unanchored), ``format`` (an annotation unless format
  assertion is asked for; then ``date-time``, ``date``, ``time``, ``email``, ``uri``, ``uuid``,
  ``ipv4``, ``ipv6``, ``hostname`` are checked and other names are annotations);
* ``array``: ``minItems``, ``maxItems``, ``uniqueItems``, ``prefixItems`` (then ``items`` applies
  to the elements after the prefix);
* ``object``: ``minProperties``, ``maxProperties``, and a schema-valued ``additionalProperties``
  (undeclared keys are validated against it).

Design: a schema is split into its strict *skeleton* (extension keywords removed; a
schema-valued ``additionalProperties`` and ``prefixItems`` become nested schemas of their own), so
the strict assertion, the strict walker and the strict compiled validator do all the work they
already do, with the same wording; the extension adds its checks next to them. Subtrees without
any extension keyword are handed whole to the strict validators.

This module holds the keyword tables, the schema assertion, the leaf checks and the reference
walker (:func:`validate_extended_value`, which reads the schema on every call). The format
predicates and ``multipleOf`` are :mod:`.formats`'; the compiled validator, tested to agree with the
walker, is :mod:`.extended_compiled`'s.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

from .._errors import JsonSchemaError
from .._json import is_json_integer, is_json_number, is_json_value, js_json
from .formats import FORMAT_ASSERTIONS, is_multiple
from .paths import diagnostic_path, property_path
from .pattern import PatternError, backtracking_problem, translate_pattern
from .rules import TYPE_TESTS, Check, bound_check, type_violation, violation
from .subset import assert_supported_json_schema, is_schema_record
from .walker import one_of_violation, validate_json_schema_value

__all__ = [
    "EXTENSION_BY_TYPE",
    "EXTENSION_KEYWORDS",
    "STRICT_LOCAL",
    "EqualityKeys",
    "Formats",
    "Vocabulary",
    "assert_extended_json_schema",
    "count_checks",
    "duplicate_problem",
    "extended_violations",
    "has_extension",
    "number_checks",
    "report",
    "string_checks",
    "validate_extended_value",
]

Vocabulary = Literal["strict", "extended"]
Formats = Literal["annotate", "assert"]

#: Extension keywords by the schema type they apply to.
EXTENSION_BY_TYPE: Final[dict[str, tuple[str, ...]]] = {
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "integer": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "array": ("minItems", "maxItems", "uniqueItems", "prefixItems"),
    "object": ("minProperties", "maxProperties"),
}
#: Every extension keyword (schema-valued ``additionalProperties`` is the one more extension).
EXTENSION_KEYWORDS: Final = frozenset(
    {"additionalProperties", *(key for keys in EXTENSION_BY_TYPE.values() for key in keys)}
)
_OWN_KEYWORDS: Final = frozenset(key for keys in EXTENSION_BY_TYPE.values() for key in keys)


# ---------------------------------------------------------------------------------------------
# Equality
# ---------------------------------------------------------------------------------------------


def _scalar_key(value: Any) -> Any:
    kind = type(value)
    if kind is bool:
        return ("b", value)
    if kind is int or kind is float:
        return ("n", value)
    if kind is str:
        return ("s", value)
    if value is None:
        return ("z",)
    raise TypeError(f"not a JSON value: {kind.__name__}")


class EqualityKeys:
    """Hashable keys equal exactly for JSON-equal values (``1 == 1.0``, ``True`` is not ``1``,
    key order does not matter), for acyclic JSON values of any depth.

    A container's key is a small ``int``, interned by this instance from its children's keys,
    so keys stay flat: hashing and comparing them never recurse, whatever the depth. Keys of
    one instance compare with each other only.
    """

    __slots__ = ("_ids",)

    def __init__(self) -> None:
        self._ids: dict[Any, int] = {}

    def key(self, value: Any) -> Any:
        """The key of ``value`` (an explicit stack: no recursion).

        Raises:
            TypeError: ``value`` holds something other than JSON data (or an unhashable key).
        """
        kind = type(value)
        if kind is not list and kind is not dict:
            return _scalar_key(value)
        ids = self._ids
        # Post-order: a container's key is built from its children's, which sit on ``keys``.
        keys: list[Any] = []
        stack: list[tuple[Any, bool]] = [(value, False)]
        while stack:
            item, children_done = stack.pop()
            kind = type(item)
            if kind is list or kind is dict:
                if not children_done:
                    stack.append((item, True))
                    children = item if kind is list else list(item.values())
                    stack.extend((child, False) for child in reversed(children))
                    continue
                start = len(keys) - len(item)
                parts = keys[start:]
                del keys[start:]
                if kind is list:
                    shape: Any = ("l", *parts)
                else:
                    shape = ("d", frozenset(zip(item.keys(), parts, strict=True)))
                keys.append(ids.setdefault(shape, len(ids)))
            else:
                keys.append(_scalar_key(item))
        return keys[0]


def _is_count(value: object) -> bool:
    # 2.0 is an integer in JSON Schema (and in JavaScript).
    return is_json_integer(value) and value >= 0  # type: ignore[operator]


def _payload_problem(key: str, payload: object) -> str | None:
    if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return None if is_json_number(payload) else "must be a finite number"
    if key == "multipleOf":
        ok = is_json_number(payload) and payload > 0  # type: ignore[operator]
        return None if ok else "must be a number greater than 0"
    if key in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
        return None if _is_count(payload) else "must be a non-negative integer"
    if key == "uniqueItems":
        return None if type(payload) is bool else "must be a boolean"
    if key == "format":
        return None if type(payload) is str else "must be a string"
    if key == "pattern":
        if type(payload) is not str:
            return "must be a string"
        try:
            source = translate_pattern(payload)
        except PatternError as error:
            return f"uses {error} (outside the supported ECMA-262 subset)"
        reason = backtracking_problem(source)
        return None if reason is None else f"{js_json(payload)} is refused: {reason}"
    if key == "prefixItems":
        return None if type(payload) is list and payload else "must be a non-empty array of schemas"
    raise AssertionError(key)  # pragma: no cover


def _relabel(violations: list[str], path: str) -> list[str]:
    return [path + violation.removeprefix("schema") for violation in violations]


def _skeleton(schema: object, path: str, out: list[str], ancestors: set[int]) -> object:
    """The strict skeleton of ``schema``; extension problems are appended to ``out``.

    Nested schemas of extension keywords (``prefixItems``, schema ``additionalProperties``) are
    asserted here, recursively, and left out of the skeleton.
    """
    if not is_schema_record(schema):
        return schema
    if id(schema) in ancestors:
        out.append(f"{path} is circular")
        return {}
    ancestors.add(id(schema))
    try:
        node: dict[str, object] = schema  # type: ignore[assignment]
        type_name = node.get("type")
        allowed = EXTENSION_BY_TYPE.get(type_name, ()) if type(type_name) is str else ()
        kept: dict[str, object] = {}
        for key, payload in node.items():
            if key in _OWN_KEYWORDS:
                if key not in allowed:
                    where = (
                        f'on type "{type_name}"'
                        if type(type_name) is str and "oneOf" not in node
                        else "without a type"
                    )
                    out.append(f"{path}.{key} is not supported {where}")
                    continue
                problem = _payload_problem(key, payload)
                if problem is not None:
                    out.append(f"{path}.{key} {problem}")
                elif key == "prefixItems":
                    branches: list[object] = payload  # type: ignore[assignment]
                    for index, child in enumerate(branches):
                        _assert_into(child, f"{path}.prefixItems[{index}]", out, ancestors)
                continue
            if (
                key == "additionalProperties"
                and type(payload) is not bool
                and type_name == "object"
            ):
                _assert_into(payload, f"{path}.additionalProperties", out, ancestors)
                continue
            if key == "properties" and is_schema_record(payload):
                kept[key] = {
                    name: _skeleton(child, f"{path}.properties.{name}", out, ancestors)
                    for name, child in payload.items()  # type: ignore[attr-defined]
                }
            elif key == "items":
                kept[key] = _skeleton(payload, f"{path}.items", out, ancestors)
            elif key == "oneOf" and type(payload) is list:
                kept[key] = [
                    _skeleton(child, f"{path}.oneOf[{index}]", out, ancestors)
                    for index, child in enumerate(payload)
                ]
            else:
                kept[key] = payload
        for bound in ("Length", "Items", "Properties"):
            low, high = node.get("min" + bound), node.get("max" + bound)
            if _is_count(low) and _is_count(high) and low > high:  # type: ignore[operator]
                out.append(f"{path}.min{bound} must not exceed {path}.max{bound}")
        return kept
    finally:
        ancestors.discard(id(schema))


def _assert_into(schema: object, path: str, out: list[str], ancestors: set[int]) -> None:
    skeleton = _skeleton(schema, path, out, ancestors)
    try:
        assert_supported_json_schema(skeleton)
    except JsonSchemaError as error:
        out.extend(_relabel(list(error.violations), path))


def extended_violations(schema: object) -> list[str]:
    """Every violation of ``schema`` against the subset + extension (``[]`` when supported)."""
    out: list[str] = []
    if not has_extension(schema):
        # The strict assertion alone, iterative: any depth.
        try:
            assert_supported_json_schema(schema)
        except JsonSchemaError as error:
            out.extend(error.violations)
        return out
    try:
        _assert_into(schema, "schema", out, set())
    except RecursionError:
        out.append("schema is nested too deeply for the extended vocabulary")
    return out


def assert_extended_json_schema(schema: object) -> None:
    """Assert that ``schema`` lies inside the subset plus the extended vocabulary.

    Args:
        schema: The raw schema.

    Raises:
        JsonSchemaError: With every violation: the strict subset's (same wording, same paths),
            misplaced or malformed extension keywords (``schema.properties.n.minimum must be a
            finite number``), rejected ``pattern`` constructs, each named, and patterns that can
            backtrack exponentially (``schema.pattern "^(a+)+$" is refused: a repetition can
            match the same text in more than one way ...``).
    """
    violations = extended_violations(schema)
    if violations:
        raise JsonSchemaError(violations)


def has_extension(node: object) -> bool:
    """Whether any node of this (asserted) schema uses an extension keyword."""
    stack = [node]
    seen: set[int] = set()  # a forged schema may be cyclic
    while stack:
        current = stack.pop()
        if type(current) is not dict or id(current) in seen:
            continue
        seen.add(id(current))
        for key, payload in current.items():
            if key in _OWN_KEYWORDS:
                return True
            if key == "additionalProperties" and type(payload) is not bool:
                return True
            if key == "properties" and type(payload) is dict:
                stack.extend(payload.values())
            elif key == "items" or (key == "oneOf" and type(payload) is list):
                stack.extend(payload if type(payload) is list else [payload])
    return False


# ---------------------------------------------------------------------------------------------
# Leaf checks shared by both validators
# ---------------------------------------------------------------------------------------------


def number_checks(node: dict[str, Any]) -> list[Check]:
    """The checks of a number node's extension keywords: the bounds, then ``multipleOf``; each
    ``(value, diagnostic path) -> violation or None``."""
    checks = [bound_check(key, node[key]) for key in _NUMBER_BOUNDS if key in node]
    if "multipleOf" in node:
        step = node["multipleOf"]
        shown = js_json(step)
        checks.append(
            lambda v, path: (
                None if is_multiple(v, step) else violation("not_multiple", path=path, bound=shown)
            )
        )
    return checks


_NUMBER_BOUNDS: Final = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")


def string_checks(node: dict[str, Any], formats: Formats) -> list[Check]:
    """The checks of a string node's extension keywords: lengths, ``pattern``, then ``format``
    (only when formats are asserted)."""
    checks = [bound_check(key, node[key]) for key in ("minLength", "maxLength") if key in node]
    if "pattern" in node:
        source = node["pattern"]
        search = re.compile(translate_pattern(source)).search
        shown = js_json(source)
        checks.append(
            lambda v, path: (
                None
                if search(v) is not None
                else violation("no_pattern_match", path=path, pattern=shown)
            )
        )
    if formats == "assert" and node.get("format") in FORMAT_ASSERTIONS:
        name = node["format"]
        test = FORMAT_ASSERTIONS[name]
        checks.append(
            lambda v, path: None if test(v) else violation("bad_format", path=path, format=name)
        )
    return checks


def count_checks(node: dict[str, Any], low_key: str, high_key: str) -> list[Check]:
    """The checks of a container's count bounds (``minItems``/``maxItems`` and the like)."""
    return [bound_check(key, node[key]) for key in (low_key, high_key) if key in node]


def duplicate_problem(value: list[Any], path: str) -> str | None:
    """The ``uniqueItems`` violation of ``value`` (the first pair of equal items), or ``None``."""
    seen: dict[Any, int] = {}
    keys = EqualityKeys()
    for index, item in enumerate(value):
        key = keys.key(item)
        if key in seen:
            return violation("duplicate_items", path=path, first=seen[key], second=index)
        seen[key] = index
    return None


def report(checks: list[Check], value: object, path: str, out: list[str]) -> None:
    """Append what ``checks`` find wrong with ``value`` (at diagnostic ``path``) to ``out``."""
    for check in checks:
        problem = check(value, path)
        if problem is not None:
            out.append(problem)


# ---------------------------------------------------------------------------------------------
# The reference walker
# ---------------------------------------------------------------------------------------------


def _walk(node: dict[str, Any], value: Any, path: str, formats: Formats, out: list[str]) -> None:
    if not has_extension(node):
        out.extend(validate_json_schema_value(node, value, path))
        return
    if "oneOf" in node:
        matched = 0
        for branch in node["oneOf"]:
            branch_out: list[str] = []
            _walk(branch, value, path, formats, branch_out)
            matched += not branch_out
        if matched != 1:
            out.append(one_of_violation(path, matched))
        return
    type_name = node["type"]
    skeleton = {key: item for key, item in node.items() if key in STRICT_LOCAL}
    if type_name in ("string", "number", "integer"):
        own = validate_json_schema_value(skeleton, value, path)
        out.extend(own)
        if not own or TYPE_TESTS[type_name](value):
            checks = string_checks(node, formats) if type_name == "string" else number_checks(node)
            report(checks, value, diagnostic_path(path), out)
        return
    if type_name == "array":
        _walk_array(node, value, path, formats, out)
        return
    _walk_object(node, value, path, formats, out)


#: Keywords of a node that the strict validator checks on the node itself (children excluded).
STRICT_LOCAL: Final = frozenset(
    ("type", "enum", "const", "description", "title", "default", "examples")
)


def _walk_array(
    node: dict[str, Any], value: Any, path: str, formats: Formats, out: list[str]
) -> None:
    where = diagnostic_path(path)
    if not TYPE_TESTS["array"](value):
        out.append(type_violation("array", value, where))
        return
    report(count_checks(node, "minItems", "maxItems"), value, where, out)
    prefix: list[Any] = node.get("prefixItems", [])
    items = node.get("items")
    before = len(out)
    for index, element in enumerate(value):
        element_path = f"{path}[{index}]"
        if index < len(prefix):
            _walk(prefix[index], element, element_path, formats, out)
        elif items is not None:
            _walk(items, element, element_path, formats, out)
        elif not is_json_value(element):
            out.append(violation("lossless_array", path=where))
            return
    if node.get("uniqueItems") is True and len(out) == before:
        problem = duplicate_problem(value, where)
        if problem is not None:
            out.append(problem)


def _walk_object(
    node: dict[str, Any], value: Any, path: str, formats: Formats, out: list[str]
) -> None:
    where = diagnostic_path(path)
    if not TYPE_TESTS["object"](value):
        out.append(type_violation("object", value, where))
        return
    own: list[str] = []
    for name in node.get("required", ()):
        if name not in value:
            own.append(violation("missing_required", child=property_path(path, name)))
    properties: dict[str, Any] = node.get("properties", {})
    for key, child in properties.items():
        if key in value:
            _walk(child, value[key], property_path(path, key), formats, own)
    extra = node.get("additionalProperties")
    lossless = True
    for key, child in value.items():
        if type(key) is not str:
            lossless = False
            continue
        if key in properties:
            continue
        if extra is False:
            own.append(violation("undeclared", child=property_path(path, key)))
        elif type(extra) is dict:
            _walk(extra, child, property_path(path, key), formats, own)
        elif not is_json_value(child):
            lossless = False
    report(count_checks(node, "minProperties", "maxProperties"), value, where, own)
    if not own and not lossless:
        own.append(violation("lossless_object", path=where))
    out.extend(own)


def validate_extended_value(
    schema: object, value: object, path: str = "value", *, formats: Formats = "annotate"
) -> list[str]:
    """Validate ``value`` against an asserted subset + extension schema (the reference walker).

    Args:
        schema: A schema accepted by :func:`assert_extended_json_schema`.
        value: Any Python value.
        path: The root label (``""`` shows as ``arguments``, as in strict validation).
        formats: ``"annotate"`` (``format`` is not checked) or ``"assert"``.

    Returns:
        Every violation, ``[]`` when valid. Strict subtrees answer exactly as
        :func:`~trio_harness.validate_json_schema_value`.
    """
    out: list[str] = []
    try:
        _walk(schema, value, path, formats, out)  # type: ignore[arg-type]
    except (TypeError, RecursionError):
        # A hostile key (its __hash__/__eq__) or a value nested beyond Python's stack.
        return [violation("lossless_value", path=diagnostic_path(path))]
    return out
