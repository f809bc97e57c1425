"""The session log: an append-only list of events, and its JSON Lines wire form.

The pool records two event types: ``tool/call`` when a call starts and ``tool/result`` when its
result is committed (citing the call's seq in ``source_event_seqs``). Their ``data`` are typed
values (:class:`ToolCallData`, :class:`ToolResultData`); any other event type carries whatever
JSON ``data`` the application appends. A private cattrs ``Converter`` writes the wire form:
camelCase keys in upstream's order, ``error``/``meta`` only when present, ``sourceEventSeqs``
only when the event cites sources.

The log keeps only what it can give back: :meth:`Session.append` rejects, with the path of the
offending field, anything the wire form would write differently (``nan``, ``-0.0``, a set, an
``int`` key, a typed value with a mistyped field), and :meth:`Session.from_jsonl` reads exactly
the forms :meth:`Session.to_jsonl` writes, strictly (a mistyped or unknown field is an error naming
the line and the field, never a silent conversion), keeping key order at any depth.

Appending checks and stores the typed value only; the wire form is produced on demand
(``to_json``), so logging costs a few type checks and two small allocations per call on the hot
path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from typing import Any, Final, NoReturn, final

import attrs
import cattrs
from cattrs.gen import make_dict_unstructure_fn

from .._json import (
    MAX_FINITE_JSON_INT,
    NOT_JSON,
    is_json_value,
    js_json,
    loads_any_depth,
    snapshot_json_value,
)
from .._values import UNSET, ContentBlock, ErrorInfo, ToolExecutionResult

__all__ = [
    "TOOL_CALL",
    "TOOL_RESULT",
    "MessageSource",
    "Session",
    "SessionEvent",
    "ToolCallData",
    "ToolResultBlock",
    "ToolResultData",
    "ToolResultMessage",
    "fast_call_data",
]

#: Event type of a started call.
TOOL_CALL: Final = "tool/call"
#: Event type of a committed result.
TOOL_RESULT: Final = "tool/result"


@attrs.frozen
class ToolCallData:
    """``tool/call`` data: the call as the model wrote it (``arguments`` is the raw string)."""

    turn: int
    step: int
    call_id: str
    name: str
    arguments: str


@attrs.frozen(kw_only=True)
class MessageSource:
    """Where a user message came from: ``{"kind": "tool", "callId": ...}``."""

    kind: str = "tool"
    call_id: str


@attrs.frozen(kw_only=True)
class ToolResultBlock:
    """One ``tool-result`` content block of a tool-result message."""

    type: str = "tool-result"
    tool_call_id: str
    content: tuple[ContentBlock, ...]
    is_error: bool


@attrs.frozen(kw_only=True)
class ToolResultMessage:
    """The user message carrying a tool result back to the model."""

    role: str = "user"
    source: MessageSource
    content: tuple[ToolResultBlock, ...]


@final
@attrs.frozen(kw_only=True)
class ToolResultData:
    """``tool/result`` data.

    Attributes:
        turn: Turn number.
        step: Step number within the turn.
        message: The tool-result user message.
        error: The result's error identity, only when it has one (``HarnessError`` failures).
        meta: Presentation metadata, ``UNSET`` when the result has none.
    """

    turn: int
    step: int
    message: ToolResultMessage
    error: ErrorInfo | None = None
    meta: Any = UNSET

    @classmethod
    def from_result(
        cls, turn: int, step: int, call_id: str, result: ToolExecutionResult
    ) -> ToolResultData:
        """The data recorded for ``result`` of call ``call_id``."""
        error = result.error
        return _fast_result_data(
            turn,
            step,
            call_id,
            tuple(result.content),
            result.is_error,
            None if error is None else error.info,
            result.meta,
        )


@attrs.frozen
class SessionEvent:
    """One entry of the session log.

    Attributes:
        seq: Position in the log (0-based, dense).
        type: Event type, e.g. ``"tool/call"`` or ``"tool/result"``.
        data: :class:`ToolCallData`, :class:`ToolResultData`, or the JSON data of another type.
        source_event_seqs: Seqs of the events this one answers (a result cites its call).
    """

    seq: int
    type: str
    data: Any
    source_event_seqs: tuple[int, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The wire form (camelCase keys, upstream key order)."""
        return _unstructure_event(self)


