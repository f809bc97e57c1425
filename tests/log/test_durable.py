"""A durable session log: every event on disk as it happens, the wire form unchanged, one writer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

import trio_harness as th
from tests.support.demo_steps import Ticker, demo_calls, runtime, two_steps


async def test_a_durable_log_holds_the_wire_form_plus_when(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    path = tmp_path / "session.jsonl"
    memory = th.Session()
    await two_steps(memory)
    with th.log.DurableSession.open(path, clock=Ticker()) as durable:
        await two_steps(durable)
        assert durable.times == [1000.0 + 0.5 * n for n in range(len(durable.events))]
    assert [e.to_json() for e in durable.events] == [e.to_json() for e in memory.events]
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    wire = [json.loads(line) for line in lines[:-1]]
    assert [line.pop("at") for line in wire] == durable.times
    # Without its "at" key each line is exactly the event's wire form, in upstream key order.
    assert wire == [e.to_json() for e in memory.events]
    assert [list(line) for line in wire] == [list(e.to_json()) for e in memory.events]
    # The file is also a plain session log.
    text = path.read_text(encoding="utf-8")
    assert th.Session.from_jsonl(text).events == memory.events
    loaded = th.log.load_session_log(path)
    assert loaded.events == tuple(memory.events)
    assert loaded.times == tuple(durable.times)
    assert loaded.cut is None
    assert loaded.salvaged is None
    assert loaded.valid_bytes == len(text.encode("utf-8"))
    assert loaded.session().events == memory.events
    # The aborted step recorded the pool's synthetic results.
    codes = [e.data.error.code for e in memory.events if e.type == "tool/result" and e.data.error]
    assert codes == [
        "ABORTED",
        "ABORTED",
        "ABORTED_BEFORE_DISPATCH",
        "ABORTED_BEFORE_DISPATCH",
        "ABORTED_BEFORE_DISPATCH",
        "ABORTED_BEFORE_DISPATCH",
    ]


async def test_each_event_is_in_the_file_before_the_pool_moves_on(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    path = tmp_path / "session.jsonl"
    seen: list[list[str]] = []
    rt = runtime()
    original = rt.scheduler

    class Peek:
        # Reads the file (another handle) each time the pool prepares a call.
        async def prepare(self, input: Any) -> Any:
            lines = path.read_text(encoding="utf-8").splitlines()
            seen.append([json.loads(line)["data"].get("callId", "result") for line in lines])
            return await original.prepare(input)

        def __getattr__(self, name: str) -> Any:
            return getattr(original, name)

    rt.scheduler = Peek()  # type: ignore[assignment]
    with th.log.DurableSession.open(path, fsync="never") as session:
        await th.execute_tool_calls(rt, session, demo_calls(), max_parallel_tool_calls=2)
    # Prepare runs right after the call's tool/call was appended: it is already on disk.
    assert [lines[-1] for lines in seen] == ["c1", "c2", "c3", "c4", "c5", "c6"]
    assert len(seen[3]) == 7  # c1-c3 calls and results, then c4's call


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # 12 events; then close() syncs once more.
        ("event", 12 + 1),
        # Replay-valid moments: after c3 (end of the first group), c4, c6; then close().
        ("step", 3 + 1),
        ("never", 1),
    ],
)
async def test_fsync_policy(
    tmp_path: Path,
    autojump_clock: trio.testing.MockClock,
    monkeypatch: pytest.MonkeyPatch,
    policy: th.log.FsyncPolicy,
    expected: int,
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    session = th.log.DurableSession.open(tmp_path / "s.jsonl", fsync=policy)
    monkeypatch.setattr(os, "fsync", counting_fsync)
    await th.execute_tool_calls(runtime(), session, demo_calls(), max_parallel_tool_calls=2)
    assert len(session.events) == 12
    session.close()
    assert len(synced) == expected
    session.close()  # idempotent
    assert len(synced) == expected


def test_sync_forces_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with th.log.DurableSession.open(tmp_path / "s.jsonl", fsync="never") as session:
        synced: list[int] = []
        monkeypatch.setattr(os, "fsync", synced.append)
        session.append("note", {"a": 1})
        assert synced == []
        session.sync()
        assert len(synced) == 1


def test_unknown_policy_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="fsync must be one of event, step, never, not 'always'"):
        th.log.DurableSession.open(tmp_path / "s.jsonl", fsync="always")  # type: ignore[arg-type]
    assert not (tmp_path / "s.jsonl").exists()


def test_a_second_writer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with th.log.DurableSession.open(path) as first:
        first.append("note", {"n": 1})
        with pytest.raises(th.log.SessionLogLockedError) as caught:
            th.log.DurableSession.open(path)
        assert caught.value.code == "SESSION_LOG_LOCKED"
        assert str(caught.value) == (
            f"{path}: session log is open for writing by another session (file lock held)"
        )
        first.append("note", {"n": 2})
    # Closing released the lock; the refused open changed nothing.
    with th.log.DurableSession.open(path) as again:
        assert [e.data for e in again.events] == [{"n": 1}, {"n": 2}]


WRITER = """
import sys, trio_harness as th
try:
    session = th.log.DurableSession.open(sys.argv[1])
