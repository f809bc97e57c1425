"""The durable session log: a :class:`~trio_harness.Session` backed by a JSON Lines file.

Every event is written as one line (``os.write``, no buffer of our own) the moment it is
appended, so a crash of the process loses nothing appended. An fsync policy decides when the
file is also forced to stable storage, to survive a crash of the machine:

* ``"event"``: after every event (the safest);
* ``"step"`` (default): whenever a ``tool/result`` answers the last open ``tool/call``, i.e. at
  the end of every pool step and at every barrier inside one, the moments the log is
  replay-valid;
* ``"never"``: only on ``sync()`` and ``close()`` (the operating system writes back when it
  likes).

The policy's fsyncs run in the log's syncer thread (:mod:`.syncer`), never in the appending
one: ``append`` stays synchronous and never waits for the disk, so the Trio loop that runs the
pool does not stall. They run in order, each covering everything appended before it
(``synced`` counts those events); ``sync()``/``close()`` block until everything appended is on
stable storage, ``await wait_synced()``/``await aclose()`` wait for it without blocking the loop.

A line is the event's wire form (``SessionEvent.to_json()``, unchanged) with one more key,
``"at"``: when the event was appended, in seconds since the epoch. ``Session.from_jsonl`` ignores
that key, so a durable log is also a plain session log. An exclusive lock (``flock``) on the
open file refuses a second writer.

Reading back (:func:`load_session_log`, :meth:`DurableSession.open`) is strict and linear: a line
counts only once its ``\\n`` is written, so a last line without one is a crash cut (reported and,
when reopening for writing, truncated); any other malformed line is an error naming its line,
byte offset and field, unless ``salvage=True`` keeps the valid prefix.
"""

from __future__ import annotations

import json
import os
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, Literal

import attrs
import trio
import trio.lowlevel
import trio.to_thread

from .._errors import HarnessError
from .._json import is_json_number, js_json, js_number
from .events import (
    TOOL_CALL,
    TOOL_RESULT,
    SessionEvent,
    ToolCallData,
    ToolResultData,
    c_json,
    typed_json,
)
from .read import JSON_BLANK, TIME_KEY, InvalidLine, Problem, read_line
from .session import (
    Session,
    checked_event,
    checked_event_kept_as_given,
    json_verdict,
    typed_plain,
)
from .stored import LineIndex, StoredEvents, StoredTimes
from .syncer import Syncer

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "FSYNC_POLICIES",
    "DurableSession",
    "EventCheck",
    "FsyncPolicy",
    "LoadedSessionLog",
    "LogCut",
    "SessionLogError",
    "SessionLogLockedError",
    "load_session_log",
    "open_checked",
]

#: When a durable log forces its file to stable storage (see the module docstring).
FsyncPolicy = Literal["event", "step", "never"]
#: Every accepted :data:`FsyncPolicy`.
FSYNC_POLICIES: Final = ("event", "step", "never")

_BLANK: Final = JSON_BLANK.encode("ascii")
_TIME_KEY_BYTES: Final = TIME_KEY.encode("ascii")


# Every line the writer produces starts with these bytes; a cut tail must too.
_EVENT_PREFIX: Final = b'{"seq":'


class SessionLogError(HarnessError):
    """A file that is not a readable session log, or a malformed line in one.

    Attributes:
        path: The file.
        line: 1-based line number of the offending line (``None`` for whole-file problems).
        offset: Byte offset where that line starts (``None`` likewise).
        field: The offending field as a dotted path (``"data.callId"``), ``None`` when the line
            is not JSON or the problem is not one field's.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str,
        line: int | None = None,
        offset: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message, "INVALID_SESSION_LOG")
        self.path = path
        self.line = line
        self.offset = offset
        self.field = field


class SessionLogLockedError(HarnessError):
    """Another :class:`DurableSession` holds the file open for writing."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path}: session log is open for writing by another session (file lock held)",
            "SESSION_LOG_LOCKED",
        )
        self.path = path


@attrs.frozen
class LogCut:
    """An incomplete last line: what a crash in the middle of a write leaves.

    Attributes:
        line: 1-based number of the incomplete line.
        offset: Byte offset where it starts (the length of the complete part of the file).
        dropped: The incomplete bytes.
    """

    line: int
    offset: int
    dropped: bytes


