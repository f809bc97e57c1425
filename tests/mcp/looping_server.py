"""A real MCP server (the SDK's low-level ``Server``) whose ``tools/list`` never ends its paging.

Run as a script: ``python looping_server.py MODE``. ``repeat``: every page answers the same
``nextCursor``; ``cycle``: the cursors go a → b → a → …; ``pages``: three proper pages (a tool on
each, then no cursor), for contrast.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

MODE = sys.argv[1] if len(sys.argv) > 1 else "repeat"


def tool(name: str) -> types.Tool:
    return types.Tool(name=name, description=name, input_schema={"type": "object"})


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    cursor = params.cursor if params is not None else None
    if MODE == "repeat":
        return types.ListToolsResult(tools=[tool("echo")], next_cursor="same")
    if MODE == "cycle":
        following = {None: "a", "a": "b", "b": "a"}[cursor]
        return types.ListToolsResult(tools=[tool(f"t_{cursor}")], next_cursor=following)
    following = {None: "2", "2": "3", "3": None}[cursor]
    return types.ListToolsResult(tools=[tool(f"page_{cursor or 1}")], next_cursor=following)


server = Server("looping", on_list_tools=list_tools)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
