"""Shared plumbing of the provider adapters: reading SDK objects or dicts, tool lists, result text.

Provider adapters never import an SDK. A provider object is read through :func:`field`, which
accepts both SDK models (attribute access) and plain ``dict`` s, so the same code serves responses
from the SDK, from raw HTTP, and from recorded JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, Protocol

import attrs
import trio

from .._apps import report_text
from .._json import js_json
from .._pool import StepResult, ToolCallBlock
from .._values import ToolDefinition, ToolExecutionResult

__all__ = [
    "CUT",
    "TOOL_NAME_PATTERN",
    "ProviderError",
    "ProviderResponseError",
    "ProviderStreamError",
    "SseEvent",
    "ToolSource",
    "arguments_text",
    "base64_size",
    "block_text",
    "check_tool_names",
    "dump",
    "feed_stream",
    "field",
    "js_argument_text",
    "media_note",
    "result_text",
    "split_cut",
    "sse_events",
    "stream_error",
    "text_feed",
    "tool_specs",
]

_MISSING: Any = object()
# JavaScript numbers are doubles: an integer beyond 2**53 is not kept exactly by JSON.parse.
_MAX_EXACT_INT = 2**53


class _HasSchemas(Protocol):
    def schemas(self) -> list[dict[str, Any]]: ...


#: What the ``tools`` adapters accept: a runtime (anything with ``schemas()``), or a sequence of
#: ``ToolDefinition`` s or ``{"name", "description", "parameters"}`` dicts.
ToolSource = _HasSchemas | Sequence[ToolDefinition | dict[str, Any]]

#: The neutral finish reasons after which a reply's tool calls are not run (the reply is not
#: complete): every adapter and ready model reads this one set.
CUT: Final = frozenset({"length", "content_filter", "refusal", "incomplete"})


def split_cut(
    finish: object, calls: list[ToolCallBlock]
) -> tuple[list[ToolCallBlock], list[ToolCallBlock]]:
    """``(calls to run, calls cut)``: a reply cut short (its finish in :data:`CUT`) runs none of
    its calls; they are reported in ``ModelStep.cut_calls`` instead."""
    if finish in CUT and calls:
        return [], calls
    return calls, []


#: The tool names OpenAI (Chat Completions, Responses) and Anthropic accept.
TOOL_NAME_PATTERN: Final = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for a mapping, ``obj.name`` otherwise; ``default`` when absent or ``None``."""
    value = obj.get(name, _MISSING) if isinstance(obj, dict) else getattr(obj, name, _MISSING)
    return default if value is _MISSING or value is None else value


def dump(obj: Any) -> dict[str, Any]:
    """A plain ``dict`` of an SDK model (``model_dump`` without ``None`` fields) or a dict copy."""
    if isinstance(obj, dict):
        return dict(obj)
    model_dump = getattr(obj, "model_dump", None)
    if model_dump is None:
        raise TypeError(f"expected a dict or an SDK model, got {type(obj).__name__}")
    out: dict[str, Any] = model_dump(mode="json", exclude_none=True)
    return out


