"""A real MCP server (the SDK's low-level ``Server``, over stdio) whose tools publish what real
servers publish: a screenshot (an image result), a PDF resource, a dotted name, OpenAPI number
formats, ``anyOf: [integer, number]``, an ``Optional`` object from ``$defs``, and a task-only
tool (``execution.taskSupport: "required"``).

Run as a script: ``python mcp_media_server.py``. Every call is echoed in the result's text.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

#: A 1x1 PNG (71 bytes).
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a5b3f3"
        "5f0000000049454e44ae426082"
    )
).decode()
PDF = base64.b64encode(b"%PDF-1.4\n%%EOF\n").decode()

TOOLS = [
    types.Tool(
        name="screenshot",
        description="Take a screenshot.",
        input_schema={"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="report",
        description="The report as a PDF.",
        input_schema={"type": "object", "properties": {}},
    ),
    types.Tool(
        name="files.read",
        description="A dotted name (MCP allows it; the model APIs do not).",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
    ),
    types.Tool(
        name="resize",
        description="OpenAPI-generated: number formats, a number union, an optional object.",
        input_schema={
            "type": "object",
            "$defs": {
                "Box": {
                    "type": "object",
                    "properties": {
                        "width": {"type": "integer", "format": "int32"},
                        "unit": {"type": "string"},
                    },
                    "required": ["width", "unit"],
                }
            },
            "properties": {
                "ratio": {"type": "number", "format": "double", "minimum": 0},
                "scale": {"anyOf": [{"type": "integer"}, {"type": "number"}]},
                "box": {"anyOf": [{"$ref": "#/$defs/Box"}, {"type": "null"}], "default": None},
                "limit": {"anyOf": [{"type": "integer", "format": "int64"}, {"type": "null"}]},
            },
            "required": ["ratio"],
        },
    ),
    types.Tool(
        name="long_job",
        description="Runs only as a task.",
        input_schema={"type": "object", "properties": {}},
        execution=types.ToolExecution(task_support="required"),
    ),
]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "screenshot":
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="the screen"),
                types.ImageContent(type="image", data=PNG, mime_type="image/png"),
            ]
        )
    if params.name == "report":
        return types.CallToolResult(
            content=[
                types.EmbeddedResource(
                    type="resource",
                    resource=types.BlobResourceContents(
                        uri="file:///tmp/report.pdf", mime_type="application/pdf", blob=PDF
                    ),
                )
            ]
        )
    text = json.dumps({"tool": params.name, "arguments": params.arguments}, sort_keys=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server: Server[Any] = Server("media-test", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
