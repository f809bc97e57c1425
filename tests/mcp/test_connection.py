"""``open_stdio`` and ``open_http``: one ``async with`` per server, against the real test server."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
import trio
from mcp.shared.exceptions import MCPError

import trio_harness as th
from trio_harness.mcp import open_http, open_stdio

from .connect import BOUND_S, SERVER, http_server


async def test_the_block_registers_the_tools_and_removes_them_at_the_end(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    runtime = th.ToolRuntime()
    caplog.set_level(logging.INFO, logger="trio_harness.mcp.stderr")
    env = {"TEST_SERVER_STDERR": "server says hello on stderr"}
    with trio.fail_after(BOUND_S):
        async with open_stdio(runtime, sys.executable, str(SERVER), "stdio", env=env) as server:
            assert server.name == f"{Path(sys.executable).name} server_app.py"
            assert server.names == [report.name for report in server.reports]
            assert "search" in server.names
            assert server.unregistered == []
            session = th.Session()
            calls = [th.ToolCallBlock("c1", "search", '{"query": "milk"}')]
            outcome = await th.execute_tool_calls(runtime, session, calls)
            assert outcome.results[0].result.content[0]["text"].startswith("found milk")
        assert runtime.schemas() == []
    # Read to the end once the server stopped.
    assert list(server.stderr_tail) == ["server says hello on stderr"]
    # The server's stderr went to the logger, none of it to the terminal.
    assert "server says hello on stderr" in [record.getMessage() for record in caplog.records]
    assert caplog.records[0].name == (
        f"trio_harness.mcp.stderr.{Path(sys.executable).name}_server_app_py"
    )
    assert "server says hello" not in capfd.readouterr().err


async def test_stderr_can_go_to_a_file_and_tools_get_a_prefix(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    runtime = th.ToolRuntime()
    env = {"TEST_SERVER_STDERR": "into the file"}
    with trio.fail_after(BOUND_S):
        async with open_stdio(
            runtime, sys.executable, str(SERVER), "stdio", env=env, stderr=log, prefix="kv_"
        ) as server:
            assert "kv_search" in server.names
            assert all(name.startswith("kv_") for name in server.names)
    assert "into the file" in log.read_text(encoding="utf-8")


class Overloaded(Exception):
    """Stands for a provider error raised inside the block."""


async def test_an_error_in_the_block_comes_out_as_itself() -> None:
    with trio.fail_after(BOUND_S), pytest.raises(Overloaded) as caught:
        async with open_stdio(th.ToolRuntime(), sys.executable, str(SERVER), "stdio"):
            raise Overloaded("model overloaded")
    assert not isinstance(caught.value, BaseExceptionGroup)


async def test_keyboard_interrupt_in_the_block_comes_out_as_itself() -> None:
    with trio.fail_after(BOUND_S), pytest.raises(KeyboardInterrupt):
        async with open_stdio(th.ToolRuntime(), sys.executable, str(SERVER), "stdio"):
            raise KeyboardInterrupt


async def test_a_server_dying_mid_call_is_an_error_result_and_a_clean_exit() -> None:
    runtime = th.ToolRuntime()
    with trio.fail_after(BOUND_S):
        async with open_stdio(runtime, sys.executable, str(SERVER), "stdio"):
            session = th.Session()
            outcome = await th.execute_tool_calls(
                runtime, session, [th.ToolCallBlock("c1", "die", "{}")]
            )
            assert outcome.results[0].result.is_error
            after = await th.execute_tool_calls(
                runtime, session, [th.ToolCallBlock("c2", "journal", "{}")]
            )
            assert after.results[0].result.content[0]["text"] == "Error: Connection closed"


async def test_a_server_that_dies_while_starting_is_one_error_with_its_last_words() -> None:
    script = "import sys; print('missing API token', file=sys.stderr); sys.exit(3)"
    with trio.fail_after(BOUND_S), pytest.raises(MCPError) as caught:
        async with open_stdio(th.ToolRuntime(), sys.executable, "-c", script, name="broken"):
            pass
    assert str(caught.value) == "Connection closed"
    assert caught.value.__notes__ == [
        "broken exited with status 3; its stderr (last lines):\n  missing API token"
    ]


async def test_a_server_killed_while_starting_says_by_which_signal() -> None:
    script = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    with trio.fail_after(BOUND_S), pytest.raises(MCPError) as caught:
        async with open_stdio(th.ToolRuntime(), sys.executable, "-c", script, name="killed"):
            pass
    assert caught.value.__notes__ == ["killed was killed by signal 9"]


async def test_a_server_logging_to_a_file_still_says_how_it_died(tmp_path: Path) -> None:
    script = "import sys; print('no token', file=sys.stderr); sys.exit(4)"
    log = tmp_path / "server.log"
    with trio.fail_after(BOUND_S), pytest.raises(MCPError) as caught:
        async with open_stdio(
            th.ToolRuntime(), sys.executable, "-c", script, name="filed", stderr=log
        ):
            pass
    assert caught.value.__notes__ == ["filed exited with status 4"]
    assert log.read_text() == "no token\n"


async def test_a_missing_program_is_file_not_found() -> None:
    with trio.fail_after(BOUND_S), pytest.raises(FileNotFoundError):
        async with open_stdio(th.ToolRuntime(), "/nonexistent/mcp-server"):
            pass


# The SDK's HTTP client leaves its response generators to the garbage collector (as in
# test_mcp.py's HTTP test).
@pytest.mark.filterwarnings("ignore:Async generator 'httpx2.:ResourceWarning")
@pytest.mark.filterwarnings("ignore:Async generator 'httpcore2.:ResourceWarning")
async def test_over_streamable_http() -> None:
    runtime = th.ToolRuntime()
    with trio.fail_after(BOUND_S):
        async with http_server() as url, open_http(runtime, url, prefix="web_") as server:
            assert "web_search" in server.names
            outcome = await th.execute_tool_calls(
                runtime, th.Session(), [th.ToolCallBlock("c1", "web_search", '{"query": "a"}')]
            )
            assert outcome.results[0].result.content[0]["text"].startswith("found a")
            with pytest.raises(Overloaded):
                async with open_http(runtime, url, prefix="again_"):
                    raise Overloaded
        assert runtime.schemas() == []
