"""The answering oracle: recorded-case lines in, trio_harness's own answers out.

Other ports (TypeScript, Rust, Go…) check themselves against trio_harness by sending cases in the
format of ``spec/upstream-vectors.jsonl``: one JSON object per line with ``op``, its inputs
and (optionally) ``expected``. The oracle answers each case with the same object, ``expected``
replaced by this library's answer in exactly the upstream answer shape:

================================  =========================================================
op                                answer
================================  =========================================================
``validate`` / ``validateArgs``   ``{"violations": [...]}``
``assert`` / ``assertObject``     ``{"ok": true}``
``compileParams`` / ``compileValue``  ``{"schema": ...}``
``parseArguments``                ``{"value": ...}``
any op that raises                ``{"throws": {"name", "message", "code"?, "violations"?}}``
================================  =========================================================

Numbers JSON cannot carry are tagged both ways: ``{"$nan": true}``, ``{"$inf": 1}`` /
``{"$inf": -1}``, ``{"$negzero": true}``. ``{"$undefined": true}`` (JavaScript ``undefined``) has no
Python counterpart: a case with it in an input is answered ``{"skipped": ...}``. A line that cannot
be answered at all (blank, not JSON, not UTF-8, not an object, no or unknown ``op``, a missing
input) becomes ``{"error": "<what>"}``: every input line gets exactly one output line. Lines are
read as JavaScript's ``JSON.parse`` reads them (keys in JavaScript order, array indices first), and
output is compact, JavaScript-exact JSON (:func:`js_json`), so a port can diff it byte for byte.

Validation cases are answered with the validator ``define_tool`` runs (``compile_validator``),
after every other validator of the package gave the same answer
(:func:`~trio_harness._validation.checked_violations`): a difference is answered ``throws``
``ValidatorsDisagree``, so the kit judges every engine.

Every walk is iterative: inputs and answers of any depth work, under the same rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from .._errors import HarnessError, error_message
from .._json import js_json, js_json_or_string, loads_any_depth, parse_arguments
from .._validation import (
    assert_object_json_schema,
    assert_supported_json_schema,
    checked_violations,
    parameter_schema_spec_to_json_schema,
    value_schema_spec_to_json_schema,
)
from .scenario import answer_scenario

__all__ = [
    "SCHEDULE_OP",
    "UNDEFINED",
    "answer_case",
    "answer_line",
    "answer_lines",
    "answer_request",
    "answer_request_line",
    "answer_request_lines",
    "decode_tags",
    "encode_tags",
]


class _Undefined:
    """Sentinel type of :data:`UNDEFINED`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNDEFINED"


#: What ``{"$undefined": true}`` decodes to: JavaScript ``undefined``, which no Python value means.
UNDEFINED: Final = _Undefined()

SKIPPED_UNDEFINED: Final = "undefined has no Python counterpart"

# Returned by a node converter to mean "not a leaf: copy this container and walk into it".
_DESCEND: Final = object()


def _rebuild(value: object, convert: Callable[[object], object]) -> object:
    """Copy a tree of dicts and lists, replacing every node for which ``convert`` gives a value.

    ``convert(node)`` returns the node's replacement, or ``_DESCEND`` for an exact dict, list or
    tuple to copy (dict → dict in key order, list or tuple → list). Iterative: depth is limited by memory only.
    """
    stack: list[tuple[Iterator[tuple[Any, Any]], Any]] = []

    push = stack.append

    def enter(node: object) -> object:
        replaced = convert(node)
        if replaced is not _DESCEND:
            return replaced
        if type(node) is dict:
            copy: Any = {}
            push((iter(node.items()), copy))
            return copy
        copy = []
        push((enumerate(node), copy))  # type: ignore[arg-type]
        return copy

    root = enter(value)
    while stack:
        items, target = stack[-1]
        depth = len(stack)
        is_dict = type(target) is dict
        for key, child in items:
            new = enter(child)
            if is_dict:
                target[key] = new
            else:
                target.append(new)
            if len(stack) != depth:
                break  # descend into ``child`` first; ``items`` resumes afterwards
        else:
            stack.pop()
    return root


def _tag(node: dict[Any, Any]) -> object:
    """The special value a one-key tag object stands for, or ``_DESCEND`` for a plain object."""
    ((key, payload),) = node.items()
    kind = type(payload)
    if key == "$nan" and payload is True:
        return math.nan
    if key == "$inf" and kind in (int, float) and payload in (1, -1):
        return math.inf if payload == 1 else -math.inf
    if key == "$negzero" and payload is True:
        return -0.0
    if key == "$undefined" and payload is True:
        return UNDEFINED
    return _DESCEND


