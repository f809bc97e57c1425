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

:func:`loads_any_depth` is the same reader for text that must be JSON (log lines, oracle cases): it
raises instead of handing the text back, and reads integer literals of any length exactly (a
digit-safe conversion; the interpreter-wide digit limit is never changed). Every rule holds at every
nesting depth: ``json`` and the iterative parser get the same hooks.
"""

from __future__ import annotations

import functools
import json
import marshal
import re
from collections.abc import Callable
from typing import Any, Final

from .lossless import json_node_limit

__all__ = ["loads_any_depth", "parse_arguments", "parse_arguments_frozen", "thaw"]

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


# ``int()`` converts up to 640 digits whatever the interpreter's limit (its smallest allowed
# value, ``sys.int_info.str_digits_check_threshold``).
_SAFE_DIGITS: Final = 640


def _join_digits(digits: str) -> int:
    """The value of a run of ASCII digits of any length, without ``int()``'s digit limit."""
    if len(digits) <= _SAFE_DIGITS:
        return int(digits)
    low = len(digits) // 2  # recursion depth is log2(len / 640): about 20 for a gigabyte
    scale: int = 10**low
    return _join_digits(digits[:-low]) * scale + _join_digits(digits[-low:])


def _exact_int(text: str) -> int | float:
    """An integer literal's exact value at any length (``-0`` is negative zero, as in JavaScript)."""
    if text == "-0":
        return -0.0
    try:
        return int(text)
    except ValueError:
        pass
    if text[0] == "-":
        return -_join_digits(text[1:])
    return _join_digits(text)


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


_IntHook = Callable[[str], int | float]
_ObjectHook = Callable[[list[tuple[str, Any]]], dict[str, Any]]


@functools.cache
def _scanner(
    int_hook: _IntHook | None, object_hook: _ObjectHook | None
) -> Callable[[str, int], tuple[object, int]]:
    # ``scan_once`` is the (C) value scanner behind ``JSONDecoder.decode``, minus its per-call
    # overhead; it clears its key memo after every call, so a shared instance is safe. At most
    # six (hook, hook) pairs exist, so the cache stays tiny.
    decoder = json.JSONDecoder(
        parse_constant=_reject_constant, parse_int=int_hook, object_pairs_hook=object_hook
    )
    scan: Callable[[str, int], tuple[object, int]] = decoder.scan_once  # type: ignore[attr-defined]
    return scan


_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
_WHITESPACE_CHARS: Final = frozenset(" \t\n\r")
# Two-stage pre-checks: a fast C substring/regex test, then the precise pattern.
_MAYBE_DIGIT_KEY: Final = re.compile(r'"[0-9\\]')
_NEGATIVE_ZERO: Final = re.compile(r"-0(?![.0-9eE])")


def _needs_key_order(text: str) -> bool:
    return _MAYBE_DIGIT_KEY.search(text) is not None and _MAYBE_INDEX_KEY.search(text) is not None


def _has_negative_zero(text: str) -> bool:
    # ``"-" in`` is a memchr; most argument texts hold no minus sign at all.
    return "-" in text and _NEGATIVE_ZERO.search(text) is not None


#: ``_scanner(None, None)``: the scanner of text that needs no hook (most arguments).
_plain_scan: Final = _scanner(None, None)


def _decode(text: str, int_hook: _IntHook | None, object_hook: _ObjectHook | None) -> object:
    """One strict ``JSON.parse``-like pass over non-empty ``text``.

    Raises:
        _Invalid: ``text`` is not JSON.
        ValueError: an integer literal past ``int()``'s digit limit (and no ``int_hook``).
        RecursionError: ``text`` nests deeper than ``json`` can go.
    """
    start = _WHITESPACE.match(text).end() if text[0] in _WHITESPACE_CHARS else 0  # type: ignore[union-attr]
    try:
        value, end = _scanner(int_hook, object_hook)(text, start)
    except (StopIteration, json.JSONDecodeError, _InvalidConstant):
        raise _Invalid from None
    if end != len(text) and _WHITESPACE.match(text, end).end() != len(text):  # type: ignore[union-attr]
        raise _Invalid
    return value


