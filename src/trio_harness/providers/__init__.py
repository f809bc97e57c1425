"""Provider adapters: tool lists, tool calls and result messages for model APIs, as plain data.

One module per provider, none importing its SDK at runtime (SDK objects are read by attribute,
plain ``dict`` s by key):

* :mod:`trio_harness.providers.openai` — Chat Completions (also DeepSeek and other
  OpenAI-compatible APIs) and the Responses API;
* :mod:`trio_harness.providers.anthropic` — the Anthropic Messages API.

Each also has a ready :class:`~trio_harness.TurnModel` for :func:`~trio_harness.run_turn`.
Both are attributes of this package too (``providers.openai``), imported on first use.
"""

from __future__ import annotations

import importlib
from types import ModuleType

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

#: The provider modules, loaded on first access as attributes of this package (``import
#: trio_harness.providers`` alone imports neither).
_PROVIDERS = frozenset({"openai", "anthropic"})


def __getattr__(name: str) -> ModuleType:
    if name in _PROVIDERS:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
