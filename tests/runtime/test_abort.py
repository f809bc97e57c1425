"""The abort relay: one watcher per step cancels every registered body scope."""

from __future__ import annotations

import pytest
import trio
import trio.lowlevel
import trio.testing

from trio_harness._runtime.abort import (
    abort_relay,
    cancel_on_abort,
    current_relay,
)


async def test_private_watcher_cancels_at_the_abort_instant(autojump_clock: trio.abc.Clock) -> None:
    abort = trio.Event()

    async def set_later() -> None:
        await trio.sleep(1.5)
        abort.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(set_later)
        async with cancel_on_abort(abort) as scope:
            await trio.sleep(10)
        assert scope.cancelled_caught
        assert trio.current_time() == pytest.approx(1.5)


async def test_relay_cancels_every_registered_body(autojump_clock: trio.abc.Clock) -> None:
    abort = trio.Event()
    stopped: dict[int, float] = {}

    async def body(index: int) -> None:
        async with cancel_on_abort(abort) as scope:
            await trio.sleep(100)
        assert scope.cancelled_caught
        stopped[index] = trio.current_time()

    async with abort_relay(abort) as relay:
        assert current_relay(abort) is relay
        async with trio.open_nursery() as nursery:
            for index in range(3):
                nursery.start_soon(body, index)
            await trio.sleep(2)
            abort.set()
    assert stopped == {0: 2, 1: 2, 2: 2}
    assert current_relay(abort) is None


async def test_scope_registered_after_the_abort_is_cancelled_at_once() -> None:
    abort = trio.Event()
    async with abort_relay(abort):
        abort.set()
        await trio.testing.wait_all_tasks_blocked()
        async with cancel_on_abort(abort) as scope:
            await trio.sleep_forever()
        assert scope.cancelled_caught


async def test_exceptions_pass_through_unwrapped() -> None:
    abort = trio.Event()
    with pytest.raises(ValueError, match="boom"):
        async with cancel_on_abort(abort):
            raise ValueError("boom")
    with pytest.raises(KeyError):
        async with abort_relay(abort):
            raise KeyError("x")


async def test_outer_cancellation_is_not_mistaken_for_an_abort(
    autojump_clock: trio.abc.Clock,
) -> None:
    abort = trio.Event()
    with trio.move_on_after(3) as outer:
        async with cancel_on_abort(abort) as scope:
            await trio.sleep(10)
    assert outer.cancelled_caught
    assert not scope.cancelled_caught
    assert not abort.is_set()


async def test_no_event_means_a_plain_scope() -> None:
    async with cancel_on_abort(None) as scope:
        await trio.lowlevel.checkpoint()
    assert not scope.cancelled_caught


async def test_watchers_do_not_outlive_their_block() -> None:
    abort = trio.Event()
    async with cancel_on_abort(abort):
        pass
    async with abort_relay(abort):
        pass
    await trio.testing.wait_all_tasks_blocked()
    system_nursery = trio.lowlevel.current_root_task().child_nurseries
    watchers = [
        task.name
        for nursery in system_nursery
        for task in nursery.child_tasks
        if "abort-watcher" in task.name
    ]
    assert watchers == []
