"""Real SIGINTs and SIGTERMs sent to an agent app running under ``run_app`` in a subprocess:
consecutive ``abort_on_sigint`` blocks (one per turn, as the docs' agent has them), a second
Ctrl-C right after a turn that ended at once, a Ctrl-C after ``run_app`` printed its line, and
SIGTERM given the same clean path as Ctrl-C (each wait bounded in time, the child killed)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from .process import spawn

APP = str(Path(__file__).with_name("signal_app.py"))

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="needs POSIX signals")


async def test_consecutive_blocks_each_abort_their_own_turn() -> None:
    # Each block installs its handler when it opens and restores the one it found when it closes,
    # in order: the first Ctrl-C of every turn aborts that turn, never the app, and the Ctrl-C
    # after the last block is an ordinary one.
    turns = 16
    async with spawn([APP, "turns", str(turns), "0"]) as child:
        for index in range(turns):
            await child.wait_for(f"ready {index}")
            child.interrupt()
            await child.wait_for(f"turn {index} aborted ABORTED")
        await child.wait_for("between")
        child.interrupt()
        code, out, err = await child.finish()
    assert (code, err) == (130, "\ninterrupted\n")
    assert out == ""


async def test_a_second_ctrl_c_right_after_an_aborted_turn_stops_the_program() -> None:
    # The first Ctrl-C aborts turn 0, which ends at once, and turn 1 starts at once: a Ctrl-C
    # within `again_within` seconds of the aborted block's end is the second one, wherever it
    # lands (between the blocks, or in turn 1's block), and stops the program.
    async with spawn([APP, "turns", "2", "60"]) as child:
        await child.wait_for("ready 0")
        child.interrupt()
        await child.wait_for("turn 0 aborted ABORTED")
        child.interrupt()
        code, out, err = await child.finish()
    assert (code, err) == (130, "\ninterrupted\n")
    assert "turn 1" not in out
    assert "between" not in out


async def test_past_the_window_a_ctrl_c_aborts_the_next_turn() -> None:
    async with spawn([APP, "turns", "2", "0"]) as child:
        await child.wait_for("ready 0")
        child.interrupt()
        await child.wait_for("turn 0 aborted ABORTED")
        await child.wait_for("ready 1")
        child.interrupt()
        await child.wait_for("turn 1 aborted ABORTED")
        await child.wait_for("between")
        child.interrupt()
        code, _, err = await child.finish()
    assert (code, err) == (130, "\ninterrupted\n")


async def test_a_ctrl_c_after_run_app_printed_its_line_ends_the_process_quietly() -> None:
    # run_app returned 130; the interpreter waits for a non-daemon thread at exit. Another Ctrl-C
    # there kills the process by SIGINT (Python would report a KeyboardInterrupt "ignored in
    # threading" and go on waiting).
    async with spawn([APP, "linger"]) as child:
        await child.wait_for("ready")
        child.interrupt()
        await child.wait_for("returned 130")
        child.interrupt()
        code, out, err = await child.finish()
    assert (code, err) == (-signal.SIGINT, "\ninterrupted\n")
    assert out == ""


async def test_sigterm_during_a_turn_aborts_it_and_stops_the_program() -> None:
    async with spawn([APP, "turns", "2", "0"]) as child:
        await child.wait_for("ready 0")
        child.process.send_signal(signal.SIGTERM)
        code, out, err = await child.finish()
    # The turn was aborted as by Ctrl-C (its call answered), then the block raised SystemExit.
    assert (code, err) == (143, "\nterminated\n")
    assert out.splitlines() == ["step 0 ABORTED"]


async def test_sigterm_between_turns_stops_the_program_with_one_line() -> None:
    async with spawn([APP, "turns", "1", "0"]) as child:
        await child.wait_for("ready 0")
        child.interrupt()
        await child.wait_for("between")
        child.process.send_signal(signal.SIGTERM)
        code, _, err = await child.finish()
    assert (code, err) == (143, "\nterminated\n")


@pytest.mark.parametrize("second", [signal.SIGTERM, signal.SIGINT])
async def test_a_second_signal_after_sigterm_stops_a_block_that_ignores_its_abort(
    second: signal.Signals,
) -> None:
    async with spawn([APP, "stubborn"]) as child:
        await child.wait_for("ready")
        child.process.send_signal(signal.SIGTERM)
        await child.wait_for("abort requested")
        child.process.send_signal(second)
        code, out, err = await child.finish()
    assert (code, err) == (143, "\nterminated\n")
    assert out == ""
