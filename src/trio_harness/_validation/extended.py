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

Two validators, tested to agree: :func:`validate_extended_value` is the reference walker (it reads
the schema on every call); :func:`compile_extended_validator` builds closures once per schema
(strict subtrees compiled by ``compile_validator``).
"""

from __future__ import annotations

import decimal
import ipaddress
import re
from collections.abc import Callable
from typing import Any, Final, Literal

from .._errors import JsonSchemaError
from .._json import is_json_integer, is_json_number, is_json_value, js_json
from .compiled import compile_validator
from .pattern import PatternError, translate_pattern
from .subset import assert_supported_json_schema, is_schema_record
from .walker import validate_json_schema_value

__all__ = [
    "EXTENSION_KEYWORDS",
    "FORMAT_ASSERTIONS",
    "Formats",
    "Vocabulary",
    "assert_extended_json_schema",
    "compile_extended_validator",
    "extended_violations",
    "validate_extended_value",
]

Vocabulary = Literal["strict", "extended"]
Formats = Literal["annotate", "assert"]

#: Extension keywords by the schema type they apply to.
_BY_TYPE: Final[dict[str, tuple[str, ...]]] = {
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "integer": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "array": ("minItems", "maxItems", "uniqueItems", "prefixItems"),
    "object": ("minProperties", "maxProperties"),
}
#: Every extension keyword (schema-valued ``additionalProperties`` is the one more extension).
EXTENSION_KEYWORDS: Final = frozenset(
    {"additionalProperties", *(key for keys in _BY_TYPE.values() for key in keys)}
)
_OWN_KEYWORDS: Final = frozenset(key for keys in _BY_TYPE.values() for key in keys)

Validator = Callable[[object, str], list[str]]


def diagnostic_path(path: str) -> str:
    """The path as violations show it: the empty root reads ``arguments`` (as the walker's)."""
    return path or "arguments"


def property_path(path: str, key: str) -> str:
    """``<path>.<key>``, or the bare key at the empty root (as the walker's, on plain strings:
    this module's paths are rendered eagerly, one per schema level)."""
    return f"{path}.{key}" if path else key


# ---------------------------------------------------------------------------------------------
# Formats
# ---------------------------------------------------------------------------------------------

_DATE: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
_TIME: Final = re.compile(r"(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))\Z", re.ASCII)
_EMAIL: Final = re.compile(r"[^\s@]+@[^\s@]+\.[^\s@]+\Z")
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]*\Z")
_UUID: Final = re.compile(r"[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\Z")
_LABEL: Final = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _is_date(text: str) -> bool:
    match = _DATE.match(text)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    if not 1 <= month <= 12:
        return False
    days = (31, 29 if _leap(year) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    return 1 <= day <= days


def _is_time(text: str) -> bool:
    match = _TIME.match(text)
    if match is None:
        return False
    hour, minute, second = int(match[1]), int(match[2]), int(match[3])
    if match[6] is not None and (int(match[6]) > 23 or int(match[7]) > 59):
        return False
    return hour <= 23 and minute <= 59 and second <= 60


def _is_date_time(text: str) -> bool:
    date, sep, time = text.partition("T") if "T" in text else text.partition("t")
    return bool(sep) and _is_date(date) and _is_time(time)


def _is_ip(text: str, version: int) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return address.version == version and "%" not in text


def _is_hostname(text: str) -> bool:
    if not text or len(text) > 253 or not text.isascii():
        return False
    return all(_LABEL.match(label) for label in text.removesuffix(".").split("."))


#: The formats checked when format assertion is on: name → test of a string.
FORMAT_ASSERTIONS: Final[dict[str, Callable[[str], bool]]] = {
    "date-time": _is_date_time,
    "date": _is_date,
    "time": _is_time,
    "email": lambda text: _EMAIL.match(text) is not None,
    "uri": lambda text: _URI.match(text) is not None,
    "uuid": lambda text: _UUID.match(text) is not None,
    "ipv4": lambda text: _is_ip(text, 4),
    "ipv6": lambda text: _is_ip(text, 6),
    "hostname": _is_hostname,
}


# ---------------------------------------------------------------------------------------------
# Equality and numbers
# ---------------------------------------------------------------------------------------------


def _canonical(value: Any) -> Any:
    """A hashable key equal for JSON-equal values (``1 == 1.0``, ``True`` is not ``1``)."""
    kind = type(value)
    if kind is bool:
        return ("b", value)
    if kind is int or kind is float:
        return ("n", value)
    if kind is str:
        return ("s", value)
    if value is None:
        return ("z",)
    if kind is list:
        return ("l", tuple(_canonical(item) for item in value))
    return ("d", frozenset((key, _canonical(item)) for key, item in value.items()))


def _decimal(value: int | float) -> decimal.Decimal:
    return decimal.Decimal(value) if type(value) is int else decimal.Decimal(repr(value))


_CONTEXT: Final = decimal.Context(prec=1000, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def _is_multiple(value: int | float, divisor: int | float) -> bool:
    """Decimal-exact ``multipleOf`` on the shortest round-trip decimals of both numbers."""
    if type(value) is int and type(divisor) is int:
        return value % divisor == 0
    if type(value) is float and value.is_integer() and type(divisor) is int:
        return int(value) % divisor == 0
    remainder = _CONTEXT.remainder(_decimal(value), _decimal(divisor))
    return remainder == 0


# ---------------------------------------------------------------------------------------------
# The assertion: skeleton + extension payloads
# ---------------------------------------------------------------------------------------------


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
            translate_pattern(payload)
        except PatternError as error:
            return f"uses {error} (outside the supported ECMA-262 subset)"
        return None
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
        allowed = _BY_TYPE.get(type_name, ()) if type(type_name) is str else ()
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
    if not _has_extension(schema):
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
            finite number``) and rejected ``pattern`` constructs, each named.
    """
    violations = extended_violations(schema)
    if violations:
        raise JsonSchemaError(violations)


def _has_extension(node: object) -> bool:
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


def _number_checks(node: dict[str, Any]) -> list[Callable[[Any], str | None]]:
    checks: list[Callable[[Any], str | None]] = []
    if "minimum" in node:
        low = node["minimum"]
        checks.append(lambda v: None if v >= low else f"must be >= {js_json(low)}")
    if "exclusiveMinimum" in node:
        xlow = node["exclusiveMinimum"]
        checks.append(lambda v: None if v > xlow else f"must be > {js_json(xlow)}")
    if "maximum" in node:
        high = node["maximum"]
        checks.append(lambda v: None if v <= high else f"must be <= {js_json(high)}")
    if "exclusiveMaximum" in node:
        xhigh = node["exclusiveMaximum"]
        checks.append(lambda v: None if v < xhigh else f"must be < {js_json(xhigh)}")
    if "multipleOf" in node:
        step = node["multipleOf"]
        checks.append(
            lambda v: None if _is_multiple(v, step) else f"must be a multiple of {js_json(step)}"
        )
    return checks


def _plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} properties" if word == "property" else f"{count} {word}s"


def _string_checks(node: dict[str, Any], formats: Formats) -> list[Callable[[Any], str | None]]:
    checks: list[Callable[[Any], str | None]] = []
    if "minLength" in node:
        low = int(node["minLength"])
        checks.append(
            lambda v: (
                None if len(v) >= low else f"must be at least {_plural(low, 'character')} long"
            )
        )
    if "maxLength" in node:
        high = int(node["maxLength"])
        checks.append(
            lambda v: (
                None if len(v) <= high else f"must be at most {_plural(high, 'character')} long"
            )
        )
    if "pattern" in node:
        source = node["pattern"]
        search = re.compile(translate_pattern(source)).search
        checks.append(
            lambda v: None if search(v) is not None else f"must match pattern {js_json(source)}"
        )
    if formats == "assert" and node.get("format") in FORMAT_ASSERTIONS:
        name = node["format"]
        test = FORMAT_ASSERTIONS[name]
        checks.append(lambda v: None if test(v) else f'must be a valid "{name}"')
    return checks


def _count_checks(
    node: dict[str, Any], low_key: str, high_key: str, word: str
) -> list[Callable[[Any], str | None]]:
    checks: list[Callable[[Any], str | None]] = []
    if low_key in node:
        low = int(node[low_key])
        checks.append(
            lambda v: None if len(v) >= low else f"must have at least {_plural(low, word)}"
        )
    if high_key in node:
        high = int(node[high_key])
        checks.append(
            lambda v: None if len(v) <= high else f"must have at most {_plural(high, word)}"
        )
    return checks


def _duplicates(value: list[Any]) -> str | None:
    seen: dict[Any, int] = {}
    for index, item in enumerate(value):
        key = _canonical(item)
        if key in seen:
            return f"must not contain duplicate items (items {seen[key]} and {index} are equal)"
        seen[key] = index
    return None


def _scalar_ok(type_name: str, value: object) -> bool:
    if type_name == "string":
        return type(value) is str
    if type_name == "number":
        return is_json_number(value)
    return is_json_integer(value)


# ---------------------------------------------------------------------------------------------
# The reference walker
# ---------------------------------------------------------------------------------------------


def _walk(node: dict[str, Any], value: Any, path: str, formats: Formats, out: list[str]) -> None:
    if not _has_extension(node):
        out.extend(validate_json_schema_value(node, value, path))
        return
    if "oneOf" in node:
        matched = 0
        for branch in node["oneOf"]:
            branch_out: list[str] = []
            _walk(branch, value, path, formats, branch_out)
            matched += not branch_out
        if matched != 1:
            out.append(
                f'"{diagnostic_path(path)}" must match exactly one oneOf branch (matched {matched})'
            )
        return
    type_name = node["type"]
    skeleton = {key: item for key, item in node.items() if key in _STRICT_LOCAL}
    if type_name in ("string", "number", "integer"):
        own = validate_json_schema_value(skeleton, value, path)
        out.extend(own)
        if not own or _scalar_ok(type_name, value):
            checks = (
                _string_checks(node, formats) if type_name == "string" else _number_checks(node)
            )
            label = f'"{diagnostic_path(path)}" '
            for check in checks:
                problem = check(value)
                if problem is not None:
                    out.append(label + problem)
        return
    if type_name == "array":
        _walk_array(node, value, path, formats, out)
        return
    _walk_object(node, value, path, formats, out)


#: Keywords of a node that the strict validator checks on the node itself (children excluded).
_STRICT_LOCAL: Final = frozenset(
    ("type", "enum", "const", "description", "title", "default", "examples")
)


def _walk_array(
    node: dict[str, Any], value: Any, path: str, formats: Formats, out: list[str]
) -> None:
    if type(value) is not list:
        out.append(f'"{diagnostic_path(path)}" must be an array')
        return
    label = f'"{diagnostic_path(path)}" '
    for check in _count_checks(node, "minItems", "maxItems", "item"):
        problem = check(value)
        if problem is not None:
            out.append(label + problem)
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
            out.append(f'"{diagnostic_path(path)}" must be a dense lossless JSON array')
            return
    if node.get("uniqueItems") is True and len(out) == before:
        problem = _duplicates(value)
        if problem is not None:
            out.append(label + problem)


def _walk_object(
    node: dict[str, Any], value: Any, path: str, formats: Formats, out: list[str]
) -> None:
    if type(value) is not dict:
        out.append(f'"{diagnostic_path(path)}" must be an object')
        return
    own: list[str] = []
    for name in node.get("required", ()):
        if name not in value:
            own.append(f'missing required property "{property_path(path, name)}"')
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
            own.append(
                f'"{property_path(path, key)}" is not a declared property '
                "(additionalProperties: false)"
            )
        elif type(extra) is dict:
            _walk(extra, child, property_path(path, key), formats, own)
        elif not is_json_value(child):
            lossless = False
    label = f'"{diagnostic_path(path)}" '
    for check in _count_checks(node, "minProperties", "maxProperties", "property"):
        problem = check(value)
        if problem is not None:
            own.append(label + problem)
    if not own and not lossless:
        own.append(f'"{diagnostic_path(path)}" must be a lossless JSON object')
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
        return [f'"{diagnostic_path(path)}" must be a lossless JSON value']
    return out


# ---------------------------------------------------------------------------------------------
# The compiled validator: closures built once per schema
# ---------------------------------------------------------------------------------------------

_Check = Callable[[Any, str, list[str]], None]


def _compile(node: dict[str, Any], formats: Formats) -> _Check:
    if not _has_extension(node):
        strict = compile_validator(node)

        def strict_check(value: Any, path: str, out: list[str]) -> None:
            out.extend(strict(value, path))

        return strict_check
    if "oneOf" in node:
        branches = [_compile(branch, formats) for branch in node["oneOf"]]

        def one_of(value: Any, path: str, out: list[str]) -> None:
            matched = 0
            for branch in branches:
                branch_out: list[str] = []
                branch(value, path, branch_out)
                matched += not branch_out
            if matched != 1:
                out.append(
                    f'"{diagnostic_path(path)}" must match exactly one oneOf branch '
                    f"(matched {matched})"
                )

        return one_of
    type_name = node["type"]
    if type_name in ("string", "number", "integer"):
        return _compile_scalar(node, type_name, formats)
    if type_name == "array":
        return _compile_array(node, formats)
    return _compile_object(node, formats)


def _compile_scalar(node: dict[str, Any], type_name: str, formats: Formats) -> _Check:
    strict = compile_validator({key: item for key, item in node.items() if key in _STRICT_LOCAL})
    checks = _string_checks(node, formats) if type_name == "string" else _number_checks(node)
    if type_name == "string":

        def type_ok(value: Any) -> bool:
            return type(value) is str
    elif type_name == "number":
        type_ok = is_json_number
    else:
        type_ok = is_json_integer

    def scalar(value: Any, path: str, out: list[str]) -> None:
        own = strict(value, path)
        if own:
            out.extend(own)
            if not type_ok(value):
                return
        label = None
        for check in checks:
            problem = check(value)
            if problem is not None:
                if label is None:
                    label = f'"{diagnostic_path(path)}" '
                out.append(label + problem)

    return scalar


def _compile_array(node: dict[str, Any], formats: Formats) -> _Check:
    counts = _count_checks(node, "minItems", "maxItems", "item")
    prefix = [_compile(child, formats) for child in node.get("prefixItems", [])]
    items = _compile(node["items"], formats) if "items" in node else None
    unique = node.get("uniqueItems") is True
    size = len(prefix)

    def array(value: Any, path: str, out: list[str]) -> None:
        if type(value) is not list:
            out.append(f'"{diagnostic_path(path)}" must be an array')
            return
        for check in counts:
            problem = check(value)
            if problem is not None:
                out.append(f'"{diagnostic_path(path)}" {problem}')
        before = len(out)
        for index, element in enumerate(value):
            if index < size:
                prefix[index](element, f"{path}[{index}]", out)
            elif items is not None:
                items(element, f"{path}[{index}]", out)
            elif not is_json_value(element):
                out.append(f'"{diagnostic_path(path)}" must be a dense lossless JSON array')
                return
        if unique and len(out) == before:
            problem = _duplicates(value)
            if problem is not None:
                out.append(f'"{diagnostic_path(path)}" {problem}')

    return array


def _compile_object(node: dict[str, Any], formats: Formats) -> _Check:
    required: list[str] = list(node.get("required", ()))
    properties = {
        key: _compile(child, formats) for key, child in node.get("properties", {}).items()
    }
    extra_node = node.get("additionalProperties")
    closed = extra_node is False
    extra = _compile(extra_node, formats) if type(extra_node) is dict else None
    counts = _count_checks(node, "minProperties", "maxProperties", "property")

    def obj(value: Any, path: str, out: list[str]) -> None:
        if type(value) is not dict:
            out.append(f'"{diagnostic_path(path)}" must be an object')
            return
        own: list[str] = []
        for name in required:
            if name not in value:
                own.append(f'missing required property "{property_path(path, name)}"')
        for key, check in properties.items():
            if key in value:
                check(value[key], property_path(path, key), own)
        lossless = True
        for key, child in value.items():
            if type(key) is not str:
                lossless = False
            elif key in properties:
                continue
            elif closed:
                own.append(
                    f'"{property_path(path, key)}" is not a declared property '
                    "(additionalProperties: false)"
                )
            elif extra is not None:
                extra(child, property_path(path, key), own)
            elif not is_json_value(child):
                lossless = False
        for count in counts:
            problem = count(value)
            if problem is not None:
                own.append(f'"{diagnostic_path(path)}" {problem}')
        if not own and not lossless:
            own.append(f'"{diagnostic_path(path)}" must be a lossless JSON object')
        out.extend(own)

    return obj


_Fast = Callable[[Any], bool]


def _fast(node: dict[str, Any], formats: Formats) -> _Fast:
    """A check-only predicate: ``True`` iff :func:`_compile`'s checker finds no violation.

    No paths, no messages: valid calls (the common case) pay only for the checks.
    """
    if not _has_extension(node):
        strict = compile_validator(node)
        return lambda value: not strict(value, "")
    if "oneOf" in node:
        branches = [_fast(branch, formats) for branch in node["oneOf"]]

        def one_of(value: Any) -> bool:
            matched = 0
            for branch in branches:
                if branch(value):
                    matched += 1
            return matched == 1

        return one_of
    type_name = node["type"]
    if type_name in ("string", "number", "integer"):
        checks = _string_checks(node, formats) if type_name == "string" else _number_checks(node)
        if "enum" in node or "const" in node:
            strict = compile_validator(
                {key: item for key, item in node.items() if key in _STRICT_LOCAL}
            )

            def type_ok(value: Any) -> bool:
                return not strict(value, "")
        elif type_name == "string":

            def type_ok(value: Any) -> bool:
                return type(value) is str
        else:
            type_ok = is_json_number if type_name == "number" else is_json_integer

        def scalar(value: Any) -> bool:
            if not type_ok(value):
                return False
            for check in checks:  # noqa: SIM110 - a loop beats all() over a generator here
                if check(value) is not None:
                    return False
            return True

        return scalar
    if type_name == "array":
        return _fast_array(node, formats)
    return _fast_object(node, formats)


def _fast_array(node: dict[str, Any], formats: Formats) -> _Fast:
    counts = _count_checks(node, "minItems", "maxItems", "item")
    prefix = [_fast(child, formats) for child in node.get("prefixItems", [])]
    items = _fast(node["items"], formats) if "items" in node else None
    unique = node.get("uniqueItems") is True
    size = len(prefix)

    def array(value: Any) -> bool:
        if type(value) is not list:
            return False
        for check in counts:
            if check(value) is not None:
                return False
        for index, element in enumerate(value):
            if index < size:
                if not prefix[index](element):
                    return False
            elif items is not None:
                if not items(element):
                    return False
            elif not is_json_value(element):
                return False
        return not unique or _duplicates(value) is None

    return array


def _is_plain_scalar(node: dict[str, Any]) -> bool:
    return "oneOf" not in node and node.get("type") in ("string", "number", "integer")


def _fast_object(node: dict[str, Any], formats: Formats) -> _Fast:
    # One strict validator call covers the type, ``required``, every property's strict part
    # (scalar properties with extension keywords enter with their strict keywords only) and the
    # lossless check of everything else; the extension parts follow.
    declared: dict[str, Any] = node.get("properties", {})
    strict_properties: dict[str, Any] = {}
    bounds: list[tuple[str, list[Callable[[Any], str | None]]]] = []
    extended: list[tuple[str, _Fast]] = []
    for key, child in declared.items():
        if not _has_extension(child):
            strict_properties[key] = child
        elif _is_plain_scalar(child):
            strict_properties[key] = {k: v for k, v in child.items() if k in _STRICT_LOCAL}
            kind = child["type"]
            bounds.append(
                (key, _string_checks(child, formats) if kind == "string" else _number_checks(child))
            )
        else:
            extended.append((key, _fast(child, formats)))
    required: list[str] = list(node.get("required", ()))
    # The skeleton must pass the strict assertion to be compiled (else ``compile_validator``
    # falls back to the walker): it requires only the names it declares; the others below.
    skeleton: dict[str, Any] = {
        "type": "object",
        "properties": strict_properties,
        "required": [name for name in required if name in strict_properties],
    }
    others = [name for name in required if name not in strict_properties]
    strict = compile_validator(skeleton)
    extra_node = node.get("additionalProperties")
    closed = extra_node is False
    extra = _fast(extra_node, formats) if type(extra_node) is dict else None
    counts = _count_checks(node, "minProperties", "maxProperties", "property")

    def obj(value: Any) -> bool:
        if strict(value, ""):
            return False
        for name in others:
            if name not in value:
                return False
        for key, checks in bounds:
            if key in value:
                child = value[key]  # its type passed the strict check
                for bound in checks:
                    if bound(child) is not None:
                        return False
        for key, predicate in extended:
            if key in value and not predicate(value[key]):
                return False
        if closed or extra is not None:
            for key, child in value.items():
                if key in declared:
                    continue
                if closed or not extra(child):  # type: ignore[misc]
                    return False
        for count in counts:  # noqa: SIM110 - a loop beats all() over a generator here
            if count(value) is not None:
                return False
        return True

    return obj


def compile_extended_validator(schema: object, *, formats: Formats = "annotate") -> Validator:
    """Assert ``schema`` (subset + extension) and build its validator once.

    Args:
        schema: The raw schema.
        formats: ``"annotate"`` (default) or ``"assert"`` (check the common formats).

    Returns:
        ``(value, path) -> violations``, equal to :func:`validate_extended_value` on every value.

    Raises:
        JsonSchemaError: ``schema`` is outside the subset + extension.
    """
    assert_extended_json_schema(schema)
    if not _has_extension(schema):
        return compile_validator(schema)
    check = _compile(schema, formats)  # type: ignore[arg-type]
    fast = _fast(schema, formats)  # type: ignore[arg-type]

    def validate(value: object, path: str = "value") -> list[str]:
        out: list[str] = []
        try:
            if fast(value):
                return out
            check(value, path, out)
        except (TypeError, RecursionError):
            return [f'"{diagnostic_path(path)}" must be a lossless JSON value']
        return out

    return validate
