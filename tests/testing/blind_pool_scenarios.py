"""One hand-made scenario per blind pool mutant (``blind_pool_mutants.json``): the step a
property test must reach to see the mutant, taken from its author's own check. The correct pool
keeps every guarantee on each (``test_blind_pool_mutants.py``)."""

from __future__ import annotations

from trio_harness.testing import PoolScenario, ScenarioCall, ScenarioStep

C, S, P = ScenarioCall, ScenarioStep, PoolScenario


def one(
    *calls: ScenarioCall, hooks: bool = True, approvals: bool = True, **step: object
) -> PoolScenario:
    """A one-step scenario."""
    return P(steps=(S(calls=calls, **step),), hooks=hooks, approvals=approvals)  # type: ignore[arg-type]


SCENARIOS: dict[str, PoolScenario] = {
    "001": one(C(id="a"), C(id="b"), C(id="c"), cap=2),
    "002": one(C(id="a", duration=2), C(id="b", duration=1)),
    "003": one(C(id="a", duration=2), C(id="b", tool="maybe", par=False)),
    "004": one(C(id="a", tool="write", duration=2), C(id="b")),
    "005": one(
        C(id="a", duration=3), C(id="b", duration=1), C(id="c", tool="flip"), hooks=False, cap=3
    ),
    "006": one(
        C(id="a", duration=1, failure="dispatch"), C(id="b", duration=2, failure="dispatch")
    ),
    "007": one(C(id="a", ends="set-abort"), C(id="b"), cap=1),
    "008": one(C(id="a", duration=1, failure="dispatch"), C(id="b", duration=2)),
    "009": one(C(id="a", duration=2), C(id="b", failure="prepare")),
    "010": one(C(id="a"), streamed=True, stream_fails=True),
    "011": one(C(id="a", context=True), accept_fails=True),
    "012": one(C(id="a", duration=2), C(id="b", duration=1)),
    "013": one(C(id="a", policy="ask"), C(id="b", policy="ask")),
    "014": one(C(id="a", policy="ask"), abort_at=0.5),
    "015": one(C(id="a", duration=2), abort_at=0.5),
    "016": one(C(id="a"), C(id="b"), abort_at=0),
    "017": one(C(id="a", duration=2), C(id="b", tool="write"), cancel_at=0.5),
    "018": one(C(id="a", duration=2), C(id="b", duration=1), cancel_at=1.5),
    "019": one(C(id="a"), C(id="b"), cap=1),
    "020": one(C(id="a", duration=2), C(id="b", duration=1, arrives_at=0.5), streamed=True),
    "021": one(C(id="a", duration=2), C(id="b", duration=1, arrives_at=0.5), streamed=True),
    "022": one(C(id="a"), C(id="b", arrives_at=0.5), streamed=True),
    "023": one(
        C(id="a", tool="write"), C(id="b", tool="write", failure="prepare"), C(id="c", tool="write")
    ),
    "024": one(C(id="c", duration=2), C(id="c", duration=1)),
    "025": one(C(id="c", duration=2), C(id="c", duration=1)),
    "026": one(C(id="a", ends="conclude"), C(id="b")),
    "027": one(C(id="k", tool="composite", ends="abort-first", sub_calls=(1, 1), duration=0)),
    "028": one(C(id="a", tool="maybe", par=False), C(id="b", tool="maybe", par=False)),
    "029": one(C(id="a", policy="deny")),
    "030": one(C(id="a", ends="set-abort-error")),
    "031": P(
        steps=(S(calls=(C(id="b", duration=3), C(id="a", duration=1, context=True)), abort_at=2),)
    ),
    "032": one(C(id="a"), C(id="b"), C(id="c"), cap=3),
    "033": one(C(id="a", ends="abort-on-commit"), C(id="b"), cap=1),
    "034": one(C(id="a", policy="hook-raises")),
    "035": one(C(id="a", wrapper_fails=True)),
    "036": one(C(id="a", context=True)),
    "037": one(C(id="a", duration=2, context=True), C(id="b", duration=1, context=True)),
    "038": one(C(id="a", failure="dispatch")),
    "039": one(C(id="a"), abort_at=0),
    "040": one(C(id="a"), abort_at=0),
    "041": P(steps=(S(calls=(C(id="a"),)), S(calls=(C(id="b", duration=5),), abort_at=1))),
    "042": one(C(id="a", policy="ask-cancelled")),
    "043": one(C(id="a", duration=1, failure="dispatch"), C(id="b", policy="ask")),
    "044": one(C(id="a", duration=1, failure="dispatch"), C(id="b", policy="ask")),
    "045": one(C(id="a", duration=3), C(id="b", duration=1), C(id="c", duration=1), cap=2),
    "046": one(C(id="a"), cap=True),
    "047": one(C(id="a"), cap=0),
    "048": one(C(id="a", duration=5), streamed=True, abort_at=1),
    "049": one(C(id="a", duration=5), C(id="b", arrives_at=2), streamed=True, abort_at=1),
    "050": one(
        C(id="a", duration=1, slow_post=True), C(id="b", arrives_at=1.5), streamed=True, cancel_at=2
    ),
    "051": one(C(id="k", tool="composite", sub_calls=(1, 1), sub_window=1, duration=0)),
    "052": one(C(id="a")),
    "053": one(C(id="a"), C(id="b", tool="odd")),
    "054": one(
        C(id="z", duration=0.5, failure="late-finalize"), C(id="a", duration=1, failure="dispatch")
    ),
    "055": one(C(id="a", duration=5), abort_at=1),
    "056": one(C(id="a", duration=2)),
    "057": one(C(id="a"), abort_at=0),
    "059": one(C(id="a", duration=5), C(id="b", duration=5), cancel_at=1),
    "060": one(
        C(id="a", duration=2), C(id="b", duration=2), C(id="c", tool="maybe", par=False), cap=3
    ),
    "061": one(C(id="a", tool="write", duration=2), C(id="b", arrives_at=0.5), streamed=True),
    "062": one(C(id="a"), streamed=True),
    "063": one(C(id="a", policy="guarded"), hooks=False),
    # The second blind round (another author, the same rules: code and docs only).
    # blocked call must be reclassified after every settle
    "b01": one(
        C(id="a", duration=3), C(id="b", duration=1), C(id="c", tool="flip", duration=1), cap=3
    ),
    # window counts bodies in flight, not uncommitted results
    "b02": one(
        C(id="a", duration=3),
        C(id="b", duration=1),
        C(id="c", duration=1),
        C(id="d", duration=2),
        cap=2,
    ),
    # a streamed call arriving while an exclusive call runs must wait for its commit
    "b03": one(
        C(id="x", tool="maybe", par=False, duration=2, arrives_at=0),
        C(id="r", duration=1, arrives_at=0.5),
        cap=2,
        streamed=True,
    ),
    # an aborted streamed step still answers every call that arrives
    "b04": one(
        C(id="a", duration=3, arrives_at=0),
        C(id="b", duration=1, arrives_at=2),
        cap=2,
        streamed=True,
        abort_at=1,
    ),
    # every later call of a parallel group is reclassified before it starts
    "b05": one(
        C(id="a", duration=2),
        C(id="b", duration=2),
        C(id="c", tool="maybe", par=False, duration=1),
        cap=3,
    ),
    # commit-first: a result settled during a slow commit is committed before the next start
    "b06": one(
        C(id="a", duration=1, slow_post=True), C(id="b", duration=1.5), C(id="c", duration=1), cap=2
    ),
    # a body that deferred a context and lost the race with the abort keeps the context
    "b07": one(
        C(id="e", duration=0.5, context=True, ends="error"),
        C(id="a", duration=1, context=True, ends="set-abort"),
        C(id="b", duration=3),
        cap=3,
    ),
    # a denial answered after the abort is kept
    "b08": one(
        C(id="a", policy="ask-refused", duration=1), C(id="b", duration=1), cap=2, abort_at=1
    ),
    # an approval answered "cancelled" without an abort is a denial
    "b09": one(C(id="a", policy="ask-cancelled", duration=1), C(id="b", duration=1), cap=2),
    # the first failure in time is raised (a dispatch failure waiting in the channel)
    "b10": one(
        C(id="a", duration=1, failure="late-finalize"),
        C(id="b", duration=1.5, failure="dispatch"),
        cap=2,
    ),
    # a call prepared after the first failure is never dispatched
    "b11": one(
        C(id="a", duration=1, failure="dispatch"), C(id="b", policy="ask", duration=1), cap=2
    ),
    # accept_context runs after the commit; its failure does not un-commit the result
    "b12": one(
        C(id="a", duration=1, context=True), C(id="b", duration=2), cap=2, accept_fails=True
    ),
    # cancellation from outside: the first logged call (seq 0) is answered ABORTED once
    "b13": one(C(id="a", duration=5), C(id="b", duration=5), cap=2, cancel_at=1),
    # duplicate call ids: results stay paired by position
    "b14": one(C(id="x", duration=1, ends="error"), C(id="x", duration=2), cap=2),
    # cancellation from outside surfaces as one trio.Cancelled
    "b15": one(C(id="a", duration=5), C(id="b", duration=5), cap=2, cancel_at=1),
    # abort before the step: synthetic ABORTED_BEFORE_DISPATCH pairs
    "b16": one(
        C(id="a", duration=1), C(id="b", tool="maybe", par=False, duration=1), cap=2, abort_at=0
    ),
}
