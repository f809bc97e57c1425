"""The value validator of the raw subset: ``validate_json_schema_value`` (the generic walker).

This is the reference implementation: an iterative walk over explicit frames that reads the
schema on every call and interprets :mod:`.rules` (its type checks, its order, its messages). :mod:`.compiled` (through :mod:`.codegen`) builds specialised checkers
from it and is tested to agree with it exactly. Paths are :mod:`.paths`' lazy chains: a walk ``n``
levels deep holds O(n) path data, and a path is rendered only for a violation.

Python mapping of upstream's value notions:

* an *object* is an exact ``dict`` and an *array* an exact ``list``; subclasses, tuples, sets,
  ``Mapping`` look-alikes are neither (``must be an object`` / ``must be an array``);
* missing required = key absent (Python has no ``undefined``);
* a *number* is an ``int`` (never a ``bool``) or a ``float``; it is a *finite JSON number* when it is
  not ``nan``/``inf``/``-0.0`` and an ``int`` fits a double; an integral ``float`` is an integer.

Invariant used to keep the walk linear: a node that reports no violation has validated a lossless
JSON value (scalars by their type check, arrays with ``items`` through their elements, everything
else through an explicit lossless check). So the upstream "whole object is lossless" check
reduces to "all keys are exact ``str`` and every undeclared value is lossless", and an array with
``items`` whose elements all passed is lossless already. A lossless value cannot contain one of
its ancestors (that ancestor would contain the value again: a cycle inside the value itself).
"""

from __future__ import annotations

from typing import Final

from .._errors import UnreachableVariantError, unreachable
from .._json import is_json_value, js_json
from .paths import Path, diagnostic_path, is_empty_path, property_path
from .rules import ONE_OF_MISMATCH, PAYLOAD_RULES, TYPE_TESTS, type_violation, violation

__all__ = ["ONE_OF_MISMATCH", "one_of_violation", "validate_json_schema_value"]

_MISSING: Final = object()


def one_of_violation(path: Path, matched: int) -> str:
    """The violation of a ``oneOf`` that matched ``matched`` branches (not exactly one)."""
    return violation("one_of", path=diagnostic_path(path), matched=matched)


def _payload_violation(node: dict[str, object], value: object, path: Path) -> str | None:
    # The value passed its type check, so it is an exact builtin scalar and the payload
    # comparisons run no user code.
    for keyword, (holds, name) in PAYLOAD_RULES.items():
        if keyword in node and not holds(node[keyword], value):
            shown = {keyword: js_json(node[keyword])}
            return violation(name, path=diagnostic_path(path), **shown)
    return None


def _undeclared_violations(
    node: dict[str, object], value: dict[object, object], path: Path, out: list[str]
) -> None:
    if node.get("additionalProperties") is not False:
        return
    declared = node.get("properties") or {}
    for key in value:
        # A non-str key is never a declared property; it is reported by the lossless check.
        if type(key) is str and key not in declared:  # type: ignore[operator]
            out.append(violation("undeclared", child=property_path(path, key)))


def _object_is_lossless(declared: object, value: dict[object, object]) -> bool:
    # See the module invariant: declared children were validated (and are lossless) already.
    for key, child in value.items():
        if type(key) is not str:
            return False
        if key not in declared and not is_json_value(child):  # type: ignore[operator]
            return False
    return True


class _Frame:
    """One node being validated against one value; ``sink`` receives its violations."""

    __slots__ = ("node", "own", "path", "sink", "stage", "value")

    def __init__(self, node: dict[str, object], value: object, path: Path, sink: list[str]) -> None:
        self.node = node
        self.value = value
        self.path = path
        self.sink = sink
        self.stage = 0
        self.own: list[str] | list[list[str]] = []


def _walk(schema: dict[str, object], value: object, path: Path) -> list[str]:
    result: list[str] = []
    stack = [_Frame(schema, value, path, result)]
    frame = stack[0]
    try:
        _run(stack)
    except UnreachableVariantError:
        raise
    except Exception:
        # Only a hostile dict key (its __hash__/__eq__) can raise here; upstream reports the
        # frame that was inspecting the value, and nothing else.
        frame = stack[-1] if stack else frame
        return [violation("lossless_value", path=diagnostic_path(frame.path))]
    return result


