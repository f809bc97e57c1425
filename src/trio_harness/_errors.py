"""Errors raised by trio_harness, and the stable codes they carry.

The hierarchy::

    Exception
    └── HarnessError(message, code)          base; ``.code`` is a stable string, ``.name`` the class name
        ├── JsonSchemaError(violations)      UNSUPPORTED_SCHEMA: a schema or author spec outside the subset
        ├── ToolArgsError(violations)        INVALID_ARGS: a model call that fails its parameters
        ├── ToolOutputError(name, violations) INVALID_TOOL_OUTPUT: a tool value that fails its output contract
        ├── ToolNotFoundError(name)          UNKNOWN_TOOL: no tool of that name may execute
        ├── ToolTimeoutError(name, ms)       TOOL_TIMEOUT: a body ran past its declared ``timeout_ms``
        ├── SubCallDepthError(limit)         SUB_CALL_DEPTH_EXCEEDED: sub-calls nested too deep
        │   (defined beside what raises them:)
        ├── SessionLogError(message, path=…) INVALID_SESSION_LOG: not a readable session log (``_log/journal.py``)
        ├── SessionLogLockedError(path)      SESSION_LOG_LOCKED: another session writes the file (``_log/journal.py``)
        ├── McpToolError(message)            MCP_TOOL_ERROR: an MCP server answered ``isError: true`` (``mcp.py``)
        ├── McpRpcError(message, rpc_code)   MCP_RPC_ERROR: an MCP server answered a call with a JSON-RPC error (``mcp.py``)
        └── McpToolListError(message)        MCP_TOOL_LIST: a server's ``tools/list`` paging never ends (``mcp.py``)

    RuntimeError
    └── UnreachableVariantError              a forged value reached an exhaustive switch (a bug, never a result)

Only ``HarnessError`` instances give a tool result its ``error.info`` (``{name, code}``); every other
exception keeps just its message, as upstream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from ._json import js_json_or_string, js_number

__all__ = [
    "SUB_CALL_DEPTH_EXCEEDED",
    "TOOL_ABORTED",
    "TOOL_ABORTED_BEFORE_DISPATCH",
    "TOOL_TIMEOUT",
    "HarnessError",
    "JsonSchemaError",
    "SubCallDepthError",
    "ToolArgsError",
    "ToolNotFoundError",
    "ToolOutputError",
    "ToolTimeoutError",
    "UnreachableVariantError",
    "error_message",
    "unreachable",
]

#: Error code of a call whose body was cut short by an abort.
TOOL_ABORTED = "ABORTED"
#: Error code of a call that was aborted before its body started.
TOOL_ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH"
#: Error code of a call whose body ran past its declared ``timeout_ms``.
TOOL_TIMEOUT = "TOOL_TIMEOUT"
#: Error code of a composite's sub-calls nested deeper than ``MAX_SUB_CALL_DEPTH``.
SUB_CALL_DEPTH_EXCEEDED = "SUB_CALL_DEPTH_EXCEEDED"

_UNPRINTABLE = "<unprintable thrown value>"


class HarnessError(Exception):
    """Base class of every error with a stable machine-readable code.

    Args:
        message: The human-readable message (also ``str(error)``).
        code: A stable string that callers may branch on.
    """

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    @property
    def name(self) -> str:
        """The concrete class name, as upstream's ``error.name``."""
        return type(self).__name__

    def __str__(self) -> str:
        message: object = self.message
        return message if type(message) is str else str(message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code!r})"


def _joined(prefix: str, violations: Sequence[str]) -> str:
    return prefix + "; ".join(violations)


class JsonSchemaError(HarnessError):
    """A schema (or author spec) uses something outside the supported subset.

    Args:
        violations: Every violation found, in walk order.
    """

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations: list[str] = list(violations)
        super().__init__(
            _joined("unsupported JSON schema: ", self.violations), "UNSUPPORTED_SCHEMA"
        )


class ToolArgsError(HarnessError):
    """A model's call does not satisfy the tool's parameters.

    Args:
        violations: Every violation found, by path, in upstream order.
    """

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations: list[str] = list(violations)
        super().__init__(_joined("invalid arguments: ", self.violations), "INVALID_ARGS")


class ToolOutputError(HarnessError):
    """A tool returned a value (or rendered content) that breaks its output contract.

    Args:
        tool_name: The tool whose output failed.
        violations: What was wrong with it.
    """

    def __init__(self, tool_name: str, violations: Sequence[str]) -> None:
        self.tool_name = tool_name
        self.violations: list[str] = list(violations)
        super().__init__(
            _joined(f'tool "{tool_name}" returned invalid output: ', self.violations),
            "INVALID_TOOL_OUTPUT",
        )


class ToolNotFoundError(HarnessError):
    """No tool of that name may execute.

    Args:
        name: The tool name the call asked for.
        message: Override of the default ``unknown tool "<name>"`` message.
    """

    def __init__(self, name: str, message: str | None = None) -> None:
        self.tool_name = name
        super().__init__(
            message if message is not None else f'unknown tool "{name}"', "UNKNOWN_TOOL"
        )


class ToolTimeoutError(HarnessError):
    """A tool body ran past its declared ``timeout_ms`` and was cancelled (a trio_harness addition).

    Args:
        name: The tool name.
        timeout_ms: The declared timeout in milliseconds.
    """

    def __init__(self, name: str, timeout_ms: float) -> None:
        self.tool_name = name
        self.timeout_ms = timeout_ms
        # Upstream's timeout-policy plugin's text, the budget in JavaScript number formatting.
        super().__init__(f"tool call timed out after {js_number(timeout_ms)}ms", TOOL_TIMEOUT)


class SubCallDepthError(HarnessError):
    """A composite tool issued sub-calls deeper than ``MAX_SUB_CALL_DEPTH`` levels (a trio_harness
    addition: every level nests a nursery and cancel scopes, and Trio fails on about 500 nested
    nurseries, so the pool refuses long before that).

    Args:
        limit: The depth limit that was reached.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(
            f"sub-calls nested deeper than {limit} levels (MAX_SUB_CALL_DEPTH)",
            SUB_CALL_DEPTH_EXCEEDED,
        )


class UnreachableVariantError(RuntimeError):
    """A value outside a closed set reached an exhaustive switch (a forged schema, a rogue outcome)."""


def unreachable(type_name: str, value: object) -> NoReturn:
    """Raise the upstream ``unreachable variant in <Type>: <json>`` error."""
    raise UnreachableVariantError(f"unreachable variant in {type_name}: {js_json_or_string(value)}")


def error_message(error: object) -> str:
    """The message a failure shows, as upstream's ``errorMessage``.

    A ``HarnessError`` gives its message; another exception its ``str()``; any other object with a
    string ``message`` attribute that string; anything else ``str(value)``. If inspecting or
    converting the value raises, the result is ``<unprintable thrown value>``.
    """
    try:
        if isinstance(error, HarnessError):
            message: object = error.message
            # A subclass (or a caller) may have set a non-str message: show its text, never crash
            # the code that reports the failure.
            return message if type(message) is str else str(message)
        if isinstance(error, BaseException):
            return str(error)
        message = getattr(error, "message", None)
        if isinstance(message, str):
            return message
        return str(error)
    except Exception:
        return _UNPRINTABLE
