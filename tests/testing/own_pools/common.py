"""Shared app, strategies and checker for the property tests (written from the public docs only).

The app: three tools over ``{"d": seconds, "h": hook answer, "pc": post-context, ...}``

* ``par``  -- classifier always ``True`` (parallel)
* ``ex``   -- no classifier (exclusive)
* ``mix``  -- classifier answers by argument: ``True`` only when ``safe`` is exactly ``True``
  (``1`` or ``"yes"`` are exclusive, as the docs say only an explicit ``True`` is parallel)

A pre-execute hook answers Allow / Deny / Ask (or defers with ``next()``) from ``h``; ``Ask``
goes to an approval service that sleeps virtual time, then answers. A post-execute hook adds a
context when ``pc`` is set. Bodies sleep ``d`` virtual seconds, may defer a context (``bc``) and
may raise (``boom``: a tool failure, which the runtime turns into a result).

A step may carry a planted scheduler failure: a wrapper (installed *before* the monitor, so
the monitor wraps it) that raises ``PlantedFailure`` the n-th time one phase is entered.
"""

from __future__ import annotations

import collections
import json
import math
import re
from collections.abc import Callable
from typing import Any

import trio
import trio.testing
from hypothesis import strategies as st

import trio_harness as th
from trio_harness import testing

IDS = ["a", "b", "c", ""]
DURATIONS = [0, 0.5, 1, 1.5, 2, 3]
APPROVAL_DELAYS = [0, 0.5, 1, 2]
APPROVAL_ANSWERS = ["allowed-once", "rejected", "cancelled", "unavailable"]
ABORT_TIMES = [None, None, 0.0, 0.25, 0.5, 1, 1.5, 2, 2.5, 3, 5]
PHASES = ["prepare", "dispatch", "finalize", "finish", "accept_context"]
AGENT = "agent-1"


FALSE_ALARMS: collections.Counter[str] = collections.Counter()
STATS: collections.Counter[str] = collections.Counter()  # what the drawn steps exercised


class PlantedFailure(Exception):
    """The scheduler failure a step may plant."""


class FailingScheduler:
    """Forwards every phase; raises PlantedFailure the ``nth`` time ``phase`` is entered."""

    def __init__(self, inner: Any, phase: str, nth: int) -> None:
        self.inner = inner
        self.phase = phase
        self.nth = nth
        self.count = 0

    def _tick(self, phase: str) -> None:
        if phase == self.phase:
            self.count += 1
            if self.count == self.nth:
                raise PlantedFailure(f"planted failure in {phase} #{self.nth}")

    async def prepare(self, input: Any) -> Any:
        self._tick("prepare")
        return await self.inner.prepare(input)

    async def dispatch(self, exec: Any) -> Any:
        self._tick("dispatch")
        return await self.inner.dispatch(exec)

    async def finalize(self, exec: Any, result: Any) -> Any:
        self._tick("finalize")
        return await self.inner.finalize(exec, result)

    def finish(self, exec: Any, result: Any) -> Any:
        self._tick("finish")
        return self.inner.finish(exec, result)


