"""Reading a log back: crash cuts recover every complete event; bad lines are named; salvage."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio
import trio.testing

import trio_harness as th
from tests.support.demo_steps import Ticker, two_steps


@pytest.fixture
def real_log(tmp_path: Path) -> bytes:
    """The bytes of a real durable log: two pool steps (one aborted) and an app event."""
    path = tmp_path / "real.jsonl"
    with th.log.DurableSession.open(path, clock=Ticker()) as session:
        trio.run(two_steps, session, clock=trio.testing.MockClock(autojump_threshold=0))
    return path.read_bytes()


@pytest.mark.slow
def test_a_cut_at_every_byte_offset_recovers_every_complete_event(
    real_log: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Durability is not under test here, and thousands of real fsyncs would take minutes.
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    full = tmp_path / "full.jsonl"
    full.write_bytes(real_log)
    events = th.log.load_session_log(full).events
    assert len(events) == real_log.count(b"\n") == 25
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"")
    for offset in range(len(real_log) + 1):
        part = real_log[:offset]
        complete = part.count(b"\n")
        line_start = part.rfind(b"\n") + 1
        # Rewritten in place: ext4 flushes a file truncated to zero and rewritten, at every close.
        with open(path, "r+b") as file:
            file.write(part)
            file.truncate(offset)
        with th.log.DurableSession.open(path) as session:
            assert session.events == list(events[:complete]), offset
            cut = session.recovered.cut
            if line_start == offset:
                assert cut is None, offset
            else:
                assert cut == th.log.LogCut(complete + 1, line_start, part[line_start:]), offset
            # The cut is gone from the file; appending continues after the last complete event.
            assert path.stat().st_size == line_start
            session.append("note", {"resumed": offset})
        reread = th.log.load_session_log(path)
        assert reread.cut is None
        assert reread.events[:complete] == events[:complete]
        assert reread.events[complete].data == {"resumed": offset}


def test_a_read_only_load_reports_the_cut_and_leaves_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with th.log.DurableSession.open(path) as session:
        session.append("note", {"n": 0})
        session.append("note", {"n": 1})
    content = path.read_bytes()
    first_line = content.index(b"\n") + 1
    path.write_bytes(content[:-5])
    loaded = th.log.load_session_log(path)
    assert [e.data for e in loaded.events] == [{"n": 0}]
    assert loaded.cut == th.log.LogCut(2, first_line, content[first_line:-5])
    assert path.read_bytes() == content[:-5]


@pytest.mark.parametrize(
    ("old", "new", "field", "problem"),
    [
        (
            b'"isError":false',
            b'"isError":"no"',
            "data.message.content[0].isError",
            "data.message.content[0].isError must be a boolean, got string",
        ),
        (
            b'"callId":"c3","name"',
            b'"callId":3,"name"',
            "data.callId",
            "data.callId must be a string, got number",
        ),
        (b'"step":0,"callId":"c3"', b'"callId":"c3"', "data.step", "data.step is missing"),
        (b'"seq":4,', b'"seq":7,', "seq", "seq is 7, expected 4"),
        (
            b'"sourceEventSeqs":[1]',
            b'"sourceEventSeqs":[9]',
            "sourceEventSeqs[0]",
            "sourceEventSeqs[0] is 9, not the seq of an earlier event",
        ),
        (
            b'"error":{"name":"AbortError","code":"ABORTED"}',
            b'"error":{"name":"AbortError"}',
            "data.error.code",
            "data.error.code is missing",
        ),
        (b'"at":1006.5', b'"at":"yesterday"', "at", "at must be a number, got string"),
    ],
)
def test_a_malformed_line_names_its_line_and_field(
    real_log: bytes, tmp_path: Path, old: bytes, new: bytes, field: str, problem: str
) -> None:
    assert real_log.count(old) >= 1, old
    broken = real_log.replace(old, new, 1)
    at = real_log.index(old)
    start = real_log.rfind(b"\n", 0, at) + 1
    line = real_log.count(b"\n", 0, start) + 1
    path = tmp_path / "broken.jsonl"
    path.write_bytes(broken)
    for read in (th.log.load_session_log, th.log.DurableSession.open):
        with pytest.raises(th.log.SessionLogError) as caught:
            read(path)
        error = caught.value
        assert (error.code, error.line, error.offset, error.field) == (
            "INVALID_SESSION_LOG",
            line,
            start,
            field,
        )
        assert str(error) == f"{path}: line {line} (byte {start}): {problem}"
    assert path.read_bytes() == broken  # a refused open changes nothing


def test_a_line_that_is_not_json_is_named(real_log: bytes, tmp_path: Path) -> None:
    lines = real_log.split(b"\n")
    lines[5] = b'{"seq":5,"type":'
    lines[6] = b"\xff\xfe not utf-8"
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(th.log.SessionLogError) as caught:
        th.log.load_session_log(path)
    assert (caught.value.line, caught.value.field) == (6, None)
    assert (
        str(caught.value) == f"{path}: line 6 (byte {sum(len(x) + 1 for x in lines[:5])}): not JSON"
    )


def test_salvage_keeps_the_valid_prefix(real_log: bytes, tmp_path: Path) -> None:
    lines = real_log.split(b"\n")
    lines[7] = lines[7].replace(b'"turn":0', b'"turn":null', 1)
    broken = b"\n".join(lines)
    path = tmp_path / "broken.jsonl"
    path.write_bytes(broken)
    loaded = th.log.load_session_log(path, salvage=True)
    assert len(loaded.events) == 7
    assert loaded.salvaged is not None
    assert loaded.salvaged.line == 8
    assert loaded.salvaged.field == "data.turn"
    assert loaded.valid_bytes == sum(len(x) + 1 for x in lines[:7])
    with th.log.DurableSession.open(path, salvage=True) as session:
        assert len(session.events) == 7
        assert session.recovered.salvaged is not None
        session.append("note", {"after": "salvage"})
    # What salvage dropped is kept beside the log, not destroyed.
    assert Path(str(path) + ".salvaged").read_bytes() == broken[loaded.valid_bytes :]
    assert len(th.log.load_session_log(path).events) == 8


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "{path} is empty: no session events"),
        (b"\n\n  \n", "{path} is empty: no session events"),
        (
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "{path} is not a trio_harness session log: line 1: not JSON",
        ),
        (b"name,age\nada,36\n", "{path} is not a trio_harness session log: line 1: not JSON"),
        (
            b"[1, 2, 3]\n",
            "{path} is not a trio_harness session log: line 1: an event must be an object, got array",
        ),
        (
            b'{"hello": "world"}\n',
            '{path} is not a trio_harness session log: line 1: the event has an unknown field "hello"',
        ),
        (
            b"just some words without a newline",
            "{path} is not a trio_harness session log: line 1: an incomplete line that is not a session event",
        ),
    ],
)
def test_foreign_and_empty_files_get_a_clear_error(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "foreign.txt"
    path.write_bytes(content)
    with pytest.raises(th.log.SessionLogError) as caught:
        th.log.load_session_log(path)
    assert str(caught.value).startswith(message.format(path=path))
    if content.strip():
        for salvage in (False, True):
            with pytest.raises(th.log.SessionLogError):
                th.log.DurableSession.open(path, salvage=salvage)
        assert path.read_bytes() == content  # never truncated, not even in salvage mode
    else:
        # An empty file is a new log to write to.
        with th.log.DurableSession.open(path) as session:
            assert session.events == []


def test_a_trailing_non_event_fragment_is_an_error_not_a_cut(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with th.log.DurableSession.open(path) as session:
        session.append("note", {})
    with open(path, "ab") as file:
        file.write(b"garbage")
    with pytest.raises(
        th.log.SessionLogError, match=r"line 2 .*: an incomplete line that is not a session event"
    ):
        th.log.load_session_log(path)
