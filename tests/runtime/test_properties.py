"""Properties of the pipeline: whatever the policy answers, one final, lossless result per call."""

from __future__ import annotations

from typing import Any

import trio
from hypothesis import given
from hypothesis import strategies as st

from tests.support.runtime_helpers import call, text_blocks
from tests.support.runtime_tools import echo_tool
from trio_harness import (
    Accept,
    Allow,
    Block,
    Deny,
    ToolExecutionResult,
    ToolRuntime,
    is_json_value,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=10,
)
pre_decisions = st.sampled_from([Allow(), Deny("no"), "raise"])
post_decisions = st.sampled_from(
    [
        Accept(),
        Accept(value="v"),
        Accept(content=text_blocks("c")),
        Block(text_blocks("b")),
        "raise",
    ]
)


@given(
    arguments=json_values,
    pre=pre_decisions,
    post=post_decisions,
    aborted=st.booleans(),
    text=st.none() | st.text(max_size=5) | st.integers(),
)
def test_every_call_ends_in_exactly_one_lossless_result(
    arguments: Any, pre: Any, post: Any, aborted: bool, text: Any
) -> None:
    runtime = ToolRuntime()
    runtime.register(echo_tool())
    observed: list[ToolExecutionResult] = []
    runtime.add_result_observer(lambda exec, result: observed.append(result))

    async def pre_hook(exec: Any, next: Any) -> Any:
        if pre == "raise":
            raise RuntimeError("pre")
        return pre

    async def post_hook(exec: Any, result: Any, next: Any) -> Any:
        if post == "raise":
            raise RuntimeError("post")
        return post

    runtime.add_pre_execute(pre_hook)
    runtime.add_post_execute(post_hook)
    if isinstance(arguments, dict) and text is not None:
        arguments = {**arguments, "text": text}

    async def main() -> ToolExecutionResult:
        abort = trio.Event()
        if aborted:
            abort.set()
        return await runtime.execute(call("echo", arguments, abort))

    result = trio.run(main)
    assert observed == [result]
    assert observed[0] is result
    data = result.to_json()
    assert is_json_value(data)
    assert data["isError"] is (result.error is not None)
    assert ("value" in data) is (not result.is_error)
    if aborted:
        assert result.error is not None
        assert result.error.info is not None
        assert result.error.info.code == "ABORTED_BEFORE_DISPATCH"
