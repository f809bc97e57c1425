"""The typed events of the session log and their wire form (the writer).

The pool records two event types: ``tool/call`` when a call starts and ``tool/result`` when its
result is committed (citing the call's seq in ``source_event_seqs``). Their ``data`` are typed
values (:class:`ToolCallData`, :class:`ToolResultData`); any other event type carries whatever
JSON ``data`` the application appends.

The field table (:data:`WIRE`) says, for every typed class, its wire keys (camelCase, in
upstream's order), their kinds and which are omitted when absent; a private cattrs ``Converter``
built from it writes the wire form (``error``/``meta`` only when present, ``sourceEventSeqs`` only
when the event cites sources), and :mod:`.read` reads it back by the same table.
"""

from __future__ import annotations

from typing import Any, Final, final

import attrs
import cattrs
from cattrs.gen import make_dict_unstructure_fn

from .._values import UNSET, ContentBlock, ErrorInfo, ToolExecutionResult, slot_builder

__all__ = [
    "CONTENT",
    "JSON",
    "REQUIRED",
    "TOOL_CALL",
    "TOOL_RESULT",
    "TYPED_DATA",
    "TYPED_EVENT",
    "WIRE",
    "MessageSource",
    "SessionEvent",
    "ToolCallData",
    "ToolResultBlock",
    "ToolResultData",
    "ToolResultMessage",
    "WireField",
    "fast_call_data",
    "fast_event",
    "fast_result_data",
    "unstructure_event",
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
        return fast_result_data(
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
        return unstructure_event(self)


# ---------------------------------------------------------------------------------------------
# Hot-path construction
# ---------------------------------------------------------------------------------------------
#
# The pool builds a ToolCallData, a ToolResultData (four objects) and two SessionEvents per call.
# attrs' frozen ``__init__`` sets each field through ``object.__setattr__``; these builders
# assign the slots through ``slot_builder``'s makers (a third of the cost). They produce objects
# equal, field for field, to the attrs constructors' (pinned by tests/pool/test_fastpaths.py);
# none of these classes has a validator, converter or post-init hook to bypass.


def _fields(cls: type, *names: str) -> None:
    assert tuple(field.name for field in attrs.fields(cls)) == names, cls


_fields(MessageSource, "kind", "call_id")
_fields(ToolResultBlock, "type", "tool_call_id", "content", "is_error")
_fields(ToolResultMessage, "role", "source", "content")
_fields(ToolResultData, "turn", "step", "message", "error", "meta")
_fields(ToolCallData, "turn", "step", "call_id", "name", "arguments")
_fields(SessionEvent, "seq", "type", "data", "source_event_seqs")


def _init_source(self: Any, call_id: str) -> None:
    self.kind = "tool"
    self.call_id = call_id
    self.__class__ = MessageSource


def _init_block(self: Any, call_id: str, content: tuple[ContentBlock, ...], is_error: bool) -> None:
    self.type = "tool-result"
    self.tool_call_id = call_id
    self.content = content
    self.is_error = is_error
    self.__class__ = ToolResultBlock


def _init_message(self: Any, source: MessageSource, block: ToolResultBlock) -> None:
    self.role = "user"
    self.source = source
    self.content = (block,)
    self.__class__ = ToolResultMessage


def _init_result_data(
    self: Any, turn: int, step: int, message: ToolResultMessage, error: ErrorInfo | None, meta: Any
) -> None:
    self.turn = turn
    self.step = step
    self.message = message
    self.error = error
    self.meta = meta
    self.__class__ = ToolResultData


def _init_call_data(
    self: Any, turn: int, step: int, call_id: str, name: str, arguments: str
) -> None:
    self.turn = turn
    self.step = step
    self.call_id = call_id
    self.name = name
    self.arguments = arguments
    self.__class__ = ToolCallData


def _init_event(self: Any, seq: int, type: str, data: Any, sources: tuple[int, ...] | None) -> None:
    self.seq = seq
    self.type = type
    self.data = data
    self.source_event_seqs = sources
    self.__class__ = SessionEvent


_new_source: Final = slot_builder(MessageSource, _init_source)
_new_block: Final = slot_builder(ToolResultBlock, _init_block)
_new_message: Final = slot_builder(ToolResultMessage, _init_message)
_new_result_data: Final = slot_builder(ToolResultData, _init_result_data)
#: ``ToolCallData(turn, step, call_id, name, arguments)``, built by a ``slot_builder`` maker.
fast_call_data: Final = slot_builder(ToolCallData, _init_call_data)
#: ``SessionEvent(seq, type, data, sources)``, built by a ``slot_builder`` maker (no checks).
fast_event: Final = slot_builder(SessionEvent, _init_event)


def fast_result_data(
    turn: int,
    step: int,
    call_id: str,
    content: tuple[ContentBlock, ...],
    is_error: bool,
    error: ErrorInfo | None,
    meta: Any,
) -> ToolResultData:
    """The ``tool/result`` data of one result block, built by ``slot_builder``'s makers."""
    return _new_result_data(
        turn,
        step,
        _new_message(_new_source(call_id), _new_block(call_id, content, is_error)),
        error,
        meta,
    )


# ---------------------------------------------------------------------------------------------
# The field table
# ---------------------------------------------------------------------------------------------

#: Field kinds of the typed data (besides ``int``, ``str``, ``bool`` and the typed classes):
CONTENT: Final = "content"  # a tuple of content blocks: lossless JSON (usually dicts)
JSON: Final = "json"  # any lossless JSON value
REQUIRED: Final = object()  # a field the wire form always writes


@attrs.frozen
class WireField:
    """One field of a typed class on the wire."""

    name: str
    key: str  # the wire key
    kind: Any  # int, str, bool, CONTENT, JSON, a typed class, or (a typed class,): a tuple of it
    absent: Any  # the value written as an absent key, or REQUIRED


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# Fields whose wire value is JSON passed through untouched, and fields omitted when absent.
_PASSTHROUGH: Final = {(ToolResultBlock, "content"), (ToolResultData, "meta")}
_OMIT_IF_DEFAULT: Final = {(ToolResultData, "error"), (ToolResultData, "meta")}

WIRE: Final[dict[type, tuple[WireField, ...]]] = {}


def _wire(cls: type, **kinds: Any) -> None:
    """Record ``cls``'s wire fields: the attrs fields in order, with their kinds."""
    fields = attrs.fields(cls)
    assert [field.name for field in fields] == list(kinds), cls
    WIRE[cls] = tuple(
        WireField(
            field.name,
            _camel(field.name),
            kinds[field.name],
            field.default if (cls, field.name) in _OMIT_IF_DEFAULT else REQUIRED,
        )
        for field in fields
    )


_wire(ErrorInfo, name=str, code=str)
_wire(MessageSource, kind=str, call_id=str)
_wire(ToolResultBlock, type=str, tool_call_id=str, content=CONTENT, is_error=bool)
_wire(ToolResultMessage, role=str, source=MessageSource, content=(ToolResultBlock,))
_wire(ToolResultData, turn=int, step=int, message=ToolResultMessage, error=ErrorInfo, meta=JSON)
_wire(ToolCallData, turn=int, step=int, call_id=str, name=str, arguments=str)


#: The data type of each typed event type, and the event type of each typed data class.
TYPED_DATA: Final[dict[str, type]] = {TOOL_CALL: ToolCallData, TOOL_RESULT: ToolResultData}
TYPED_EVENT: Final[dict[type, str]] = {typed: name for name, typed in TYPED_DATA.items()}


# ---------------------------------------------------------------------------------------------
# The writer
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


def unstructure_event(event: SessionEvent) -> dict[str, Any]:
    """The wire form of ``event`` (a fresh dict; typed data unstructured, JSON data as kept)."""
    out: dict[str, Any] = {"seq": event.seq, "type": event.type}
    if event.source_event_seqs is not None:
        out["sourceEventSeqs"] = list(event.source_event_seqs)
    data = event.data
    out["data"] = _converter.unstructure(data) if attrs.has(type(data)) else data
    return out
