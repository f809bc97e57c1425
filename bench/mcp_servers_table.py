"""The real MCP servers :mod:`bench_mcp_servers` installs and starts: one row per server.

Each server gets its own environment under the scratch directory: an npm prefix
(``npm/<name>/``) or a Python venv (``py/<name>/``), so no two servers share a dependency (an
``mcp`` 1.x server beside the ``mcp`` 2.x of another dies at start).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs


@attrs.frozen(kw_only=True)
class Server:
    """One real MCP server.

    Attributes:
        name: Short label (the table's row).
        kind: ``"npm"`` or ``"pypi"``.
        package: What the package manager installs.
        program: The executable's name in the environment's ``bin``.
        args: Its arguments, given the scratch directory (``args(scratch)``).
        env: Extra environment variables, given the scratch directory.
        offline: ``None`` when it starts offline; else why it cannot (listed, not started).
        optional_defaults: Started with ``optional_defaults=True`` too (zod output-mode schemas).
        requirements: Installed beside the package in its environment (``"mcp<2"`` for a
            server written for the 1.x SDK whose metadata does not say so).
    """

    name: str
    kind: str
    package: str
    program: str
    args: Callable[[Path], list[str]] = lambda scratch: []
    env: Callable[[Path], dict[str, str]] = lambda scratch: {}
    offline: str | None = None
    optional_defaults: bool = False
    requirements: tuple[str, ...] = ()


def _data(scratch: Path, *parts: str) -> str:
    return str(scratch.joinpath("data", *parts))


SERVERS: tuple[Server, ...] = (
    Server(
        name="memory",
        kind="npm",
        package="@modelcontextprotocol/server-memory",
        program="mcp-server-memory",
        env=lambda s: {"MEMORY_FILE_PATH": _data(s, "memory.jsonl")},
    ),
    Server(
        name="filesystem",
        kind="npm",
        package="@modelcontextprotocol/server-filesystem",
        program="mcp-server-filesystem",
        args=lambda s: [_data(s, "files")],
    ),
    Server(
        name="everything",
        kind="npm",
        package="@modelcontextprotocol/server-everything",
        program="mcp-server-everything",
        args=lambda s: ["stdio"],
    ),
    Server(
        name="sequential-thinking",
        kind="npm",
        package="@modelcontextprotocol/server-sequential-thinking",
        program="mcp-server-sequential-thinking",
    ),
    Server(
        name="desktop-commander",
        kind="npm",
        package="@wonderwhy-er/desktop-commander",
        program="desktop-commander",
        env=lambda s: {"HOME": _data(s, "home")},
    ),
    Server(
        name="playwright",
        kind="npm",
        package="@playwright/mcp",
        program="playwright-mcp",
        args=lambda s: ["--headless", "--isolated"],
        optional_defaults=True,
    ),
    Server(
        name="notion",
        kind="npm",
        package="@notionhq/notion-mcp-server",
        program="notion-mcp-server",
        env=lambda s: {"NOTION_TOKEN": "ntn_offline_placeholder"},
    ),
    Server(
        name="chrome-devtools",
        kind="npm",
        package="chrome-devtools-mcp",
        program="chrome-devtools-mcp",
        args=lambda s: ["--headless", "--isolated", "--no-usage-statistics"],
        env=lambda s: {"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1"},
    ),
    Server(
        name="context7",
        kind="npm",
        package="@upstash/context7-mcp",
        program="context7-mcp",
    ),
    Server(
        name="mongodb",
        kind="npm",
        package="mongodb-mcp-server",
        program="mongodb-mcp-server",
        env=lambda s: {"MDB_MCP_TELEMETRY": "disabled", "MDB_MCP_LOG_PATH": _data(s, "mongo")},
    ),
    Server(
        name="pdf",
        kind="npm",
        package="@modelcontextprotocol/server-pdf",
        program="mcp-pdf-server",
        args=lambda s: ["--stdio", _data(s, "pdfs")],
    ),
    Server(name="time", kind="pypi", package="mcp-server-time", program="mcp-server-time"),
    Server(
        name="git",
        kind="pypi",
        package="mcp-server-git",
        program="mcp-server-git",
        args=lambda s: ["--repository", _data(s, "repo")],
    ),
    Server(
        name="sqlite",
        kind="pypi",
        package="mcp-server-sqlite",
        requirements=("mcp<2",),  # written for the 1.x SDK; dies at start beside 2.x
        program="mcp-server-sqlite",
        args=lambda s: ["--db-path", _data(s, "test.sqlite")],
    ),
    Server(name="fetch", kind="pypi", package="mcp-server-fetch", program="mcp-server-fetch"),
    Server(
        name="calculator",
        kind="pypi",
        package="mcp-server-calculator",
        requirements=("mcp<2",),  # written for the 1.x SDK; dies at start beside 2.x
        program="mcp-server-calculator",
    ),
    Server(
        name="duckdb",
        kind="pypi",
        package="mcp-server-duckdb",
        requirements=("mcp<2",),  # written for the 1.x SDK; dies at start beside 2.x
        program="mcp-server-duckdb",
        args=lambda s: ["--db-path", _data(s, "test.duckdb")],
    ),
    Server(
        name="markitdown",
        kind="pypi",
        package="markitdown-mcp",
        program="markitdown-mcp",
    ),
    Server(
        name="excel",
        kind="pypi",
        package="excel-mcp-server",
        program="excel-mcp-server",
        args=lambda s: ["stdio"],
        env=lambda s: {"EXCEL_FILES_PATH": _data(s, "excel")},
    ),
)