except th.log.SessionLogLockedError as error:
    print("refused:", error.code)
    raise SystemExit(3)
session.append("note", {"from": "child"})
print("holding", flush=True)
sys.stdin.readline()
session.close()
"""


def test_a_writer_in_another_process_is_refused_both_ways(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with th.log.DurableSession.open(path) as session:
        done = subprocess.run(
            [sys.executable, "-c", WRITER, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (done.returncode, done.stdout) == (3, "refused: SESSION_LOG_LOCKED\n")
        session.append("note", {"from": "parent"})
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "holding\n"
        with pytest.raises(th.log.SessionLogLockedError):
            th.log.DurableSession.open(path)
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=60)
        child.stdout.close()  # type: ignore[union-attr]
    assert [e.data for e in th.log.load_session_log(path).events] == [
        {"from": "parent"},
        {"from": "child"},
    ]


def test_reopening_continues_the_log(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with th.log.DurableSession.open(path, clock=lambda: 5.0) as session:
        session.append("note", {"n": 0})
    with th.log.DurableSession.open(path, clock=lambda: 6.0) as session:
        assert session.recovered.cut is None
        assert session.times == [5.0]
        event = session.append("note", {"n": 1}, source_event_seqs=[0])
        assert (event.seq, event.source_event_seqs) == (1, (0,))
        assert session.times == [5.0, 6.0]
    loaded = th.log.load_session_log(path)
    assert [e.data for e in loaded.events] == [{"n": 0}, {"n": 1}]
    assert loaded.times == (5.0, 6.0)


def test_application_data_must_be_json(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with th.log.DurableSession.open(path) as session:
        with pytest.raises(
            TypeError, match=r"^Session.append: data.when is not JSON: type object$"
        ):
            session.append("note", {"when": object()})
        with pytest.raises(ValueError, match=r"^Session.append: data is NaN"):
            session.append("note", float("nan"))
        assert session.events == []
        session.append("note", None)
    assert len(th.log.load_session_log(path).events) == 1


def test_a_closed_log_refuses_appends(tmp_path: Path) -> None:
    session = th.log.DurableSession.open(tmp_path / "s.jsonl")
    assert not session.closed
    session.close()
    assert session.closed
    assert "closed" in repr(session)
    with pytest.raises(ValueError, match="session log is closed"):
        session.append("note", {})


def test_a_failed_write_leaves_no_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with th.log.DurableSession.open(tmp_path / "s.jsonl", fsync="event") as session:
        session.append("note", {"n": 0})

        def broken(fd: int) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "fsync", broken)
        with pytest.raises(OSError, match="No space left"):
            session.append("note", {"n": 1})
        assert [e.data for e in session.events] == [{"n": 0}]
        assert len(session.times) == 1
        monkeypatch.undo()
        session.append("note", {"n": 2})
    assert [e.data for e in th.log.load_session_log(session.path).events] == [{"n": 0}, {"n": 2}]


def test_it_is_constructed_only_by_open() -> None:
    with pytest.raises(TypeError, match=r"use DurableSession.open\(path\)"):
        th.log.DurableSession()


def test_sources_must_be_earlier_events(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with th.log.DurableSession.open(path) as session:
        session.append("note", {})
        for bad in (1, -1, 5):
            with pytest.raises(ValueError, match="not the seq of an earlier event"):
                session.append("note", {}, source_event_seqs=[bad])
        for wrong in (True, "0"):
            with pytest.raises(TypeError, match=r"source_event_seqs\[0\] must be an int"):
                session.append("note", {}, source_event_seqs=[wrong])  # type: ignore[list-item]
        session.append("note", {}, source_event_seqs=[0])
    assert [e.source_event_seqs for e in th.log.load_session_log(path).events] == [None, (0,)]


def test_result_content_is_kept_as_written(tmp_path: Path) -> None:
    # Content blocks are whatever the tool rendered; the reader does not impose a shape on them.
    blocks = ({"type": "text", "text": "a"}, {"kind": "image", "bytes": 3}, "plain")
    result = th.ToolExecutionResult(is_error=False, content=blocks, meta={"k": [1, None]})
    path = tmp_path / "s.jsonl"
    with th.log.DurableSession.open(path) as session:
        call = session.append("tool/call", th.log.ToolCallData(0, 0, "c1", "t", "{}"))
        data = th.log.ToolResultData.from_result(0, 0, "c1", result)
        session.append("tool/result", data, source_event_seqs=[call.seq])
    loaded = th.log.load_session_log(path)
    assert loaded.events == tuple(session.events)
    assert loaded.events[1].data.message.content[0].content == blocks
