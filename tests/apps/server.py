"""A scripted model API server on 127.0.0.1 for tests: real HTTP, real SSE, recorded-shape bodies.

:class:`ScriptedServer` replays a list of replies, one per request, whatever the path, and keeps
every request (path and JSON body) for assertions. A reply is a :class:`Json` body, an
:class:`Sse` stream (sent chunked, event by event, optionally holding before some event until the
test releases it), or a callable ``(request body) -> reply`` for replies that depend on what the
client sent. The server runs in a thread; ``with ScriptedServer(...)`` stops it and joins the
thread, bounded in time.

The body builders below write the shapes the real APIs send (Chat Completions, the Responses API,
Anthropic Messages), which the official SDKs then parse into their own types.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs


@attrs.frozen
class Json:
    """A JSON reply."""

    body: Any
    status: int = 200


@attrs.frozen
class Sse:
    """A server-sent-events reply: ``(event name or None, data)`` pairs.

    ``data`` is JSON-encoded unless it is a ``str`` (``"[DONE]"``). With ``hold_before=i``, the
    server sends events ``0..i-1``, then waits for :meth:`ScriptedServer.release` (bounded).
    """

    events: Sequence[tuple[str | None, Any]]
    hold_before: int | None = None


@attrs.frozen
class Raw:
    """A streamed reply of raw bytes, each chunk sent as is: for streams that end early or are
    cut mid-event. The body then ends cleanly, or with ``abort=True`` the connection is closed
    without the body's last chunk (as a dropped connection looks)."""

    chunks: Sequence[bytes]
    abort: bool = False


Reply = Json | Sse | Raw | Callable[[Any], "Json | Sse | Raw"]


@attrs.frozen
class Request:
    """A request the server received."""

    path: str
    body: Any
    headers: dict[str, str]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"null")
        owner = self.server.owner
        headers = {key.lower(): value for key, value in self.headers.items()}
        reply = owner._next(Request(self.path, body, headers))
        if isinstance(reply, Json):
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if isinstance(reply, Raw):
            for piece in reply.chunks:
                self._chunk(piece)
            if reply.abort:
                self.close_connection = True
                self.wfile.flush()
                return
            self._chunk(b"")
            return
        for index, (event, data) in enumerate(reply.events):
            if index == reply.hold_before:
                owner._held.set()
                if not owner._release.wait(timeout=10):
                    return
            text = data if isinstance(data, str) else json.dumps(data)
            frame = (f"event: {event}\n" if event else "") + f"data: {text}\n\n"
            self._chunk(frame.encode())
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedServer


class ScriptedServer:
    """Replays ``replies`` in order on ``http://127.0.0.1:<port>``.

    Attributes:
        requests: Every request received, in order.
    """

    def __init__(self, replies: Sequence[Reply]) -> None:
        self._replies = list(replies)
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._held = threading.Event()
        self._release = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The server's root URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def _next(self, request: Request) -> Json | Sse | Raw:
        with self._lock:
            self.requests.append(request)
            if not self._replies:
                return Json({"error": {"message": "script exhausted", "type": "test"}}, 500)
            reply = self._replies.pop(0)
        return reply(request.body) if callable(reply) else reply

    def wait_held(self, timeout: float = 10) -> bool:
        """Block until a held stream reached its hold point (thread-blocking; for subprocess tests)."""
        return self._held.wait(timeout)

    def release(self) -> None:
        """Let held streams continue."""
        self._release.set()

    @property
    def remaining(self) -> int:
        """Replies not yet served."""
        return len(self._replies)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


# ---------------------------------------------------------------------------------------------
# Recorded-shape bodies
# ---------------------------------------------------------------------------------------------