def _scan(raw: str, int_hook: bool, key_order: bool) -> object:
    """:func:`_decode` with ``parse_arguments``'s hooks; returns ``raw`` itself for invalid text."""
    try:
        return _decode(raw, _parse_int if int_hook else None, _js_object if key_order else None)
    except _Invalid:
        return raw


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
    # ``_has_negative_zero`` and ``_needs_key_order``, and ``_scan``, written out (this runs once
    # per tool call).
    int_hook = "-" in raw and _NEGATIVE_ZERO.search(raw) is not None
    key_order = (
        _MAYBE_DIGIT_KEY.search(raw) is not None and _MAYBE_INDEX_KEY.search(raw) is not None
    )
    try:
        if int_hook or key_order:
            return _decode(raw, _parse_int if int_hook else None, _js_object if key_order else None)
        # ``_decode`` without hooks, written out.
        start = _WHITESPACE.match(raw).end() if raw[0] in _WHITESPACE_CHARS else 0  # type: ignore[union-attr]
        try:
            value, end = _plain_scan(raw, start)
        except (StopIteration, json.JSONDecodeError, _InvalidConstant):
            return raw
        if end != len(raw) and _WHITESPACE.match(raw, end).end() != len(raw):  # type: ignore[union-attr]
            return raw
        return value
    except _Invalid:
        return raw
    except RecursionError:
        pass
    except ValueError:
        # An integer literal beyond the int() digit limit; retry with the tolerant int hook.
        try:
            return _scan(raw, True, key_order)
        except RecursionError:
            pass
    return _parse_deep(raw)


# An integer literal of at most this many digits is below ``MAX_FINITE_JSON_INT`` (a double's
# largest finite value has 309 digits).
_SHORT_INT: Final = 308
_DIGITS: Final = frozenset("0123456789")
_DIGIT_RUN: Final = re.compile(r"[0-9]*")

# The marshal form (``TYPE_BINARY_FLOAT``: little-endian IEEE 754) of the only floats a JSON text
# parses to that are not lossless JSON: ``inf``, ``-inf`` (an overflowing literal) and ``-0.0``
# (``-0.0``, or a negative literal that underflows). ``NaN`` cannot be parsed.
_INF_BYTES: Final = b"\x00\x00\x00\x00\x00\x00\xf0\x7f"
_NEG_INF_BYTES: Final = b"\x00\x00\x00\x00\x00\x00\xf0\xff"
_NEG_ZERO_BYTES: Final = b"\x00\x00\x00\x00\x00\x00\x00\x80"


def _may_hold_long_integer(raw: str) -> bool:
    """Whether ``raw`` may hold an integer literal of more than ``_SHORT_INT`` digits.

    Such a literal covers ``_SHORT_INT + 1`` consecutive characters, so one of them is at a
    position ``k * (_SHORT_INT + 1) + _SHORT_INT``: only the digit runs through those positions
    are measured.
    """
    for probe in range(_SHORT_INT, len(raw), _SHORT_INT + 1):
        if raw[probe] in _DIGITS:
            start = probe
            while start and raw[start - 1] in _DIGITS:
                start -= 1
            if _DIGIT_RUN.match(raw, probe).end() - start > _SHORT_INT:  # type: ignore[union-attr]
                return True
    return False


def _lossless_frozen(value: object, raw: str, minus: bool) -> bytes | None:
    """``marshal``'s form of ``value`` (parsed from ``raw`` without hooks, no ``-0`` text, no
    integer past a double; ``minus``: ``raw`` holds a ``-``) when none of its floats is
    ``inf``, ``-inf`` or ``-0.0``; else ``None``."""
    try:
        frozen = marshal.dumps(value)  # type: ignore[arg-type]  # a JSON tree
    except ValueError:  # deeper than marshal's stack
        return None
    if (
        # The byte each infinity ends with first (an int operand is a memchr).
        (0x7F in frozen and _INF_BYTES in frozen)
        or (0xFF in frozen and _NEG_INF_BYTES in frozen)
        # Without a "-0" text, a negative literal underflows only with a negative exponent.
        or (minus and ("e-" in raw or "E-" in raw) and _NEG_ZERO_BYTES in frozen)
    ):
        return None
    return frozen


