"""``parse_arguments``: a model's raw argument text → a value, as JavaScript's ``JSON.parse`` would.

Upstream parses with ``JSON.parse`` and hands unparseable text to the tool unchanged. Python's
``json`` differs from ``JSON.parse`` in a few places, each settled here:

* ``NaN`` / ``Infinity`` / ``-Infinity`` literals are invalid JSON (``json`` accepts them);
* ``-0`` is negative zero (``json`` gives ``int`` 0); the registry's lossless check rejects it later;
* object keys follow JavaScript's own-key order: array-index keys (``"0"`` … ``"4294967294"``,
  canonical form) first in ascending numeric order, then the others in insertion order; a
  duplicate key keeps its first position and its last value (as both parsers already do);
* nesting depth is unbounded: ``json`` raises ``RecursionError`` near 1,000 levels, so such text
  is re-parsed by an iterative parser that gives the same answer;
* an integer literal too long for ``int()`` (``sys.get_int_max_str_digits``) becomes a ``float``
  (``inf`` when out of range, as in JavaScript).

Integers are otherwise kept exact (JavaScript rounds beyond 2**53): a documented porting difference.
The extra work (hooks) is paid only when a cheap pre-check says the text could need it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final

__all__ = ["loads_any_depth", "parse_arguments"]

# ``json``'s own string scanner (C-accelerated, non-recursive): the iterative parser decodes strings
# exactly as ``json.loads`` does. It is public at runtime but missing from typeshed.
scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

#: The largest array index: JavaScript orders keys "0" … "4294967294" numerically.
_MAX_ARRAY_INDEX: Final = 4294967294

# Text that could hold an array-index key: a quoted run of ASCII digits (or escaped digits
# ``\u0030``-``\u0039``) followed by a colon. False positives only cost the object hook.
_MAYBE_INDEX_KEY: Final = re.compile(r'"(?:[0-9]|\\u003[0-9])+"[ \t\n\r]*:')
_INDEX_KEY: Final = re.compile(r"0|[1-9][0-9]{0,9}")


class _InvalidConstant(ValueError):
    """``NaN`` / ``Infinity`` / ``-Infinity``: valid for ``json``, invalid for ``JSON.parse``."""


def _reject_constant(name: str) -> object:
    raise _InvalidConstant(name)


def _parse_int(text: str) -> int | float:
    if text == "-0":
        return -0.0
    try:
        return int(text)
    except ValueError:
        # Past ``sys.get_int_max_str_digits``: JavaScript would give a (possibly infinite) double.
        return float(text)


def _is_index_key(key: str) -> bool:
    return _INDEX_KEY.fullmatch(key) is not None and int(key) <= _MAX_ARRAY_INDEX


def _js_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build an object from parsed pairs in JavaScript's own-key order."""
    built = dict(pairs)  # duplicate keys: first position, last value
    indices = [key for key in built if _is_index_key(key)]
    if not indices:
        return built
    indices.sort(key=int)
    ordered = {key: built[key] for key in indices}
    for key, value in built.items():
        if key not in ordered:
            ordered[key] = value
    return ordered


def _scanner(*, int_hook: bool, key_order: bool) -> Callable[[str, int], tuple[object, int]]:
    # ``scan_once`` is the (C) value scanner behind ``JSONDecoder.decode``, minus its per-call
    # overhead; it clears its key memo after every call, so a shared instance is safe.
    decoder = json.JSONDecoder(
        parse_constant=_reject_constant,
        parse_int=_parse_int if int_hook else None,
        object_pairs_hook=_js_object if key_order else None,
    )
    scan: Callable[[str, int], tuple[object, int]] = decoder.scan_once  # type: ignore[attr-defined]
    return scan


# Prebuilt scanners, indexed by (needs the int hook, needs the key-order hook).
_SCANNERS: Final = {
    (i, k): _scanner(int_hook=i, key_order=k) for i in (False, True) for k in (False, True)
}
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
_WHITESPACE_CHARS: Final = frozenset(" \t\n\r")
# Two-stage pre-checks: a fast C substring/regex test, then the precise pattern.
_MAYBE_DIGIT_KEY: Final = re.compile(r'"[0-9\\]')
_NEGATIVE_ZERO: Final = re.compile(r"-0(?![.0-9eE])")


def _scan(raw: str, int_hook: bool, key_order: bool) -> object:
    """One strict ``JSON.parse``-like pass; returns ``raw`` itself for invalid text."""
    start = _WHITESPACE.match(raw).end() if raw[0] in _WHITESPACE_CHARS else 0  # type: ignore[union-attr]
    try:
        value, end = _SCANNERS[int_hook, key_order](raw, start)
    except (StopIteration, json.JSONDecodeError, _InvalidConstant):
        return raw
    if end != len(raw) and _WHITESPACE.match(raw, end).end() != len(raw):  # type: ignore[union-attr]
        return raw
    return value


