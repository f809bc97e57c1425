"""Scheduling edge cases found by mutants of upstream the kit did not kill (issue 33).

* ``edge/wrapper-success-abort-*``: an execute wrapper returns a success of its own without
  calling ``next()`` (the body is never invoked) while the step is aborted, before or after
  the wrapper returned but before the call is committed. Upstream replaces the success by the
  cancellation result its state selects: ``ABORTED_BEFORE_DISPATCH``, since the body never ran
  (``RULES.md`` e.8); beside them a passthrough wrapper whose body returned before the abort
  (``ABORTED``: the body ran).
* ``edge/failure-while-preparing-*``: a call's dispatch fails (a scheduler failure) while a
  later call's pre-execute hook or approval is still awaited. When that prepare returns, the
  pool checks the recorded failure first: the later call is never dispatched, its body never
  starts, and the step raises once the bodies already running have settled (``RULES.md`` f.5).
* Branches of upstream's runtime no case reached (``bench/kit_coverage.py``): a post-execute
  accept replacing both value and content (an error result); a replacement value or a
  wrapper-authored success of a call whose tool an earlier commit removed (``UNKNOWN_TOOL``: the
  tool is resolved again); an abort while a wrapper waits before ``next()`` on a tool with a
  timeout (the timeout policy's deadline signal is already aborted when the body would start);
  a value holding ``-0`` (from the body, a wrapper or post-execute): ``INVALID_TOOL_OUTPUT``,
  ``value is not lossless JSON``.
* Behaviours pinned by fewer than three scenarios before: an approval cancelled on an aborted
  step, the empty step, the default window of 10, argument text of JSON whitespace only.
* ``edge/own-proto-key-*``: a value (the body's, a wrapper's own, a post-execute replacement)
  with an own ``__proto__`` key, at the root and deeper: the rendered result keeps it.
* ``edge/abort-after-*``: the step is aborted after a body failed (a thrown error, a
  ``HarnessError``, an unknown tool) while its execute wrapper still runs: the failure is kept;
  only a success becomes the cancellation result.

Every answer is the reference's; upstream run as a port of the kit gives the same.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, Final

__all__ = ["pool_edges"]

_READ: Final = {"name": "read", "parallel": "always"}
_WRITE: Final = {"name": "write", "parallel": "never"}


def _wrapper_success_edges() -> Iterator[tuple[str, dict[str, Any]]]:
    yield (
        "wrapper-success-abort-while-waiting",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "wrapper": {"beforeMs": 30, "returns": "w"}},
                {"id": "c1", "name": "read", "body": {"ms": 60}},
            ],
            "abortAtMs": 10,
        },
    )
    # The wrapper returns at 5, before the abort; the commit waits for c0's body (aborted at
    # 10), and finalize sees the abort.
    yield (
        "wrapper-success-abort-before-commit",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "body": {"ms": 20}},
                {"id": "c1", "name": "read", "wrapper": {"beforeMs": 5, "returns": "w"}},
            ],
            "abortAtMs": 10,
        },
    )
    # The abort comes while post-execute runs; its contexts stay on the cancellation result.
    yield (
        "wrapper-success-abort-during-post",
        {
            "tools": [_READ],
            "calls": [
                {
                    "id": "c0",
                    "name": "read",
                    "wrapper": {"beforeMs": 5, "returns": {"k": 1}},
                    "post": {"ms": 20, "contexts": ["kept"]},
                },
                {"id": "c1", "name": "read", "body": {"ms": 40}},
            ],
            "abortAtMs": 15,
        },
    )
    yield (
        "wrapper-success-abort-exclusive",
        {
            "tools": [_WRITE],
            "calls": [
                {"id": "c0", "name": "write", "wrapper": {"beforeMs": 20, "returns": "w"}},
                {"id": "c1", "name": "write", "body": {"ms": 5}},
            ],
            "abortAtMs": 7,
        },
    )
    # The contrast: the body ran and returned before the abort, the wrapper waits after it.
    yield (
        "wrapper-passthrough-abort-after-body",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "wrapper": {"afterMs": 30}, "body": {"ms": 5}},
                {"id": "c1", "name": "read", "wrapper": {"beforeMs": 25, "returns": "w"}},
            ],
            "abortAtMs": 15,
        },
    )


def _failure_while_preparing_edges() -> Iterator[tuple[str, dict[str, Any]]]:
    yield (
        "failure-while-preparing-pre-execute",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "body": {"ms": 50}},
                {"id": "c1", "name": "read", "pre": {"ms": 20}, "body": {"ms": 30}},
            ],
            "schedulerFailure": {"call": "c0", "phase": "dispatch", "ms": 5},
        },
    )
    yield (
        "failure-while-preparing-approval",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "body": {"ms": 10}},
                {
                    "id": "c1",
                    "name": "read",
                    "pre": {"ms": 2, "decision": "ask", "approvalMs": 20},
                    "body": {"ms": 30},
                },
            ],
            "schedulerFailure": {"call": "c0", "phase": "dispatch", "ms": 8},
        },
    )
    # c0 keeps running: the step raises when it settles (50), c2's body never starts.
    yield (
        "failure-while-preparing-in-flight",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "body": {"ms": 50}},
                {"id": "c1", "name": "read", "body": {"ms": 10}},
                {
                    "id": "c2",
                    "name": "read",
                    "pre": {"ms": 20, "decision": "allow"},
                    "body": {"ms": 60},
                },
            ],
            "schedulerFailure": {"call": "c1", "phase": "dispatch", "ms": 5},
        },
    )
    yield (
        "failure-while-preparing-window",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "body": {"ms": 40}},
                {"id": "c1", "name": "read", "body": {"ms": 10}},
                {"id": "c2", "name": "read", "pre": {"ms": 15}, "body": {"ms": 5}},
                {"id": "c3", "name": "read", "body": {"ms": 5}},
            ],
            "cap": 3,
            "schedulerFailure": {"call": "c1", "phase": "dispatch", "ms": 12},
        },
    )


def _runtime_branch_edges() -> Iterator[tuple[str, dict[str, Any]]]:
    both = {"decision": "accept", "value": "v", "content": "x"}
    yield (
        "post-value-and-content",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "body": {"ms": 5}, "post": both},
                {"id": "c1", "name": "read", "body": {"ms": 10}},
            ],
        },
    )
    yield (
        "post-value-and-content-on-error",
        {
            "tools": [_WRITE],
            "calls": [
                {"id": "c0", "name": "write", "body": {"ms": 5, "throws": "boom"}, "post": both}
            ],
        },
    )
    yield (
        "post-value-and-content-wrapper-success",
        {
            "tools": [_READ],
            "calls": [
                {
                    "id": "c0",
                    "name": "read",
                    "wrapper": {"beforeMs": 5, "returns": 1},
                    "post": {**both, "contexts": ["dropped"]},
                }
            ],
        },
    )
    remove = [{"op": "remove", "tool": "read"}]
    yield (
        "removed-before-post-value",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "body": {"ms": 10}, "onCommit": remove},
                {
                    "id": "c1",
                    "name": "read",
                    "body": {"ms": 5},
                    "post": {"decision": "accept", "value": "v"},
                },
            ],
        },
    )
    yield (
        "removed-before-wrapper-success",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "body": {"ms": 10}, "onCommit": remove},
                {"id": "c1", "name": "read", "wrapper": {"beforeMs": 30, "returns": "w"}},
            ],
        },
    )
    yield (
        "removed-before-post-content",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "body": {"ms": 20}, "onCommit": remove},
                {
                    "id": "c1",
                    "name": "read",
                    "body": {"ms": 5},
                    "post": {"decision": "accept", "content": "kept"},
                },
                {
                    "id": "c2",
                    "name": "read",
                    "body": {"ms": 8},
                    "post": {"decision": "accept", "value": 2},
                },
            ],
        },
    )
    for label, call in (
        ("body", {"body": {"ms": 5, "returns": -0.0}}),
        ("body-nested", {"body": {"ms": 5, "returns": {"a": [1, -0.0]}}}),
        ("post-value", {"body": {"ms": 5}, "post": {"decision": "accept", "value": -0.0}}),
        ("wrapper", {"wrapper": {"beforeMs": 5, "returns": [-0.0]}}),
    ):
        yield (
            f"non-lossless-output-{label}",
            {
                "tools": [_READ],
                "calls": [
                    {"id": "c0", "name": "read", **call},
                    {"id": "c1", "name": "read", "body": {"ms": 10}},
                ],
            },
        )
    slow = {"name": "slow", "parallel": "always", "timeoutMs": 250}
    for label, before, abort_at in (("early", 30, 10), ("late", 45, 40)):
        yield (
            f"abort-in-wrapper-timeout-tool-{label}",
            {
                "tools": [slow],
                "calls": [
                    {
                        "id": "c0",
                        "name": "slow",
                        "wrapper": {"beforeMs": before},
                        "body": {"ms": 5},
                    },
                    {"id": "c1", "name": "slow", "body": {"ms": 60}},
                ],
                "abortAtMs": abort_at,
            },
        )
    yield (
        "abort-in-wrapper-timeout-tool-exclusive",
        {
            "tools": [{**slow, "parallel": "never"}],
            "calls": [
                {"id": "c0", "name": "slow", "wrapper": {"beforeMs": 20, "afterMs": 5}},
                {"id": "c1", "name": "slow", "body": {"ms": 5}},
            ],
            "abortAtMs": 10,
        },
    )


def _thin_behaviour_edges() -> Iterator[tuple[str, dict[str, Any]]]:
    for label, tool, approval_ms, abort_at in (
        ("exclusive", _WRITE, 40, 25),
        ("late", _READ, 90, 60),
    ):
        yield (
            f"ask-cancelled-after-abort-{label}",
            {
                "tools": [tool],
                "calls": [
                    {
                        "id": "c0",
                        "name": tool["name"],
                        "pre": {
                            "ms": 10,
                            "decision": "ask",
                            "reason": "check",
                            "approval": "cancelled",
                            "approvalMs": approval_ms,
                        },
                        "body": {"ms": 5},
                    },
                    {"id": "c1", "name": tool["name"], "body": {"ms": 5}},
                ],
                "abortAtMs": abort_at,
            },
        )
    yield "no-calls-cap-1", {"tools": [_READ, _WRITE], "cap": 1, "calls": []}
    yield "no-calls-no-tools", {"calls": []}
    yield (
        "default-cap-14-calls",
        {
            "tools": [_READ],
            "calls": [
                {"id": f"c{i}", "name": "read", "body": {"ms": 40 + 7 * (i % 5) + i}}
                for i in range(14)
            ],
        },
    )
    yield (
        "arguments-whitespace-tab-newline",
        {
            "tools": [{"name": "plain", "parallel": "absent"}],
            "calls": [
                {"id": "c0", "name": "plain", "arguments": "\t", "body": {"ms": 5}},
                {"id": "c1", "name": "plain", "arguments": "\r\n", "body": {"ms": 5}},
            ],
        },
    )


def _own_proto_edges() -> Iterator[tuple[str, dict[str, Any]]]:
    # A value with an own "__proto__" key (JSON.parse makes one): the snapshot keeps it an own
    # data key, at every depth and whoever authored the value.
    value = {"__proto__": 1, "k": 2}
    nested = {"a": {"__proto__": {"x": 1}, "b": [{"__proto__": None}]}}
    yield (
        "own-proto-key-body",
        {"tools": [_READ], "calls": [{"id": "c0", "name": "read", "body": {"returns": value}}]},
    )
    yield (
        "own-proto-key-nested",
        {
            "tools": [_READ],
            "calls": [
                {"id": "c0", "name": "read", "body": {"ms": 5, "returns": nested}},
                {"id": "c1", "name": "read", "body": {"ms": 2, "returns": {"__proto__": []}}},
            ],
        },
    )
    yield (
        "own-proto-key-post-and-wrapper",
        {
            "tools": [_READ, _WRITE],
            "calls": [
                {
                    "id": "c0",
                    "name": "read",
                    "body": {"ms": 3},
                    "post": {"decision": "accept", "value": value},
                },
                {"id": "c1", "name": "write", "wrapper": {"beforeMs": 1, "returns": nested}},
            ],
        },
    )


def _abort_after_failure_edges() -> Iterator[tuple[str, dict[str, Any]]]:
    # The step is aborted after a body failed but while its execute wrapper still runs: the
    # failure is kept (only a success becomes the cancellation result).
    wrapper = {"beforeMs": 0, "afterMs": 10}
    yield (
        "abort-after-failed-body-in-wrapper",
        {
            "tools": [_READ],
            "abortAtMs": 5,
            "calls": [{"id": "c0", "name": "read", "body": {"throws": "boom"}, "wrapper": wrapper}],
        },
    )
    error = {"ms": 1, "harnessError": {"code": "E_TOOL", "message": "bad"}}
    yield (
        "abort-after-harness-error-in-wrapper",
        {
            "tools": [_READ],
            "abortAtMs": 3,
            "calls": [
                {"id": "c0", "name": "read", "body": error, "wrapper": {**wrapper, "afterMs": 8}},
                {"id": "c1", "name": "read", "body": {"ms": 2}},
            ],
        },
    )
    yield (
        "abort-after-failed-body-late-wrapper",
        {
            "tools": [_READ],
            "abortAtMs": 7,
            "calls": [
                {
                    "id": "c0",
                    "name": "read",
                    "body": {"ms": 4, "throws": "boom"},
                    "wrapper": {"beforeMs": 1, "afterMs": 6},
                    "post": {"ms": 2, "decision": "accept", "contexts": ["note"]},
                }
            ],
        },
    )
    yield (
        "abort-after-unknown-tool-in-wrapper",
        {
            "tools": [_READ],
            "abortAtMs": 4,
            "calls": [{"id": "c0", "name": "missing", "wrapper": {"beforeMs": 2, "afterMs": 9}}],
        },
    )


def pool_edges() -> Iterator[tuple[str, dict[str, Any]]]:
    """These edge cases as ``(name, scenario)``, in file order (ids ``edge/<name>``)."""
    return itertools.chain(
        _wrapper_success_edges(),
        _failure_while_preparing_edges(),
        _runtime_branch_edges(),
        _thin_behaviour_edges(),
        _own_proto_edges(),
        _abort_after_failure_edges(),
    )
