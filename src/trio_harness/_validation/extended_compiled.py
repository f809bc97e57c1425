"""The compiled validator of the extended vocabulary: closures built once per schema.

:func:`compile_extended_validator` asserts the schema and builds two closures per node, tested to
equal :func:`~.extended.validate_extended_value` (the reference walker) on every value:

* a check-only predicate (``_fast``): no paths, no messages; true iff the collector finds
  no violation;
* a collector (``_compile``), run only when the predicate fails, with the walker's violations.

Subtrees without any extension keyword are compiled whole by ``compile_validator`` (generated
code); the leaf checks are :mod:`.extended`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .._json import is_json_value
from .compiled import MAX_COMPILED_DEPTH, Validator, build_checked, compile_validator
from .extended import (
    STRICT_LOCAL,
    Formats,
    assert_extended_json_schema,
    count_checks,
    duplicate_problem,
    has_extension,
    number_checks,
    report,
    string_checks,
)
from .paths import diagnostic_path, property_path
from .rules import TYPE_TESTS, Check, type_violation, violation
from .walker import one_of_violation

__all__ = ["compile_extended_validator"]

_Check = Callable[[Any, str, list[str]], None]


def _compile(node: dict[str, Any], formats: Formats) -> _Check:
    if not has_extension(node):
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
                out.append(one_of_violation(path, matched))

        return one_of
    type_name = node["type"]
    if type_name in ("string", "number", "integer"):
        return _compile_scalar(node, type_name, formats)
    if type_name == "array":
        return _compile_array(node, formats)
    return _compile_object(node, formats)


def _compile_scalar(node: dict[str, Any], type_name: str, formats: Formats) -> _Check:
    strict = compile_validator({key: item for key, item in node.items() if key in STRICT_LOCAL})
    checks = string_checks(node, formats) if type_name == "string" else number_checks(node)
    type_ok = TYPE_TESTS[type_name]

    def scalar(value: Any, path: str, out: list[str]) -> None:
        own = strict(value, path)
        if own:
            out.extend(own)
            if not type_ok(value):
                return
        report(checks, value, diagnostic_path(path), out)

    return scalar


def _compile_array(node: dict[str, Any], formats: Formats) -> _Check:
    counts = count_checks(node, "minItems", "maxItems")
    prefix = [_compile(child, formats) for child in node.get("prefixItems", [])]
    items = _compile(node["items"], formats) if "items" in node else None
    unique = node.get("uniqueItems") is True
    size = len(prefix)

    def array(value: Any, path: str, out: list[str]) -> None:
        where = diagnostic_path(path)
        if type(value) is not list:
            out.append(type_violation("array", value, where))
            return
        report(counts, value, where, out)
        before = len(out)
        for index, element in enumerate(value):
            if index < size:
                prefix[index](element, f"{path}[{index}]", out)
            elif items is not None:
                items(element, f"{path}[{index}]", out)
            elif not is_json_value(element):
                out.append(violation("lossless_array", path=where))
                return
        if unique and len(out) == before:
            problem = duplicate_problem(value, where)
            if problem is not None:
                out.append(problem)

    return array


def _compile_object(node: dict[str, Any], formats: Formats) -> _Check:
    required: list[str] = list(node.get("required", ()))
    properties = {
        key: _compile(child, formats) for key, child in node.get("properties", {}).items()
    }
    extra_node = node.get("additionalProperties")
    closed = extra_node is False
    extra = _compile(extra_node, formats) if type(extra_node) is dict else None
    counts = count_checks(node, "minProperties", "maxProperties")

    def obj(value: Any, path: str, out: list[str]) -> None:
        where = diagnostic_path(path)
        if type(value) is not dict:
            out.append(type_violation("object", value, where))
            return
        own: list[str] = []
        for name in required:
            if name not in value:
                own.append(violation("missing_required", child=property_path(path, name)))
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
                own.append(violation("undeclared", child=property_path(path, key)))
            elif extra is not None:
                extra(child, property_path(path, key), own)
            elif not is_json_value(child):
                lossless = False
        report(counts, value, where, own)
        if not own and not lossless:
            own.append(violation("lossless_object", path=where))
        out.extend(own)

    return obj


_Fast = Callable[[Any], bool]


def _fast(node: dict[str, Any], formats: Formats) -> _Fast:
    """A check-only predicate: ``True`` iff :func:`_compile`'s checker finds no violation.

    No paths, no messages; the collector runs only when this says no.
    """
    if not has_extension(node):
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
        checks = string_checks(node, formats) if type_name == "string" else number_checks(node)
        type_ok: Callable[[Any], bool] = TYPE_TESTS[type_name]
        if "enum" in node or "const" in node:
            strict = compile_validator(
                {key: item for key, item in node.items() if key in STRICT_LOCAL}
            )

            def type_ok(value: Any) -> bool:
                return not strict(value, "")

        def scalar(value: Any) -> bool:
            if not type_ok(value):
                return False
            for check in checks:  # noqa: SIM110 - a loop reads as the rule: every check holds
                if check(value, "") is not None:
                    return False
            return True

        return scalar
    if type_name == "array":
        return _fast_array(node, formats)
    return _fast_object(node, formats)


def _fast_array(node: dict[str, Any], formats: Formats) -> _Fast:
    counts = count_checks(node, "minItems", "maxItems")
    prefix = [_fast(child, formats) for child in node.get("prefixItems", [])]
    items = _fast(node["items"], formats) if "items" in node else None
    unique = node.get("uniqueItems") is True
    size = len(prefix)

    def array(value: Any) -> bool:
        if type(value) is not list:
            return False
        for check in counts:
            if check(value, "") is not None:
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
        return not unique or duplicate_problem(value, "") is None

    return array


def _is_plain_scalar(node: dict[str, Any]) -> bool:
    return "oneOf" not in node and node.get("type") in ("string", "number", "integer")


def _fast_object(node: dict[str, Any], formats: Formats) -> _Fast:
    # One strict validator call covers the type, ``required``, every property's strict part
    # (scalar properties with extension keywords enter with their strict keywords only) and the
    # lossless check of everything else; the extension parts follow.
    declared: dict[str, Any] = node.get("properties", {})
    strict_properties: dict[str, Any] = {}
    bounds: list[tuple[str, list[Check]]] = []
    extended: list[tuple[str, _Fast]] = []
    for key, child in declared.items():
        if not has_extension(child):
            strict_properties[key] = child
        elif _is_plain_scalar(child):
            strict_properties[key] = {k: v for k, v in child.items() if k in STRICT_LOCAL}
            kind = child["type"]
            bounds.append(
                (key, string_checks(child, formats) if kind == "string" else number_checks(child))
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
    counts = count_checks(node, "minProperties", "maxProperties")

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
                    if bound(child, "") is not None:
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
        for count in counts:  # noqa: SIM110 - a loop reads as the rule: every count holds
            if count(value, "") is not None:
                return False
        return True

    return obj


def compile_extended_validator(schema: object, *, formats: Formats = "annotate") -> Validator:
    """Assert ``schema`` (subset + extension) and build its validator once.

    Args:
        schema: The raw schema.
        formats: ``"annotate"`` (default) or ``"assert"`` (check the common formats).

    Returns:
        ``(value, path) -> violations``, equal to :func:`~.extended.validate_extended_value` on every value.

    Raises:
        JsonSchemaError: ``schema`` is outside the subset + extension.
    """
    assert_extended_json_schema(schema)
    if not has_extension(schema):
        return compile_validator(schema)
    check = _compile(schema, formats)  # type: ignore[arg-type]
    if _inline_bounds_only(schema, formats):  # type: ignore[arg-type]

        def collect(value: object, path: str) -> list[str]:
            # Run when the generated check fails (or raises on a hostile key: the collector
            # then answers as the walker does).
            out: list[str] = []
            try:
                check(value, path, out)
            except (TypeError, RecursionError):
                return [violation("lossless_value", path=diagnostic_path(path))]
            return out

        return build_checked(schema, collect)  # type: ignore[arg-type]
    fast = _fast(schema, formats)  # type: ignore[arg-type]

    def validate(value: object, path: str = "value") -> list[str]:
        out: list[str] = []
        try:
            if fast(value):
                return out
            check(value, path, out)
        except (TypeError, RecursionError):
            return [violation("lossless_value", path=diagnostic_path(path))]
        return out

    return validate


#: Extension keywords that generated check-only code does not test (they keep the closures).
_CLOSURE_ONLY: Final = frozenset({"multipleOf", "pattern", "uniqueItems", "prefixItems"})


def _inline_bounds_only(schema: dict[str, Any], formats: Formats) -> bool:
    """Whether the check-only pass of ``schema`` can be generated code: its only extension
    keywords are bounds (:data:`~.rules.BOUNDS`), ``format`` when it only
    annotates, and boolean ``additionalProperties``; nested at most ``MAX_COMPILED_DEPTH``."""
    stack: list[tuple[dict[str, Any], int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_COMPILED_DEPTH or not _CLOSURE_ONLY.isdisjoint(node):
            return False
        if "format" in node and formats != "annotate":
            return False
        if type(node.get("additionalProperties", False)) is not bool:
            return False
        if "oneOf" in node:
            stack.extend((branch, depth + 1) for branch in node["oneOf"])
        elif node.get("type") == "object":
            stack.extend((child, depth + 1) for child in node.get("properties", {}).values())
        elif node.get("type") == "array" and "items" in node:
            stack.append((node["items"], depth + 1))
    return True
