"""The one strict reader of the session log's wire form, and the problems it (and append) reports.

A :class:`Problem` says why a value cannot be kept and where (the path of the offending field,
e.g. ``data.items[2].key``); :func:`json_problem` finds the first one in a value that is not
lossless JSON (``Session.append`` words its refusals with it too).

:func:`read_line` reads one wire line, as ``Session.to_jsonl`` and ``DurableSession`` write it,
strictly and by the field table of :mod:`.events`: exactly the keys the wire form writes, with
their JSON types (an integer is never read from a string or a float), only data ``append`` would
accept, key order kept at any depth. ``Session.from_jsonl`` and ``load_session_log`` both read
with it, so a line one accepts the other accepts, with the same message for a line they refuse.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any, Final

import attrs

from .._json import MAX_FINITE_JSON_INT, is_json_number, is_json_value, js_json, loads_any_depth
from .events import (
    CONTENT,
    JSON,
    REQUIRED,
    TYPED_DATA,
    WIRE,
    SessionEvent,
)

__all__ = [
    "EVENT_KEYS",
    "JSON_BLANK",
    "TIME_KEY",
    "InvalidLine",
    "Problem",
    "flat_json_ok",
    "js_type",
    "json_problem",
    "read_event",
    "read_line",
]

#: The characters of a blank line (JSON whitespace): such a line is skipped.
JSON_BLANK: Final = " \t\r\n"
#: The key of a durable log line that records when the event was appended (epoch seconds); a
#: plain session reads it (it must be a number) and drops it.
TIME_KEY: Final = "at"
#: Every key an event line may have.
EVENT_KEYS: Final = ("seq", "type", "sourceEventSeqs", "data", TIME_KEY)

_NAME: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_type_of: Final = type


@attrs.define
class Problem:
    """Why a value cannot be kept, and where: path pieces collected innermost first."""

    error: type[Exception]
    message: str
    where: list[str] = attrs.field(factory=list)

    def at(self, piece: str) -> Problem:
        """Prefix the path with ``piece`` (``".key"``, ``"[3]"``, or a top-level key)."""
        self.where.append(piece)
        return self

    @property
    def field(self) -> str | None:
        """The path of the offending field (``"data.callId"``), ``None`` for the whole value."""
        return "".join(reversed(self.where)).removeprefix(".") or None

    def render(self, root: str = "") -> str:
        """``"<root><path> <message>"``, e.g. ``data.step must be an integer, got string``."""
        path = (root + "".join(reversed(self.where))).removeprefix(".")
        return f"{path} {self.message}" if path else self.message


class InvalidLine(Exception):
    """A wire line that is not an event the session log could have written."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.render())
        self.problem = problem


def js_type(value: object) -> str:
    """The JSON type name of a parsed JSON value (``"number"``, ``"array"``, ...)."""
    kind = _type_of(value)
    if value is None:
        return "null"
    if kind is bool:
        return "boolean"
    if kind is int or kind is float:
        return "number"
    if kind is str:
        return "string"
    return "array" if kind is list else "object"


# ---------------------------------------------------------------------------------------------
# What the log can keep: lossless JSON
# ---------------------------------------------------------------------------------------------


def _piece(key: object) -> str:
    if _type_of(key) is int:
        return f"[{key}]"
    text = str(key)
    return f".{text}" if _NAME.fullmatch(text) else f"[{js_json(text)}]"


def _entries(container: Any) -> Iterator[tuple[Any, Any]]:
    return iter(container.items()) if _type_of(container) is dict else enumerate(container)


# Returned by ``_leaf_problem`` for a ``dict`` or ``list``: not a problem but a container to walk
# into. Compared by identity only; never located or returned by ``json_problem``.
_CONTAINER: Final = Problem(ValueError, "is a container")


def _leaf_problem(value: Any, wire: bool) -> Problem | None:
    """The problem of a value taken alone: ``None`` (fine), ``_CONTAINER``, or a fresh problem."""
    kind = _type_of(value)
    if kind is str or kind is bool or value is None:
        return None
    if kind is dict or kind is list:
        return _CONTAINER
    if kind is int:
        if -MAX_FINITE_JSON_INT <= value <= MAX_FINITE_JSON_INT:
            return None
        noun = "an integer" if wire else "an int"
        return Problem(ValueError, f"is {noun} beyond the double range, not a finite JSON number")
    if kind is float:
        if math.isnan(value):
            return Problem(ValueError, "is NaN, not a finite JSON number")
        if math.isinf(value):
            name = "Infinity" if value > 0 else "-Infinity"
            return Problem(ValueError, f"is {name}, not a finite JSON number")
        if value == 0.0 and math.copysign(1.0, value) < 0:
            literal = "-0" if wire else "-0.0"
            return Problem(ValueError, f"is {literal}, which JSON cannot keep (it is written as 0)")
        return None
    hint = ""
    if kind is tuple:
        hint = " (use a list)"
    else:
        for base in (dict, list, str):
            if issubclass(kind, base):
                hint = f" (only an exact {base.__name__} is)"
                break
    return Problem(TypeError, f"is not JSON: type {kind.__name__}{hint}")