# ---------------------------------------------------------------------------------------------
# Hot-path construction
# ---------------------------------------------------------------------------------------------
#
# The pool builds a ToolCallData, a ToolResultData (four objects) and two SessionEvents per call.
# attrs' frozen ``__init__`` sets each field through ``object.__setattr__``; these builders set
# the slots directly (about half the cost). They produce objects equal, field for field, to the
# attrs constructors' (pinned by tests/test_pool_perf.py); none of these classes has a
# validator, converter or post-init hook to bypass.

_new: Final = object.__new__


def _slot_setters(cls: type, *names: str) -> tuple[Any, ...]:
    assert tuple(field.name for field in attrs.fields(cls)) == names, cls
    return tuple(cls.__dict__[name].__set__ for name in names)


_SOURCE_KIND, _SOURCE_CALL_ID = _slot_setters(MessageSource, "kind", "call_id")
_BLOCK_TYPE, _BLOCK_CALL_ID, _BLOCK_CONTENT, _BLOCK_IS_ERROR = _slot_setters(
    ToolResultBlock, "type", "tool_call_id", "content", "is_error"
)
_MESSAGE_ROLE, _MESSAGE_SOURCE, _MESSAGE_CONTENT = _slot_setters(
    ToolResultMessage, "role", "source", "content"
)
_DATA_TURN, _DATA_STEP, _DATA_MESSAGE, _DATA_ERROR, _DATA_META = _slot_setters(
    ToolResultData, "turn", "step", "message", "error", "meta"
)
_CALL_TURN, _CALL_STEP, _CALL_ID, _CALL_NAME, _CALL_ARGUMENTS = _slot_setters(
    ToolCallData, "turn", "step", "call_id", "name", "arguments"
)
_EVENT_SEQ, _EVENT_TYPE, _EVENT_DATA, _EVENT_SOURCES = _slot_setters(
    SessionEvent, "seq", "type", "data", "source_event_seqs"
)


def _fast_result_data(
    turn: int,
    step: int,
    call_id: str,
    content: tuple[ContentBlock, ...],
    is_error: bool,
    error: ErrorInfo | None,
    meta: Any,
) -> ToolResultData:
    source = _new(MessageSource)
    _SOURCE_KIND(source, "tool")
    _SOURCE_CALL_ID(source, call_id)
    block = _new(ToolResultBlock)
    _BLOCK_TYPE(block, "tool-result")
    _BLOCK_CALL_ID(block, call_id)
    _BLOCK_CONTENT(block, content)
    _BLOCK_IS_ERROR(block, is_error)
    message = _new(ToolResultMessage)
    _MESSAGE_ROLE(message, "user")
    _MESSAGE_SOURCE(message, source)
    _MESSAGE_CONTENT(message, (block,))
    data: ToolResultData = _new(ToolResultData)
    _DATA_TURN(data, turn)
    _DATA_STEP(data, step)
    _DATA_MESSAGE(data, message)
    _DATA_ERROR(data, error)
    _DATA_META(data, meta)
    return data


def fast_call_data(turn: int, step: int, call_id: str, name: str, arguments: str) -> ToolCallData:
    data: ToolCallData = _new(ToolCallData)
    _CALL_TURN(data, turn)
    _CALL_STEP(data, step)
    _CALL_ID(data, call_id)
    _CALL_NAME(data, name)
    _CALL_ARGUMENTS(data, arguments)
    return data


_type_of: Final = type


