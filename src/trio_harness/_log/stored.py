"""A durable log's events read from its file on demand: what ``keep_events=False`` keeps instead.

A :class:`~trio_harness.log.DurableSession` opened with ``keep_events=False`` keeps no event in
memory: only where each one's line starts in the file (8 bytes an event). Its ``events`` and
``times`` are then :class:`StoredEvents` and :class:`StoredTimes`, read-only sequences that read
those lines back, with the log's one strict reader (:func:`.read.read_line`), each time they are
asked: ``len`` costs nothing, an index or a short slice reads its lines, iteration reads the file
in chunks. What they give equals what a log that keeps its events holds (the reader gives back
exactly what the writer wrote: the same typed data, the same JSON values).

Reading is positional (``os.pread`` on the log's descriptor while it is open, the file by its
path after it was closed), so it never moves the appending offset, and it sees every line the
log wrote: a line is written before ``append`` returns.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, overload

from .events import SessionEvent
from .read import InvalidLine, read_line

__all__ = ["LineIndex", "StoredEvents", "StoredTimes"]

_CHUNK: Final = 1 << 20


class LineIndex:
    """Where each event's line starts in a log file, and how to read those lines back.

    Args:
        path: The file (read by path once ``fd()`` says the descriptor is closed).
        fd: The log's open descriptor, or ``None`` once it is closed.
        starts: The byte offset of each event's line, in seq order.
        size: The length of the file's event lines (where the next line starts).
    """

    __slots__ = ("_fd", "path", "size", "starts")

    def __init__(
        self, path: str, fd: Callable[[], int | None], starts: Sequence[int], size: int
    ) -> None:
        self.path = path
        self._fd = fd
        self.starts = array("Q", starts)
        self.size = size

    def add(self, start: int, size: int) -> None:
        """Index a line just written at ``start``; the file's lines now end at ``size``."""
        self.starts.append(start)
        self.size = size

    def _read(self, start: int, end: int) -> bytes:
        fd = self._fd()
        if fd is not None:
            return os.pread(fd, end - start, start)
        with open(self.path, "rb") as file:
            file.seek(start)
            return file.read(end - start)

    def lines(self, first: int, stop: int) -> Iterator[tuple[int, str]]:
        """``(seq, line text)`` of events ``first`` to ``stop - 1``, read in chunks."""
        starts, size = self.starts, self.size
        seq = first
        while seq < stop:
            begin = starts[seq]
            # As many whole lines as fit in a chunk (at least one, however long).
            last = seq + 1
            while last < stop and starts[last] - begin < _CHUNK:
                last += 1
            end = starts[last] if last < len(starts) else size
            block = self._read(begin, end)
            for number in range(seq, last):
                offset = starts[number] - begin
                cut = block.find(b"\n", offset)
                yield number, block[offset:cut].decode("utf-8")
            seq = last

    def read(self, first: int, stop: int) -> Iterator[tuple[SessionEvent, float | None]]:
        """The events ``first`` to ``stop - 1`` and their times, read back from the file."""
        for seq, text in self.lines(first, stop):
            try:
                yield read_line(text, seq)
            except InvalidLine as invalid:  # pragma: no cover - the file changed under the log
                raise OSError(
                    f"{self.path}: the line of event {seq} no longer reads back "
                    f"({invalid.problem.render()}); was the file changed by another program?"
                ) from None


class _Stored(Sequence[Any]):
    # A read-only view of one part of each event (``_part``) over a ``LineIndex``.
    __slots__ = ("_index",)
    _part: int

    def __init__(self, index: LineIndex) -> None:
        self._index = index

    def __len__(self) -> int:
        return len(self._index.starts)

    @overload
    def __getitem__(self, item: int) -> Any: ...
    @overload
    def __getitem__(self, item: slice) -> list[Any]: ...
    def __getitem__(self, item: int | slice) -> Any:
        count = len(self)
        if isinstance(item, slice):
            first, stop, stride = item.indices(count)
            if stride != 1:
                return list(self)[item]
            part = self._part
            return [pair[part] for pair in self._index.read(first, max(first, stop))]
        index = item.__index__()
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError(f"{type(self).__name__} index out of range")
        return next(self._index.read(index, index + 1))[self._part]

    def __iter__(self) -> Iterator[Any]:
        part = self._part
        for pair in self._index.read(0, len(self)):
            yield pair[part]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Stored | list | tuple):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._index.path!r}: {len(self)}>"


class StoredEvents(_Stored):
    """A durable log's events, read from its file when asked (a read-only ``Sequence``).

    Equal to a ``list`` or ``tuple`` of the same events. ``list(events)`` reads them all at once.
    """

    __slots__ = ()
    _part = 0


class StoredTimes(_Stored):
    """When each event of a durable log was appended (epoch seconds, ``None`` if unknown), read
    from its file when asked (a read-only ``Sequence``)."""

    __slots__ = ()
    _part = 1