def _run(stack: list[_Frame]) -> None:
    while stack:
        frame = stack[-1]
        node = frame.node
        value = frame.value
        path = frame.path
        if frame.stage == 1:
            if "oneOf" in node:
                stack.pop()
                branch_lists: list[list[str]] = frame.own  # type: ignore[assignment]
                matched = sum(1 for branch in branch_lists if not branch)
                if matched != 1:
                    frame.sink.append(one_of_violation(path, matched))
                continue
            own: list[str] = frame.own  # type: ignore[assignment]
            if type(value) is dict:
                _undeclared_violations(node, value, path, own)
                if not own and not _object_is_lossless(node.get("properties") or {}, value):
                    own.append(violation("lossless_object", path=diagnostic_path(path)))
            stack.pop()
            frame.sink.extend(own)
            continue

        if "oneOf" in node:
            branches: list[dict[str, object]] = node["oneOf"]  # type: ignore[assignment]
            lists: list[list[str]] = [[] for _ in branches]
            frame.own = lists
            frame.stage = 1
            for index in range(len(branches) - 1, -1, -1):
                stack.append(_Frame(branches[index], value, path, lists[index]))
            continue
        if "type" not in node:
            stack.pop()
            if not is_json_value(value):
                frame.sink.append(violation("lossless_value", path=diagnostic_path(path)))
            continue
        type_name = node["type"]
        if type(type_name) is not str or type_name not in TYPE_TESTS:
            unreachable("JsonSchemaType", type_name)
        if not TYPE_TESTS[type_name](value):
            stack.pop()
            frame.sink.append(type_violation(type_name, value, diagnostic_path(path)))
            continue
        if type_name == "object":
            frame.stage = 1
            own = frame.own  # type: ignore[assignment]
            required = node.get("required") or ()
            for name in required:  # type: ignore[attr-defined]
                if name not in value:  # type: ignore[operator]
                    own.append(violation("missing_required", child=property_path(path, name)))
            properties: dict[str, dict[str, object]] = node.get("properties") or {}  # type: ignore[assignment]
            children = []
            separator = "" if is_empty_path(path) else "."
            for key, child_node in properties.items():
                child = value.get(key, _MISSING)  # type: ignore[attr-defined]
                if child is not _MISSING:
                    children.append(_Frame(child_node, child, (path, key, separator), own))
            stack.extend(reversed(children))
            continue
        stack.pop()
        if type_name == "array":
            if "items" not in node:
                if not is_json_value(value):
                    frame.sink.append(violation("lossless_array", path=diagnostic_path(path)))
                continue
            # With ``items``, passing elements are lossless, so no whole-array check is needed
            # (module invariant); the frame only forwards its elements' violations.
            items: dict[str, object] = node["items"]  # type: ignore[assignment]
            sink = frame.sink
            for index in range(len(value) - 1, -1, -1):  # type: ignore[arg-type]
                stack.append(_Frame(items, value[index], (path, index, "["), sink))  # type: ignore[index]
            continue
        problem = _payload_violation(node, value, path)
        if problem is not None:
            frame.sink.append(problem)


def validate_json_schema_value(schema: object, value: object, path: str = "value") -> list[str]:
    """Validate ``value`` against an asserted subset schema, collecting every violation.

    Total for any Python value: cycles, any depth, non-JSON objects, dict subclasses and
    hostile ``__eq__``/``__hash__`` never make it raise. A failure while inspecting the value
    (only a hostile dict key can run user code) yields the single violation
    ``"<path>" must be a lossless JSON value`` for the frame being inspected.

    Args:
        schema: A schema accepted by :func:`assert_supported_json_schema`.
        value: Any Python value.
        path: The root label; ``""`` is shown as ``arguments`` and makes property paths bare.

    Returns:
        The violations in upstream order and wording; ``[]`` means valid.

    Raises:
        UnreachableVariantError: For a forged (unasserted) schema node with an unknown ``type``.
    """
    return _walk(schema, value, path)  # type: ignore[arg-type]