@attrs.define(eq=False)
class Session:
    """An append-only event log."""

    _events: list[SessionEvent] = attrs.field(factory=list, alias="events")

    @property
    def events(self) -> list[SessionEvent]:
        """The events so far, in seq order. Treat as read-only."""
        return self._events

    def append(
        self, type: str, data: Any, *, source_event_seqs: Sequence[int] | None = None
    ) -> SessionEvent:
        """Append an event and return it (its ``seq`` is the next position).

        Args:
            type: The event type. ``"tool/call"`` takes a :class:`ToolCallData` and
                ``"tool/result"`` a :class:`ToolResultData`, and those two classes are the data
                of those two types only; any other type takes lossless JSON data.
            data: The event's data. Custom (JSON) data is kept as a detached copy, so later
                changes to the caller's value do not reach the log; typed data is stored as
                given (it is frozen).
            source_event_seqs: Seqs of the events this one answers.

        Raises:
            TypeError: ``type`` is not a ``str``; a source seq is not an ``int``; the data does
                not fit the event type; a typed field has the wrong type; or custom data holds a
                value JSON has no type for (a set, a tuple, an object, a ``dict``/``list``/``str``
                subclass, a non-``str`` key). The message names the field, e.g.
                ``data.items[2].key``. Nothing is appended.
            ValueError: A number JSON cannot keep (``nan``, ``±inf``, ``-0.0``, an ``int``
                beyond the double range) or a cycle, named the same way.
        """
        # The checks of the hot path; every error is worded by ``_refuse`` (slow path).
        kind = _type_of(data)
        if kind is ToolCallData:
            if type != TOOL_CALL or not _call_data_ok(data):
                _refuse(type, data)
        elif kind is ToolResultData:
            if type != TOOL_RESULT or not _result_data_ok(data):
                _refuse(type, data)
        else:
            if _type_of(type) is not str or type in _TYPED_DATA:
                _refuse(type, data)
            kept = snapshot_json_value(data)  # checks and detaches in one pass
            if kept is NOT_JSON:
                _refuse(type, data)
            data = kept
        sources = None if source_event_seqs is None else _sources(source_event_seqs)
        events = self._events
        event: SessionEvent = _new(SessionEvent)
        _EVENT_SEQ(event, len(events))
        _EVENT_TYPE(event, type)
        _EVENT_DATA(event, data)
        _EVENT_SOURCES(event, sources)
        events.append(event)
        return event

    def to_jsonl(self) -> str:
        """The log as JSON Lines (one compact event per line, each line ending in ``\\n``)."""
        return "".join(js_json(_unstructure_event(event)) + "\n" for event in self._events)

    @classmethod
    def from_jsonl(cls, text: str) -> Session:
        """Rebuild a log from :meth:`to_jsonl` output.

        Lines are separated by ``"\\n"`` only; a line that is empty or only JSON whitespace
        (space, tab, CR) is skipped. Each line is read strictly: exactly the fields the wire form
        writes, with their JSON types (an integer is never read from a string or a float), and
        only data :meth:`append` would accept. Object keys keep the line's order at any depth.

        Raises:
            ValueError: A line is not JSON, not an event, or out of seq order; the message names
                the line and the field (``session line 3: data.step must be an integer, got
                string``).
        """
        session = cls()
        # Only "\n" separates lines: str.splitlines() would also split inside strings that hold
        # U+2028, U+0085 and friends (js_json keeps them raw, as JSON.stringify does).
        for number, line in enumerate(text.split("\n"), 1):
            if not line.strip(_JSON_BLANK):
                continue
            try:
                raw = loads_any_depth(line, js_key_order=False)
            except ValueError:
                raise ValueError(f"session line {number}: not JSON") from None
            try:
                event = _structure_event(raw)
            except _Invalid as invalid:
                raise ValueError(f"session line {number}: {invalid.problem.render()}") from None
            if event.seq != len(session._events):
                raise ValueError(
                    f"session line {number}: seq {event.seq}, expected {len(session._events)}"
                )
            session._events.append(event)
        return session


def _refuse(event_type: Any, data: Any) -> NoReturn:
    """Raise the error for an event :meth:`Session.append` refused (the slow path)."""
    if _type_of(event_type) is not str:
        raise TypeError(f"Session.append: type must be a str, got {_type_of(event_type).__name__}")
    kind = _type_of(data)
    typed = _TYPED_DATA.get(event_type)
    if typed is not None or kind in _TYPED_EVENT:
        if kind is not typed:
            raise TypeError(f"Session.append: {_misfiled(event_type, kind)}")
        problem = _typed_problem(data, kind)
    else:
        problem = _json_problem(data)
    if problem is None:  # pragma: no cover - pinned by test_fast_typed_checks_agree_...
        raise AssertionError("Session.append: the fast check and the field table disagree")
    raise problem.error(f"Session.append: {problem.render('data')}")


