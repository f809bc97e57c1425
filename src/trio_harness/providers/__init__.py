"""Provider adapters: tool lists, tool calls and result messages for model APIs, as plain data.

One module per provider, none importing its SDK at runtime (SDK objects are read by attribute,
plain ``dict`` s by key):

* :mod:`trio_harness.providers.openai` — Chat Completions (also DeepSeek and other
  OpenAI-compatible APIs) and the Responses API;
* :mod:`trio_harness.providers.anthropic` — the Anthropic Messages API.

Each also has a ready :class:`~trio_harness.TurnModel` for :func:`~trio_harness.run_turn`.
"""

from __future__ import annotations

from .._public import publish
from ._common import (
    TOOL_NAME_PATTERN,
    ProviderError,
    ProviderResponseError,
    ProviderStreamError,
    SseEvent,
    check_tool_names,
    js_argument_text,
    media_note,
    result_text,
    sse_events,
    tool_specs,
)

__all__ = [
    "TOOL_NAME_PATTERN",
    "ProviderError",
    "ProviderResponseError",
    "ProviderStreamError",
    "SseEvent",
    "check_tool_names",
    "js_argument_text",
    "media_note",
    "result_text",
    "sse_events",
    "tool_specs",
]

publish(__name__, globals(), __all__)