class SlowApproval:
    """An approval service taking virtual time; the delay and answer ride in the Ask reason."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    async def request(self, request: Any) -> str:
        self.requests.append(request)
        info = json.loads(request.reason)
        await trio.sleep(info["delay"])
        return info["answer"]


def _args(exec: Any) -> dict[str, Any]:
    args = exec.arguments
    return args if isinstance(args, dict) else {}


async def body(args: Any, ctx: Any) -> str:
    d = args.get("d", 0)
    if isinstance(d, (int, float)) and not isinstance(d, bool) and math.isfinite(d) and d > 0:
        await trio.sleep(min(d, 10))
    if args.get("bc"):
        ctx.defer_context(f"body context of {ctx.call_id!r}")
    if args.get("boom"):
        raise RuntimeError("the tool failed")
    return "ok"


async def pre_hook(exec: Any, next: Any) -> Any:
    h = _args(exec).get("h")
    if h == "allow":
        return th.Allow()
    if h == "deny":
        return th.Deny("denied by the hook")
    if isinstance(h, dict):  # ask
        return th.Ask(json.dumps(h))
    return await next()


async def post_hook(exec: Any, result: Any, next: Any) -> Any:
    pd = _args(exec).get("pd")
    if isinstance(pd, (int, float)) and not isinstance(pd, bool) and 0 < pd <= 10:
        await trio.sleep(pd)  # a post-execute hook that takes virtual time (commit is slow)
    pc = _args(exec).get("pc")
    if pc == "ctx":
        return th.Accept(
            additional_contexts=[th.context_message(f"post context of {exec.call_id!r}")]
        )
    if pc == "block":
        return th.Block(
            [{"type": "text", "text": "blocked"}],
            additional_contexts=[th.context_message("block context")],
        )
    return await next()


PARAMS = {
    "d": {"type": "number"},
    "h": {"type": "json"},
    "pc": {"type": "string"},
    "bc": {"type": "boolean"},
    "boom": {"type": "boolean"},
    "safe": {"type": "json"},
    "pd": {"type": "number"},
}


def _output() -> Any:
    return th.ToolOutput(
        schema={"type": "string"}, render=lambda a, v: [{"type": "text", "text": v}]
    )


def _mix_classifier(args: Any) -> Any:
    safe = args.get("safe")
    if safe == "raise":
        raise ValueError("the classifier failed")  # the runtime makes this EXCLUSIVE
    return safe


def default_make_runtime(approval: Any) -> Any:
    """The hook another person replaces: build the (empty) runtime the app is registered on."""
    return th.ToolRuntime(approval=approval)


def build_app(make_runtime: Callable[[Any], Any], failure: tuple[str, int] | None):
    approval = SlowApproval()
    runtime = make_runtime(approval)
    for name, classifier in [
        ("par", lambda args: True),
        ("ex", None),
        ("mix", _mix_classifier),  # True -> parallel; 1, "yes", None, raising -> exclusive
    ]:
        runtime.register(
            th.define_tool(
                name=name,
                description=name,
                parameters=PARAMS,
                output=_output(),
                execute=body,
                is_concurrency_safe=classifier,
            )
        )
    runtime.add_pre_execute(pre_hook)
    runtime.add_post_execute(post_hook)
    if failure is not None and failure[0] != "accept_context":
        runtime.scheduler = FailingScheduler(runtime.scheduler, *failure)
    return runtime, approval


def truth(name: str, args: Any) -> bool:
    """Which calls must run alone, written independently of the classifiers."""
    if name == "par":
        return False
    if name == "mix":
        return not (isinstance(args, dict) and args.get("safe") is True)
    return True


# ---------------------------------------------------------------- strategies


@st.composite
def call_args(draw):
    args: dict[str, Any] = {"d": draw(st.sampled_from(DURATIONS))}
    kind = draw(st.sampled_from(["none", "none", "allow", "deny", "ask"]))
    if kind == "ask":
        args["h"] = {
            "delay": draw(st.sampled_from(APPROVAL_DELAYS)),
            "answer": draw(st.sampled_from(APPROVAL_ANSWERS)),
        }
    elif kind != "none":
        args["h"] = kind
    pc = draw(st.sampled_from([None, None, "ctx", "block"]))
    if pc:
        args["pc"] = pc
    if draw(st.booleans()):
        args["bc"] = True
    if draw(st.integers(0, 3)) == 0:
        args["pd"] = draw(st.sampled_from([0.5, 1]))
    if draw(st.integers(0, 5)) == 0:
        args["boom"] = True
    return args


@st.composite
def one_call(draw):
    call_id = draw(st.sampled_from(IDS))
    name = draw(st.sampled_from(["par", "par", "ex", "mix", "mix"]))
    args = draw(call_args())
    if name == "mix":
        args["safe"] = draw(st.sampled_from([True, True, False, 1, "yes", "raise"]))
    text_kind = draw(st.integers(0, 9))
    if text_kind == 0:
        text = "{"  # not JSON: invalid arguments
    elif text_kind == 1:
        text = json.dumps({"d": "slow"})  # wrong type
    else:
        text = json.dumps(args)
    return th.ToolCallBlock(call_id, name, text)


@st.composite
def steps(draw, max_calls: int = 6):
    blocks = draw(st.lists(one_call(), min_size=0, max_size=max_calls))
    cap = draw(st.integers(1, 4))
    abort_at = draw(st.sampled_from(ABORT_TIMES))
    failure = None
    if draw(st.integers(0, 4)) == 0:
        failure = (draw(st.sampled_from(PHASES)), draw(st.integers(1, 3)))
    return blocks, cap, abort_at, failure


def describe(step) -> str:
    blocks, cap, abort_at, failure = step
    rows = [f"  ToolCallBlock({b.id!r}, {b.name!r}, {b.arguments!r})" for b in blocks]
    return (f"step: cap={cap!r} abort_at={abort_at!r} failure={failure!r}\n") + "\n".join(rows)


# ---------------------------------------------------------------- running one step


_IDLE_DURING_PREPARE = re.compile(
    r"^\[window-idle\] the pool waited with \d+ of \d+ bodies running while .* could start$"
)


def _slow_prepare(blocks) -> bool:
    """Some call's prepare takes virtual time (an Ask answered by the slow approval service)."""
    for b in blocks:
        args = th.parse_arguments(b.arguments)
        h = args.get("h") if isinstance(args, dict) else None
        if isinstance(h, dict) and h.get("delay", 0) > 0:
            return True
    return False