def _sources(seqs: Sequence[int]) -> tuple[int, ...]:
    sources = seqs if _type_of(seqs) is tuple else _tuple_of(seqs)
    for index, seq in enumerate(sources):
        if _type_of(seq) is not int:
            raise TypeError(
                f"Session.append: source_event_seqs[{index}] must be an int, "
                f"got {_type_of(seq).__name__}"
            )
    return sources  # type: ignore[return-value]


def _tuple_of(seqs: Sequence[int]) -> tuple[int, ...]:
    try:
        return tuple(seqs)
    except TypeError:
        raise TypeError(
            "Session.append: source_event_seqs must be a sequence of ints, "
            f"got {_type_of(seqs).__name__}"
        ) from None


def _misfiled(event_type: str, kind: type) -> str:
    typed = _TYPED_DATA.get(event_type)
    if typed is not None:
        return f"{event_type} data must be a {typed.__name__}, got {kind.__name__}"
    return (
        f"a {kind.__name__} is the data of {_TYPED_EVENT[kind]} events only, not of {event_type!r}"
    )


# ---------------------------------------------------------------------------------------------
# What the log can keep: lossless JSON, and typed data with exactly typed fields
# ---------------------------------------------------------------------------------------------

_JSON_BLANK: Final = " \t\r\n"
_NAME: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


@attrs.define
class _Problem:
    """Why a value cannot be kept, and where: path pieces collected innermost first."""

    error: type[Exception]
    message: str
    where: list[str] = attrs.field(factory=list)

    def at(self, piece: str) -> _Problem:
        self.where.append(piece)
        return self

    def render(self, root: str = "") -> str:
        path = (root + "".join(reversed(self.where))).removeprefix(".")
        return f"{path} {self.message}" if path else self.message


class _Invalid(Exception):
    """A wire line that is not an event :meth:`Session.to_jsonl` could have written."""

    def __init__(self, problem: _Problem) -> None:
        super().__init__(problem.render())
        self.problem = problem


def _piece(key: object) -> str:
    if _type_of(key) is int:
        return f"[{key}]"
    text = str(key)
    return f".{text}" if _NAME.fullmatch(text) else f"[{js_json(text)}]"


def _entries(container: Any) -> Iterator[tuple[Any, Any]]:
    return iter(container.items()) if _type_of(container) is dict else enumerate(container)


# Returned by ``_leaf_problem`` for a ``dict`` or ``list``: not a problem but a container to walk
# into. Compared by identity only; never located or returned by ``_json_problem``.
_CONTAINER: Final = _Problem(ValueError, "is a container")


def _leaf_problem(value: Any, wire: bool) -> _Problem | None:
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
        return _Problem(ValueError, f"is {noun} beyond the double range, not a finite JSON number")
    if kind is float:
        if math.isnan(value):
            return _Problem(ValueError, "is NaN, not a finite JSON number")
        if math.isinf(value):
            name = "Infinity" if value > 0 else "-Infinity"
            return _Problem(ValueError, f"is {name}, not a finite JSON number")
        if value == 0.0 and math.copysign(1.0, value) < 0:
            literal = "-0" if wire else "-0.0"
            return _Problem(
                ValueError, f"is {literal}, which JSON cannot keep (it is written as 0)"
            )
        return None
    hint = ""
    if kind is tuple:
        hint = " (use a list)"
    else:
        for base in (dict, list, str):
            if issubclass(kind, base):
                hint = f" (only an exact {base.__name__} is)"
                break
    return _Problem(TypeError, f"is not JSON: type {kind.__name__}{hint}")


