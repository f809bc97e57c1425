"""The example agent's approval, as a user runs it: real processes, the real ``openai`` SDK,
the strict OpenAI-compatible server on 127.0.0.1 (400 for an unanswered or out-of-order tool
call).

Inline (``--approval ask``): the question shows the tool, its arguments and the reason; ``y``
runs the write, ``n <why>`` refuses it with the reason the model sees, and Ctrl-C at the
question aborts the turn (the write never runs). Deferred (``--approval defer``): the turn ends
paused and the program exits; another process decides (``--approve``, ``--reject``,
``--edit``) and resumes, also after ``kill -9`` at any instant of either run.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import trio

import trio_harness as th
from trio_harness.lowlevel import check_log

from .process import spawn
from .strict_server import Policy, StrictServer, conversation_problems

AGENT = str(Path(__file__).resolve().parents[2] / "examples" / "agent.py")
ENV = {"OPENAI_API_KEY": "sk-test"}
PROMPT = "approve? [y/n] "

# read notes.txt || write a.txt (needs approval) -> read a.txt; then the answer.
POLICY = Policy(
    first=[
        ("read_file", '{"path": "notes.txt"}'),
        ("write_file", '{"path": "a.txt", "text": "A"}'),
        ("read_file", '{"path": "a.txt"}'),
    ],
    answer="Wrote a.txt.",
)
WRITE_ID = "call_2_1"  # the strict server's id: the reply's position (system, user), index 1


def args(server: StrictServer, root: Path, *extra: str) -> list[str]:
    return [
        AGENT,
        "--base-url",
        server.url,
        "--model",
        "m",
        "--sandbox",
        str(root / "sandbox"),
        "--log",
        str(root / "agent.jsonl"),
        "--write-delay",
        "0.1",
        "--max-retries",
        "0",
        *extra,
    ]


def sandbox(root: Path) -> Path:
    (root / "sandbox").mkdir(parents=True)
    (root / "sandbox" / "notes.txt").write_text("milk\n")
    return root / "sandbox"


def valid_log(root: Path) -> list[th.log.SessionEvent]:
    events = list(th.log.load_session_log(root / "agent.jsonl").events)
    assert th.log.check_replay(events).valid
    assert check_log([event.to_json() for event in events]) == []
    state = th.agent.read_conversation(events)
    messages = list(state.messages)
    if state.paused is not None:
        # Waiting for decisions: the reply whose calls wait is the last message; what comes
        # before it is what a strict provider accepts.
        assert messages[-1]["tool_calls"]
        messages = messages[:-1]
    assert conversation_problems(messages) == []
    return events


def tool_contents(server: StrictServer) -> list[str]:
    return [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize(
    ("answer", "written", "shown"),
    [
        (b"y\n", True, "wrote 1 characters to a.txt"),
        (b"maybe\nn keep the sandbox clean\n", False, "keep the sandbox clean"),
    ],
)
async def test_the_terminal_prompt_shows_the_call_and_takes_the_answer(
    tmp_path: Path, answer: bytes, written: bool, shown: str
) -> None:
    files = sandbox(tmp_path)
    with StrictServer(POLICY) as server:
        async with spawn(args(server, tmp_path, "--prompt", "go"), env=ENV, stdin=True) as child:
            await child.wait_for_prompt(PROMPT)
            assert child.lines[-2:] == [
                f'approve write_file ({WRITE_ID})? tool "write_file" needs approval',
                "  arguments: path='a.txt', text='A'",
            ]
            assert child.process.stdin is not None
            await child.process.stdin.send_all(answer)
            code, out, err = await child.finish()
        assert code == 0, err
        assert "assistant> Wrote a.txt." in out
        assert (files / "a.txt").exists() is written
        contents = tool_contents(server)
        assert shown in contents[1]
        assert server.rejections == []
    valid_log(tmp_path)


async def test_ctrl_c_at_the_prompt_aborts_the_turn_and_the_write_never_runs(
    tmp_path: Path,
) -> None:
    files = sandbox(tmp_path)
    with StrictServer(POLICY) as server:
        async with spawn(args(server, tmp_path, "--prompt", "go"), env=ENV, stdin=True) as child:
            await child.wait_for_prompt(PROMPT)
            child.interrupt()
            await child.wait_for("aborting the turn")
            await child.wait_for("(turn ended: aborted after 1 step)")
            code, _, err = await child.finish()
        assert code == 0, err
        assert not (files / "a.txt").exists()
        events = valid_log(tmp_path)
        # Asked, never decided; answered as never started (the read after it too).
        kinds = [e.type for e in events if e.type.startswith("approval/")]
        assert kinds == ["approval/pending"]
        codes = [
            e.data.error.code
            for e in events
            if e.type == "tool/result" and e.data.error is not None
        ]
        assert codes == ["ABORTED_BEFORE_DISPATCH", "ABORTED_BEFORE_DISPATCH"]
        # The conversation goes on: the next turn is accepted by the strict server.
        resumed = args(server, tmp_path, "--approval", "off", "--prompt", "again")
        async with spawn(resumed, env=ENV) as child:
            code, _, err = await child.finish()
        assert code == 0, err
        assert (files / "a.txt").read_text() == "A"
        assert server.rejections == []
    valid_log(tmp_path)


@pytest.mark.parametrize(
    ("decision", "content"),
    [
        (("--approve", WRITE_ID), "A"),
        (("--edit", WRITE_ID + '={"path": "a.txt", "text": "edited"}'), "edited"),
        (("--reject", WRITE_ID + "=not now"), None),
    ],
)
async def test_a_paused_turn_is_decided_and_resumed_by_another_process(
    tmp_path: Path, decision: tuple[str, str], content: str | None
) -> None:
    files = sandbox(tmp_path)
    with StrictServer(POLICY) as server:
        paused = args(server, tmp_path, "--approval", "defer", "--prompt", "go")
        async with spawn(paused, env=ENV) as child:
            code, out, err = await child.finish()
        assert code == 0, err
        assert "(turn ended: paused after 0 steps)" in out
        assert f"(approval waiting: write_file ({WRITE_ID}) " in out
        assert not (files / "a.txt").exists()
        async with spawn(args(server, tmp_path, "--approval", "defer"), env=ENV) as child:
            code, out, err = await child.finish()
        assert "paused: 1 call(s) waiting for approval: write_file (call_2_1)" in out
        async with spawn(
            args(server, tmp_path, "--approval", "defer", *decision), env=ENV
        ) as child:
            code, out, err = await child.finish()
        assert code == 0, err
        assert "assistant> Wrote a.txt." in out
        if content is None:
            assert not (files / "a.txt").exists()
            assert tool_contents(server)[1] == (
                'Error: the user rejected tool "write_file": not now'
            )
        else:
            assert (files / "a.txt").read_text() == content
        assert server.rejections == []
    valid_log(tmp_path)


def lines_of(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


async def killed_at(child_args: list[str], log: Path, target: int) -> None:
    """Run the agent and ``kill -9`` it once its log has ``target`` lines (or it ended)."""
    async with spawn(child_args, env=ENV) as child:
        with trio.fail_after(30):
            # Polls a file another process writes (no event to wait on), in real time.
            while lines_of(log) < target and child.process.poll() is None:  # noqa: ASYNC110
                await trio.sleep(0.001)
        child.process.send_signal(signal.SIGKILL)
        await child.process.wait()


def ran_only_approved(events: list[th.log.SessionEvent]) -> bool:
    """Whether every write that ran (a success result) had an approval recorded before its
    ``tool/call``, and no call got two decisions."""
    approved: dict[str, int] = {}
    decided: list[tuple[int, int, int]] = []
    for event in events:
        if event.type == "approval/decision":
            data = event.data
            decided.append((data["turn"], data["step"], data["index"]))
            if data["approved"]:
                approved.setdefault(data["id"], event.seq)
    calls = {e.seq: e for e in events if e.type == "tool/call"}
    for event in events:
        if event.type != "tool/result" or event.data.message.content[0].is_error:
            continue
        call = calls[event.source_event_seqs[0]]
        if call.data.name == "write_file" and approved.get(call.data.call_id, call.seq) >= call.seq:
            return False
    return len(decided) == len(set(decided))


@pytest.mark.slow
async def test_kill_9_at_any_instant_of_the_pause_or_the_resume_then_resume(
    tmp_path: Path,
) -> None:
    # Every line boundary of the pausing run and of the resuming run is a kill instant. After
    # each kill, one more process decides (approves the write) and asks again: the strict
    # server must accept every request, the log must pass check-log, and the write runs at most
    # once, and only with its approval recorded before it.
    with StrictServer(POLICY, delay=0.02) as server:
        full = tmp_path / "full"
        sandbox(full)
        pause = ("--approval", "defer", "--prompt", "go")
        resume = ("--approval", "defer", "--approve", WRITE_ID, "--prompt", "again")
        async with spawn(args(server, full, *pause), env=ENV) as child:
            assert (await child.finish())[0] == 0
        paused_lines = lines_of(full / "agent.jsonl")
        async with spawn(args(server, full, *resume), env=ENV) as child:
            assert (await child.finish())[0] == 0
        total = lines_of(full / "agent.jsonl")
        assert paused_lines > 5
        assert total > paused_lines + 5

        instants: list[tuple[str, int, bool]] = []
        for target in range(1, total):
            root = tmp_path / f"kill-{target}"
            sandbox(root)
            log = root / "agent.jsonl"
            if target < paused_lines:
                await killed_at(args(server, root, *pause), log, target)
            else:
                async with spawn(args(server, root, *pause), env=ENV) as child:
                    assert (await child.finish())[0] == 0
                await killed_at(args(server, root, *resume), log, target)
            data = log.read_bytes()
            events = th.log.load_session_log(log).events
            was_paused = th.agent.read_conversation(events).paused is not None
            instants.append(("pause" if target < paused_lines else "resume", target, was_paused))
            async with spawn(args(server, root, *resume), env=ENV) as child:
                code, out, err = await child.finish()
            assert code == 0, (target, out, err)
            assert "(model request failed" not in out, (target, out)
            events = valid_log(root)
            assert ran_only_approved(events), target
            assert data.count(b"\n") >= min(target, lines_of(log)), target
    assert server.rejections == []
    paused_states = sum(1 for _, _, paused in instants if paused)
    print(
        f"\nkill -9 instants: {len(instants)} "
        f"({sum(1 for k, _, _ in instants if k == 'pause')} in the pausing run, "
        f"{sum(1 for k, _, _ in instants if k == 'resume')} in the resuming run); "
        f"logs left paused: {paused_states}; requests: {len(server.requests)}"
    )
    assert len(instants) == total - 1