def _decode(value: object) -> tuple[object, bool]:
    """:func:`decode_tags`, also telling whether ``UNDEFINED`` occurs in the result."""
    seen = False

    def convert(node: object) -> object:
        nonlocal seen
        if type(node) is dict:
            if len(node) == 1:
                special = _tag(node)
                if special is UNDEFINED:
                    seen = True
                return special
            return _DESCEND
        return _DESCEND if type(node) is list else node

    return _rebuild(value, convert), seen


def decode_tags(value: object) -> object:
    """Turn the corpus's tagged special numbers into Python values.

    Exactly ``{"$nan": true}`` → ``nan``, ``{"$inf": 1}`` / ``{"$inf": -1}`` → ``±inf``,
    ``{"$negzero": true}`` → ``-0.0`` and ``{"$undefined": true}`` → :data:`UNDEFINED`; any other
    object, even one with a ``$`` key, is plain data. Returns a fresh copy.
    """
    return _decode(value)[0]


def _encode_node(node: object) -> object:
    kind = type(node)
    if kind is float:
        number: float = node  # type: ignore[assignment]
        if math.isnan(number):
            return {"$nan": True}
        if math.isinf(number):
            return {"$inf": 1 if number > 0 else -1}
        if number == 0.0 and math.copysign(1.0, number) < 0:
            return {"$negzero": True}
        return node
    if node is UNDEFINED:
        return {"$undefined": True}
    if kind is dict or kind is list or kind is tuple:
        return _DESCEND
    return node


def encode_tags(value: object) -> object:
    """The inverse of :func:`decode_tags`: tag ``nan``, ``±inf``, ``-0.0`` and :data:`UNDEFINED`.

    Returns a fresh copy ready for :func:`js_json` (tuples become lists).
    """
    return _rebuild(value, _encode_node)


def _thrown(error: Exception) -> dict[str, object]:
    """Upstream's ``throws`` shape: ``name``, ``message``, then ``code``/``violations`` if any."""
    shape: dict[str, object] = {"name": type(error).__name__, "message": error_message(error)}
    if isinstance(error, HarnessError):
        shape["code"] = error.code
    violations = getattr(error, "violations", None)
    if isinstance(violations, list):
        shape["violations"] = list(violations)
    return shape


def _validate(inputs: dict[str, Any]) -> dict[str, object]:
    # The validator ``define_tool`` runs, once every other engine agrees (else it raises).
    return {"violations": checked_violations(inputs["schema"], inputs["value"], inputs["path"])}


def _assert_supported(inputs: dict[str, Any]) -> dict[str, object]:
    assert_supported_json_schema(inputs["schema"])
    return {"ok": True}


def _assert_object(inputs: dict[str, Any]) -> dict[str, object]:
    assert_object_json_schema(inputs["schema"])
    return {"ok": True}


def _compile_params(inputs: dict[str, Any]) -> dict[str, object]:
    return {"schema": parameter_schema_spec_to_json_schema(inputs["spec"])}


def _compile_value(inputs: dict[str, Any]) -> dict[str, object]:
    return {"schema": value_schema_spec_to_json_schema(inputs["spec"])}


def _validate_args(inputs: dict[str, Any]) -> dict[str, object]:
    # As ``define_tool`` does: the parameter map compiled, its arguments checked at the root "".
    schema = parameter_schema_spec_to_json_schema(inputs["spec"])
    return {"violations": checked_violations(schema, inputs["args"], "")}


def _parse(inputs: dict[str, Any]) -> dict[str, object]:
    return {"value": parse_arguments(inputs["raw"])}


# op → (the inputs it reads, the call). ``path`` is optional (``"value"`` when absent).
_OPS: Final[dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], dict[str, object]]]]] = {
    "validate": (("schema", "value"), _validate),
    "assert": (("schema",), _assert_supported),
    "assertObject": (("schema",), _assert_object),
    "compileParams": (("spec",), _compile_params),
    "compileValue": (("spec",), _compile_value),
    "validateArgs": (("spec", "args"), _validate_args),
    "parseArguments": (("raw",), _parse),
}


def _js_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else type(value).__name__