def _json_problem(value: Any, *, wire: bool = False) -> _Problem | None:
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

    def located(problem: _Problem, *last: object) -> _Problem:
        for key in reversed([*keys, *last]):
            problem.at(_piece(key))
        return problem

    while stack:
        container, items = stack[-1]
        is_dict = _type_of(container) is dict
        for key, child in items:
            if is_dict and _type_of(key) is not str:
                name = _type_of(key).__name__
                problem = _Problem(TypeError, f"has the key {key!r} ({name}); JSON keys are str")
                return located(problem)
            found = _leaf_problem(child, wire)
            if found is None:
                continue
            if found is not _CONTAINER:
                return located(found, key)
            if id(child) in ancestors:
                return located(_Problem(ValueError, "contains itself (a cycle)"), key)
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


# Field kinds of the typed data (besides ``int``, ``str``, ``bool`` and the typed classes):
_CONTENT: Final = "content"  # a tuple of content blocks: lossless JSON (usually dicts)
_JSON: Final = "json"  # any lossless JSON value
_REQUIRED: Final = object()  # a field the wire form always writes


@attrs.frozen
class _Field:
    name: str
    key: str  # the wire key
    kind: Any  # int, str, bool, _CONTENT, _JSON, a typed class, or (a typed class,): a tuple of it
    absent: Any  # the value written as an absent key, or _REQUIRED


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# Fields whose wire value is JSON passed through untouched, and fields omitted when absent.
_PASSTHROUGH: Final = {(ToolResultBlock, "content"), (ToolResultData, "meta")}
_OMIT_IF_DEFAULT: Final = {(ToolResultData, "error"), (ToolResultData, "meta")}

_WIRE: Final[dict[type, tuple[_Field, ...]]] = {}


def _wire(cls: type, **kinds: Any) -> None:
    """Record ``cls``'s wire fields: the attrs fields in order, with their kinds."""
    fields = attrs.fields(cls)
    assert [field.name for field in fields] == list(kinds), cls
    _WIRE[cls] = tuple(
        _Field(
            field.name,
            _camel(field.name),
            kinds[field.name],
            field.default if (cls, field.name) in _OMIT_IF_DEFAULT else _REQUIRED,
        )
        for field in fields
    )


_wire(ErrorInfo, name=str, code=str)
_wire(MessageSource, kind=str, call_id=str)
_wire(ToolResultBlock, type=str, tool_call_id=str, content=_CONTENT, is_error=bool)
_wire(ToolResultMessage, role=str, source=MessageSource, content=(ToolResultBlock,))
_wire(ToolResultData, turn=int, step=int, message=ToolResultMessage, error=ErrorInfo, meta=_JSON)
_wire(ToolCallData, turn=int, step=int, call_id=str, name=str, arguments=str)

_PYTHON_NAMES: Final = {int: "an int", str: "a str", bool: "a bool"}


def _typed_problem(value: Any, cls: type) -> _Problem | None:
    """The first field of typed ``value`` the wire form could not give back, or ``None``.

    Nothing is formatted unless a problem is found (this runs for every call the pool logs).
    """
    for field in _WIRE[cls]:
        item = getattr(value, field.name)
        if item is field.absent:
            continue
        problem = _kind_problem(item, field.kind)
        if problem is not None:
            return problem.at("." + field.key)
    return None


def _kind_problem(item: Any, kind: Any) -> _Problem | None:
    got = _type_of(item)
    if kind is int or kind is str or kind is bool:
        if got is kind:
            return None
        return _Problem(TypeError, f"must be {_PYTHON_NAMES[kind]}, got {got.__name__}")
    if kind is _JSON:
        return None if is_json_value(item) else _json_problem(item)
    if kind is _CONTENT or _type_of(kind) is tuple:
        if got is not tuple:
            return _Problem(TypeError, f"must be a tuple, got {got.__name__}")
        for index, element in enumerate(item):
            if kind is _CONTENT:
                # A block is whatever the tool rendered (upstream's blocks are objects, but the
                # pipeline only asks for lossless JSON): a stricter log would lose such a result.
                if is_json_value(element):
                    continue
                problem: _Problem | None = _json_problem(element)
            else:
                problem = _kind_problem(element, kind[0])
            if problem is not None:
                return problem.at(f"[{index}]")
        return None
    if got is not kind:
        return _Problem(TypeError, f"must be a {kind.__name__}, got {got.__name__}")
    return _typed_problem(item, kind)


