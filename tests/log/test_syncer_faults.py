"""The syncer thread under faults (issue 32): a thread that cannot start (a process at its
thread limit), and a Ctrl-C while ``close`` waits for a slow final fsync."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import trio_harness as th

#: Real-time bound of every wait on a thread here (they take milliseconds).
BOUND = 20


def pair(session: th.log.DurableSession, step: int) -> None:
    call = session.append("tool/call", th.log.ToolCallData(0, step, f"c{step}", "read", "{}"))
    ok = th.ToolExecutionResult(is_error=False, content=({"type": "text", "text": "ok"},))
    result = th.log.ToolResultData.from_result(0, step, f"c{step}", ok)
    session.append("tool/result", result, source_event_seqs=[call.seq])


def bounded(work: object) -> None:
    """Run ``work()`` in a thread; fail if it has not returned within ``BOUND`` seconds."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()  # type: ignore[operator]
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), "still waiting"
    if errors:
        raise errors[0]


def test_a_syncer_thread_that_cannot_start_syncs_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # At a process's thread limit Thread.start() raises RuntimeError. The append that asked for
    # the fsync must not raise after its line was written, and sync()/close() must not wait for
    # a thread that never ran.
    real_start = threading.Thread.start

    def start(self: threading.Thread) -> None:
        if self.name.startswith("trio_harness fsync"):
            raise RuntimeError("can't start new thread")
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    path = tmp_path / "s.jsonl"
    session = th.log.DurableSession.open(path, fsync="step")
    pair(session, 0)  # the step's end requests an fsync
    assert [event.seq for event in session.events] == [0, 1]
    assert session.synced == 2  # synced in the appending thread instead
    pair(session, 1)
    bounded(session.sync)
    assert session.synced == 4
    bounded(session.close)
    assert len(th.log.load_session_log(path).events) == 4


@pytest.fixture
def interruptible() -> Iterator[None]:
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs pthread_kill")
def test_a_ctrl_c_during_a_slow_final_fsync_still_releases_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interruptible: None
) -> None:
    path = tmp_path / "s.jsonl"
    session = th.log.DurableSession.open(path, fsync="never")
    pair(session, 0)
    entered, release, done = threading.Event(), threading.Event(), threading.Event()
    real_fsync = os.fsync

    def slow(fd: int) -> None:
        entered.set()
        release.wait(5)  # a slow disk; the bound keeps a close that waits from hanging
        real_fsync(fd)
        done.set()

    monkeypatch.setattr(os, "fsync", slow)

    def interrupt_once_syncing() -> None:
        assert entered.wait(BOUND)
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    helper = threading.Thread(target=interrupt_once_syncing, daemon=True)
    helper.start()
    with pytest.raises(KeyboardInterrupt):
        session.close()  # waits for the final fsync; Ctrl-C
    # close() gave up waiting at once: the fsync is still running, and the log says closed.
    assert not done.is_set()
    assert session.closed
    helper.join(BOUND)
    release.set()
    # Once that fsync is done, the syncer thread closes the descriptor: the lock is released
    # and the log reopens in this very process.
    thread = session._syncer._thread
    assert thread is not None
    thread.join(BOUND)
    assert not thread.is_alive()
    monkeypatch.undo()
    with th.log.DurableSession.open(path) as reopened:
        assert len(reopened.events) == 2