def tool_specs(tools: ToolSource) -> list[dict[str, Any]]:
    """The neutral tool list (``name``, ``description``, ``parameters``) of ``tools``."""
    schemas = getattr(tools, "schemas", None)
    if callable(schemas):
        listed: list[dict[str, Any]] = schemas()
        return listed
    out: list[dict[str, Any]] = []
    for tool in tools:  # type: ignore[union-attr]
        if isinstance(tool, ToolDefinition):
            out.append(
                {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
            )
        elif isinstance(tool, dict):
            out.append(
                {
                    "name": tool["name"],
                    "description": tool.get("description", ""),
                    "parameters": tool["parameters"],
                }
            )
        else:
            raise TypeError(f"expected a ToolDefinition or a dict, got {type(tool).__name__}")
    return out


def check_tool_names(specs: Sequence[dict[str, Any]]) -> None:
    """Refuse tool names the model APIs reject (``^[a-zA-Z0-9_-]{1,64}$``), naming each.

    Raises:
        ValueError: Some names do not match (all of them are listed), so the request would fail.
    """
    bad = [spec["name"] for spec in specs if not TOOL_NAME_PATTERN.fullmatch(spec["name"])]
    if bad:
        raise ValueError(
            "tool names must match ^[a-zA-Z0-9_-]{1,64}$ for OpenAI and Anthropic; rename "
            + ", ".join(js_json(name) for name in bad)
            + " (register them under another name, e.g. McpToolset(rename=...))"
        )


def arguments_text(arguments: Any) -> str:
    """Tool-call arguments as text: a string as sent; a parsed object (some OpenAI-compatible
    servers send one) as ``JSON.stringify`` would write it; nothing as ``""``."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return js_argument_text(arguments)


def base64_size(data: Any) -> int:
    """The decoded size in bytes of base64 text (0 for anything else)."""
    if type(data) is not str:
        return 0
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def _media(block: Any) -> tuple[str, str, Any] | None:
    """``(kind, mime type, base64 data)`` of a block that carries binary data, else ``None``."""
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind in ("image", "audio") and "data" in block:
        return kind, str(block.get("mimeType") or block.get("mime_type") or kind), block["data"]
    if kind == "image" and isinstance(block.get("source"), dict):
        source = block["source"]
        return "image", str(source.get("media_type", "image")), source.get("data")
    resource = block.get("resource")
    if kind == "resource" and isinstance(resource, dict) and "blob" in resource:
        return (
            "resource",
            str(resource.get("mimeType") or "application/octet-stream"),
            resource["blob"],
        )
    return None


def media_note(block: Any, why: str = "not shown") -> str | None:
    """A one-line stand-in for a binary block (image, audio, blob resource), else ``None``:
    ``[image image/png, 1234 bytes: not shown]``."""
    media = _media(block)
    if media is None:
        return None
    kind, mime, data = media
    uri = block.get("resource", {}).get("uri") if kind == "resource" else None
    where = f" {uri}" if uri else ""
    return f"[{kind}{where} {mime}, {base64_size(data)} bytes: {why}]"


def block_text(block: Any) -> str:
    """One content block as result text (see :func:`result_text`)."""
    if isinstance(block, dict) and block.get("type") == "text" and type(block.get("text")) is str:
        text: str = block["text"]
        return text
    note = media_note(block)
    if note is not None:
        return note
    return js_json(block)


def result_text(result: ToolExecutionResult | StepResult) -> str:
    """A result's content as one string: text blocks joined by newlines; a binary block (image,
    audio, blob resource) as a short note (``[image image/png, 1234 bytes: not shown]``, never
    its base64 data); any other block as compact JSON."""
    if isinstance(result, StepResult):
        result = result.result
    return "\n".join(block_text(block) for block in result.content)


def _as_javascript_parsed(value: Any) -> Any:
    # A copy where every int that JavaScript's JSON.parse could not keep exactly is the double it
    # would hold (js_json then renders that double as JavaScript does). Iterative: any depth.
    def convert(item: Any) -> Any:
        if type(item) is int and abs(item) > _MAX_EXACT_INT:
            try:
                return float(item)
            except OverflowError:
                return item  # beyond any double: js_json renders it as JavaScript would (null)
        return item

    if type(value) is not dict and type(value) is not list:
        return convert(value)
    root: Any = {} if type(value) is dict else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        entries = source.items() if type(source) is dict else enumerate(source)
        for key, child in entries:
            if type(child) is dict or type(child) is list:
                copy: Any = {} if type(child) is dict else []
                stack.append((child, copy))
            else:
                copy = convert(child)
            if type(target) is dict:
                target[key] = copy
            else:
                target.append(copy)
    return root


def js_argument_text(value: Any) -> str:
    """The argument text JavaScript would send for a parsed ``input``: ``JSON.stringify(input)``.

    Compact separators, non-ASCII kept, key order kept, numbers in JavaScript's format (``1.0`` is
    ``1``, ``1e21`` is ``1e+21``, ``-0.0`` is ``0``, integers beyond 2**53 rounded to the nearest
    double). ``value`` itself is never modified.
    """
    return js_json(_as_javascript_parsed(value))


_CLOSE_TIMEOUT: Final = 5.0


class ProviderError(Exception):
    """A model reply the adapters cannot use as a complete answer (the HTTP status was 200).

    Attributes:
        code: The provider's error code, when it gave one.
    """

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class ProviderStreamError(ProviderError):
    """A model stream reported an error, ended before its end marker, or was cut mid-event."""


class ProviderResponseError(ProviderError):
    """A reply that reports a failure (a Responses ``status: "failed"``) or holds no answer
    (a completion without ``choices``)."""


@attrs.frozen
class SseEvent:
    """One server-sent event.

    Attributes:
        event: The ``event:`` field (``None`` when the server sent none, as OpenAI's chat does).
        data: The ``data:`` lines joined by newlines (``"[DONE]"`` or JSON text).
        complete: ``False`` for an event the stream ended inside (no blank line after it).
    """

    event: str | None
    data: str
    complete: bool = True

    def json(self) -> Any:
        """``data`` parsed as JSON."""
        return json.loads(self.data)


@attrs.define(eq=False)
class _SseReader:
    # A class-based iterator: ``async for`` over it creates no async generator of its own, so
    # the only generators involved are the response's, which ``sse_events`` always finishes.
    _lines: Any
    exhausted: bool = False

    def __aiter__(self) -> _SseReader:
        return self

    async def __anext__(self) -> SseEvent:
        event: str | None = None
        data: list[str] = []
        while True:
            try:
                line = await self._lines.__anext__()
            except StopAsyncIteration:
                self.exhausted = True
                if data:
                    return SseEvent(event, "\n".join(data), complete=False)
                raise
            except Exception as error:  # httpx's "peer closed connection ...", a reset, ...
                raise ProviderStreamError(
                    f"the stream broke off before its end: {type(error).__name__}: {error}"
                ) from error
            if not line:
                if data:
                    return SseEvent(event, "\n".join(data))
                event = None
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)


@asynccontextmanager
async def sse_events(response: Any) -> AsyncIterator[AsyncIterator[SseEvent]]:
    """Read a streamed HTTP response as server-sent events, leaving nothing unfinished.

    ``response`` is what ``client.<api>.with_streaming_response.create(..., stream=True)`` yields
    (``openai`` and ``anthropic`` alike), or an ``httpx`` response. Why not the SDKs' own
    ``stream=True`` iterators: they read through a chain of async generators and, in OpenAI's
    Chat Completions, stop at ``data: [DONE]`` without finishing that chain, so under Trio each of
    those generators later triggers a ``ResourceWarning`` even when the stream was read to the
    end. This reader reads the body to its real end; leaving the block early (``break``, an
    exception, cancellation) closes the response and then pulls the line iterator until it ends,
    which finishes every generator of the chain (shielded, bounded in time).

    Usage::

        async with client.chat.completions.with_streaming_response.create(
            model=..., messages=..., stream=True
        ) as response:
            async with sse_events(response) as events:
                async for event in events:
                    if event.data != "[DONE]":
                        accumulator.add(event.json())
    """
    http = getattr(response, "http_response", response)
    lines = http.aiter_lines()
    reader = _SseReader(lines)
    try:
        yield reader
    finally:
        if not reader.exhausted:
            with trio.CancelScope(shield=True) as scope:
                scope.deadline = trio.current_time() + _CLOSE_TIMEOUT
                await http.aclose()
                while True:
                    try:
                        await lines.__anext__()
                    except StopAsyncIteration:
                        break
                    except Exception:  # the closed response ends the stream with an error
                        break


def stream_error(event: SseEvent, payload: Any) -> str | None:
    """The error message a stream event carries (``event: error``, ``"type": "error"`` or a
    non-null ``error`` member)."""
    if isinstance(payload, dict) and (
        event.event == "error" or payload.get("type") == "error" or payload.get("error")
    ):
        error = payload.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        return str(message or payload.get("message") or "the stream reported an error")
    return None


def _error_code(payload: Any) -> str | None:
    error = payload.get("error") if isinstance(payload, dict) else None
    code = error.get("type") or error.get("code") if isinstance(error, dict) else None
    if code is None and isinstance(payload, dict):
        code = payload.get("code")
    return None if code is None else str(code)


async def feed_stream(streaming: Any, add: Callable[[Any], object]) -> bool:
    """Read a ``with_streaming_response.create(..., stream=True)`` context to its real end (see
    :func:`sse_events`), handing each event's JSON to ``add``.

    Returns:
        Whether the stream ended with ``data: [DONE]`` (Chat Completions' end marker; the other
        APIs end with an event of their own, which their accumulators recognise).

    Raises:
        ProviderStreamError: The stream carried an error event, an event that is not JSON, or
            ended inside an event.
    """
    done = False
    async with streaming as response, sse_events(response) as events:
        async for sse in events:
            if sse.data == "[DONE]":
                done = True
                continue
            try:
                event = sse.json()
            except ValueError:
                if not sse.complete:
                    raise ProviderStreamError(
                        "the stream ended in the middle of an event (the connection was cut)"
                    ) from None
                raise ProviderStreamError(
                    f"a stream event is not JSON: {sse.data[:200]!r}"
                ) from None
            error = stream_error(sse, event)
            if error is not None:
                raise ProviderStreamError(error, _error_code(event))
            add(event)
    return done


class _HasText(Protocol):
    text: str

    def add(self, event: Any, /) -> None: ...


def text_feed(
    accumulator: _HasText, on_text: Callable[[str], object] | None
) -> Callable[[Any], None]:
    """``accumulator.add``, passing each new piece of ``accumulator.text`` to ``on_text`` (the
    model's own callback, if any) and to the turn asking (:func:`~trio_harness.turn.report_text`:
    a ``TextDelta`` event)."""

    def add(event: Any) -> None:
        before = len(accumulator.text)
        accumulator.add(event)
        if len(accumulator.text) > before:
            fragment = accumulator.text[before:]
            if on_text is not None:
                on_text(fragment)
            report_text(fragment)

    return add