def json_problem(value: Any, *, wire: bool = False) -> Problem | None:
    """The first reason ``value`` is not lossless JSON (walk order), or ``None``.

    The same verdicts as ``is_json_value``; iterative, and paths are rendered only for the problem
    found, so any depth costs linear memory.
    """
    found = _leaf_problem(value, wire)
    if found is not _CONTAINER:
        return found
    keys: list[object] = []  # the key of each open container below the root
    ancestors = {id(value)}
    stack: list[tuple[Any, Iterator[tuple[Any, Any]]]] = [(value, _entries(value))]

    def located(problem: Problem, *last: object) -> Problem:
        for key in reversed([*keys, *last]):
            problem.at(_piece(key))
        return problem

    while stack:
        container, items = stack[-1]
        is_dict = _type_of(container) is dict
        for key, child in items:
            if is_dict and _type_of(key) is not str:
                name = _type_of(key).__name__
                problem = Problem(TypeError, f"has the key {key!r} ({name}); JSON keys are str")
                return located(problem)
            found = _leaf_problem(child, wire)
            if found is None:
                continue
            if found is not _CONTAINER:
                return located(found, key)
            if id(child) in ancestors:
                return located(Problem(ValueError, "contains itself (a cycle)"), key)
            ancestors.add(id(child))
            keys.append(key)
            stack.append((child, _entries(child)))
            break
        else:
            stack.pop()
            ancestors.discard(id(container))
            if stack:
                keys.pop()
    return None


