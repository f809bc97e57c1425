"""The lines of an MCP server's standard error, for :mod:`trio_harness.mcp`: split in time linear
in the stream's length, each kept to a bounded size (pure; the reading task is in ``mcp.py``)."""

from __future__ import annotations

from typing import Final

__all__ = ["STDERR_LINE_BYTES", "StderrLines"]

#: The bytes of one standard-error line kept (the rest is counted, and named in the line).
STDERR_LINE_BYTES: Final = 8192


class StderrLines:
    """Splits a byte stream into lines, in time linear in its length and bounded memory.

    A carriage return starts the line over, as on a terminal (a ``\r`` progress bar is one line,
    its last frame); ``\r\n`` ends a line. A line longer than ``limit`` bytes keeps its first
    ``limit`` bytes and says how many more it had.
    """

    def __init__(self, limit: int = STDERR_LINE_BYTES) -> None:
        self._limit = limit
        self._line = bytearray()
        self._more = 0
        # The line so far ended with "\r": a "\n" next ends it, anything else starts it over.
        self._return = False

    def feed(self, data: bytes) -> list[str]:
        """The lines ``data`` completes."""
        lines: list[str] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            self._add(data[start:] if end < 0 else data[start:end])
            if end < 0:
                return lines
            lines.append(self._take())
            start = end + 1

    def close(self) -> list[str]:
        """The unfinished last line, if any."""
        return [self._take()] if self._line or self._more else []

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        if self._return:
            self._start_over()
        stripped = piece.rstrip(b"\r")
        self._return = len(stripped) < len(piece)
        cut = stripped.rfind(b"\r")
        if cut >= 0:
            self._start_over()
            stripped = stripped[cut + 1 :]
        room = max(0, self._limit - len(self._line))
        self._line += stripped[:room]
        self._more += max(0, len(stripped) - room)

    def _start_over(self) -> None:
        self._line.clear()
        self._more = 0
        self._return = False

    def _take(self) -> str:
        line = self._line.decode("utf-8", "replace")
        if self._more:
            line += f" [{self._more} more bytes]"
        self._start_over()
        return line