# The same rules unrolled for the two typed data of the hot path: ``True`` exactly when
# ``_typed_problem`` finds nothing (pinned by tests/test_session.py), in a fraction of its time.


def _flat_block_ok(block: Any) -> bool:
    """A content block: lossless JSON (flat dict blocks, the usual case, checked in place)."""
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


def _call_data_ok(data: ToolCallData) -> bool:
    return (
        _type_of(data.turn) is int
        and _type_of(data.step) is int
        and _type_of(data.call_id) is str
        and _type_of(data.name) is str
        and _type_of(data.arguments) is str
    )


def _result_data_ok(data: ToolResultData) -> bool:
    if _type_of(data.turn) is not int or _type_of(data.step) is not int:
        return False
    message = data.message
    if _type_of(message) is not ToolResultMessage or _type_of(message.role) is not str:
        return False
    source = message.source
    if (
        _type_of(source) is not MessageSource
        or _type_of(source.kind) is not str
        or _type_of(source.call_id) is not str
    ):
        return False
    blocks = message.content
    if _type_of(blocks) is not tuple:
        return False
    for block in blocks:
        if (
            _type_of(block) is not ToolResultBlock
            or _type_of(block.type) is not str
            or _type_of(block.tool_call_id) is not str
            or _type_of(block.is_error) is not bool
            or _type_of(block.content) is not tuple
        ):
            return False
        for item in block.content:
            if not _flat_block_ok(item):
                return False
    error = data.error
    if error is not None and (
        _type_of(error) is not ErrorInfo
        or _type_of(error.name) is not str
        or _type_of(error.code) is not str
    ):
        return False
    meta = data.meta
    return meta is UNSET or is_json_value(meta)


_TYPED_OK: Final[dict[type, Any]] = {ToolCallData: _call_data_ok, ToolResultData: _result_data_ok}


# ---------------------------------------------------------------------------------------------
# The wire form
# ---------------------------------------------------------------------------------------------


def _json_passthrough(value: Any) -> Any:
    # Content and meta are lossless JSON already (checked on append); cattrs would walk them
    # recursively, which is both slower and depth-limited.
    return value


_converter: Final = cattrs.Converter()
_converter.register_unstructure_hook(tuple, list)


def _register(cls: type) -> None:
    unstructure: dict[str, Any] = {}
    for field in attrs.fields(cls):
        key = (cls, field.name)
        passthrough = key in _PASSTHROUGH
        unstructure[field.name] = cattrs.override(
            rename=_camel(field.name),
            omit_if_default=key in _OMIT_IF_DEFAULT,
            unstruct_hook=(list if field.name == "content" else _json_passthrough)
            if passthrough
            else None,
        )
    _converter.register_unstructure_hook(
        cls, make_dict_unstructure_fn(cls, _converter, **unstructure)
    )


for _cls in (ErrorInfo, MessageSource, ToolResultBlock, ToolResultMessage, ToolCallData):
    _register(_cls)
_register(ToolResultData)

_TYPED_DATA: Final[dict[str, type]] = {TOOL_CALL: ToolCallData, TOOL_RESULT: ToolResultData}
_TYPED_EVENT: Final[dict[type, str]] = {typed: name for name, typed in _TYPED_DATA.items()}


def _unstructure_event(event: SessionEvent) -> dict[str, Any]:
    out: dict[str, Any] = {"seq": event.seq, "type": event.type}
    if event.source_event_seqs is not None:
        out["sourceEventSeqs"] = list(event.source_event_seqs)
    data = event.data
    out["data"] = _converter.unstructure(data) if attrs.has(type(data)) else data
    return out


# Reading the wire form back: strict, by the same field table (``_WIRE``).

_JS_NAMES: Final = {int: "an integer", str: "a string", bool: "a boolean"}


def _js_type(value: object) -> str:
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