def chat_completion(
    *, content: str | None = None, tool_calls: Sequence[tuple[str, str, str]] = (), model: str = "m"
) -> dict[str, Any]:
    """A ``chat.completion`` body; ``tool_calls`` are ``(id, name, arguments)``."""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in tool_calls
        ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def chat_chunks(
    *,
    content: Sequence[str] = (),
    tool_calls: Sequence[tuple[str, str, Sequence[str]]] = (),
    model: str = "m",
) -> list[tuple[str | None, Any]]:
    """SSE events of a streamed completion: text fragments, then each tool call in fragments."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
        return (
            None,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1_700_000_000,
                "model": model,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            },
        )

    events: list[tuple[str | None, Any]] = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in content]
    for index, (call_id, name, pieces) in enumerate(tool_calls):
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in pieces
        ]
    events.append(chunk({}, "tool_calls" if tool_calls else "stop"))
    events.append((None, "[DONE]"))
    return events


def _response(output: list[dict[str, Any]], model: str = "m") -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1_700_000_000,
        "status": "completed",
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        },
    }


def response_items(
    *, text: str | None = None, tool_calls: Sequence[tuple[str, str, str]] = ()
) -> list[dict[str, Any]]:
    """Responses API output items: a message (if ``text``) and ``function_call`` items."""
    items: list[dict[str, Any]] = []
    if text is not None:
        items.append(
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    items += [
        {
            "type": "function_call",
            "id": f"fc_{index}",
            "call_id": call_id,
            "name": name,
            "arguments": arguments,
            "status": "completed",
        }
        for index, (call_id, name, arguments) in enumerate(tool_calls)
    ]
    return items


def response(**kwargs: Any) -> dict[str, Any]:
    """A ``response`` body (see :func:`response_items`)."""
    return _response(response_items(**kwargs))


def response_events(**kwargs: Any) -> list[tuple[str | None, Any]]:
    """SSE events of a streamed response, arguments in two deltas per call."""
    items = response_items(**kwargs)
    seq = iter(range(1000))
    created = {**_response([]), "status": "in_progress"}
    events: list[tuple[str | None, Any]] = [
        (
            "response.created",
            {"type": "response.created", "sequence_number": next(seq), "response": created},
        )
    ]
    for index, item in enumerate(items):
        start = {**item, "status": "in_progress"}
        if item["type"] == "function_call":
            start["arguments"] = ""
        events.append(
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "sequence_number": next(seq),
                    "output_index": index,
                    "item": start,
                },
            )
        )
        if item["type"] == "function_call":
            half = len(item["arguments"]) // 2
            for piece in (item["arguments"][:half], item["arguments"][half:]):
                events.append(
                    (
                        "response.function_call_arguments.delta",
                        {
                            "type": "response.function_call_arguments.delta",
                            "sequence_number": next(seq),
                            "item_id": item["id"],
                            "output_index": index,
                            "delta": piece,
                        },
                    )
                )
        else:
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "sequence_number": next(seq),
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": item["content"][0]["text"],
                        "logprobs": [],
                    },
                )
            )
        events.append(
            (
                "response.output_item.done",
                {
                    "type": "response.output_item.done",
                    "sequence_number": next(seq),
                    "output_index": index,
                    "item": item,
                },
            )
        )
    events.append(
        (
            "response.completed",
            {
                "type": "response.completed",
                "sequence_number": next(seq),
                "response": _response(items),
            },
        )
    )
    return events


def anthropic_message(
    *, text: str | None = None, tool_uses: Sequence[tuple[str, str, Any]] = ()
) -> dict[str, Any]:
    """An Anthropic ``message`` body; ``tool_uses`` are ``(id, name, input)``."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    content += [{"type": "tool_use", "id": i, "name": n, "input": inp} for i, n, inp in tool_uses]
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": "tool_use" if tool_uses else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def anthropic_events(
    *, text: Sequence[str] = (), tool_uses: Sequence[tuple[str, str, Sequence[str]]] = ()
) -> list[tuple[str | None, Any]]:
    """SSE events of a streamed message: text deltas, then tool_use blocks in JSON fragments."""
    start = {**anthropic_message(), "content": [], "stop_reason": None}
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    index = 0
    if text:
        events.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        events += [
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": piece},
                },
            )
            for piece in text
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    for call_id, name, pieces in tool_uses:
        events.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
                },
            )
        )
        events += [
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece},
                },
            )
            for piece in pieces
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "tool_use" if tool_uses else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": 5},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events
