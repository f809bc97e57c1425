"""A stdio server's standard error: read in time linear in its length, in bounded memory."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
import trio

import trio_harness as th
from trio_harness._mcp_stderr import StderrLines
from trio_harness.mcp import open_stdio

from .connect import BOUND_S

PROGRESS_SERVER = Path(__file__).with_name("progress_server.py")


def test_a_carriage_return_starts_the_line_over_and_crlf_ends_it() -> None:
    lines = StderrLines()
    assert lines.feed(b"one\r\ntwo\n10%\r20") == ["one", "two"]
    assert lines.feed(b"%\r") == []
    assert lines.feed(b"\n") == ["20%"]  # "\r" and "\n" in two reads: one line end
    assert lines.feed(b"30%\r") == []
    assert lines.feed(b"done\nlast") == ["done"]  # text after "\r" starts the line over
    assert lines.close() == ["last"]
    assert lines.close() == []


def test_a_long_line_keeps_its_first_bytes_and_counts_the_rest() -> None:
    lines = StderrLines(limit=8)
    assert lines.feed(b"abcdefghij" * 3) == []
    assert lines.feed(b"klm\nshort\n") == ["abcdefgh [25 more bytes]", "short"]
    # Bounded memory: what a line keeps never grows past the limit, however long it is.
    for _ in range(1000):
        lines.feed(b"x" * 1000)
    assert len(lines._line) == 8
    assert lines.close() == ["xxxxxxxx [999992 more bytes]"]


@pytest.mark.slow
async def test_a_server_drawing_a_progress_bar_does_not_stall_its_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # 64 MB of "\r" frames without a newline: re-splitting the whole pending line on every read
    # took 97 s here; the call now answers as soon as the pipe is read.
    caplog.set_level(logging.INFO, logger="trio_harness.mcp.stderr")
    runtime = th.ToolRuntime()
    with trio.fail_after(BOUND_S):
        async with open_stdio(
            runtime, sys.executable, str(PROGRESS_SERVER), name="progress"
        ) as server:
            outcome = await th.execute_tool_calls(
                runtime, th.Session(), [th.ToolCallBlock("c1", "progress", '{"megabytes": 64}')]
            )
            assert outcome.results[0].result.content[0]["text"] == "drawn"
    assert list(server.stderr_tail) == [f"[{'#' * 50}] done"]
    assert [r.getMessage() for r in caplog.records if r.name.endswith("progress")] == [
        f"[{'#' * 50}] done"
    ]
