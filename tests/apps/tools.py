"""Small typed tools over an in-memory file map, shared by the app tests."""

from __future__ import annotations

from typing import Annotated

import trio

import trio_harness as th


def file_tools(files: dict[str, str], *, write_delay: float = 0) -> list[th.ToolDefinition]:
    """``read`` and ``list`` (parallel) and ``write`` (exclusive) over ``files``."""

    @th.tool(parallel=True)
    async def read(path: Annotated[str, "File name"]) -> str:
        """Read a file."""
        if path not in files:
            raise FileNotFoundError(f"no such file: {path}")
        return files[path]

    @th.tool(name="list", parallel=True)
    async def list_files() -> list[str]:
        """List the files."""
        return sorted(files)

    @th.tool
    async def write(path: str, text: str) -> int:
        """Write a file; returns the number of characters written."""
        await trio.sleep(write_delay)
        files[path] = text
        return len(text)

    return [read, list_files, write]


def runtime_with(files: dict[str, str], **kwargs: float) -> th.ToolRuntime:
    runtime = th.ToolRuntime()
    for tool in file_tools(files, **kwargs):
        runtime.register(tool)
    return runtime
