"""Connections to the real test server (``server_app.py``): stdio subprocess and streamable HTTP.

Every server is a real subprocess started here and stopped when the block ends; the HTTP server
listens on 127.0.0.1 only. Each block is bounded in (real) time by the caller's ``fail_after``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

import trio_harness as th
from trio_harness.mcp import McpToolset

SERVER = Path(__file__).with_name("server_app.py")
#: Real-time bound of one server's whole use in a test (start, calls, stop).
BOUND_S = 30


@asynccontextmanager
async def stdio_toolset(
    runtime: th.ToolRuntime | None = None, **options: object
) -> AsyncIterator[tuple[th.ToolRuntime, McpToolset, ClientSession]]:
    """A stdio server subprocess, a session to it, and its tools registered on ``runtime``."""
    runtime = runtime if runtime is not None else th.ToolRuntime()
    toolset = McpToolset(runtime, **options)  # type: ignore[arg-type]
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio"])
    with open(os.devnull, "w") as errlog:  # noqa: ASYNC230 - the server's log is not needed
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, message_handler=toolset.message_handler) as session,
        ):
            await session.initialize()
            await toolset.sync(session)
            yield runtime, toolset, session


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def http_server() -> AsyncIterator[str]:
    """The test server over streamable HTTP on 127.0.0.1, as a subprocess; yields its URL."""
    port = _free_port()
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        seen = b""
        while b"Uvicorn running on" not in seen and b"Application startup complete" not in seen:
            chunk = await process.stderr.receive_some()
            assert chunk, seen.decode(errors="replace")
            seen += chunk
        async with trio.open_nursery() as nursery:

            async def drain() -> None:
                assert process.stderr is not None
                while await process.stderr.receive_some():
                    pass

            nursery.start_soon(drain)
            yield f"http://127.0.0.1:{port}/mcp"
            process.terminate()
    finally:
        if process.returncode is None:
            process.kill()
        with trio.move_on_after(10):
            await process.wait()
        if process.stderr is not None:
            await process.stderr.aclose()


@asynccontextmanager
async def http_toolset(
    runtime: th.ToolRuntime | None = None,
) -> AsyncIterator[tuple[th.ToolRuntime, McpToolset, ClientSession]]:
    """The same server over streamable HTTP on 127.0.0.1, as a subprocess stopped at the end."""
    runtime = runtime if runtime is not None else th.ToolRuntime()
    toolset = McpToolset(runtime)
    port = _free_port()
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        seen = b""
        while b"Uvicorn running on" not in seen and b"Application startup complete" not in seen:
            chunk = await process.stderr.receive_some()
            assert chunk, seen.decode(errors="replace")
            seen += chunk
        async with trio.open_nursery() as nursery:
            # Keep draining the server's log so it never blocks on a full pipe.
            async def drain() -> None:
                assert process.stderr is not None
                while await process.stderr.receive_some():
                    pass

            nursery.start_soon(drain)
            url = f"http://127.0.0.1:{port}/mcp"
            async with (
                streamable_http_client(url) as (read, write),
                ClientSession(read, write, message_handler=toolset.message_handler) as session,
            ):
                await session.initialize()
                await toolset.sync(session)
                yield runtime, toolset, session
            process.terminate()
    finally:
        if process.returncode is None:
            process.kill()
        with trio.move_on_after(10):
            await process.wait()
        if process.stderr is not None:
            await process.stderr.aclose()
