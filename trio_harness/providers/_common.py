"""Shared plumbing of the provider adapters: reading SDK objects or dicts, tool lists, result text.

Provider adapters never import an SDK. A provider object is read through :func:`field`, which
accepts both SDK models (attribute access) and plain ``dict`` s, so the same code serves responses
from the SDK, from raw HTTP, and from recorded JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import trio

from .._json import NOT_JSON, js_json, snapshot_json_value
from .._pool import StepResult, ToolCallBlock
from .._types import ToolDefinition, ToolExecutionResult

__all__ = [
    "ToolSource",
    "close_stream",
    "dump",
    "field",
    "js_argument_text",
    "result_text",
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


def _block_text(block: Any) -> str:
    if isinstance(block, dict) and block.get("type") == "text" and type(block.get("text")) is str:
        text: str = block["text"]
        return text
    return js_json(block)


def result_text(result: ToolExecutionResult | StepResult) -> str:
    """A result's content as one string: text blocks joined by newlines, other blocks as JSON."""
    if isinstance(result, StepResult):
        result = result.result
    return "\n".join(_block_text(block) for block in result.content)


def _round_big_ints(value: Any) -> Any:
    # In place on a fresh copy: integers that JavaScript's JSON.parse could not keep exactly
    # become the double it would hold (js_json then renders that double as JavaScript does).
    if type(value) is int:
        return float(value) if abs(value) > _MAX_EXACT_INT else value
    stack = [value]
    while stack:
        item = stack.pop()
        keys: Iterable[Any] = item.keys() if type(item) is dict else range(len(item))
        for key in list(keys):
            child = item[key]
            if type(child) is int and abs(child) > _MAX_EXACT_INT:
                item[key] = float(child)
            elif type(child) is dict or type(child) is list:
                stack.append(child)
    return value


def js_argument_text(value: Any) -> str:
    """The argument text JavaScript would send for a parsed ``input``: ``JSON.stringify(input)``.

    Compact separators, non-ASCII kept, key order kept, numbers in JavaScript's format (``1.0`` is
    ``1``, ``1e21`` is ``1e+21``, integers beyond 2**53 rounded to the nearest double). ``value``
    itself is never modified.
    """
    copy = snapshot_json_value(value)
    if copy is NOT_JSON:
        # e.g. -0.0 or nan from a lenient parser: rendered as JSON.stringify would (0, null).
        return js_json(value)
    if type(copy) is dict or type(copy) is list or type(copy) is int:
        copy = _round_big_ints(copy)
    return js_json(copy)


async def close_stream(stream: Any) -> None:
    """Close an SDK stream and the async generators inside it, even when not read to the end.

    The ``openai``/``anthropic`` ``AsyncStream.close()`` closes the HTTP response but not the
    stream's own async generator; under Trio an unfinished async generator that is garbage
    collected triggers a ``ResourceWarning``. This closes both, shielded from cancellation (it is
    called while unwinding) and bounded in time.
    """
    with trio.CancelScope(shield=True) as scope:
        scope.deadline = trio.current_time() + 5
        iterator = getattr(stream, "_iterator", None)
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()
        close = getattr(stream, "close", None)
        if close is not None:
            await close()


def blocks_from(calls: Iterable[tuple[str, str, str]]) -> list[ToolCallBlock]:
    """``ToolCallBlock`` s from ``(id, name, arguments)`` triples."""
    return [ToolCallBlock(call_id, name, arguments) for call_id, name, arguments in calls]
