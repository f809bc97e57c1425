"""Issue 29 against the real test server (``server_app.py`` over stdio): a JSON-RPC error
response has a code of its own, and ``optional_defaults`` accepts what a server that publishes its
defaulted parameters as required (zod's output mode, playwright-mcp) accepts."""

from __future__ import annotations

import trio

import trio_harness as th
from trio_harness.mcp import MCP_RPC_ERROR, McpRpcError

from .connect import BOUND_S, stdio_toolset


async def test_a_json_rpc_error_response_is_an_error_result_with_its_own_code() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset() as (runtime, _, _session):
            result = await runtime.execute(th.ToolExecutionInput("c", "rpc_error", {"page": 9}))
            assert result.is_error
            assert result.error is not None
            assert result.error.message == "page 9 out of range (JSON-RPC error -32602)"
            assert result.error.info == th.ErrorInfo("McpRpcError", MCP_RPC_ERROR)
            assert list(result.content) == [
                {"type": "text", "text": "Error: page 9 out of range (JSON-RPC error -32602)"}
            ]


def test_the_rpc_error_keeps_the_json_rpc_code_and_data() -> None:
    error = McpRpcError("gone", -32603, {"why": "x"})
    assert (error.code, error.rpc_code, error.data) == (MCP_RPC_ERROR, -32603, {"why": "x"})
    assert str(error) == "gone (JSON-RPC error -32603)"


async def test_the_published_schema_is_checked_by_default() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset() as (runtime, toolset, _session):
            report = {r.name: r for r in toolset.reports}["defaulted"]
            assert report.fully_checked
            result = await runtime.execute(
                th.ToolExecutionInput("c", "defaulted", {"kind": "jpeg"})
            )
            assert list(result.content) == [
                {
                    "type": "text",
                    "text": 'Error: invalid arguments: missing required property "scale"',
                }
            ]


async def test_optional_defaults_accepts_what_the_server_fills_in() -> None:
    with trio.fail_after(BOUND_S):
        async with stdio_toolset(optional_defaults=True) as (runtime, toolset, _session):
            report = {r.name: r for r in toolset.reports}["defaulted"]
            assert report.fully_checked
            assert report.changes == (
                'schema.required: "kind" has a default: optional (optional_defaults)',
                'schema.required: "scale" has a default: optional (optional_defaults)',
            )
            result = await runtime.execute(
                th.ToolExecutionInput("c", "defaulted", {"kind": "jpeg"})
            )
            assert not result.is_error
            assert list(result.content) == [{"type": "text", "text": "jpeg css"}]
            bad = await runtime.execute(th.ToolExecutionInput("c", "defaulted", {"kind": 3}))
            assert list(bad.content) == [
                {"type": "text", "text": 'Error: invalid arguments: "kind" must be a string'}
            ]
