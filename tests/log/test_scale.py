"""100,000-event logs write and reload, in work linear in the number of events.

Linearity is asserted on deterministic counts, not on time: the number of Python-level and C
calls a write and a reload make (``sys.setprofile``) per event is the same for 1,000 and 10,000
events, and a reload reads the file once. Timings live in ``bench/bench_journal.py``.
"""

from __future__ import annotations

import builtins
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import trio_harness as th
from tests.support.counting import count_calls


def write_log(path: Path, pairs: int) -> None:
    """``pairs`` tool/call + tool/result pairs, through the durable log."""
    result = th.ToolExecutionResult(is_error=False, content=({"type": "text", "text": "ok"},))
    with th.log.DurableSession.open(path, fsync="never", clock=lambda: 1.0) as session:
        for number in range(pairs):
            call_id = f"call-{number}"
            data = th.log.ToolCallData(0, number // 10, call_id, "read", '{"path":"a.txt"}')
            seq = session.append("tool/call", data).seq
            answer = th.log.ToolResultData.from_result(0, number // 10, call_id, result)
            session.append("tool/result", answer, source_event_seqs=(seq,))


@pytest.mark.slow
def test_a_100000_event_log_writes_and_reloads(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    write_log(path, 50_000)
    loaded = th.log.load_session_log(path)
    assert len(loaded.events) == 100_000
    assert loaded.events[-1].seq == 99_999
    assert loaded.events[-1].source_event_seqs == (99_998,)
    assert loaded.events[99_998].data.call_id == "call-49999"
    assert th.log.check_replay(loaded.events).valid


@pytest.mark.slow
def test_write_and_reload_work_grows_linearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    write_small = count_calls(lambda: write_log(small, 500))
    write_large = count_calls(lambda: write_log(large, 5_000))
    load_small = count_calls(lambda: th.log.load_session_log(small))
    load_large = count_calls(lambda: th.log.load_session_log(large))
    reopen_large = count_calls(lambda: th.log.DurableSession.open(large).close())
    # Ten times the events, ten times the calls (a fixed setup cost aside): linear, not worse.
    assert 9.0 * write_small <= write_large <= 10.2 * write_small
    assert 9.0 * load_small <= load_large <= 10.2 * load_small
    assert reopen_large <= 1.05 * load_large

    # A reload reads the file once, as one read of its whole size.
    reads: Counter[str] = Counter()
    real_open = builtins.open

    def counting_open(*args: Any, **kwargs: Any) -> Any:
        file = real_open(*args, **kwargs)
        read = file.read

        def counted(*read_args: Any) -> Any:
            data = read(*read_args)
            reads["calls"] += 1
            reads["bytes"] += len(data)
            return data

        file.read = counted
        return file

    monkeypatch.setattr(builtins, "open", counting_open)
    th.log.load_session_log(large)
    monkeypatch.undo()
    assert reads == {"calls": 1, "bytes": large.stat().st_size}
