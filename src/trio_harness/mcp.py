"""MCP tools as harness tools: ``trio_harness.mcp`` (optional extra ``trio_harness[mcp]``).

An :class:`McpToolset` lists a connected ``mcp.ClientSession``'s tools and registers each one on a
:class:`~trio_harness.ToolRuntime`:

* arguments are validated locally, before the call, against the tool's ``inputSchema`` normalised
  by :func:`~trio_harness.schema.normalize_json_schema` and checked with the chosen vocabulary (the
  extended one by default), so the model gets every violation by path instead of a server
  traceback; a schema that cannot be kept exactly is not registered, and the report says why;
* ``annotations.readOnlyHint: true`` makes a call parallel-safe; anything else is exclusive
  (fail-closed);
* a ``CallToolResult``'s content (text, image, audio, embedded resource, resource link) becomes
  the result's content blocks; ``isError`` becomes an error result that shows the server's text
  once (a leading ``Error``/``Error:`` of the server's text is not repeated); ``structuredContent``
  is checked against the normalised ``outputSchema``;
* the call runs as the tool body, so an abort cancels the in-flight ``call_tool`` and a server
  that dies mid-call gives an error result;
* the server's ``notifications/tools/list_changed`` marks the toolset stale;
  :meth:`McpToolset.sync_if_changed` between steps re-lists and updates the registry;
* a tool whose model-facing name the model APIs reject (``^[a-zA-Z0-9_-]{1,64}$``: MCP allows
  dots, slashes and 128 characters) or that requires task-augmented calls
  (``execution.taskSupport: "required"``) is not registered, and its report says why;
* a value that matches no branch of a union (``Optional[...]``) is reported by its real cause
  (``"address.zip" must be a string``), not by a branch count.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import attrs

try:
    import mcp.types as mcp_types
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "trio_harness.mcp needs the MCP SDK: pip install 'trio_harness[mcp]'"
    ) from error

from ._errors import HarnessError, JsonSchemaError, ToolOutputError
from ._runtime import define_json_tool, json_schema_validator
from ._validation import Formats, Vocabulary, normalize_json_schema
from ._values import ToolDefinition, ToolOutput

if TYPE_CHECKING:
    from mcp import ClientSession

    from ._runtime import ToolRuntime

__all__ = [
    "MCP_TOOL_ERROR",
    "McpToolError",
    "McpToolReport",
    "McpToolset",
    "content_blocks",
    "mcp_tool_definition",
]

#: ``error.info.code`` of a result whose server answered ``isError: true``.
MCP_TOOL_ERROR: Final = "MCP_TOOL_ERROR"
#: The tool names OpenAI and Anthropic accept.
_MODEL_NAME: Final = re.compile(r"[a-zA-Z0-9_-]{1,64}")


class McpToolError(HarnessError):
    """The MCP server answered the call with ``isError: true``; the message is its text."""

    def __init__(self, message: str) -> None:
        super().__init__(message, MCP_TOOL_ERROR)


@attrs.frozen
class McpToolReport:
    """What happened to one listed MCP tool.

    Attributes:
        name: The tool's name.
        registered: Whether it was registered (with full local argument checking).
        parallel: Whether its calls may run in parallel (``readOnlyHint: true``).
        reasons: Why it was not registered (every reason), empty when registered.
        changes: The normalisation's meaning-preserving rewrites of its ``inputSchema``.
        output_checked: Whether ``structuredContent`` is checked locally against ``outputSchema``.
        fully_checked: Registered, its arguments checked exactly as the server declares them
            (nothing unkept), and its ``structuredContent`` checked when it has an
            ``outputSchema``: the one flag to test.
    """

    name: str
    registered: bool
    parallel: bool
    reasons: tuple[str, ...]
    changes: tuple[str, ...]
    output_checked: bool
    fully_checked: bool = False


def content_blocks(result: Any) -> list[dict[str, Any]]:
    """A ``CallToolResult``'s content as result content blocks (plain JSON).

    Text becomes ``{"type": "text", "text": ...}``; other blocks (image, audio, embedded resource,
    resource link) keep their MCP wire form (camelCase keys, ``None`` fields left out).
    """
    blocks: list[dict[str, Any]] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            blocks.append({"type": "text", "text": block.text})
        else:
            blocks.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
    return blocks


def _server_text(result: Any) -> str:
    text = "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )
    if not text:
        return "the MCP server reported an error without text"
    # The harness shows failures as "Error: <message>"; the server's own leading "Error" (for
    # example the SDK's "Error executing tool x") is not repeated.
    for prefix in ("Error: ", "Error:", "Error "):
        if text.startswith(prefix) and len(text) > len(prefix):
            return text[len(prefix) :]
    return text


def _render(args: Any, value: Any) -> Any:
    return value["content"]


def mcp_tool_definition(
    session: ClientSession,
    tool: Any,
    *,
    vocabulary: Vocabulary = "extended",
    formats: Formats = "annotate",
    allow_unkept: bool = False,
    name: str | None = None,
) -> tuple[ToolDefinition, McpToolReport]:
    """A harness tool that calls ``tool`` (an ``mcp.types.Tool``) through ``session``.

    Args:
        session: A connected, initialised ``ClientSession``.
        tool: The listed tool.
        vocabulary: The argument vocabulary (``"extended"`` by default, ``"strict"`` possible).
        formats: ``"annotate"`` or ``"assert"`` for ``format``.
        allow_unkept: Register a tool whose schema lost parts in normalisation (checked less
            strictly than the server declares); refused by default.
        name: The model-facing name (default: the tool's own).

    Returns:
        ``(definition, report)``.

    Raises:
        JsonSchemaError: The input schema cannot be checked exactly; every reason named.
    """
    tool_name: str = tool.name
    annotations = tool.annotations
    parallel = annotations is not None and annotations.read_only_hint is True
    output_check = None
    output_schema = tool.output_schema
    if output_schema is not None:
        normalized = normalize_json_schema(output_schema, vocabulary=vocabulary, tool_input=False)
        if normalized.exact:
            output_check = json_schema_validator(
                normalized.schema, vocabulary=vocabulary, formats=formats
            )

    async def call(args: Any, ctx: Any) -> Any:
        try:
            result = await session.call_tool(tool_name, args)
        except RuntimeError as error:
            if "structured content" in str(error):
                # The SDK's own outputSchema check ran first.
                raise ToolOutputError(tool_name, [str(error)]) from error
            raise
        if not isinstance(result, mcp_types.CallToolResult):
            raise McpToolError(f"unexpected result of type {type(result).__name__}")
        if result.is_error:
            raise McpToolError(_server_text(result))
        value: dict[str, Any] = {"content": content_blocks(result)}
        structured = result.structured_content
        if structured is not None:
            if output_check is not None:
                violations = output_check(structured, "structuredContent")
                if violations:
                    raise ToolOutputError(tool_name, violations)
            value["structuredContent"] = structured
        return value

    definition, report = define_json_tool(
        name=name if name is not None else tool_name,
        description=tool.description or "",
        input_schema=tool.input_schema,
        execute=call,
        vocabulary=vocabulary,
        formats=formats,
        output=ToolOutput(schema={}, render=_render),
        is_concurrency_safe=(lambda args: True) if parallel else None,
        allow_unkept=allow_unkept,
        explain_unions=True,
    )
    return definition, McpToolReport(
        name=tool_name,
        registered=True,
        parallel=parallel,
        reasons=report.unkept if allow_unkept else (),
        changes=report.changes,
        output_checked=output_check is not None,
        fully_checked=not report.unkept and (output_schema is None or output_check is not None),
    )


def _refusals(tool: Any, name: str) -> list[str]:
    """Why a listed tool cannot be offered to a model, before its schema is looked at."""
    reasons = []
    if not _MODEL_NAME.fullmatch(name):
        reasons.append(
            f'name "{name}" is not accepted by the model APIs (^[a-zA-Z0-9_-]{{1,64}}$); give '
            "McpToolset a rename= function"
        )
    execution = getattr(tool, "execution", None)
    if getattr(execution, "task_support", None) == "required":
        reasons.append(
            'execution.taskSupport is "required": the tool only runs as a task, and the toolset '
            "makes plain calls"
        )
    return reasons


class McpToolset:
    """An MCP server's tools kept registered on a runtime.

    Pass :meth:`message_handler` to the ``ClientSession`` so ``tools/list_changed`` is seen, call
    :meth:`sync` once connected, and :meth:`sync_if_changed` between steps.

    Args:
        runtime: The runtime to register on.
        vocabulary: The argument vocabulary of every tool (``"extended"`` by default).
        formats: ``"annotate"`` or ``"assert"``.
        allow_unkept: See :func:`mcp_tool_definition`.
        prefix: Prepended to every model-facing name (``"github_"``), to keep servers apart.
        rename: ``(server tool name) -> model-facing name`` (before ``prefix``), e.g. to turn
            ``files.read`` into ``files_read``; the server is still called by its own name.
    """

    def __init__(
        self,
        runtime: ToolRuntime,
        *,
        vocabulary: Vocabulary = "extended",
        formats: Formats = "annotate",
        allow_unkept: bool = False,
        prefix: str = "",
        rename: Callable[[str], str] | None = None,
    ) -> None:
        self._runtime = runtime
        self._vocabulary: Vocabulary = vocabulary
        self._formats: Formats = formats
        self._allow_unkept = allow_unkept
        self._prefix = prefix
        self._rename = rename
        self._registered: list[str] = []
        self._changed = False
        self.reports: list[McpToolReport] = []

    @property
    def changed(self) -> bool:
        """Whether the server announced a tool-list change since the last :meth:`sync`."""
        return self._changed

    @property
    def names(self) -> list[str]:
        """The model-facing names currently registered by this toolset."""
        return list(self._registered)

    async def message_handler(self, message: object) -> None:
        """A ``ClientSession`` message handler: notes ``notifications/tools/list_changed``."""
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._changed = True

    async def sync(self, session: ClientSession) -> list[McpToolReport]:
        """List the server's tools (every page) and make the registry match.

        Tools this toolset registered before are unregistered first; a tool whose schema cannot be
        checked exactly is left out, with its reasons in the report.

        Returns:
            One report per listed tool, in listing order (also kept in :attr:`reports`).
        """
        self._changed = False
        tools: list[Any] = []
        cursor: str | None = None
        while True:
            params = None if cursor is None else mcp_types.PaginatedRequestParams(cursor=cursor)
            listing = await session.list_tools(params=params)
            tools.extend(listing.tools)
            cursor = listing.next_cursor
            if cursor is None:
                break
        for name in self._registered:
            self._runtime.unregister(name)
        self._registered = []
        reports: list[McpToolReport] = []
        for tool in tools:
            model_name = self._prefix + (
                self._rename(tool.name) if self._rename is not None else tool.name
            )
            refused = _refusals(tool, model_name)
            if refused:
                reports.append(
                    McpToolReport(
                        name=tool.name,
                        registered=False,
                        parallel=False,
                        reasons=tuple(refused),
                        changes=(),
                        output_checked=False,
                    )
                )
                continue
            try:
                definition, report = mcp_tool_definition(
                    session,
                    tool,
                    vocabulary=self._vocabulary,
                    formats=self._formats,
                    allow_unkept=self._allow_unkept,
                    name=model_name,
                )
            except JsonSchemaError as error:
                reports.append(
                    McpToolReport(
                        name=tool.name,
                        registered=False,
                        parallel=False,
                        reasons=tuple(error.violations),
                        changes=(),
                        output_checked=False,
                    )
                )
                continue
            try:
                self._runtime.register(definition)
            except ValueError as error:  # the name is taken by another registration
                reports.append(
                    attrs.evolve(
                        report, registered=False, reasons=(str(error),), fully_checked=False
                    )
                )
                continue
            self._registered.append(definition.name)
            reports.append(report)
        self.reports = reports
        return reports

    async def sync_if_changed(self, session: ClientSession) -> list[McpToolReport] | None:
        """:meth:`sync` when the server announced a change since the last one, else ``None``."""
        if not self._changed:
            return None
        return await self.sync(session)
