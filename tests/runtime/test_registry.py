"""``ToolRuntime.execution_mode``: fail-closed classification (upstream catalogue §4, 42–50)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.runtime_helpers import call
from tests.support.runtime_tools import content_tool, echo_tool, raw_tool
from trio_harness import (
    EXCLUSIVE,
    PARALLEL,
    ToolDefinition,
    ToolOutput,
    ToolRuntime,
)


def _raw_classified(classifier: Any) -> ToolDefinition:
    async def body(args: Any, ctx: Any) -> None:
        return None

    return ToolDefinition(
        name="raw",
        description="raw classifier",
        parameters={"type": "object", "properties": {}},
        output=ToolOutput(schema={"type": "null"}, render=lambda args, value: []),
        execute=body,
        is_concurrency_safe=classifier,
    )


def test_parallel_only_for_an_explicit_true_classifier() -> None:  # upstream #42
    runtime = ToolRuntime()
    runtime.register(content_tool("safe", is_concurrency_safe=lambda args: True))
    assert runtime.execution_mode(call("safe")) == PARALLEL
    assert runtime.execution_mode(call("safe")).kind == "parallel"


def test_exclusive_without_a_classifier() -> None:  # upstream #43
    runtime = ToolRuntime()
    runtime.register(content_tool("plain"))
    assert runtime.execution_mode(call("plain")) == EXCLUSIVE


def test_exclusive_for_an_unknown_tool() -> None:  # upstream #44
    assert ToolRuntime().execution_mode(call("nonexistent")).kind == "exclusive"


def test_classifier_decides_per_arguments() -> None:  # upstream #45
    runtime = ToolRuntime()
    runtime.register(
        content_tool(
            "mode",
            parameters={"mode": {"type": "string", "required": True}},
            is_concurrency_safe=lambda args: args["mode"] == "read",
        )
    )
    assert runtime.execution_mode(call("mode", {"mode": "read"})) == PARALLEL
    assert runtime.execution_mode(call("mode", {"mode": "write"})) == EXCLUSIVE


def test_invalid_define_tool_arguments_classify_exclusive_without_raising() -> None:  # upstream #46
    runtime = ToolRuntime()
    runtime.register(
        content_tool(
            "strict",
            parameters={"mode": {"type": "string", "required": True}},
            is_concurrency_safe=lambda args: True,
        )
    )
    assert runtime.execution_mode(call("strict", {})) == EXCLUSIVE


def test_raising_raw_classifier_is_exclusive() -> None:  # upstream #47
    def classifier(args: Any) -> bool:
        raise RuntimeError("classifier exploded")

    runtime = ToolRuntime()
    runtime.register(_raw_classified(classifier))
    assert runtime.execution_mode(call("raw")) == EXCLUSIVE


def test_truthy_non_boolean_answers_are_exclusive() -> None:  # upstream #48
    for answer in ("yes", 1, 1.0, [True], object()):
        runtime = ToolRuntime()
        runtime.register(_raw_classified(lambda args, answer=answer: answer))
        assert runtime.execution_mode(call("raw")) == EXCLUSIVE, answer


def test_raw_classifier_sees_the_parsed_unsnapshotted_arguments() -> None:  # upstream #49
    seen: list[Any] = []

    def classifier(args: Any) -> bool:
        seen.append(args)
        return True

    runtime = ToolRuntime()
    runtime.register(_raw_classified(classifier))
    arguments = {"anything": 1}
    assert runtime.execution_mode(call("raw", arguments)) == PARALLEL
    # The arguments as parsed (classification happens before the execution's snapshot), as a
    # detached copy: a classifier that mutates them cannot change what the call runs with.
    assert seen == [{"anything": 1}]
    seen[0]["anything"] = 2
    assert arguments == {"anything": 1}


def test_non_lossless_arguments_still_reach_a_raw_classifier() -> None:
    # A Python analogue of upstream's "raw tools are not validated": a set is not JSON, yet the
    # classifier decides (the call itself will fail at prepare).
    runtime = ToolRuntime()
    runtime.register(_raw_classified(lambda args: isinstance(args["ids"], set)))
    assert runtime.execution_mode(call("raw", {"ids": {1, 2}})) == PARALLEL


def test_classifier_never_reaches_schemas() -> None:  # upstream #50
    runtime = ToolRuntime()
    runtime.register(echo_tool(is_concurrency_safe=lambda args: True))
    runtime.register(raw_tool("raw", timeout_ms=5000))
    assert [sorted(schema) for schema in runtime.schemas()] == [
        ["description", "name", "parameters"],
        ["description", "name", "parameters"],
    ]


# One timeout check serves define_tool and register (they used to disagree).


def _timed(timeout_ms: object) -> ToolDefinition:
    async def body(args: Any, ctx: Any) -> None:
        return None

    return ToolDefinition(
        name="timed",
        description="timed",
        parameters={"type": "object", "properties": {}},
        output=ToolOutput(schema={"type": "null"}, render=lambda args, value: []),
        execute=body,
        timeout_ms=timeout_ms,  # type: ignore[arg-type]
    )


def test_a_define_tool_timeout_is_accepted_by_register() -> None:
    import enum

    from trio_harness import define_tool

    class Ms(enum.IntEnum):
        SECOND = 1000

    async def body(args: Any, ctx: Any) -> None:
        return None

    tool = define_tool(
        name="timed",
        description="timed",
        parameters={},
        output=ToolOutput(schema={"type": "null"}, render=lambda args, value: []),
        execute=body,
        timeout_ms=Ms.SECOND,
    )
    runtime = ToolRuntime()
    runtime.register(tool)
    assert runtime.get("timed") is tool


@pytest.mark.parametrize("bad", [10**400, -(10**400), float("inf"), float("nan"), 0, -1, True, "5"])
def test_register_rejects_a_bad_timeout_with_value_error(bad: object) -> None:
    with pytest.raises(
        ValueError, match=r'^tool "timed" timeoutMs must be a positive finite number$'
    ):
        ToolRuntime().register(_timed(bad))