@attrs.frozen
class LoadedSessionLog:
    """A session log read back from a file.

    Attributes:
        events: The complete, valid events, in seq order.
        times: When each event was appended (epoch seconds; ``None`` where the line has no
            ``"at"``, e.g. a log written by ``Session.to_jsonl``).
        cut: The incomplete last line, if the file ends in one.
        salvaged: In salvage mode, the error of the first malformed line; it and every later
            line were left out.
        valid_bytes: Length of the file's valid prefix (where appending continues).
    """

    events: tuple[SessionEvent, ...]
    times: tuple[float | None, ...]
    cut: LogCut | None = None
    salvaged: SessionLogError | None = None
    valid_bytes: int = 0

    def session(self) -> Session:
        """A plain in-memory :class:`~trio_harness.Session` holding these events."""
        return Session(events=list(self.events))


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


def _lines(content: bytes) -> Iterator[tuple[int, int, bytes | None]]:
    """(line number, start offset, bytes without ``\\n``, or ``None`` for the cut tail)."""
    start = 0
    number = 0
    size = len(content)
    while start < size:
        number += 1
        end = content.find(b"\n", start)
        if end < 0:
            yield number, start, None
            return
        yield number, start, content[start:end]
        start = end + 1


#: A check a layer above the log applies to each event as it is read (``open_checked``): the
#: problem of an event it cannot use (the line is then malformed, named as the reader's own
#: refusals are, and salvage keeps the lines before it), or ``None``.
EventCheck = Callable[[SessionEvent], Problem | None]


def _parse(
    content: bytes,
    path: str,
    *,
    salvage: bool,
    allow_empty: bool,
    check: EventCheck | None = None,
    starts: list[int] | None = None,
) -> LoadedSessionLog:
    # ``starts``, when given, gets the byte offset of each event's line.
    events: list[SessionEvent] = []
    times: list[float | None] = []
    valid = 0
    for number, start, line in _lines(content):
        refused: Problem | None = None
        if line is None:
            tail = content[start:]
            # A power cut can leave NUL bytes where the last writes were (ext4, XFS): the file
            # grew, its data never reached the disk. Those, after an event's start, are a cut.
            written = tail.rstrip(b"\0")
            if written.startswith(_EVENT_PREFIX) or _EVENT_PREFIX.startswith(written):
                cut = LogCut(line=number, offset=start, dropped=tail)
                return LoadedSessionLog(tuple(events), tuple(times), cut=cut, valid_bytes=valid)
            problem = "an incomplete line that is not a session event"
            field = None
        else:
            if not line.strip(_BLANK):
                valid = start + len(line) + 1
                continue
            try:
                event, at = read_line(line.decode("utf-8"), len(events))
            except UnicodeDecodeError:
                problem, field = "not JSON", None
            except InvalidLine as invalid:
                problem, field = invalid.problem.render(), invalid.problem.field
            else:
                refused = None if check is None else check(event)
                if refused is None:
                    events.append(event)
                    times.append(at)
                    if starts is not None:
                        starts.append(start)
                    valid = start + len(line) + 1
                    continue
                # An event of the log the caller cannot use: malformed, as the reader's own.
                refused.at("data")
                problem, field = refused.render(), refused.field
        if not events and refused is None:
            raise SessionLogError(
                f"{path} is not a trio_harness session log: line {number}: {problem}",
                path=path,
                line=number,
                offset=start,
                field=field,
            )
        error = SessionLogError(
            f"{path}: line {number} (byte {start}): {problem}",
            path=path,
            line=number,
            offset=start,
            field=field,
        )
        if not salvage:
            raise error
        return LoadedSessionLog(tuple(events), tuple(times), salvaged=error, valid_bytes=valid)
    if not events and not allow_empty:
        what = "is empty" if not content.strip() else "holds no events"
        raise SessionLogError(f"{path} {what}: no session events", path=path)
    return LoadedSessionLog(tuple(events), tuple(times), valid_bytes=valid)