def check_step(step, make_runtime=default_make_runtime, pool=None) -> list[str]:
    """Run one step under a PoolMonitor in virtual time; return every problem found.

    ``pool``: ``None`` runs ``monitor.execute_tool_calls`` (the real pool, the documented way);
    otherwise an ``async pool(runtime, session, blocks, *, abort, max_parallel_tool_calls,
    accept_context, agent, tracer)`` with ``execute_tool_calls``'s contract, run with
    ``tracer=monitor`` and judged with ``monitor.check``.
    """
    blocks, cap, abort_at, failure = step
    runtime, approval = build_app(make_runtime, failure)
    monitor = testing.PoolMonitor(runtime, exclusive=truth)
    session = th.Session()
    contexts: list[Any] = []

    def accept_context(context):
        if (
            failure is not None
            and failure[0] == "accept_context"
            and len(contexts) + 1 == failure[1]
        ):
            contexts.append(context)
            raise PlantedFailure(f"planted failure in accept_context #{failure[1]}")
        contexts.append(context)

    box: dict[str, Any] = {"outcome": None, "raised": None}

    async def main():
        abort = trio.Event()
        if abort_at == 0.0:
            abort.set()
        async with trio.open_nursery() as nursery:
            if abort_at:

                async def set_abort():
                    await trio.sleep(abort_at)
                    abort.set()

                nursery.start_soon(set_abort)
            options = {
                "abort": abort,
                "max_parallel_tool_calls": cap,
                "accept_context": accept_context,
                "agent": AGENT,
            }
            try:
                if pool is None:
                    box["outcome"] = await monitor.execute_tool_calls(session, blocks, **options)
                else:
                    monitor.reset()
                    box["outcome"] = await pool(runtime, session, blocks, tracer=monitor, **options)
            except BaseException as error:
                box["raised"] = error
            box["abort_set_at_end"] = abort.is_set()
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    raised, outcome = box["raised"], box["outcome"]
    if pool is not None:
        monitor.check(
            session,
            blocks,
            cap=cap,
            raised=raised if raised is not None else False,
            outcome=outcome,
        )
    problems = [f"[{v.rule}] {v.message}" for v in monitor.violations()]
    STATS["steps"] += 1
    STATS["raised planted failure"] += isinstance(raised, PlantedFailure)
    STATS["aborted outcome"] += bool(outcome is not None and outcome.aborted)
    STATS["approval requests"] += len(approval.requests)
    STATS["repeated ids"] += len({b.id for b in blocks}) < len(blocks)
    STATS["calls"] += len(blocks)
    if raised is not None and not isinstance(raised, PlantedFailure):
        problems.append(f"[raised] unexpected {type(raised).__name__}: {raised!r}")
    if isinstance(raised, PlantedFailure) and failure is None:
        problems.append("[raised] a failure nobody planted")
    log = testing.check_session(session, allow_unpaired=raised is not None)
    problems += [f"[check_session] {v}" for v in log]
    if outcome is not None:
        if len(outcome.results) != len(blocks):
            problems.append(f"[outcome] {len(outcome.results)} results for {len(blocks)} calls")
        expected_contexts = [c for r in outcome.results for c in r.result.additional_contexts]
        if contexts != expected_contexts:
            problems.append(
                f"[contexts] accept_context got {contexts!r}, results carry {expected_contexts!r}"
            )
    return problems