def parse_arguments(raw: str) -> object:
    """Parse a model's raw tool-call arguments like JavaScript's ``JSON.parse``.

    Args:
        raw: The argument text exactly as the model sent it.

    Returns:
        ``{}`` for the empty string; the parsed JSON value (any JSON text: objects, arrays,
        scalars) when ``raw`` is valid JSON; otherwise ``raw`` itself, unchanged, so the tool's
        validation reports it (``"arguments" must be an object``).

    Raises:
        TypeError: ``raw`` is not a ``str``.
    """
    if type(raw) is not str:
        if isinstance(raw, str):
            raw = str.__str__(raw)
        else:
            raise TypeError(f"parse_arguments() expects a str, got {type(raw).__name__}")
    if raw == "":
        return {}
    int_hook = "-0" in raw and _NEGATIVE_ZERO.search(raw) is not None
    key_order = (
        _MAYBE_DIGIT_KEY.search(raw) is not None and _MAYBE_INDEX_KEY.search(raw) is not None
    )
    try:
        return _scan(raw, int_hook, key_order)
    except RecursionError:
        pass
    except ValueError:
        # An integer literal beyond the int() digit limit; retry with the tolerant int hook.
        try:
            return _scan(raw, True, key_order)
        except RecursionError:
            pass
    return _parse_deep(raw)


# ---------------------------------------------------------------------------------------------
# Iterative fallback for text nested deeper than ``json``'s recursion allows
# ---------------------------------------------------------------------------------------------

# ASCII digits only, exactly the JSON number grammar (``\d`` would admit other Unicode digits).
_NUMBER: Final = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS: Final[dict[str, tuple[str, object]]] = {
    "n": ("null", None),
    "t": ("true", True),
    "f": ("false", False),
}


class _Invalid(Exception):
    """The text is not JSON."""


def _parse_deep(raw: str) -> object:
    try:
        return _iterative_parse(raw)
    except (_Invalid, json.JSONDecodeError):
        return raw


def loads_any_depth(text: str) -> object:
    """Strict JSON text to a value at any nesting depth (for reading logs back).

    ``json.loads`` first; text nested deeper than its recursion allows goes to the iterative
    parser (which orders keys as JavaScript does; equality is unaffected).

    Raises:
        ValueError: ``text`` is not JSON.
    """
    try:
        return json.loads(text)
    except RecursionError:
        pass
    try:
        return _iterative_parse(text)
    except _Invalid:
        raise ValueError("invalid JSON") from None


def _iterative_parse(text: str) -> object:
    """A JSON parser with an explicit stack, agreeing with ``parse_arguments``'s ``json`` path.

    Each open container is a stack frame ``[container, pending_key]`` where ``container`` is a list
    (array) or a list of ``(key, value)`` pairs (object, turned into a JavaScript-ordered dict on
    close).
    """
    ws: Callable[[str, int], re.Match[str] | None] = _WHITESPACE.match
    number = _NUMBER.match
    end = len(text)
    # Frames: (is_object, items, key); ``key`` is the pending key of an object frame.
    stack: list[list[Any]] = []
    pos = ws(text, 0).end()  # type: ignore[union-attr]
    while True:
        # Parse one value starting at ``pos`` (after whitespace).
        if pos >= end:
            raise _Invalid
        char = text[pos]
        value: object
        if char == "{" or char == "[":
            is_object = char == "{"
            pos = ws(text, pos + 1).end()  # type: ignore[union-attr]
            closer = "}" if is_object else "]"
            if pos < end and text[pos] == closer:
                value = {} if is_object else []
                pos += 1
            else:
                frame: list[Any] = [is_object, [], None]
                stack.append(frame)
                if is_object:
                    pos = _read_key(text, pos, frame)
                continue
        elif char == '"':
            value, pos = scanstring(text, pos + 1, True)
        elif char in _LITERALS:
            word, value = _LITERALS[char]
            if not text.startswith(word, pos):
                raise _Invalid
            pos += len(word)
        else:
            match = number(text, pos)
            if match is None:
                raise _Invalid
            integer, fraction, exponent = match.groups()
            if fraction or exponent:
                value = float(integer + (fraction or "") + (exponent or ""))
            else:
                value = _parse_int(integer)
            pos = match.end()
        # A complete value: attach it to the open container(s), closing those that end here.
        while True:
            pos = ws(text, pos).end()  # type: ignore[union-attr]
            if not stack:
                if pos != end:
                    raise _Invalid
                return value
            frame = stack[-1]
            if frame[0]:
                frame[1].append((frame[2], value))
            else:
                frame[1].append(value)
            if pos >= end:
                raise _Invalid
            char = text[pos]
            if char == ",":
                pos = ws(text, pos + 1).end()  # type: ignore[union-attr]
                if frame[0]:
                    pos = _read_key(text, pos, frame)
                break
            if char != ("}" if frame[0] else "]"):
                raise _Invalid
            pos += 1
            stack.pop()
            value = _js_object(frame[1]) if frame[0] else frame[1]


def _read_key(text: str, pos: int, frame: list[Any]) -> int:
    """Read ``"key" :`` at ``pos`` into ``frame``; return the position of the value."""
    if pos >= len(text) or text[pos] != '"':
        raise _Invalid
    key, pos = scanstring(text, pos + 1, True)
    pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
    if pos >= len(text) or text[pos] != ":":
        raise _Invalid
    frame[2] = key
    return _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
