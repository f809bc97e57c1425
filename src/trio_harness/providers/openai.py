"""OpenAI adapters: Chat Completions and the Responses API, as plain data.

Nothing here imports the ``openai`` package: SDK objects are read by attribute and plain ``dict`` s
by key, so responses from the SDK, from raw HTTP or from a recording all work. Any
OpenAI-compatible endpoint (DeepSeek's own API, Gemini's OpenAI endpoint, a local server) is
covered by the same code.

Chat Completions:

* :func:`chat_tools` — the ``tools=[{"type": "function", ...}]`` request parameter;
* :func:`chat_tool_calls` — an assistant message's ``tool_calls`` as ``ToolCallBlock`` s
  (``custom`` tool calls too; ``arguments`` sent as an object become their JSON text);
* :func:`chat_assistant_message` — the assistant message to append to the conversation (it
  keeps DeepSeek's ``reasoning_content`` and Gemini's ``extra_content`` thought signatures, and
  is never ``content: null`` without tool calls);
* :func:`chat_tool_messages` — step results as ``role: "tool"`` messages, in model order;
* :func:`chat_finish` — the neutral finish reason of a choice;
* :class:`ChatStreamAccumulator` — rebuilds the message from streamed chunks.

Responses API: :func:`responses_tools`, :func:`responses_tool_calls`,
:func:`responses_tool_outputs`, :func:`responses_finish` and :class:`ResponsesStreamAccumulator`.

The ready turn-loop models :class:`ChatCompletionsModel` and :class:`ResponsesModel` drive an SDK
client the application created (and closes: use ``async with openai.AsyncOpenAI(...)``). A reply
cut short (``finish_reason: "length"``, an incomplete response) never runs its tool calls; they
are reported in ``ModelStep.cut_calls`` and left out of the stored conversation. Streamed through
``run_turn`` (``stream=True``), each call starts once it is complete, so the calls complete before
a cut ran: they stay in ``tool_calls`` and in the stored message, with their results.
"""

from __future__ import annotations

from .._public import publish
from ._chat import (
    ChatCompletionsModel,
    ChatStreamAccumulator,
    chat_assistant_message,
    chat_finish,
    chat_tool_calls,
    chat_tool_messages,
    chat_tools,
    chat_usage,
)
from ._responses import (
    ResponsesModel,
    ResponsesStreamAccumulator,
    responses_finish,
    responses_tool_calls,
    responses_tool_outputs,
    responses_tools,
    responses_usage,
)

__all__ = [
    "ChatCompletionsModel",
    "ChatStreamAccumulator",
    "ResponsesModel",
    "ResponsesStreamAccumulator",
    "chat_assistant_message",
    "chat_finish",
    "chat_tool_calls",
    "chat_tool_messages",
    "chat_tools",
    "chat_usage",
    "responses_finish",
    "responses_tool_calls",
    "responses_tool_outputs",
    "responses_tools",
    "responses_usage",
]

publish(__name__, globals(), __all__)
