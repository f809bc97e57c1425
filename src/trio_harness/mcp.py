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
  once (a leading ``Error``/``Error:`` of the server's text is not repeated), code
  :data:`MCP_TOOL_ERROR`; a JSON-RPC error response to the call becomes an error result with code
  :data:`MCP_RPC_ERROR` (:class:`McpRpcError`, the server's message and JSON-RPC code); ``structuredContent``
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

:func:`open_stdio` and :func:`open_http` do all of it in one ``async with``: start (or connect
to) the server, initialise the session, register its tools with the per-tool report, keep the
server's standard error off the terminal, and close everything when the block ends. An error
raised in the block (a provider's, ``KeyboardInterrupt``) or by the connection comes out as itself,
not inside an ``ExceptionGroup`` of the SDK's task groups.
"""

from __future__ import annotations

import collections
import logging
import os
import re
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import IO, TYPE_CHECKING, Any, Final, TextIO, cast

import attrs
import trio

try:
    import mcp.types as mcp_types
    from mcp.shared.exceptions import MCPError
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "trio_harness.mcp needs the MCP SDK: pip install 'trio_harness[mcp]'"
    ) from error

from ._apps import one_error
from ._errors import HarnessError, JsonSchemaError, ToolOutputError
from ._mcp_stderr import StderrLines
from ._runtime import define_json_tool, json_schema_validator
from ._validation import Formats, Vocabulary, normalize_json_schema
from ._values import ToolDefinition, ToolOutput

if TYPE_CHECKING:
    from mcp import ClientSession

    from ._runtime import ToolRuntime

__all__ = [
    "MAX_TOOL_LIST_PAGES",
    "MCP_RPC_ERROR",
    "MCP_TOOL_ERROR",
    "McpConnection",
    "McpRpcError",
    "McpToolError",
    "McpToolListError",
    "McpToolReport",
    "McpToolset",
    "content_blocks",
    "mcp_tool_definition",
    "open_http",
    "open_stdio",
]

#: ``error.info.code`` of a result whose server answered ``isError: true``.
MCP_TOOL_ERROR: Final = "MCP_TOOL_ERROR"
#: ``error.info.code`` of a result whose server answered the call with a JSON-RPC error.
MCP_RPC_ERROR: Final = "MCP_RPC_ERROR"
#: The JSON-RPC codes the SDK raises itself, for no answer of the server: connection closed
#: (-32000) and request timeout (-32001); a server that answers with one of them is reported the
#: same way (the SDK's error does not say where it came from).
_SDK_LOCAL_CODES: Final = frozenset((mcp_types.CONNECTION_CLOSED, mcp_types.REQUEST_TIMEOUT))
#: The tool names OpenAI and Anthropic accept.
_MODEL_NAME: Final = re.compile(r"[a-zA-Z0-9_-]{1,64}")


class McpToolError(HarnessError):
    """The MCP server answered the call with ``isError: true``; the message is its text."""

    def __init__(self, message: str) -> None:
        super().__init__(message, MCP_TOOL_ERROR)


class McpRpcError(HarnessError):
    """The MCP server answered the call with a JSON-RPC error response instead of a result.

    The message is the server's, followed by the JSON-RPC code:
    ``page out of range (JSON-RPC error -32602)``.

    Attributes:
        rpc_code: The JSON-RPC error code (``-32602`` invalid params, ``-32603`` internal, ...).
        data: The error's ``data`` member (``None`` when absent).
    """

    def __init__(self, message: str, rpc_code: int, data: object = None) -> None:
        super().__init__(f"{message} (JSON-RPC error {rpc_code})", MCP_RPC_ERROR)
        self.rpc_code = rpc_code
        self.data = data


#: How many ``tools/list`` pages :meth:`McpToolset.sync` reads before giving up.
MAX_TOOL_LIST_PAGES: Final = 1000


class McpToolListError(HarnessError):
    """The server's ``tools/list`` paging does not end: a cursor came back a second time, or
    there were more than :data:`MAX_TOOL_LIST_PAGES` pages. Nothing was registered or removed."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "MCP_TOOL_LIST")


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
    optional_defaults: bool = False,
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
        optional_defaults: A required property with a ``default`` is optional (see
            :class:`McpToolset`).

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
        except MCPError as error:
            if error.code in _SDK_LOCAL_CODES:
                raise  # the SDK's own: the connection closed or the wait timed out
            raise McpRpcError(error.message, error.code, error.data) from error
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
        optional_defaults=optional_defaults,
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
        optional_defaults: Treat a required property that has a ``default`` as optional. For a
            server whose published schemas list defaulted properties as required (zod's output
            mode: playwright-mcp's ``browser_take_screenshot`` requires ``type`` and ``scale``,
            both defaulted, and the server fills them in); each one is a ``changes`` entry of
            the tool's report. Off by default: the published schema is what is checked.
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
        optional_defaults: bool = False,
    ) -> None:
        self._runtime = runtime
        self._optional_defaults = optional_defaults
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

        Raises:
            McpToolListError: The paging does not end (a repeated ``nextCursor``, or more than
                :data:`MAX_TOOL_LIST_PAGES` pages); the registry is left as it was.
        """
        self._changed = False
        tools: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            params = None if cursor is None else mcp_types.PaginatedRequestParams(cursor=cursor)
            listing = await session.list_tools(params=params)
            tools.extend(listing.tools)
            cursor = listing.next_cursor
            if cursor is None:
                break
            if cursor in seen:
                raise McpToolListError(
                    f"tools/list paging does not end: cursor {cursor!r} came back after "
                    f"{len(seen) + 1} pages"
                )
            seen.add(cursor)
            if len(seen) >= MAX_TOOL_LIST_PAGES:
                raise McpToolListError(
                    f"tools/list has more than {MAX_TOOL_LIST_PAGES} pages; giving up"
                )
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
                    optional_defaults=self._optional_defaults,
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

    def unregister(self) -> None:
        """Unregister every tool this toolset registered (the server is going away)."""
        for name in self._registered:
            self._runtime.unregister(name)
        self._registered = []


# ---------------------------------------------------------------------------------------------
# One ``async with`` per server
# ---------------------------------------------------------------------------------------------

#: How many of a server's last standard-error lines :attr:`McpConnection.stderr_tail` keeps.
STDERR_TAIL_LINES: Final = 20

_stderr_log = logging.getLogger("trio_harness.mcp.stderr")


@attrs.define(eq=False)
class McpConnection:
    """A connected MCP server whose tools are registered on a runtime (see :func:`open_stdio`).

    Attributes:
        name: A label for messages and the stderr logger (the command's name by default).
        session: The initialised ``mcp.ClientSession``.
        toolset: The :class:`McpToolset` keeping the server's tools registered.
        stderr_tail: The server's last standard-error lines (stdio servers whose stderr goes to
            the logger), newest last: what to show when it dies.
    """

    name: str
    session: ClientSession
    toolset: McpToolset
    stderr_tail: collections.deque[str] = attrs.field(
        factory=lambda: collections.deque(maxlen=STDERR_TAIL_LINES)
    )
    _stderr_closed: trio.Event = attrs.field(factory=trio.Event, alias="stderr_closed")

    @property
    def reports(self) -> list[McpToolReport]:
        """One report per listed tool (the last sync's), in listing order."""
        return self.toolset.reports

    @property
    def names(self) -> list[str]:
        """The model-facing names registered from this server."""
        return self.toolset.names

    @property
    def unregistered(self) -> list[McpToolReport]:
        """The reports of the tools left out, each with its reasons."""
        return [report for report in self.toolset.reports if not report.registered]

    async def sync(self) -> list[McpToolReport]:
        """Re-list the tools and update the registry (:meth:`McpToolset.sync`)."""
        return await self.toolset.sync(self.session)

    async def sync_if_changed(self) -> list[McpToolReport] | None:
        """:meth:`McpToolset.sync_if_changed`: re-list only after a ``tools/list_changed``."""
        return await self.toolset.sync_if_changed(self.session)


async def _log_lines(stream: trio.lowlevel.FdStream, connection: McpConnection) -> None:
    # The server's stderr, line by line, to the logger at INFO: Python's last-resort handler
    # prints only warnings, so an app that configured no logging shows nothing.
    logger = _stderr_log.getChild(re.sub(r"[^A-Za-z0-9_-]+", "_", connection.name))
    splitter = StderrLines()
    async with stream:
        while True:
            try:
                data = await stream.receive_some()
            except (trio.ClosedResourceError, trio.BrokenResourceError, OSError):
                data = b""
            lines = splitter.feed(data) if data else splitter.close()
            for line in lines:
                connection.stderr_tail.append(line)
                logger.info("%s", line)
            if not data:
                break
    connection._stderr_closed.set()


@asynccontextmanager
async def open_stdio(
    runtime: ToolRuntime,
    command: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: str | os.PathLike[str] | IO[str] | None = None,
    name: str | None = None,
    prefix: str = "",
    vocabulary: Vocabulary = "extended",
    formats: Formats = "annotate",
    allow_unkept: bool = False,
    optional_defaults: bool = False,
) -> AsyncIterator[McpConnection]:
    """Start an MCP server as a subprocess (stdio), register its tools, stop it at the end.

    Usage::

        async with trio_harness.mcp.open_stdio(runtime, "python", "server.py") as files:
            for report in files.unregistered:
                print(f"{report.name} left out: {'; '.join(report.reasons)}")
            ...  # run turns: the server's tools are on ``runtime``

    The tools are registered when the block starts and unregistered when it ends. The server's
    standard error never reaches the terminal: by default each line goes to the logger
    ``trio_harness.mcp.stderr.<label>`` at ``INFO`` (the last lines are kept in
    :attr:`McpConnection.stderr_tail`); ``stderr`` names a file to append it to instead (or is
    an open text file).

    Args:
        runtime: The runtime to register the tools on.
        command: The program to run.
        *args: Its arguments.
        env: Extra environment variables (over the SDK's safe default set).
        cwd: Its working directory.
        stderr: A file path (appended) or an open text file for the server's standard error;
            ``None`` sends it to the logger.
        name: A label for the logger and messages (default: the file names of the command and
            of its first argument, ``"python server.py"``); the logger's name is the label with
            every run of other characters than letters, digits, ``_`` and ``-`` made ``_``.
        prefix: Prepended to every model-facing tool name (``"files_"``), to keep servers apart.
        vocabulary: See :class:`McpToolset`.
        formats: See :class:`McpToolset`.
        allow_unkept: See :func:`mcp_tool_definition`.
        optional_defaults: See :class:`McpToolset`.

    Yields:
        The :class:`McpConnection` (its session, toolset and reports).

    Raises:
        OSError: The server could not be started.
        McpToolListError: Its ``tools/list`` paging does not end.
        Exception: Errors of the MCP SDK (a server that dies while starting), and whatever the
            block raises, each as itself.
    """
    from mcp import ClientSession, StdioServerParameters, stdio_client

    label = (
        name
        if name is not None
        else " ".join(os.path.basename(part) for part in (command, *args[:1]))
    )
    toolset = McpToolset(
        runtime,
        vocabulary=vocabulary,
        formats=formats,
        allow_unkept=allow_unkept,
        prefix=prefix,
        optional_defaults=optional_defaults,
    )
    params = StdioServerParameters(
        command=command,
        args=list(args),
        env=dict(env) if env is not None else None,
        cwd=None if cwd is None else os.fspath(cwd),
    )
    with one_error():
        async with AsyncExitStack() as stack:
            stream: trio.lowlevel.FdStream | None = None
            if stderr is None:
                reader, writer = os.pipe()
                stream = trio.lowlevel.FdStream(reader)
                stack.push_async_callback(stream.aclose)
                # An fd of a pipe, not a file on disk: opening it does not block.
                errlog: IO[str] = stack.enter_context(open(writer, "w"))  # noqa: SIM115, ASYNC230
            elif isinstance(stderr, str | os.PathLike):
                # Opening a log file for appending is quick local I/O, done once per server.
                errlog = stack.enter_context(open(stderr, "a", encoding="utf-8"))  # noqa: SIM115, ASYNC230
            else:
                errlog = stderr
            nursery = await stack.enter_async_context(trio.open_nursery())
            stderr_closed = trio.Event()

            async def stop_reader() -> None:
                # Runs once the transport below is closed (the server stopped): the reader gets
                # the server's last lines, but a server whose children keep its stderr open
                # does not hold the block.
                with trio.move_on_after(_STDERR_GRACE_S):
                    await stderr_closed.wait()
                nursery.cancel_scope.cancel()

            stack.push_async_callback(stop_reader)
            transport = stdio_client(params, errlog=cast(TextIO, errlog))
            try:
                read, write = await stack.enter_async_context(transport)
            finally:
                if stream is not None:
                    errlog.close()  # the server holds its own copy of the pipe's write end
            session = await stack.enter_async_context(
                ClientSession(read, write, message_handler=toolset.message_handler)
            )
            connection = McpConnection(label, session, toolset, stderr_closed=stderr_closed)
            if stream is not None:
                nursery.start_soon(_log_lines, stream, connection, name=f"mcp-stderr-{label}")
            stack.callback(toolset.unregister)
            try:
                await session.initialize()
            except Exception as error:
                # A server that died while starting: how it ended and its last words say why.
                process = _server_process(transport)
                how = (
                    "stopped answering (its exit status is not known)"
                    if process is None
                    else "closed its output but is still running"
                )
                with trio.move_on_after(_STDERR_GRACE_S):
                    if stream is not None:
                        await connection._stderr_closed.wait()
                    if process is not None:
                        code: int = await process.wait()
                        how = (
                            f"was killed by signal {-code}"
                            if code < 0
                            else f"exited with status {code}"
                        )
                note = f"{label} {how}"
                if connection.stderr_tail:
                    note += "; its stderr (last lines):\n  " + "\n  ".join(connection.stderr_tail)
                error.add_note(note)
                raise
            await toolset.sync(session)
            yield connection


# How long a server that failed to start may take to close its stderr and exit (seconds).
_STDERR_GRACE_S: Final = 1.0


def _server_process(transport: object) -> Any:
    """The server's process (``await .wait()``), or ``None``: the SDK's ``stdio_client`` keeps it
    to itself, as the local ``process`` of its generator's frame (mcp 2.x)."""
    frame = getattr(getattr(transport, "gen", None), "ag_frame", None)
    process = None if frame is None else frame.f_locals.get("process")
    return process if hasattr(process, "wait") else None


@asynccontextmanager
async def open_http(
    runtime: ToolRuntime,
    url: str,
    *,
    http_client: Any = None,
    name: str | None = None,
    prefix: str = "",
    vocabulary: Vocabulary = "extended",
    formats: Formats = "annotate",
    allow_unkept: bool = False,
    optional_defaults: bool = False,
) -> AsyncIterator[McpConnection]:
    """Connect to an MCP server over streamable HTTP, register its tools, close at the end.

    Args:
        runtime: The runtime to register the tools on.
        url: The server's MCP endpoint (``http://127.0.0.1:8000/mcp``).
        http_client: An ``httpx`` client of the SDK's choice (headers, auth), passed on.
        name: A label for messages (default: the URL).
        prefix: Prepended to every model-facing tool name.
        vocabulary: See :class:`McpToolset`.
        formats: See :class:`McpToolset`.
        allow_unkept: See :func:`mcp_tool_definition`.
        optional_defaults: See :class:`McpToolset`.

    Yields:
        The :class:`McpConnection`.
    """
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    toolset = McpToolset(
        runtime,
        vocabulary=vocabulary,
        formats=formats,
        allow_unkept=allow_unkept,
        prefix=prefix,
        optional_defaults=optional_defaults,
    )
    with one_error():
        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(
                streamable_http_client(url, http_client=http_client)
            )
            session = await stack.enter_async_context(
                ClientSession(read, write, message_handler=toolset.message_handler)
            )
            stack.callback(toolset.unregister)
            await session.initialize()
            await toolset.sync(session)
            yield McpConnection(name if name is not None else url, session, toolset)
