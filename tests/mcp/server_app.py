"""A real MCP server for the tests, built with the SDK's own server class (``MCPServer``).

Run as a script: ``python server_app.py stdio`` or ``python server_app.py http PORT``. Typed
parameters give the schemas real servers publish: ``Optional`` (``anyOf`` + ``null``), an enum and
a nested pydantic model (``$defs``/``$ref``), bounds, lists, lengths and patterns.
"""

from __future__ import annotations

import enum
import os
import sys
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

READ_ONLY = ToolAnnotations(readOnlyHint=True)


class Color(enum.StrEnum):
    red = "red"
    green = "green"


class Item(BaseModel):
    name: str = Field(min_length=1, max_length=20)
    qty: int = Field(ge=1, le=100)


def defaulted(kind: str = "png", scale: str = "css") -> str:
    """Echoes its arguments; the server fills the defaults in."""
    return f"{kind} {scale}"


# Published as zod's output mode does (playwright-mcp): the defaulted parameters required.
DEFAULTED = Tool.from_function(defaulted)
DEFAULTED.parameters["required"] = ["kind", "scale"]

app = MCPServer("trio-harness-test", log_level="WARNING", tools=[DEFAULTED])
events: list[str] = []
groups: dict[str, tuple[int, anyio.Event]] = {}


@app.tool(annotations=READ_ONLY)
def search(
    query: Annotated[str, Field(min_length=1, pattern=r"^[a-z ]+$")],
    page: Annotated[int, Field(ge=1)] = 1,
    color: Color | None = None,
    tags: list[str] | None = None,
) -> str:
    """Search things."""
    return f"found {query} page {page} color {color.value if color else None} tags {tags}"


@app.tool()
def add_items(items: list[Item], note: str | None = None) -> dict[str, Any]:
    """Add items (writes)."""
    return {"count": len(items), "total": sum(item.qty for item in items)}


@app.tool()
async def fail(reason: str) -> str:
    """Always raises."""
    raise ValueError(reason)


@app.tool()
def explicit_error() -> CallToolResult:
    """Answers isError with its own text."""
    return CallToolResult(content=[TextContent(type="text", text="quota exceeded")], is_error=True)


@app.tool()
def rpc_error(page: int) -> str:
    """Answers with a JSON-RPC error response, not a result."""
    raise MCPError(code=-32602, message=f"page {page} out of range", data={"page": page})


@app.tool()
def picture() -> CallToolResult:
    """A text block and an image block."""
    return CallToolResult(
        content=[
            TextContent(type="text", text="a red dot"),
            ImageContent(type="image", data="iVBORw0KGgo=", mimeType="image/png"),
        ]
    )


@app.tool(annotations=READ_ONLY)
async def peek(tag: str, group: str, meet: int) -> str:
    """Read-only: waits until ``meet`` calls of ``group`` have arrived (proves overlap)."""
    events.append(f"start {tag}")
    count, event = groups.get(group, (0, anyio.Event()))
    count += 1
    groups[group] = (count, event)
    if count >= meet:
        event.set()
    await event.wait()
    events.append(f"end {tag}")
    return f"peeked {tag}"


@app.tool()
async def write(tag: str) -> str:
    """Writes (exclusive): records its start and end."""
    events.append(f"start {tag}")
    await anyio.lowlevel.checkpoint()
    events.append(f"end {tag}")
    return f"wrote {tag}"


@app.tool(annotations=READ_ONLY)
def journal() -> list[str]:
    """The recorded events."""
    return list(events)


@app.tool()
async def hang(tag: str) -> str:
    """Never returns; records a cancellation."""
    events.append(f"start {tag}")
    try:
        await anyio.sleep_forever()
    finally:
        events.append(f"cancelled {tag}")
    return "unreachable"


@app.tool()
def die() -> str:
    """The server process exits mid-call."""
    sys.stdout.flush()
    os._exit(3)


@app.tool()
async def add_late_tool(ctx: Context) -> str:
    """Adds a tool and announces tools/list_changed."""

    def late(x: Annotated[int, Field(ge=0)]) -> str:
        """A tool added at run time."""
        return f"late {x}"

    app.add_tool(late, name="late")
    await ctx.request_context.session.send_tool_list_changed()
    return "added"


if __name__ == "__main__":
    if os.environ.get("TEST_SERVER_STDERR"):
        print(os.environ["TEST_SERVER_STDERR"], file=sys.stderr, flush=True)
    if sys.argv[1] == "stdio":
        app.run("stdio")
    else:
        app.settings.log_level = "INFO"  # the test waits for uvicorn's startup line
        anyio.run(lambda: app.run_streamable_http_async(host="127.0.0.1", port=int(sys.argv[2])))