def thaw(frozen: bytes) -> object:
    """A fresh copy of the value :func:`parse_arguments_frozen` froze as ``frozen``: the same
    tree (every type, order and value), in containers of its own."""
    value: object = marshal.loads(frozen)
    return value


def parse_arguments_frozen(raw: str) -> tuple[object, bytes | None]:
    """:func:`parse_arguments`, and the value's frozen form when it is proved lossless JSON.

    The frozen form (``None`` when nothing was proved) is given when ``raw`` is a JSON object or
    array with fewer nodes than ``raw`` has characters, holding no ``-0`` text, no array-index
    key and no integer literal past a double, whose every float parsed finite and not ``-0.0``.
    Such a value is a tree of fresh exact ``dict``/``list`` containers and exact scalars, so
    ``marshal`` writes it exactly, and :func:`thaw` of the bytes is a copy of it as it is now:
    every type, order and value, which is what ``snapshot_json_value`` would give for it,
    whatever later happens to the value itself. The floats are judged on those bytes (the three
    lossy floats have one marshal form each), so the proof costs no per-number hook. ``None``
    says nothing: the value may still be lossless.

    Raises:
        TypeError: ``raw`` is not a ``str``.
    """
    # ``"-" in`` is a memchr, far cheaper than a two-character search: most argument texts
    # hold no minus sign, so no ``-0`` and no negative exponent either.
    minus = type(raw) is str and "-" in raw
    if (
        type(raw) is str
        and raw
        and raw[0] in "{["
        and not (minus and "-0" in raw)
        and len(raw) < json_node_limit()
        # Key order needs the object hook: those texts take ``parse_arguments``'s way.
        and not _needs_key_order(raw)
        and (len(raw) <= _SHORT_INT or not _may_hold_long_integer(raw))
    ):
        try:
            # ``parse_arguments`` reads this text the same way (no hook): the same value.
            value = _decode(raw, None, None)
        except (_Invalid, ValueError, RecursionError):
            pass
        else:
            return value, _lossless_frozen(value, raw, minus)
    return parse_arguments(raw), None


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


def loads_any_depth(text: str, *, js_key_order: bool = True) -> object:
    """Read JSON text as JavaScript's ``JSON.parse`` does, at any nesting depth (logs, oracle cases).

    The same value at every depth: ``NaN`` / ``Infinity`` literals are not JSON, ``-0`` is negative
    zero, integer literals of any length are read exactly (past ``int()``'s digit limit too, the
    interpreter-wide limit untouched), only space, tab, LF and CR are whitespace. ``json``'s (C)
    scanner reads the text; text nested deeper than its recursion allows goes to the iterative
    parser, with the same hooks.

    Args:
        text: The JSON text.
        js_key_order: Order object keys as JavaScript does (array-index keys first, ascending,
            then insertion order), as ``parse_arguments`` does. ``False`` keeps the text's order
            (a duplicate key keeps its first position and its last value either way).

    Raises:
        ValueError: ``text`` is not JSON (``"invalid JSON"``).
    """
    if not text:
        raise ValueError("invalid JSON")
    object_hook = _js_object if js_key_order and _needs_key_order(text) else None
    int_hook = _exact_int if _has_negative_zero(text) else None
    try:
        try:
            return _decode(text, int_hook, object_hook)
        except RecursionError:
            pass
        except ValueError:
            # An integer literal past ``int()``'s digit limit: read it digit-safely.
            try:
                return _decode(text, _exact_int, object_hook)
            except RecursionError:
                pass
        return _iterative_parse(
            text, to_int=_exact_int, make_object=_js_object if js_key_order else dict
        )
    except (_Invalid, json.JSONDecodeError):
        raise ValueError("invalid JSON") from None


def _iterative_parse(
    text: str,
    *,
    to_int: _IntHook = _parse_int,
    make_object: _ObjectHook = _js_object,
) -> object:
    """A JSON parser with an explicit stack, agreeing with the ``json`` path given the same hooks.

    Each open container is a stack frame ``[container, pending_key]`` where ``container`` is a list
    (array) or a list of ``(key, value)`` pairs (object, turned into a dict by ``make_object`` on
    close). ``to_int`` reads integer literals. The defaults are ``parse_arguments``'s.
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
                value = to_int(integer)
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
            value = make_object(frame[1]) if frame[0] else frame[1]


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
