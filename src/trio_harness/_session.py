"""The session log: an append-only list of events, and its JSON Lines wire form.

The pool records two event types: ``tool/call`` when a call starts and ``tool/result`` when its
result is committed (citing the call's seq in ``source_event_seqs``). Their ``data`` are typed
values (:class:`ToolCallData`, :class:`ToolResultData`); any other event type carries whatever
JSON ``data`` the application appends. A private cattrs ``Converter`` owns the wire form:
camelCase keys in upstream's order, ``error``/``meta`` only when present, ``sourceEventSeqs``
only when the event cites sources.

Appending builds the typed value only; the wire form is produced on demand (``to_json``), so
logging costs two small allocations per call on the hot path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, final

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn

from ._arguments import loads_any_depth
from ._json import js_json
from ._values import UNSET, ContentBlock, ErrorInfo, ToolExecutionResult

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
        """Append an event and return it (its ``seq`` is the next position)."""
        events = self._events
        event: SessionEvent = _new(SessionEvent)
        _EVENT_SEQ(event, len(events))
        _EVENT_TYPE(event, type)
        _EVENT_DATA(event, data)
        _EVENT_SOURCES(event, None if source_event_seqs is None else tuple(source_event_seqs))
        events.append(event)
        return event

    def to_jsonl(self) -> str:
        """The log as JSON Lines (one compact event per line, each line ending in ``\\n``)."""
        return "".join(js_json(_unstructure_event(event)) + "\n" for event in self._events)

    @classmethod
    def from_jsonl(cls, text: str) -> Session:
        """Rebuild a log from :meth:`to_jsonl` output (blank lines ignored).

        Raises:
            ValueError: A line is not JSON, not an event, or out of seq order.
        """
        session = cls()
        # Only "\n" separates lines: str.splitlines() would also split inside strings that hold
        # U+2028, U+0085 and friends (js_json keeps them raw, as JSON.stringify does).
        for number, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                raw = loads_any_depth(line, js_key_order=False)
                event = _structure_event(raw)
            except (ValueError, TypeError, KeyError, cattrs.BaseValidationError) as exc:
                raise ValueError(f"session line {number}: {exc}") from None
            if event.seq != len(session._events):
                raise ValueError(
                    f"session line {number}: seq {event.seq}, expected {len(session._events)}"
                )
            session._events.append(event)
        return session


# ---------------------------------------------------------------------------------------------
# The wire form
# ---------------------------------------------------------------------------------------------


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _json_passthrough(value: Any) -> Any:
    # Content and meta are lossless JSON already (materialized by the runtime); cattrs would
    # walk them recursively, which is both slower and depth-limited.
    return value


def _json_tuple(value: Any, _: Any = None) -> Any:
    return tuple(value)


_converter: Final = cattrs.Converter()
_converter.register_unstructure_hook(tuple, list)

# Fields whose wire value is JSON passed through untouched, and fields omitted when absent.
_PASSTHROUGH: Final = {(ToolResultBlock, "content"), (ToolResultData, "meta")}
_OMIT_IF_DEFAULT: Final = {(ToolResultData, "error"), (ToolResultData, "meta")}


def _register(cls: type) -> None:
    unstructure: dict[str, Any] = {}
    structure: dict[str, Any] = {}
    for field in attrs.fields(cls):
        key = (cls, field.name)
        passthrough = key in _PASSTHROUGH
        omit = key in _OMIT_IF_DEFAULT
        rename = _camel(field.name)
        unstructure[field.name] = cattrs.override(
            rename=rename,
            omit_if_default=omit,
            unstruct_hook=(list if field.name == "content" else _json_passthrough)
            if passthrough
            else None,
        )
        structure[field.name] = cattrs.override(
            rename=rename,
            struct_hook=(_json_tuple if field.name == "content" else lambda v, _: v)
            if passthrough
            else None,
        )
    _converter.register_unstructure_hook(
        cls, make_dict_unstructure_fn(cls, _converter, **unstructure)
    )
    _converter.register_structure_hook(cls, make_dict_structure_fn(cls, _converter, **structure))


for _cls in (ErrorInfo, MessageSource, ToolResultBlock, ToolResultMessage, ToolCallData):
    _register(_cls)
_register(ToolResultData)

_TYPED_DATA: Final[dict[str, type]] = {TOOL_CALL: ToolCallData, TOOL_RESULT: ToolResultData}


def _unstructure_event(event: SessionEvent) -> dict[str, Any]:
    out: dict[str, Any] = {"seq": event.seq, "type": event.type}
    if event.source_event_seqs is not None:
        out["sourceEventSeqs"] = list(event.source_event_seqs)
    data = event.data
    out["data"] = _converter.unstructure(data) if attrs.has(type(data)) else data
    return out


def _structure_event(raw: Any) -> SessionEvent:
    if not isinstance(raw, dict):
        raise TypeError("event is not an object")
    seq, kind, data = raw["seq"], raw["type"], raw["data"]
    if type(seq) is not int or type(kind) is not str:
        raise TypeError("event seq/type have the wrong type")
    typed = _TYPED_DATA.get(kind)
    if typed is not None:
        data = _converter.structure(data, typed)
    sources = raw.get("sourceEventSeqs")
    return SessionEvent(seq, kind, data, None if sources is None else tuple(sources))
