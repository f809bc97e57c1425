"""``abort_on_sigint`` with real SIGINTs sent to a subprocess (each wait bounded in time)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

import trio_harness as th

from .process import spawn

APP = str(Path(__file__).with_name("sigint_app.py"))

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="needs POSIX signals")


async def test_the_first_sigint_aborts_the_turn_cleanly() -> None:
    async with spawn([APP, "turn"]) as child:
        await child.wait_for("ready")
        child.interrupt()
        code, out, err = await child.finish()
    assert code == 0, err
    # The running body was cancelled and recorded as ABORTED; no traceback anywhere.
    assert out.splitlines() == ["abort requested", "aborted ABORTED"]
    assert err == ""


async def test_the_second_sigint_stops_hard_with_a_bare_keyboard_interrupt() -> None:
    async with spawn([APP, "stubborn"]) as child:
        await child.wait_for("ready")
        child.interrupt()
        await child.wait_for("abort requested")
        child.interrupt()
        code, out, err = await child.finish()
    assert code in (-signal.SIGINT, 130)
    assert "unreachable" not in out
    assert err.rstrip().splitlines()[-1] == "KeyboardInterrupt"
    assert "ExceptionGroup" not in err


def test_outside_the_main_thread_it_refuses_before_touching_signals() -> None:
    import threading

    import trio

    import trio_harness as th

    errors: list[BaseException] = []

    async def use() -> None:
        async with th.abort_on_sigint():
            pass

    def run() -> None:
        try:
            trio.run(use)
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    assert [str(error) for error in errors] == ["abort_on_sigint must be used from the main thread"]


def test_the_block_is_no_generator_left_for_the_interpreter_to_finalize() -> None:
    # A fresh attack from the docs (issue 32) saw, 1 run in 8, a Ctrl-C landing as the block
    # opened print ``RunFinishedError`` after ``interrupted``: the suspended async generator of
    # an ``@asynccontextmanager`` was finalized after ``trio.run`` ended. The block is a class.
    block = th.abort_on_sigint()
    assert not hasattr(block, "gen")
    assert hasattr(type(block), "__aenter__")
    assert hasattr(type(block), "__aexit__")
