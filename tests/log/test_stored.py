"""A durable log that keeps no events in memory (``keep_events=False``): the same file, line for
line, and the same events, read back from it when asked."""

from __future__ import annotations

import gc
import math
import threading
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

import trio_harness as th
from tests.log.test_encoding import VALUES
from tests.support.demo_steps import Ticker, two_steps
from tests.support.strategies import any_values
from trio_harness._json import (
    MAX_FINITE_JSON_INT,
    NOT_JSON,
    is_json_value,
    json_node_limit,
    set_json_node_limit,
    snapshot_json_value,
)
from trio_harness._log.events import SessionEvent
from trio_harness._log.journal import _FAST, event_line
from trio_harness._log.session import json_verdict
from trio_harness.lowlevel import js_json

DurableSession = th.log.DurableSession


async def test_a_log_that_keeps_no_events_writes_the_same_file_and_reads_the_same_events(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    kept_path, stored_path = tmp_path / "kept.jsonl", tmp_path / "stored.jsonl"
    with DurableSession.open(kept_path, clock=Ticker()) as kept:
        await two_steps(kept)
        kept.append("note", {"n": 1.5, "deep": [[{"x": None}]], "big": 10**21})
    with DurableSession.open(stored_path, clock=Ticker(), keep_events=False) as stored:
        assert not stored.keep_events
        await two_steps(stored)
        stored.append("note", {"n": 1.5, "deep": [[{"x": None}]], "big": 10**21})
        assert isinstance(stored.events, th.log.StoredEvents)
        assert isinstance(stored.times, th.log.StoredTimes)
        # Read while open, through every way a sequence is read.
        assert stored.events == kept.events
        assert list(stored.events) == kept.events
        assert stored.times == kept.times
        assert len(stored.events) == len(kept.events)
        assert stored.events[-1] == kept.events[-1]
        assert stored.events[3:5] == kept.events[3:5]
        assert stored.events[::2] == kept.events[::2]
        assert stored.events[5:2] == []
        with pytest.raises(IndexError):
            stored.events[len(kept.events)]
        assert f"{len(kept.events)}" in repr(stored.events)
        assert (
            repr(stored)
            == f"DurableSession({str(stored_path)!r}, {len(kept.events)} events, fsync=step)"
        )
    assert stored_path.read_bytes() == kept_path.read_bytes()
    # After close, the events are read from the file by its path.
    assert stored.events == kept.events
    assert stored.times[0] == kept.times[0]


async def test_reopened_without_keeping_events_it_appends_after_what_it_read(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    path = tmp_path / "log.jsonl"
    with DurableSession.open(path, clock=Ticker()) as first:
        await two_steps(first)
    with path.open("ab") as file:
        file.write(b'{"seq":')  # a crash cut
    with DurableSession.open(path, keep_events=False) as second:
        assert second.recovered.cut is not None
        # What opening read is not kept either: the events are the file's.
        assert second.recovered.events == ()
        assert second.events == first.events
        note = second.append("note", [1, 2])
        assert note.seq == len(first.events)
        assert second.events[-1] == note
    assert th.log.load_session_log(path).events == (*first.events, note)


def test_a_log_that_keeps_no_events_holds_none_in_memory(tmp_path: Path) -> None:
    def alive() -> int:
        gc.collect()
        return sum(1 for item in gc.get_objects() if isinstance(item, th.SessionEvent))

    before = alive()
    with DurableSession.open(tmp_path / "log.jsonl", fsync="never", keep_events=False) as log:
        for n in range(200):
            log.append("note", {"n": n, "text": "x" * 50})
        assert alive() == before
        assert len(log.events) == 200
        assert log.events[150].data == {"n": 150, "text": "x" * 50}
    with DurableSession.open(tmp_path / "kept.jsonl", fsync="never") as kept:
        for n in range(200):
            kept.append("note", {"n": n})
        assert alive() == before + 200


@pytest.mark.parametrize(
    "data",
    [math.nan, (1, 2), {1: "a"}, {"a": -0.0}, [2**1024], {"s": {1, 2}}],
    ids=["nan", "tuple", "int-key", "negative-zero", "huge-int", "set"],
)
def test_a_log_that_keeps_no_events_refuses_what_any_session_refuses(
    tmp_path: Path, data: Any
) -> None:
    with pytest.raises((TypeError, ValueError)) as expected:
        th.Session().append("note", data)
    path = tmp_path / "log.jsonl"
    with DurableSession.open(path, keep_events=False) as log:
        with pytest.raises(type(expected.value), match=None) as refused:
            log.append("note", data)
        assert str(refused.value) == str(expected.value)
        assert len(log.events) == 0
    assert path.read_bytes() == b""


def test_a_cycle_and_a_value_over_the_node_limit_are_refused_without_keeping_events(
    tmp_path: Path,
) -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    shared: list[Any] = [1, 2, 3]
    path = tmp_path / "log.jsonl"
    previous = set_json_node_limit(40)
    try:
        with DurableSession.open(path, keep_events=False) as log:
            with pytest.raises(ValueError, match="cycle") as refused:
                log.append("note", cycle)
            with pytest.raises(ValueError, match="cycle") as expected:
                th.Session().append("note", cycle)
            assert str(refused.value) == str(expected.value)
            # 41 nodes as a tree (the shared list counts at each place): over the limit.
            assert json_verdict([shared] * 10) is NOT_JSON
            assert snapshot_json_value([shared] * 10) is NOT_JSON
            with pytest.raises(ValueError, match="larger than the JSON node limit of 40"):
                log.append("note", [shared] * 10)
            log.append("note", [shared] * 9)  # 37 nodes
            assert len(log.events) == 1
        assert path.read_bytes().count(b"\n") == 1
    finally:
        set_json_node_limit(previous)


@given(VALUES)
def test_json_verdict_refuses_what_the_snapshot_refuses_and_knows_plain_numbers(
    value: Any,
) -> None:
    verdict = json_verdict(value)
    assert (verdict is NOT_JSON) == (snapshot_json_value(value) is NOT_JSON)
    if verdict is True:
        # Plain numbers: the C encoder writes what JavaScript's JSON.stringify writes, except
        # for a lone surrogate, which it keeps raw and JSON.stringify escapes; its text then
        # fails to encode as UTF-8, which sends ``event_line`` to ``js_json``.
        fast = _FAST(value)
        try:
            fast.encode("utf-8")
        except UnicodeEncodeError:
            line = event_line(SessionEvent(0, "v", value), True, "1")
            assert line == js_json({"seq": 0, "type": "v", "data": value, "at": 1}).encode() + b"\n"
        else:
            assert fast == js_json(value)


def _verdict_node_by_node(value: Any) -> Any:
    # ``json_verdict`` as a plain walk, every node popped and judged on its own: the reference
    # the faster walk (which judges a container's inert children in place) must agree with.
    limit = json_node_limit()
    plain = True
    nodes = 1
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is dict:
            nodes += len(item)
            if nodes > limit or any(type(key) is not str for key in item):
                return NOT_JSON
            stack.extend(item.values())
        elif kind is list:
            nodes += len(item)
            if nodes > limit:
                return NOT_JSON
            stack.extend(item)
        elif kind is int:
            if not -MAX_FINITE_JSON_INT <= item <= MAX_FINITE_JSON_INT:
                return NOT_JSON
            plain = plain and -(10**21) < item < 10**21
        elif kind is float:
            if not is_json_value(item):
                return NOT_JSON
            plain = plain and 1e-4 <= abs(item) < 1e16 and not item.is_integer()
        else:
            return NOT_JSON
    return plain


@given(st.one_of(any_values(), VALUES), st.sampled_from([4, 10**6]))
def test_json_verdict_agrees_with_a_node_by_node_walk(value: Any, limit: int) -> None:
    previous = set_json_node_limit(limit)
    try:
        assert json_verdict(value) is _verdict_node_by_node(value)
    finally:
        set_json_node_limit(previous)


def test_json_verdict_names_what_is_not_plain() -> None:
    for value in (1.0, 1e-7, 1e16, 10**21, -(10**21), [0.0], {"a": 2.0}):
        assert json_verdict(value) is False, value
    for value in (1.5, 1e-4, 10**21 - 1, [0.25, "1.0"], {"a": "e5"}, None, True, "x"):
        assert json_verdict(value) is True, value


@pytest.mark.parametrize(("fsync", "started"), [("step", True), ("event", True), ("never", False)])
def test_the_syncer_thread_starts_when_the_log_opens_unless_it_never_syncs(
    tmp_path: Path, fsync: Any, started: bool
) -> None:
    def syncers() -> int:
        return sum(1 for t in threading.enumerate() if t.name.startswith("trio_harness fsync"))

    before = syncers()
    with DurableSession.open(tmp_path / "log.jsonl", fsync=fsync) as log:
        assert syncers() == before + started
        log.append("note", 1)
    assert syncers() == before


def test_a_lone_surrogate_is_written_as_javascript_escapes_it() -> None:
    # Plain numbers, but a string the C encoder keeps raw: the line is JSON.stringify's.
    value = {"note": "a\ud800b", "n": 1}
    assert json_verdict(value) is True
    line = event_line(SessionEvent(0, "note", value), True, "1")
    assert line == b'{"seq":0,"type":"note","data":{"note":"a\\ud800b","n":1},"at":1}\n'