def _read(raw: Any, cls: type) -> Any:
    """Typed ``cls`` from its wire object; raises :class:`_Invalid` naming the field."""
    if _type_of(raw) is not dict:
        raise _Invalid(_Problem(ValueError, f"must be an object, got {_js_type(raw)}"))
    fields = _WIRE[cls]
    keys = {field.key for field in fields}
    for key in raw:
        if key not in keys:
            raise _Invalid(_Problem(ValueError, f"has an unknown field {js_json(key)}"))
    values: dict[str, Any] = {}
    for field in fields:
        if field.key not in raw:
            if field.absent is _REQUIRED:
                raise _Invalid(_Problem(ValueError, "is missing").at("." + field.key))
            continue
        try:
            values[field.name] = _read_kind(raw[field.key], field.kind)
        except _Invalid as invalid:
            invalid.problem.at("." + field.key)
            raise
    return cls(**values)


def _read_kind(raw: Any, kind: Any) -> Any:
    got = _type_of(raw)
    if kind is int or kind is str or kind is bool:
        if got is not kind:
            raise _Invalid(_Problem(ValueError, f"must be {_JS_NAMES[kind]}, got {_js_type(raw)}"))
        return raw
    if kind is _JSON:
        return raw  # the whole line was checked to be lossless JSON
    if kind is _CONTENT or _type_of(kind) is tuple:
        if got is not list:
            raise _Invalid(_Problem(ValueError, f"must be an array, got {_js_type(raw)}"))
        items: list[Any] = []
        for index, element in enumerate(raw):
            try:
                if kind is _CONTENT:
                    if _type_of(element) is not dict:
                        raise _Invalid(
                            _Problem(ValueError, f"must be an object, got {_js_type(element)}")
                        )
                    items.append(element)
                else:
                    items.append(_read(element, kind[0]))
            except _Invalid as invalid:
                invalid.problem.at(f"[{index}]")
                raise
        return tuple(items)
    return _read(raw, kind)


#: ``at`` is the append time a durable log (``DurableSession``) records beside the wire form; a
#: plain session reads it (it must be a number) and drops it.
_EVENT_KEYS: Final = ("seq", "type", "sourceEventSeqs", "data", "at")


def _structure_event(raw: Any) -> SessionEvent:
    if _type_of(raw) is not dict:
        raise _Invalid(_Problem(ValueError, f"an event must be an object, got {_js_type(raw)}"))
    for key in raw:
        if key not in _EVENT_KEYS:
            raise _Invalid(_Problem(ValueError, f"the event has an unknown field {js_json(key)}"))
    for key in ("seq", "type", "data"):
        if key not in raw:
            raise _Invalid(_Problem(ValueError, "is missing").at(key))
    seq, kind, data = raw["seq"], raw["type"], raw["data"]
    if _type_of(seq) is not int:
        raise _Invalid(_Problem(ValueError, f"must be an integer, got {_js_type(seq)}").at("seq"))
    if _type_of(kind) is not str:
        raise _Invalid(_Problem(ValueError, f"must be a string, got {_js_type(kind)}").at("type"))
    if "at" in raw and _type_of(raw["at"]) not in (int, float):
        raise _Invalid(
            _Problem(ValueError, f"must be a number, got {_js_type(raw['at'])}").at("at")
        )
    sources = None
    if "sourceEventSeqs" in raw:
        sources = _read_sources(raw["sourceEventSeqs"])
    if not is_json_value(raw):
        problem = _json_problem(raw, wire=True)
        assert problem is not None
        raise _Invalid(problem)
    typed = _TYPED_DATA.get(kind)
    if typed is not None:
        try:
            data = _read(data, typed)
        except _Invalid as invalid:
            invalid.problem.at("data")
            raise
    return SessionEvent(seq, kind, data, sources)


def _read_sources(raw: Any) -> tuple[int, ...]:
    where = "sourceEventSeqs"
    if _type_of(raw) is not list:
        raise _Invalid(_Problem(ValueError, f"must be an array, got {_js_type(raw)}").at(where))
    for index, seq in enumerate(raw):
        if _type_of(seq) is not int:
            problem = _Problem(ValueError, f"must be an integer, got {_js_type(seq)}")
            raise _Invalid(problem.at(f"[{index}]").at(where))
    return tuple(raw)
