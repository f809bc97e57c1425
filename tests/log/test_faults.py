"""Faults while a durable log is written: full disks, failed fsyncs, bad clocks, power cuts.

Every fault is real and deterministic: a file-size limit (``RLIMIT_FSIZE``, so ``write(2)``
itself stops part-way with ``EFBIG``, as on a full disk), or an ``os.fsync``/``os.ftruncate``
that raises ``OSError`` for the log's own descriptor. Whatever fails, an append that raised
leaves nothing behind: no event in memory, no byte in the file, no gap in the seqs.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import trio_harness as th

resource = pytest.importorskip("resource", reason="RLIMIT_FSIZE is POSIX")

OK = th.ToolExecutionResult(is_error=False, content=({"type": "text", "text": "ok"},))


@pytest.fixture
def disk_space() -> Iterator[Callable[[int], contextlib.AbstractContextManager[None]]]:
    """``with disk_space(n):`` no file of this process may grow past ``n`` bytes."""
    ignored = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a killed process
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    @contextlib.contextmanager
    def limit(size: int) -> Iterator[None]:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
        try:
            yield
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))

    yield limit
    signal.signal(signal.SIGXFSZ, ignored)


def _notes(path: Path) -> list[Any]:
    return [event.data for event in th.log.load_session_log(path).events]


def test_an_append_refused_by_a_full_disk_leaves_nothing_when_space_returns(
    tmp_path: Path, disk_space: Callable[[int], contextlib.AbstractContextManager[None]]
) -> None:
    path = tmp_path / "s.jsonl"
    with th.log.DurableSession.open(path, fsync="never", clock=lambda: 1.0) as session:
        session.append("note", {"n": 0})
        size = path.stat().st_size
        with disk_space(size + 10):  # room for 10 bytes: each line is cut part-way
            for n in range(1, 4):
                with pytest.raises(OSError, match="File too large") as caught:
                    session.append("note", {"n": n, "pad": "x" * 40})
                assert caught.value.errno == errno.EFBIG
                assert path.stat().st_size == size  # the partial line was taken back
        assert [event.data for event in session.events] == [{"n": 0}]
        assert session.times == [1.0]
        # Space is back: the next append is seq 1, and nothing refused comes back later.
        assert session.append("note", {"n": 4}).seq == 1
        session.append("note", {"n": 5})
    loaded = th.log.load_session_log(path)
    assert [event.data for event in loaded.events] == [{"n": 0}, {"n": 4}, {"n": 5}]
    assert loaded.cut is None


def test_a_partial_line_that_cannot_be_taken_back_stops_the_log(
    tmp_path: Path,
    disk_space: Callable[[int], contextlib.AbstractContextManager[None]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "s.jsonl"
    session = th.log.DurableSession.open(path, fsync="never")
    session.append("note", {"n": 0})
    size = path.stat().st_size
    real_ftruncate = os.ftruncate

    def ftruncate(fd: int, length: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "ftruncate", ftruncate)
    with disk_space(size + 10), pytest.raises(OSError, match="File too large"):
        session.append("note", {"n": 1, "pad": "x" * 40})
    monkeypatch.setattr(os, "ftruncate", real_ftruncate)
    assert path.stat().st_size == size + 10  # the file holds a partial line
    # Writing on after it would make every later line unreadable: the log refuses instead.
    with pytest.raises(OSError, match="a failed write could not be taken back from the file"):
        session.append("note", {"n": 2})
    assert len(session.events) == 1
    session.close()
    # Reopening reads the partial line as a crash cut and drops it.
    with th.log.DurableSession.open(path) as reopened:
        assert reopened.recovered.cut is not None
        assert reopened.recovered.cut.offset == size
        reopened.append("note", {"n": 3})
    assert _notes(path) == [{"n": 0}, {"n": 3}]


def _failing_fsync(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[bool]]:
    """``os.fsync`` counting its calls; it raises ``EIO`` once when ``fail[0]`` is set."""
    calls: list[int] = []
    fail = [False]
    real = os.fsync

    def fsync(fd: int) -> None:
        if fail[0]:
            fail[0] = False
            raise OSError(errno.EIO, "Input/output error")
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return calls, fail


def _pair(session: th.log.DurableSession, step: int) -> None:
    call = session.append("tool/call", th.log.ToolCallData(0, step, f"c{step}", "read", "{}"))
    result = th.log.ToolResultData.from_result(0, step, f"c{step}", OK)
    session.append("tool/result", result, source_event_seqs=[call.seq])


def test_a_failed_step_fsync_leaves_the_open_call_count_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    synced, fail = _failing_fsync(monkeypatch)
    with th.log.DurableSession.open(path, fsync="step") as session:
        call = session.append("tool/call", th.log.ToolCallData(0, 0, "c0", "read", "{}"))
        result = th.log.ToolResultData.from_result(0, 0, "c0", OK)
        fail[0] = True
        with pytest.raises(OSError, match="Input/output error"):
            session.append("tool/result", result, source_event_seqs=[call.seq])
        assert len(session.events) == 1
        assert path.read_bytes().count(b"\n") == 1  # the result's line was taken back
        # The retried result ends the step: it is synced, and so is every later step.
        session.append("tool/result", result, source_event_seqs=[call.seq])
        assert len(synced) == 1
        for step in (1, 2):
            _pair(session, step)
        assert len(synced) == 3
    assert len(_notes(path)) == 6


@pytest.mark.parametrize(
    ("at", "error"),
    [
        (math.nan, ValueError),
        (math.inf, ValueError),
        (-math.inf, ValueError),
        (10**400, ValueError),
        ("now", TypeError),
        (None, TypeError),
        (True, TypeError),
    ],
    ids=["nan", "inf", "-inf", "10**400", "str", "None", "True"],
)
def test_a_clock_value_the_log_cannot_read_back_is_refused(
    tmp_path: Path, at: object, error: type[Exception]
) -> None:
    path = tmp_path / "s.jsonl"
    times = iter([at, 5.0])
    clock: Any = lambda: next(times)  # noqa: E731 - a clock that returns what it is given
    with th.log.DurableSession.open(path, clock=clock) as session:
        with pytest.raises(error, match=r"the clock returned .*; an append time must be a finite"):
            session.append("note", {"n": 0})
        assert session.events == []
        assert path.read_bytes() == b""
        assert session.append("note", {"n": 1}).seq == 0
    loaded = th.log.load_session_log(path)
    assert [event.data for event in loaded.events] == [{"n": 1}]
    assert loaded.times == (5.0,)


def test_a_clock_that_raises_leaves_nothing_behind(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    ticks: Iterator[float | Exception] = iter([1.0, RuntimeError("clock broke"), 2.0])

    def clock() -> float:
        tick = next(ticks)
        if isinstance(tick, Exception):
            raise tick
        return tick

    with th.log.DurableSession.open(path, clock=clock) as session:
        session.append("note", {"n": 0})
        with pytest.raises(RuntimeError, match="clock broke"):
            session.append("note", {"n": 1})
        assert len(session.events) == len(session.times) == 1
        assert session.append("note", {"n": 2}).seq == 1  # no gap
    loaded = th.log.load_session_log(path)
    assert [event.data for event in loaded.events] == [{"n": 0}, {"n": 2}]
    assert loaded.times == (1.0, 2.0)


@pytest.mark.parametrize(
    "tail",
    [b"\0", b"\0" * 4096, b'{"seq":2,"type":"no' + b"\0" * 300, b'{"se' + b"\0"],
    ids=["one NUL", "a block of NULs", "a cut line then NULs", "a cut prefix then a NUL"],
)
def test_nul_bytes_after_the_last_line_are_a_crash_cut(tmp_path: Path, tail: bytes) -> None:
    # After a power cut, ext4 and XFS can show the file grown by blocks whose data never reached
    # the disk: NUL bytes where the last lines were.
    path = tmp_path / "s.jsonl"
    with th.log.DurableSession.open(path) as session:
        session.append("note", {"n": 0})
        session.append("note", {"n": 1})
    complete = path.stat().st_size
    with open(path, "ab") as file:
        file.write(tail)
    loaded = th.log.load_session_log(path)
    assert [event.data for event in loaded.events] == [{"n": 0}, {"n": 1}]
    assert loaded.cut == th.log.LogCut(3, complete, tail)
    with th.log.DurableSession.open(path) as session:
        assert session.recovered.cut == th.log.LogCut(3, complete, tail)
        assert path.stat().st_size == complete
        session.append("note", {"n": 2})
    assert _notes(path) == [{"n": 0}, {"n": 1}, {"n": 2}]


def test_nul_bytes_before_a_complete_line_are_still_an_error(tmp_path: Path) -> None:
    # Not a cut: a complete line follows, so events in the middle were lost.
    path = tmp_path / "s.jsonl"
    with th.log.DurableSession.open(path) as session:
        session.append("note", {"n": 0})
    complete = path.stat().st_size
    with open(path, "ab") as file:
        file.write(b"\0" * 16 + b'{"seq":1,"type":"note","data":{}}\n')
    with pytest.raises(th.log.SessionLogError, match=rf"line 2 \(byte {complete}\): not JSON$"):
        th.log.load_session_log(path)
