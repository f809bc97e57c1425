"""Scheduling scenarios run through the real pool: exact answers for the rules, and the format."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.support import call, summary, times, tool
from trio_harness._conformance import (
    ScenarioError,
    answer_request_line,
    answer_scenario,
    parse_scenario,
)
from trio_harness.lowlevel import run_scenario

READ = tool("read")
WRITE = tool("write", "never")


def answer(scenario: dict[str, Any]) -> dict[str, Any]:
    result = run_scenario(scenario)
    assert result.ties == ()
    return result.answer


def test_commits_follow_model_order_in_a_rolling_window() -> None:
    # upstream-behavior.md f.4: cap 2, four parallel calls, c1 released first.
    got = answer(
        {
            "tools": [READ],
            "calls": [call(f"c{i}", ms=ms) for i, ms in enumerate((50, 20, 70, 10))],
            "cap": 2,
        }
    )
    assert summary(got) == [
        "call c0",
        "call c1",
        "call c2",
        "result c0 c0",
        "result c1 c1",
        "call c3",
        "result c2 c2",
        "result c3 c3",
    ]
    assert times(got, "bodyStarted") == {"c0": 0, "c1": 0, "c2": 20, "c3": 50}
    assert times(got, "settled") == {"c0": 50, "c1": 20, "c2": 90, "c3": 60}
    assert times(got, "committed") == {"c0": 50, "c1": 50, "c2": 90, "c3": 90}
    assert got["outcome"] == {"concluded": False, "aborted": False, "endedAt": 90}
    assert [event["seq"] for event in got["events"]] == list(range(8))
    assert got["events"][3]["sourceEventSeqs"] == [0]


def test_an_exclusive_call_is_a_barrier() -> None:
    got = answer(
        {
            "tools": [READ, WRITE],
            "calls": [
                call("c0", ms=30),
                call("c1", ms=10),
                call("c2", "write", ms=5),
                call("c3", ms=1),
            ],
        }
    )
    assert times(got, "bodyStarted") == {"c0": 0, "c1": 0, "c2": 30, "c3": 35}
    assert times(got, "committed") == {"c0": 30, "c1": 30, "c2": 35, "c3": 36}


@pytest.mark.parametrize("kind", ["never", "absent", "truthy", "raises"])
def test_only_an_exact_true_classifier_runs_calls_together(kind: str) -> None:
    got = answer(
        {"tools": [tool("t", kind)], "calls": [call("c0", "t", ms=10), call("c1", "t", ms=10)]}
    )
    assert times(got, "bodyStarted") == {"c0": 0, "c1": 10}


def test_the_classifier_reads_the_parsed_arguments() -> None:
    maybe = tool("m", {"argument": "p"})
    got = answer(
        {
            "tools": [maybe],
            "calls": [
                call("c0", "m", ms=10, arguments='{"p": true}'),
                call("c1", "m", ms=20, arguments='{"p": true}'),
                call("c2", "m", ms=10, arguments='{"p": 1}'),
            ],
        }
    )
    assert times(got, "bodyStarted") == {"c0": 0, "c1": 0, "c2": 20}


def test_a_registry_change_at_commit_is_seen_by_the_next_classification() -> None:
    flip = {"op": "setParallel", "tool": "read", "parallel": "never"}
    got = answer(
        {
            "tools": [tool("first", "never"), READ],
            "calls": [
                call("c0", "first", ms=5, onCommit=[flip]),
                call("c1", ms=10),
                call("c2", ms=10),
            ],
        }
    )
    assert times(got, "bodyStarted") == {"c0": 0, "c1": 5, "c2": 15}


def test_a_tool_removed_at_commit_is_unknown_to_later_calls() -> None:
    got = answer(
        {
            "tools": [WRITE, READ],
            "calls": [
                call("c0", "write", ms=5, onCommit=[{"op": "remove", "tool": "read"}]),
                call("c1", ms=1),
            ],
        }
    )
    assert summary(got)[-1] == "result c1 UNKNOWN_TOOL"


def test_abort_drains_started_calls_and_skips_the_rest() -> None:
    # c1 settled before the abort but commits after it: its success becomes ABORTED (e.6).
    got = answer(
        {
            "tools": [READ, WRITE],
            "calls": [call("c0", ms=100), call("c1", ms=10), call("c2", "write", ms=5)],
            "abortAtMs": 40,
        }
    )
    assert summary(got) == [
        "call c0",
        "call c1",
        "result c0 ABORTED",
        "result c1 ABORTED",
        "call c2",
        "result c2 ABORTED_BEFORE_DISPATCH",
    ]
    assert got["calls"][2] == {
        "id": "c2",
        "called": 40,
        "prepared": None,
        "bodyStarted": None,
        "settled": None,
        "committed": 40,
    }
    assert got["outcome"] == {"concluded": False, "aborted": True, "endedAt": 40}


def test_an_already_aborted_step_records_only_synthetic_pairs() -> None:
    got = answer({"tools": [READ], "calls": [call("c0", ms=5), call("c1", ms=5)], "abortAtMs": 0})
    assert summary(got) == [
        "call c0",
        "result c0 ABORTED_BEFORE_DISPATCH",
        "call c1",
        "result c1 ABORTED_BEFORE_DISPATCH",
    ]


def test_a_hanging_body_ends_at_the_tool_timeout() -> None:
    got = answer(
        {
            "tools": [tool("slow", timeoutMs=250)],
            "calls": [call("c0", "slow", body={"hangs": True})],
        }
    )
    assert summary(got) == ["call c0", "result c0 TOOL_TIMEOUT"]
    assert times(got, "settled") == {"c0": 250}


def test_a_scheduler_failure_is_raised_after_in_flight_bodies_settle() -> None:
    got = answer(
        {
            "tools": [READ],
            "calls": [call("c0", ms=100), call("c1", ms=300), call("c2", ms=10)],
            "cap": 3,
            "schedulerFailure": {"call": "c2", "phase": "dispatch", "ms": 50},
        }
    )
    assert got["outcome"] == {
        "raised": "scheduler failure at c2 (dispatch)",
        "failedAt": 50,
        "endedAt": 300,
    }
    assert summary(got) == ["call c0", "call c1", "call c2"]
    assert times(got, "settled") == {"c0": 100, "c1": 300, "c2": None}


def test_the_measured_post_failure_difference_follows_the_reference_rule() -> None:
    # upstream-timing-facts.md 1: trio_harness commits c0 at 110 s, then raises.
    got = answer(
        {
            "tools": [READ],
            "calls": [
                call("c0", ms=10_000, post={"ms": 100_000}),
                call("c1", ms=20_000, post={"ms": 4_000}),
                call("c2", ms=5_000),
            ],
            "cap": 3,
            "schedulerFailure": {"call": "c2", "phase": "dispatch", "ms": 30_000},
        }
    )
    assert summary(got) == ["call c0", "call c1", "call c2", "result c0 c0"]
    assert times(got, "committed") == {"c0": 110_000, "c1": None, "c2": None}
    assert got["outcome"]["endedAt"] == 110_000


@pytest.mark.parametrize("cap", [0, -1, 1.5, True, False, "2", [2], -0.0])
def test_an_invalid_cap_is_rejected_before_anything_is_logged(cap: object) -> None:
    got = answer({"tools": [READ], "calls": [call("c0", ms=1)], "cap": cap})
    assert got["events"] == []
    assert got["outcome"] == {"rejectedCap": "max_parallel_tool_calls must be a positive integer"}


def test_hooks_approval_and_contexts() -> None:
    got = answer(
        {
            "tools": [READ],
            "calls": [
                call("c0", ms=10, pre={"ms": 5, "decision": "deny", "reason": "no"}),
                call("c1", ms=11, pre={"decision": "ask", "approval": "rejected", "approvalMs": 7}),
                call("c2", ms=12, pre={"decision": "ask", "approval": "allowed-once"}),
                call("c3", ms=13, guard="outside"),
                call("c4", ms=14, post={"ms": 3, "content": "reviewed", "contexts": ["a", "b"]}),
                call("c5", ms=16, post={"decision": "block", "feedback": "stop"}),
                call("c6", ms=18, wrapper={"beforeMs": 2, "returns": "wrapped"}),
            ],
        }
    )
    texts = dict(line.split(" ", 2)[1:] for line in summary(got) if line.startswith("result"))
    assert texts == {
        "c0": "Error: no",
        "c1": 'Error: the user rejected tool "read"',
        "c2": "c2",
        "c3": "Error: outside",
        "c4": "reviewed",
        "c5": "stop",
        "c6": "wrapped",
    }
    # Prepare is sequential: c1 waits for c0's 5 ms hook, c2 for c1's 7 ms approval.
    assert times(got, "called") == {
        "c0": 0,
        "c1": 5,
        "c2": 12,
        "c3": 12,
        "c4": 12,
        "c5": 12,
        "c6": 12,
    }
    assert [context["id"] for context in got["contexts"]] == ["c4-ctx0", "c4-ctx1"]
    assert got["contexts"][0] == {
        "id": "c4-ctx0",
        "role": "user",
        "content": [{"type": "text", "text": "a"}],
        "source": {"kind": "plugin", "plugin": "conformance"},
    }
    assert times(got, "bodyStarted")["c6"] is None


def test_invalid_arguments_fail_with_every_violation() -> None:
    params = {"path": {"type": "string", "required": True}, "n": {"type": "integer"}}
    got = answer(
        {
            "tools": [tool("t", parameters=params)],
            "calls": [
                call("c0", "t", arguments='{"n": 1.5}'),
                call("c1", "t", arguments="not json"),
                call("c2", "t", arguments=""),
            ],
        }
    )
    results = [line for line in summary(got) if line.startswith("result")]
    assert results == ["result c0 INVALID_ARGS", "result c1 INVALID_ARGS", "result c2 INVALID_ARGS"]
    message = got["events"][1]["data"]["message"]["content"][0]["content"][0]["text"]
    assert '"n" must be an integer' in message
    assert 'missing required property "path"' in message


def test_tied_timers_are_reported_and_the_oracle_says_so() -> None:
    scenario = {"tools": [READ], "calls": [call("c0", ms=100), call("c1", ms=100)], "cap": 2}
    assert run_scenario(scenario).ties == (100,)
    answered = answer_scenario({"op": "schedule", "scenario": scenario})
    assert answered["expected"]["ties"] == [100]


def test_timers_due_at_one_millisecond_from_different_starts_are_a_tie() -> None:
    # Found by fuzzing upstream (seed 26): c1's body starts at 2 ms (after c0's post-execute) and
    # runs 26 ms; the abort is at 28 ms. In Trio's float clock 0.002 + 0.026 falls a hair before
    # 0.028, so the body ended first and the abort never fired: no tie was seen, while
    # upstream's integer-millisecond timers tie at 28 and may abort c1.
    scenario = {
        "tools": [{"name": "read", "parallel": "always"}],
        "calls": [
            {"id": "c0", "name": "read", "guard": "g", "post": {"decision": "accept", "ms": 2}},
            {"id": "c1", "name": "read", "body": {"ms": 26}},
        ],
        "abortAtMs": 28,
    }
    result = run_scenario(scenario)
    assert result.ties == (28,)
    answered = answer_scenario({"op": "schedule", "scenario": scenario})
    assert answered["expected"]["ties"] == [28]


def test_zero_time_dispatches_beside_later_starts_are_ties() -> None:
    # Three parallel calls that take no time: upstream notices a settle after a number of
    # promise reactions that depends on the callbacks, so the order at t=0 is open.
    scenario = {"tools": [READ], "calls": [call(f"c{i}") for i in range(3)]}
    result = run_scenario(scenario)
    assert result.ties == (0,)
    assert summary(result.answer)[:3] == ["call c0", "call c1", "call c2"]
    answered = answer_scenario({"op": "schedule", "scenario": scenario})
    assert answered["expected"]["ties"] == [0]


def test_a_zero_time_dispatch_the_pool_waits_for_is_not_a_tie() -> None:
    # cap 1: the next call starts only after the settle, in every implementation.
    assert run_scenario({"tools": [READ], "calls": [call("c0"), call("c1")], "cap": 1}).ties == ()
    # An exclusive call: nothing else starts while it runs.
    assert (
        run_scenario({"tools": [WRITE], "calls": [call("c0", "write"), call("c1", "write")]}).ties
        == ()
    )


def test_a_zero_time_dispatch_behind_a_running_call_is_not_a_tie() -> None:
    # c1 settles at once but cannot be committed before c0: its settle changes nothing at t=0.
    scenario = {"tools": [READ], "calls": [call("c0", ms=50), call("c1"), call("c2", ms=5)]}
    assert run_scenario(scenario).ties == ()


def test_a_dispatch_failure_after_0_ms_beside_a_later_start_is_a_tie() -> None:
    # The measured case (failure/043 of an earlier kit): upstream may raise at t=0 before it
    # starts c1; the reference starts c1 first.
    scenario = {
        "tools": [READ],
        "calls": [call("c0", ms=5), call("c1", ms=5, pre={"ms": 55})],
        "schedulerFailure": {"call": "c0", "phase": "dispatch", "ms": 0},
    }
    assert run_scenario(scenario).ties == (0,)
    assert run_scenario({**scenario, "cap": 1}).ties == ()


def test_a_deadline_counts_as_a_timer_in_tie_detection() -> None:
    slow = tool("slow", timeoutMs=10)
    hanging = {"tools": [slow], "calls": [call("c0", "slow", body={"hangs": True})]}
    # The deadline and the abort expire together: TOOL_TIMEOUT or ABORTED, both allowed.
    assert run_scenario({**hanging, "abortAtMs": 10}).ties == (10,)
    # The deadline and the body's own timer expire together.
    assert run_scenario({"tools": [slow], "calls": [call("c0", "slow", ms=10)]}).ties == (10,)
    # Apart, no tie: the deadline first, or the abort first.
    assert run_scenario({**hanging, "abortAtMs": 11}).ties == ()
    assert run_scenario({**hanging, "abortAtMs": 9}).ties == ()
    assert run_scenario({"tools": [slow], "calls": [call("c0", "slow", ms=9)]}).ties == ()


def test_a_null_cap_is_the_default_and_an_integral_number_is_an_integer() -> None:
    twelve = [call(f"c{i}", ms=100 + i) for i in range(12)]
    default = answer({"tools": [READ], "calls": twelve})
    assert answer({"tools": [READ], "calls": twelve, "cap": None}) == default
    assert sum(1 for at in times(default, "bodyStarted").values() if at == 0) == 10
    two = answer({"tools": [READ], "calls": twelve[:3], "cap": 2})
    assert answer({"tools": [READ], "calls": twelve[:3], "cap": 2.0}) == two
    assert answer({"tools": [READ], "calls": twelve[:3], "cap": -0.0})["outcome"] == {
        "rejectedCap": "max_parallel_tool_calls must be a positive integer"
    }


def test_the_same_scenario_always_gets_the_same_answer() -> None:
    scenario = {
        "tools": [READ, WRITE],
        "calls": [call(f"c{i}", "write" if i % 3 == 2 else "read", ms=7 * i + 3) for i in range(8)],
        "cap": 3,
        "abortAtMs": 61,
    }
    first = run_scenario(scenario)
    assert all(run_scenario(scenario) == first for _ in range(10))


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        ([], "scenario must be an object"),
        ({}, "scenario.calls must be a list"),
        ({"calls": [], "extra": 1}, "scenario.extra is not part of the format"),
        ({"calls": [{"id": "a"}]}, "scenario.calls[0].name must be a string"),
        ({"calls": [call("a"), call("a")]}, "call ids must be unique"),
        ({"tools": [READ, READ], "calls": []}, "tool names must be unique"),
        (
            {"tools": [tool("t", "sometimes")], "calls": []},
            "scenario.tools[0].parallel must be one of",
        ),
        (
            {"calls": [call("a", body={"ms": -1})]},
            "scenario.calls[0].body.ms must be a finite number >= 0",
        ),
        ({"calls": [call("a", body={"throws": "x", "returns": 1})]}, "has more than one outcome"),
        ({"calls": [call("a", body={"hangs": True})]}, "a hanging body needs"),
        (
            {
                "tools": [tool("t", timeoutMs=5)],
                "calls": [
                    call("a", "t", onCommit=[{"op": "add", "tool": {"name": "t"}}]),
                    call("b", "t", body={"hangs": True}),
                ],
            },
            "on every definition of the tool",
        ),
        (
            {"calls": [call("a", pre={"decision": "deny"})]},
            "scenario.calls[0].pre.reason is required",
        ),
        ({"calls": [call("a", pre={"approval": "rejected"})]}, "belongs to an ask decision"),
        (
            {"calls": [call("a", post={"decision": "maybe"})]},
            "scenario.calls[0].post.decision must be",
        ),
        (
            {"calls": [call("a", onCommit=[{"op": "flip"}])]},
            "scenario.calls[0].onCommit[0].op must be",
        ),
        (
            {"calls": [call("a")], "schedulerFailure": {"call": "b", "phase": "prepare"}},
            "names no call",
        ),
        (
            {"calls": [call("a")], "schedulerFailure": {"call": "a", "phase": "commit", "ms": 5}},
            "must be 0 for the commit phase",
        ),
        (
            {"tools": [tool("t", timeoutMs=0)], "calls": []},
            "timeoutMs must be a positive finite number",
        ),
    ],
)
def test_a_scenario_outside_the_format_is_rejected_by_name(scenario: object, message: str) -> None:
    with pytest.raises(ScenarioError, match=None) as caught:
        parse_scenario(scenario)
    assert message in str(caught.value)


def test_the_oracle_answers_a_bad_scenario_with_one_error_line() -> None:
    line = answer_request_line('{"op": "schedule", "scenario": {"calls": 3}}')
    assert line == '{"error":"invalid scenario: scenario.calls must be a list"}'
    line = answer_request_line(
        '{"op": "schedule", "scenario": {"tools": [{"name": "t", "parameters": {"x": {"type": "text"}}}], "calls": []}}'
    )
    assert line is not None
    assert line.startswith('{"error":"invalid scenario: JsonSchemaError')
    assert (
        answer_request_line('{"op": "schedule"}')
        == '{"error":"op \\"schedule\\" needs \\"scenario\\""}'
    )