def flat_json_ok(block: Any) -> bool:
    """``is_json_value(block)``, with flat dicts (a content block, usually) checked in place."""
    if _type_of(block) is not dict:
        return is_json_value(block)
    for key, item in block.items():
        kind = _type_of(key)
        if kind is not str:
            return False
        kind = _type_of(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if -MAX_FINITE_JSON_INT <= item <= MAX_FINITE_JSON_INT:
                continue
            return False
        return is_json_value(block)  # a float or a container: the general test
    return True


# ---------------------------------------------------------------------------------------------
# Reading a line, by the field table
# ---------------------------------------------------------------------------------------------

_JS_NAMES: Final = {int: "an integer", str: "a string", bool: "a boolean"}


def _invalid(message: str) -> InvalidLine:
    return InvalidLine(Problem(ValueError, message))


def read_line(text: str, expected_seq: int) -> tuple[SessionEvent, float | None]:
    """The event on one wire line (without its ``\\n``) and its ``"at"`` time, if any.

    Raises:
        InvalidLine: The line is not JSON, not an event the log could have written, or its seq
            is not ``expected_seq``; the problem names the field.
    """
    try:
        raw = loads_any_depth(text, js_key_order=False)
    except ValueError:
        raise _invalid("not JSON") from None
    return read_event(raw, expected_seq)


def read_event(raw: Any, expected_seq: int) -> tuple[SessionEvent, float | None]:
    """The event of a parsed wire line, and its ``"at"`` time (see :func:`read_line`)."""
    if _type_of(raw) is not dict:
        raise _invalid(f"an event must be an object, got {js_type(raw)}")
    for key in raw:
        if key not in EVENT_KEYS:
            raise _invalid(f"the event has an unknown field {js_json(key)}")
    for key in ("seq", "type", "data"):
        if key not in raw:
            raise InvalidLine(Problem(ValueError, "is missing").at(key))
    seq, kind, data = raw["seq"], raw["type"], raw["data"]
    if _type_of(seq) is not int or not -MAX_FINITE_JSON_INT <= seq <= MAX_FINITE_JSON_INT:
        raise InvalidLine(_scalar_problem(seq, int).at("seq"))
    if _type_of(kind) is not str:
        raise InvalidLine(_scalar_problem(kind, str).at("type"))
    at = raw.get(TIME_KEY)
    if at is not None or TIME_KEY in raw:
        got = _type_of(at)
        if got is not float and got is not int:
            problem = Problem(ValueError, f"must be a number, got {js_type(at)}")
            raise InvalidLine(problem.at(TIME_KEY))
        problem_at = _leaf_problem(at, True)
        if problem_at is not None:
            raise InvalidLine(problem_at.at(TIME_KEY))
    sources = None
    if "sourceEventSeqs" in raw:
        sources = _read_sources(raw["sourceEventSeqs"], seq)
    reader = _READERS.get(kind)
    try:
        data = _json(data) if reader is None else reader(data)
    except InvalidLine as invalid:
        invalid.problem.at("data")
        raise
    if seq != expected_seq:
        raise InvalidLine(Problem(ValueError, f"is {seq}, expected {expected_seq}").at("seq"))
    return SessionEvent(seq, kind, data, sources), at


def _read_sources(raw: Any, seq: int) -> tuple[int, ...]:
    where = "sourceEventSeqs"
    if _type_of(raw) is not list:
        problem = Problem(ValueError, f"must be an array, got {js_type(raw)}")
        raise InvalidLine(problem.at(where))
    for index, source in enumerate(raw):
        if _type_of(source) is not int or not -MAX_FINITE_JSON_INT <= source <= MAX_FINITE_JSON_INT:
            # Checked before the value is shown: Python will not print an integer of more than
            # 4,300 digits (its int_max_str_digits), so the message never holds it.
            raise InvalidLine(_scalar_problem(source, int).at(f"[{index}]").at(where))
        if not 0 <= source < seq:
            problem = Problem(ValueError, f"is {source}, not the seq of an earlier event")
            raise InvalidLine(problem.at(f"[{index}]").at(where))
    return tuple(raw)


def _scalar_problem(raw: Any, kind: type) -> Problem:
    """Why ``raw`` is not a keepable ``int``/``str``/``bool``."""
    if _type_of(raw) is kind:
        found = _leaf_problem(raw, True)  # an integer beyond the double range
        assert found is not None
        return found
    return Problem(ValueError, f"must be {_JS_NAMES[kind]}, got {js_type(raw)}")


def _parsed_json_ok(value: Any) -> bool:
    """``is_json_value`` for a value ``json`` parsed: exact types, ``str`` keys and no cycles by
    construction, so only its numbers can fail (``-0``, ``1e400``, a 400-digit integer)."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = _type_of(item)
        if kind is dict:
            push(item.values())
        elif kind is list:
            push(item)
        elif (kind is int or kind is float) and not is_json_number(item):
            return False
    return True


def _json(raw: Any) -> Any:
    """A JSON field (``meta``, an application event's data): lossless, or refused."""
    if _parsed_json_ok(raw):
        return raw
    found = json_problem(raw, wire=True)
    assert found is not None
    raise InvalidLine(found)


# A reader per typed class, compiled from its row of the field table: the key check, then each
# field by its kind (typed fields by their own reader), then the attrs constructor.

Reader = Callable[[Any], Any]


def _compile_reader(cls: type) -> Reader:
    fields = WIRE[cls]
    keys = frozenset(field.key for field in fields)
    plan: list[tuple[str, str, Any, bool, Reader | None]] = []
    for field in fields:
        kind = field.kind
        reader: Reader | None
        if kind is int or kind is str or kind is bool:
            reader = None
        elif kind is JSON:
            reader = _json
        elif kind is CONTENT:
            reader = _content
        elif _type_of(kind) is tuple:
            reader = _tuple_reader(_compile_reader(kind[0]))
        else:
            reader = _compile_reader(kind)
        plan.append((field.key, field.name, kind, field.absent is REQUIRED, reader))

    def read(raw: Any) -> Any:
        if _type_of(raw) is not dict:
            raise _invalid(f"must be an object, got {js_type(raw)}")
        if not keys.issuperset(raw):
            unknown = next(key for key in raw if key not in keys)
            raise _invalid(f"has an unknown field {js_json(unknown)}")
        values: dict[str, Any] = {}
        for key, name, kind, required, reader in plan:
            if key not in raw:
                if required:
                    raise InvalidLine(Problem(ValueError, "is missing").at("." + key))
                continue
            item = raw[key]
            if reader is None:
                if _type_of(item) is not kind or (
                    kind is int and not -MAX_FINITE_JSON_INT <= item <= MAX_FINITE_JSON_INT
                ):
                    raise InvalidLine(_scalar_problem(item, kind).at("." + key))
                values[name] = item
                continue
            try:
                values[name] = reader(item)
            except InvalidLine as invalid:
                invalid.problem.at("." + key)
                raise
        return cls(**values)

    return read


def _tuple_reader(element: Reader) -> Reader:
    def read(raw: Any) -> tuple[Any, ...]:
        if _type_of(raw) is not list:
            raise _invalid(f"must be an array, got {js_type(raw)}")
        items = []
        for index, item in enumerate(raw):
            try:
                items.append(element(item))
            except InvalidLine as invalid:
                invalid.problem.at(f"[{index}]")
                raise
        return tuple(items)

    return read


def _content(raw: Any) -> tuple[Any, ...]:
    """Content blocks: whatever lossless JSON the tool rendered (``append`` keeps any)."""
    if _type_of(raw) is not list:
        raise _invalid(f"must be an array, got {js_type(raw)}")
    for block in raw:
        if not (flat_json_ok(block) if _type_of(block) is dict else _parsed_json_ok(block)):
            found = json_problem(raw, wire=True)
            assert found is not None
            raise InvalidLine(found)
    return tuple(raw)


_READERS: Final[dict[str, Reader]] = {
    name: _compile_reader(cls) for name, cls in TYPED_DATA.items()
}
