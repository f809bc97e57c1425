"""A strict OpenAI-compatible Chat Completions server on 127.0.0.1, for resume tests.

It answers 400 where the real API rejects a conversation (:func:`conversation_problems`): a tool
message that answers no pending ``tool_call_id``, an assistant message whose tool calls are not
all answered before the next message, an id answered twice or used twice; it is stricter than the
real API about order (tool messages must follow the model's order of calls). Otherwise it plays a
deterministic model (:class:`Policy`): after a user message it asks for ``first`` calls, after
their results for ``second``, then answers with text. Call ids are unique within a conversation
(``call_<position of the reply>_<index>``), whichever run of the client sent it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

from .server import chat_chunks, chat_completion


def conversation_problems(messages: Any) -> list[str]:
    """Why a Chat Completions ``messages`` list would be rejected (``[]``: accepted)."""
    if not isinstance(messages, list) or not messages:
        return ["'messages' must be a non-empty array"]
    problems: list[str] = []
    seen_ids: set[str] = set()
    waiting: list[str] = []  # ids of the last assistant message not answered yet, in order
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in (
            "system",
            "developer",
            "user",
            "assistant",
            "tool",
        ):
            problems.append(f"messages[{index}]: not a message")
            continue
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(message.get("content"), str):
                problems.append(f"messages[{index}]: tool content must be a string")
            if call_id not in waiting:
                problems.append(
                    f"messages[{index}]: messages with role 'tool' must be a response to a "
                    f"preceding message with 'tool_calls' (tool_call_id {call_id!r})"
                )
            elif waiting[0] != call_id:
                problems.append(
                    f"messages[{index}]: tool_call_id {call_id!r} answered out of order "
                    f"(expected {waiting[0]!r})"
                )
                waiting.remove(call_id)
            else:
                waiting.pop(0)
            continue
        if waiting:
            problems.append(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(waiting)}"
            )
            waiting = []
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") is None and not calls:
                problems.append(f"messages[{index}]: assistant content is required")
            for call in calls:
                call_id = call.get("id") if isinstance(call, dict) else None
                if not isinstance(call_id, str):
                    problems.append(f"messages[{index}]: a tool call without an id")
                    continue
                if call_id in seen_ids:
                    problems.append(f"messages[{index}]: duplicate tool_call_id {call_id!r}")
                seen_ids.add(call_id)
                waiting.append(call_id)
    if waiting:
        problems.append(
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(waiting)}"
        )
    return problems


Call = tuple[str, str]  # (tool name, arguments)


@attrs.define
class Policy:
    """The deterministic model: ``first`` calls after a user message, ``second`` after their
    results, then ``answer``."""

    first: Sequence[Call]
    second: Sequence[Call] = ()
    answer: str = "All done."

    def reply(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        since_user = 0
        for message in reversed(messages):
            if message["role"] == "user":
                break
            if message["role"] == "assistant" and message.get("tool_calls"):
                since_user += 1
        plan = [self.first, self.second, ()][min(since_user, 2)]
        if not plan:
            return chat_completion(content=self.answer)
        position = len(messages)
        calls = [(f"call_{position}_{i}", name, args) for i, (name, args) in enumerate(plan)]
        return chat_completion(tool_calls=calls)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"null")
        owner = self.server.owner
        status, reply = owner._answer(self.path, body)
        if status == 200 and isinstance(body, dict) and body.get("stream"):
            self._stream(reply, owner.chunk_delay)
            return
        data = json.dumps(reply).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client was killed mid-request

    def _stream(self, reply: dict[str, Any], delay: float) -> None:
        # The reply as Chat Completions chunks (each call's arguments in two fragments), one
        # every ``delay`` seconds, so a streaming client starts calls while the reply streams.
        message = reply["choices"][0]["message"]
        calls = [
            (call["id"], call["function"]["name"], _halves(call["function"]["arguments"]))
            for call in message.get("tool_calls", ())
        ]
        content = [message["content"]] if message.get("content") else []
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _, data in chat_chunks(content=content, tool_calls=calls):
                time.sleep(delay)
                text = data if isinstance(data, str) else json.dumps(data)
                frame = f"data: {text}\n\n".encode()
                self.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client was killed mid-request


def _halves(text: str) -> list[str]:
    return [text[: len(text) // 2], text[len(text) // 2 :]]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: StrictServer


@attrs.frozen
class Rejection:
    """A request answered 400: its number and the problems."""

    request: int
    problems: tuple[str, ...]


class StrictServer:
    """Serves ``policy`` on ``http://127.0.0.1:<port>/v1``; keeps every request and rejection.

    Args:
        policy: The model's behaviour.
        delay: Seconds each answer takes (real time: the server is a thread).
        chunk_delay: Seconds between the chunks of a streamed answer (``"stream": true``).
    """

    def __init__(self, policy: Policy, *, delay: float = 0.0, chunk_delay: float = 0.0) -> None:
        self.policy = policy
        self.delay = delay
        self.chunk_delay = chunk_delay
        self.requests: list[Any] = []
        self.rejections: list[Rejection] = []
        self.on_request: Callable[[int], None] | None = None
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def _answer(self, path: str, body: Any) -> tuple[int, Any]:
        with self._lock:
            number = len(self.requests)
            self.requests.append(body)
        if not path.endswith("/chat/completions") or not isinstance(body, dict):
            return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}
        problems = conversation_problems(body.get("messages"))
        if problems:
            with self._lock:
                self.rejections.append(Rejection(number, tuple(problems)))
            error = {
                "message": problems[0],
                "type": "invalid_request_error",
                "param": "messages",
                "code": None,
            }
            return 400, {"error": error}
        if self.delay:
            time.sleep(self.delay)
        return 200, self.policy.reply(body["messages"])

    def __enter__(self) -> StrictServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
