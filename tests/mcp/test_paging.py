"""``McpToolset.sync`` against real servers whose ``tools/list`` paging never ends."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import trio
from mcp import ClientSession, StdioServerParameters, stdio_client

import trio_harness as th
from trio_harness.mcp import McpToolListError, McpToolset, open_stdio

from .connect import BOUND_S

SERVER = Path(__file__).with_name("looping_server.py")


async def sync_with(mode: str, runtime: th.ToolRuntime) -> list[str]:
    toolset = McpToolset(runtime)
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), mode])
    with open(os.devnull, "w") as errlog:  # noqa: ASYNC230 - the server's log is not needed
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            try:
                reports = await toolset.sync(session)
            except McpToolListError as error:
                caught.append(error)  # raised again outside the SDK's task groups
                return []
    return [report.name for report in reports]


caught: list[McpToolListError] = []


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("repeat", "cursor 'same' came back after 2 pages"),
        ("cycle", "cursor 'a' came back after 3 pages"),
    ],
)
async def test_a_repeated_cursor_ends_the_listing_with_an_error(mode: str, message: str) -> None:
    runtime = th.ToolRuntime()
    caught.clear()
    with trio.fail_after(BOUND_S):
        assert await sync_with(mode, runtime) == []
    assert [str(error) for error in caught] == [f"tools/list paging does not end: {message}"]
    assert caught[0].code == "MCP_TOOL_LIST"
    assert runtime.schemas() == []  # nothing registered
    # Through the one-block API the error comes out as itself.
    with trio.fail_after(BOUND_S), pytest.raises(McpToolListError, match=message):
        async with open_stdio(runtime, sys.executable, str(SERVER), mode):
            pass
    assert runtime.schemas() == []


async def test_proper_pages_are_all_read() -> None:
    runtime = th.ToolRuntime()
    with trio.fail_after(BOUND_S):
        assert await sync_with("pages", runtime) == ["page_1", "page_2", "page_3"]