def load_session_log(path: str | os.PathLike[str], *, salvage: bool = False) -> LoadedSessionLog:
    """Read a session log file (durable or ``Session.to_jsonl`` output) without locking it.

    An incomplete last line (a crash cut) is reported in ``cut`` and left out.

    Args:
        path: The file.
        salvage: Keep the events before the first malformed line instead of raising.

    Raises:
        SessionLogError: The file is empty, not a session log, or (without ``salvage``) has a
            malformed line; the message names the line, byte offset and field.
        OSError: The file cannot be read.
    """
    name = os.fspath(path)
    with open(name, "rb") as file:
        content = file.read()
    return _parse(content, name, salvage=salvage, allow_empty=False)


def open_checked(
    path: str | os.PathLike[str],
    check: EventCheck,
    *,
    fsync: FsyncPolicy = "step",
    salvage: bool = False,
    keep_events: bool = True,
) -> tuple[DurableSession, LoadedSessionLog]:
    """``DurableSession.open``, with ``check`` applied to each event read: an event it refuses
    makes its line malformed (a ``SessionLogError`` naming the line, byte and field; in salvage
    mode the valid prefix before it is kept), as a line the wire reader refuses does.

    Returns the session and what opening read (its events, also when the session keeps none)."""
    return DurableSession._open(
        path, fsync=fsync, salvage=salvage, clock=time.time, check=check, keep_events=keep_events
    )


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------

_E21: Final = 10**21
_type_of: Final = type
#: The C encoder (``events.c_json``), under the name the tests know it by.
_FAST: Final = c_json


_string: Final = json.encoder.encode_basestring


def event_line(event: SessionEvent, plain: bool | None, at: str) -> bytes:
    """The line of ``event`` appended at ``at`` (the time's JavaScript text): ``js_json`` of its
    wire form with ``"at"`` last, in UTF-8, plus ``\\n``; written from the event directly (the
    typed data's text writers, the C encoder) when that is exact.

    ``plain``: what the caller knows of the data's numbers: ``True`` when every one is plain
    (``json_verdict``, ``typed_plain``), ``False`` when one is not, ``None`` (custom data only:
    walk it)."""
    data = event.data
    kind = _type_of(data)
    if plain:
        try:
            sources = event.source_event_seqs
            if kind is ToolCallData:
                head = f'{{"seq":{event.seq},"type":"tool/call",'
            elif kind is ToolResultData:
                head = f'{{"seq":{event.seq},"type":"tool/result",'
            else:
                head = f'{{"seq":{event.seq},"type":{_string(event.type)},'
            if sources is not None:
                cited = str(sources[0]) if len(sources) == 1 else ",".join(map(str, sources))
                head += f'"sourceEventSeqs":[{cited}],'
            text = (
                typed_json(data) if kind is ToolCallData or kind is ToolResultData else c_json(data)
            )
            return f'{head}"data":{text},"at":{at}}}\n'.encode()  # lone surrogates fail here
        except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
            pass
    elif plain is None and json_verdict(data) is True:  # custom data, not judged yet
        return event_line(event, True, at)
    line = js_json(event.to_json()).encode("utf-8")
    return line[:-1] + b',"' + _TIME_KEY_BYTES + b'":' + at.encode("ascii") + b"}\n"


