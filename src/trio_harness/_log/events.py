"""The typed events of the session log and their wire form (the writer).

The pool records two event types: ``tool/call`` when a call starts and ``tool/result`` when its
result is committed (citing the call's seq in ``source_event_seqs``). Their ``data`` are typed
values (:class:`ToolCallData`, :class:`ToolResultData`); any other event type carries whatever
JSON ``data`` the application appends.

The field table (:data:`WIRE`) says, for every typed class, its wire keys (camelCase, in
upstream's order), their kinds and which are omitted when absent; a private cattrs ``Converter``
built from it writes the wire form (``error``/``meta`` only when present, ``sourceEventSeqs`` only
when the event cites sources), and :mod:`.read` reads it back by the same table. A durable log
writes the lines of typed data with :func:`typed_json`, which gives the JSON text of that wire
form without building its dicts (the same bytes, pinned by ``tests/log/test_encoding.py``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, final

import attrs

from .._values import UNSET, ContentBlock, ErrorInfo, ToolExecutionResult

if TYPE_CHECKING:
    import cattrs

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
    "c_json",
    "typed_json",
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
        block = ToolResultBlock(
            tool_call_id=call_id, content=tuple(result.content), is_error=result.is_error
        )
        return cls(
            turn=turn,
            step=step,
            message=ToolResultMessage(source=MessageSource(call_id=call_id), content=(block,)),
            error=None if error is None else error.info,
            meta=result.meta,
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


def _register(converter: cattrs.Converter, cls: type) -> None:
    import cattrs
    from cattrs.gen import make_dict_unstructure_fn

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
    converter.register_unstructure_hook(
        cls, make_dict_unstructure_fn(cls, converter, **unstructure)
    )


@functools.cache
def _converter() -> cattrs.Converter:
    """The writer's private converter, built on the first typed event written: cattrs and the
    generated unstructure functions are most of what importing this module would cost (issue 30).
    """
    import cattrs

    converter = cattrs.Converter()
    converter.register_unstructure_hook(tuple, list)
    for cls in (ErrorInfo, MessageSource, ToolResultBlock, ToolResultMessage, ToolCallData):
        _register(converter, cls)
    _register(converter, ToolResultData)
    return converter


def unstructure_event(event: SessionEvent) -> dict[str, Any]:
    """The wire form of ``event`` (a fresh dict; typed data unstructured, JSON data as kept)."""
    out: dict[str, Any] = {"seq": event.seq, "type": event.type}
    if event.source_event_seqs is not None:
        out["sourceEventSeqs"] = list(event.source_event_seqs)
    data = event.data
    out["data"] = _converter().unstructure(data) if attrs.has(type(data)) else data
    return out


# ---------------------------------------------------------------------------------------------
# The writer's fast path: JSON text without the wire dicts
# ---------------------------------------------------------------------------------------------

# The C encoder writes exactly what ``js_json`` (JavaScript's JSON.stringify) writes for ``str``
# keys, strings without lone surrogates (they fail when the text is encoded as UTF-8), integers
# below 10**21 in magnitude, and floats that are not integral and need no exponent in Python
# (``repr`` is then JavaScript's text, see ``js_number``): the values the log calls *plain*
# (``session.json_verdict``). A tuple is written as a list, as the converter does.
_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)


def _c_encode() -> Callable[[Any], str]:
    # What ``_ENCODER.encode`` runs for a dict, its C encoder made once instead of at every call.
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - not CPython
        return _ENCODER.encode
    iterencode = make(
        None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )

    def encode(value: Any) -> str:
        return "".join(iterencode(value, 0))

    return encode


#: The C encoder: ``js_json(value)`` for a plain value (see above); raises ``TypeError``,
#: ``ValueError`` or ``RecursionError`` for some values that are not.
c_json: Final = _c_encode()
# A JSON string literal, as the C encoder writes one (a lone surrogate stays raw).
_string: Final = json.encoder.encode_basestring


# The wire text of the typed data, written directly: what ``c_json`` writes for the converter's
# dict (the same keys in the same order, pinned by tests/log/test_encoding.py against the field
# table), without building the dicts, in about a third of the time (issue 30: the pool logs two
# typed events a call). Only for data ``Session.append`` accepted whose numbers are plain
# (``session.typed_plain``): its ints are then ``str``-exact and its JSON parts plain.


def _call_json(data: ToolCallData) -> str:
    return (
        f'{{"turn":{data.turn},"step":{data.step},"callId":{_string(data.call_id)},'
        f'"name":{_string(data.name)},"arguments":{_string(data.arguments)}}}'
    )


def _block_json(block: ToolResultBlock) -> str:
    error = "true" if block.is_error else "false"
    return (
        f'{{"type":{_string(block.type)},"toolCallId":{_string(block.tool_call_id)},'
        f'"content":{c_json(block.content)},"isError":{error}}}'
    )


def _result_json(data: ToolResultData) -> str:
    message = data.message
    source = message.source
    blocks = message.content
    content = _block_json(blocks[0]) if len(blocks) == 1 else ",".join(map(_block_json, blocks))
    text = (
        f'{{"turn":{data.turn},"step":{data.step},"message":{{"role":{_string(message.role)},'
        f'"source":{{"kind":{_string(source.kind)},"callId":{_string(source.call_id)}}},'
        f'"content":[{content}]}}'
    )
    error = data.error
    if error is not None:
        text += f',"error":{{"name":{_string(error.name)},"code":{_string(error.code)}}}'
    meta = data.meta
    if meta is not UNSET:
        text += ',"meta":' + c_json(meta)
    return text + "}"


def typed_json(data: ToolCallData | ToolResultData) -> str:
    """``js_json`` of the wire form of typed data whose numbers are plain (see above), except
    that a lone surrogate stays raw (encoding the text as UTF-8 fails then)."""
    return _call_json(data) if isinstance(data, ToolCallData) else _result_json(data)