def answer_case(case: object) -> dict[str, object]:
    """Answer one recorded case as trio_harness would.

    Args:
        case: One parsed line of the case format (tags still in place, as :func:`json.loads`
            gives it).

    Returns:
        The case with ``expected`` replaced by (or, when absent, appended as) this library's answer,
        tagged and ready for :func:`js_json`: ``{"violations": [...]}``, ``{"ok": true}``,
        ``{"schema": ...}``, ``{"value": ...}``, ``{"throws": {...}}`` or ``{"skipped": ...}``.
        ``{"error": "<what>"}`` alone when the case cannot be answered. Never raises.
    """
    if type(case) is not dict:
        return {"error": f"a case must be a JSON object, got {_js_type(case)}"}
    if "op" not in case:
        return {"error": 'case has no "op"'}
    op = case["op"]
    entry = _OPS.get(op) if type(op) is str else None
    if entry is None:
        return {"error": f"unknown op {js_json_or_string(op)}"}
    needed, call = entry
    missing = [name for name in needed if name not in case]
    if missing:
        return {"error": f'op "{op}" needs ' + ", ".join(f'"{name}"' for name in missing)}
    path = case.get("path", "value")
    if op == "validate" and type(path) is not str:
        return {"error": f'"path" must be a string, got {_js_type(path)}'}
    # Decode every field once: the op reads its inputs, the answer echoes them all.
    decoded: dict[str, Any] = {}
    skipped = False
    for name, field in case.items():
        decoded[name], has_undefined = _decode(field)
        skipped = skipped or (has_undefined and name in needed)
    inputs: dict[str, Any] = {**decoded, "path": path}
    if skipped:
        answer: dict[str, object] = {"skipped": SKIPPED_UNDEFINED}
    else:
        try:
            answer = call(inputs)
        except Exception as error:
            answer = {"throws": _thrown(error)}
    # Echo the case with tags normalised; ``expected`` keeps its position when present.
    decoded["expected"] = answer
    return encode_tags(decoded)  # type: ignore[return-value]


#: JSON's whitespace (``JSON.parse``): nothing else is blank, whatever ``str.strip`` thinks.
_JSON_WHITESPACE: Final = " \t\n\r"

MALFORMED_BLANK: Final = "malformed line: blank"
MALFORMED_NOT_JSON: Final = "malformed line: not JSON"
MALFORMED_NOT_UTF8: Final = "malformed line: not UTF-8"


def answer_line(line: str, answer: Callable[[object], dict[str, Any]] | None = None) -> str:
    """Answer one line of the case format: compact JavaScript-exact JSON. Never raises.

    The line is read as ``JSON.parse`` reads it, at any depth: ``NaN`` / ``Infinity`` literals are
    not JSON, ``-0`` is negative zero, integers of any length are read, object keys take
    JavaScript's order (array indices first). A line that is empty or only JSON whitespace (space,
    tab, LF, CR) is answered ``{"error": "malformed line: blank"}``; any other line that is not
    JSON, including one of only other whitespace (``\\x0c``, ``\\xa0``, ``\\u2028``, ...), is
    answered ``{"error": "malformed line: not JSON"}``. ``answer`` answers the decoded case
    (default :func:`answer_case`; the conformance kit passes one that also runs scenarios).
    """
    if not line.strip(_JSON_WHITESPACE):
        return js_json({"error": MALFORMED_BLANK})
    try:
        case = loads_any_depth(line)
    except ValueError:
        return js_json({"error": MALFORMED_NOT_JSON})
    return js_json((answer_case if answer is None else answer)(case))


def answer_lines(
    lines: Iterable[bytes | str], answer: Callable[[object], dict[str, Any]] | None = None
) -> Iterator[str]:
    """Answer a stream of case lines (bytes are read as UTF-8), lazily: exactly one answer per line.

    A port waits for one answer per line it sends, so every line is answered, blank or not (see
    :func:`answer_line`); a line that is not UTF-8 is answered with an ``error`` line. A UTF-8
    byte-order mark opening the stream is skipped. Errors reading ``lines`` themselves propagate.
    """
    first = True
    for raw in lines:
        if isinstance(raw, bytes):
            try:
                # A byte-order mark may open the stream; JSON text never starts with one.
                line = raw.decode("utf-8-sig" if first else "utf-8")
            except UnicodeDecodeError:
                first = False
                yield js_json({"error": MALFORMED_NOT_UTF8})
                continue
        else:
            line = raw.removeprefix("\ufeff") if first else raw
        first = False
        yield answer_line(line, answer)


# ---------------------------------------------------------------------------------------------
# Scheduling scenarios beside the validation ops: one oracle for every kit line
# ---------------------------------------------------------------------------------------------

#: The op of a scheduling scenario line.
SCHEDULE_OP: Final = "schedule"


def answer_request(case: object) -> dict[str, Any]:
    """Answer one decoded case line: a scheduling scenario or a validation op.

    Returns:
        The case with ``expected`` filled in, or ``{"error": "<what>"}``. Never raises.
    """
    if type(case) is dict and case.get("op") == SCHEDULE_OP:
        try:
            return answer_scenario(case)
        except Exception as error:  # pragma: no cover - answer_scenario contains its failures
            return {"error": f"cannot answer: {type(error).__name__}: {error}"}
    return answer_case(case)


def answer_request_line(line: str) -> str:
    """Answer one line: compact JavaScript-exact JSON, exactly one answer. Never raises."""
    return answer_line(line, answer_request)


def answer_request_lines(lines: Iterable[bytes | str]) -> Iterator[str]:
    """Answer a stream of lines (bytes are read as UTF-8), lazily: exactly one answer per line,
    blank or malformed lines included (see :func:`answer_lines`)."""
    return answer_lines(lines, answer_request)