def _lock(fd: int, path: str) -> None:
    if fcntl is None:  # pragma: no cover - Windows
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SessionLogLockedError(path) from None


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` at the end of ``fd`` (``os.write`` may write part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _time_error(path: str, at: object) -> Exception:
    kind = TypeError if type(at) not in (int, float) else ValueError
    return kind(
        f"{path}: the clock returned {at!r}; an append time must be a finite number of seconds"
    )


_OPEN_FLAGS: Final = (
    os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


class DurableSession(Session):
    """A :class:`~trio_harness.Session` whose every event is appended to a JSON Lines file.

    Create one with :meth:`open`; use it wherever a ``Session`` goes (``execute_tool_calls``).
    Close it (or use it as a context manager) to release the file and its lock.

    Opened with ``keep_events=False``, the log keeps no event in memory, only where each line
    starts in the file (8 bytes an event): :attr:`events` and :attr:`times` are then read-only
    sequences that read the file when asked (:class:`~trio_harness.log.StoredEvents`), and
    ``recovered`` holds no events. Appending is the same, line for line and fsync for fsync.

    Attributes:
        path: The file.
        fsync: The fsync policy (``"event"``, ``"step"`` or ``"never"``).
        keep_events: Whether the events are also kept in memory (see above).
        recovered: What opening found: the earlier events' times, and any crash cut or
            salvaged error (the file was truncated to its valid prefix). With
            ``keep_events=False`` its ``events`` and ``times`` are empty (read :attr:`events`).
    """

    __slots__ = (
        "_broken",
        "_clock",
        "_count",
        "_fd",
        "_finalizer",
        "_index",
        "_open_calls",
        "_size",
        "_syncer",
        "_times",
        "fsync",
        "keep_events",
        "path",
        "recovered",
    )

    path: str
    fsync: FsyncPolicy
    keep_events: bool
    recovered: LoadedSessionLog
    _times: list[float | None]  # kept with the events only
    _index: LineIndex | None  # without them: where each line starts
    _count: int  # how many events the log holds
    _fd: int | None
    _size: int  # Invariant: the file holds exactly the lines of ``events``, ``_size`` bytes.
    _broken: OSError | None  # a failed write that could not be taken back from the file
    _clock: Callable[[], float]
    _open_calls: set[int]  # seqs of the tool/call events no tool/result has cited yet
    _syncer: Syncer  # runs the policy's fsyncs off the appending thread
    # Releases the file of a log dropped unclosed (``finalize[...]`` fails at run time).
    _finalizer: weakref.finalize  # type: ignore[type-arg]

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError("use DurableSession.open(path) to open a durable session log")

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        fsync: FsyncPolicy = "step",
        salvage: bool = False,
        clock: Callable[[], float] = time.time,
        keep_events: bool = True,
    ) -> DurableSession:
        """Open (creating if missing) a session log for appending, recovering what it holds.

        A crash cut (an incomplete last line, or the NUL bytes a power cut can leave after the
        last complete one) is dropped from the file and reported in ``recovered.cut``;
        appending continues after the last complete event. In salvage mode a malformed line
        and everything after it are moved to ``<path>.salvaged`` (appended) before the file is
        truncated to its valid prefix.

        Args:
            path: The file.
            fsync: When to force writes to stable storage (see the module docstring).
            salvage: Keep the valid prefix of a file with a malformed line instead of raising.
            clock: Where the ``"at"`` times come from (epoch seconds; each must be a finite
                ``int`` or ``float``).
            keep_events: Keep every event in memory too (``events`` is a ``list``); ``False``
                keeps only where each line starts and reads events back from the file when
                asked (see the class docstring).

        Raises:
            ValueError: ``fsync`` is not a known policy.
            SessionLogLockedError: Another session has the file open for writing.
            SessionLogError: The file is not a session log, or has a malformed line (without
                ``salvage``).
        """
        return cls._open(
            path, fsync=fsync, salvage=salvage, clock=clock, check=None, keep_events=keep_events
        )[0]

    @classmethod
    def _open(
        cls,
        path: str | os.PathLike[str],
        *,
        fsync: FsyncPolicy,
        salvage: bool,
        clock: Callable[[], float],
        check: EventCheck | None,
        keep_events: bool,
    ) -> tuple[DurableSession, LoadedSessionLog]:
        # open(), with a check of each event read (open_checked); also what it read.
        if fsync not in FSYNC_POLICIES:
            raise ValueError(f"fsync must be one of {', '.join(FSYNC_POLICIES)}, not {fsync!r}")
        name = os.fspath(path)
        fd = os.open(name, _OPEN_FLAGS, 0o666)
        try:
            _lock(fd, name)
            with open(fd, "rb", closefd=False) as file:
                content = file.read()
            starts: list[int] | None = None if keep_events else []
            loaded = _parse(
                content, name, salvage=salvage, allow_empty=True, check=check, starts=starts
            )
            if loaded.valid_bytes != len(content):
                if loaded.salvaged is not None:
                    with open(name + ".salvaged", "ab") as aside:
                        aside.write(content[loaded.valid_bytes :])
                        aside.flush()
                        os.fsync(aside.fileno())
                os.ftruncate(fd, loaded.valid_bytes)
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        self = object.__new__(cls)
        self.path = name
        self.fsync = fsync
        self.keep_events = keep_events
        self._count = len(loaded.events)
        if starts is None:
            Session.__init__(self, events=list(loaded.events))
            self.recovered = loaded
            self._times = list(loaded.times)
            self._index = None
        else:
            Session.__init__(self, events=[])
            self.recovered = attrs.evolve(loaded, events=(), times=())
            self._times = []
            self._index = LineIndex(name, self._descriptor, starts, loaded.valid_bytes)
        self._fd = fd
        self._size = loaded.valid_bytes
        self._broken = None
        self._clock = clock
        self._open_calls = _open_calls(loaded.events)
        self._syncer = Syncer(fd, name)
        # Dropped without close(), the log still syncs what was requested and releases its
        # file and lock (as a file object does), instead of holding them until exit.
        self._finalizer = weakref.finalize(self, self._syncer.abandon)
        if fsync != "never":
            # The thread that runs the policy's fsyncs starts now, not in the first step.
            self._syncer.start()
        return self, loaded

    def _descriptor(self) -> int | None:
        return self._fd

    @property
    def events(self) -> Sequence[SessionEvent]:  # type: ignore[override]
        """The events so far, in seq order: a ``list`` (treat as read-only), or with
        ``keep_events=False`` a :class:`~trio_harness.log.StoredEvents` reading the file."""
        index = self._index
        return self._events if index is None else StoredEvents(index)

    @property
    def times(self) -> Sequence[float | None]:
        """When each event was appended (epoch seconds; ``None`` if unknown): a ``list``, or
        with ``keep_events=False`` a :class:`~trio_harness.log.StoredTimes` reading the file."""
        index = self._index
        return self._times if index is None else StoredTimes(index)

    def __repr__(self) -> str:
        state = "closed" if self._fd is None else f"fsync={self.fsync}"
        return f"DurableSession({self.path!r}, {self._count} events, {state})"

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._fd is None

    @property
    def synced(self) -> int:
        """How many events are known to be on stable storage (the first ``synced`` ones)."""
        return self._syncer.synced_events

    def append(
        self, type: str, data: Any, *, source_event_seqs: Sequence[int] | None = None
    ) -> SessionEvent:
        """Append an event and write its line to the file; request the policy's fsync.

        The line is written before this returns (a crash of the process cannot lose it); the
        fsync the policy asks for runs in the log's syncer thread, so appending never waits for
        the disk (:attr:`synced`, :meth:`sync` and :meth:`wait_synced` say or wait how far it
        got). An append that raises leaves nothing behind: no event in memory, no byte in the
        file.

        Raises:
            ValueError: The log is closed; the clock returned a number that is not finite; or
                what :meth:`Session.append` refuses.
            TypeError: The clock returned something other than a number; or what
                :meth:`Session.append` refuses.
            OSError: Writing failed; the event is not in the log and its bytes were taken back
                from the file. If even that failed, or an earlier fsync failed, the log refuses
                every later append (reopen it: a partial line is a crash cut).
        """
        fd = self._fd
        if fd is None:
            raise ValueError(f"{self.path}: session log is closed")
        if self._broken is not None:
            raise OSError(
                self._broken.errno,
                f"{self.path}: a failed write could not be taken back from the file "
                f"({self._broken}); reopen the log to recover it",
            )
        syncer = self._syncer
        if syncer.error is not None:
            raise syncer.failure()
        at = self._clock()  # first: a clock that raises leaves nothing behind
        if _type_of(at) is float and 1e-4 <= at < 1e16 and not at.is_integer():
            at_text = repr(at)  # JavaScript's text of a plain float (a time, always)
        elif is_json_number(at):
            at_text = js_number(at)
        else:
            raise _time_error(self.path, at)
        count = self._count
        index = self._index
        kind = _type_of(data)
        if kind is ToolCallData or kind is ToolResultData:  # typed data is kept as given
            event = checked_event(type, data, source_event_seqs, count)
            plain: bool | None = typed_plain(data)
        elif index is None:
            event = checked_event(type, data, source_event_seqs, count)
            plain = None  # the kept copy's numbers are judged when the line is written
        else:  # the data is not kept: no copy, and the check says whether its numbers are plain
            event, plain = checked_event_kept_as_given(type, data, source_event_seqs, count)
        open_calls = self._open_calls
        answered: list[int] = []
        policy = self.fsync
        sync = policy == "event"
        if type == TOOL_CALL:
            open_calls.add(event.seq)
        elif type == TOOL_RESULT and source_event_seqs:
            answered = [seq for seq in source_event_seqs if seq in open_calls]
            open_calls.difference_update(answered)
            sync = sync or (policy == "step" and bool(answered) and not open_calls)
        size = self._size
        try:
            line = event_line(event, plain and count < _E21 if plain else plain, at_text)
            written = os.write(fd, line)
            if written < len(line):
                _write_all(fd, line[written:])
        except BaseException:
            # Nothing of the event stays: not in memory, not in the open-call count, not in
            # the file (a partly written line is taken back).
            if type == TOOL_CALL:
                open_calls.discard(event.seq)
            open_calls.update(answered)
            try:
                os.ftruncate(fd, size)
            except OSError as error:
                self._broken = error
            raise
        start = size
        size += len(line)
        self._size = size
        count += 1
        self._count = count
        if index is None:
            self._events.append(event)
            self._times.append(at)
        else:
            index.add(start, size)
        if sync:
            syncer.request(size, count)
        return event

    def sync(self) -> None:
        """Force every event appended so far to stable storage; block until it is there.

        Raises:
            OSError: An fsync failed (now or earlier).
        """
        if self._fd is not None:
            self._syncer.request(self._size, self._count)
            self._syncer.wait(self._size)

    async def wait_synced(self) -> None:
        """:meth:`sync` for a Trio task: the fsync runs in the syncer thread, the loop runs on.

        Cancellation stops the wait, not the fsync. Returns at once when the log is closed
        (closing synced it).

        Raises:
            OSError: An fsync failed (now or earlier).
        """
        if self._fd is None:
            await trio.lowlevel.checkpoint()
            return
        size = self._size
        syncer = self._syncer
        syncer.request(size, self._count)
        if syncer.synced_bytes >= size:
            await trio.lowlevel.checkpoint()
            return
        await trio.to_thread.run_sync(syncer.wait, size, abandon_on_cancel=True)

    def close(self) -> None:
        """Sync, release the lock and close the file (idempotent).

        Blocks until the final fsync is done; in a Trio task, ``await`` :meth:`aclose` instead.
        Interrupted while it waits (Ctrl-C), it returns at once: the log is closed, and the file
        and its lock are released as soon as the running fsync ends.

        Raises:
            OSError: An fsync failed (the file is closed all the same).
        """
        fd = self._fd
        if fd is None:
            return
        self._fd = None
        self._finalizer.detach()
        syncer = self._syncer
        synced = False
        try:
            syncer.request(self._size, self._count)
            syncer.wait(self._size)
            synced = True
        finally:
            if synced:
                try:
                    syncer.stop()
                finally:
                    os.close(fd)  # closing the descriptor releases the flock
            else:
                # The wait was cut short (a Ctrl-C, a failed fsync): never wait again here. The
                # descriptor (and its lock) is closed now, or by the syncer thread as soon as the
                # fsync it is running ends.
                syncer.abandon()

    async def aclose(self) -> None:
        """:meth:`close` for a Trio task: the final fsync runs off the loop (idempotent).

        If cancelled while waiting for it, the log is closed with a blocking :meth:`close`.
        """
        try:
            await self.wait_synced()
        finally:
            self.close()  # nothing is left to sync unless the wait was cut short

    def __enter__(self) -> DurableSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> DurableSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _open_calls(events: Sequence[SessionEvent]) -> set[int]:
    calls = set()
    for event in events:
        if event.type == TOOL_CALL:
            calls.add(event.seq)
        elif event.type == TOOL_RESULT:
            calls.difference_update(event.source_event_seqs or ())
    return calls
