"""The stored Chat Completions assistant message: the same whether the reply was streamed or not.

``chat_assistant_message`` (a whole reply) and ``ChatStreamAccumulator.message`` (a streamed one)
share one builder; these tests pin that both write the same message for the same reply.
"""

from __future__ import annotations

from typing import Any

import pytest

from trio_harness.providers import openai as oai

SIGNATURE = {"google": {"thought_signature": "c2ln"}}


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "cc1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def streamed(chunks: list[dict[str, Any]]) -> oai.ChatStreamAccumulator:
    accumulator = oai.ChatStreamAccumulator()
    for item in chunks:
        accumulator.add(item)
    return accumulator


TOOL_REPLY_MESSAGE = {
    "role": "assistant",
    "content": "Reading.",
    "reasoning_content": "two files",
    "extra_content": SIGNATURE,
    "tool_calls": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "read", "arguments": '{"path":"a"}'},
            "extra_content": SIGNATURE,
        },
        {"id": "c2", "type": "custom", "custom": {"name": "patch", "input": "*** a"}},
    ],
}

TOOL_REPLY_CHUNKS = [
    chunk({"role": "assistant", "reasoning_content": "two ", "extra_content": SIGNATURE}),
    chunk({"reasoning_content": "files", "content": "Read"}),
    chunk({"content": "ing."}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"pa'},
                    "extra_content": SIGNATURE,
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th":"a"}'}}]}),
    chunk(
        {
            "tool_calls": [
                {"index": 1, "id": "c2", "type": "custom", "custom": {"name": "patch"}},
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 1, "custom": {"input": "*** a"}}]}, "tool_calls"),
]


@pytest.mark.parametrize("keep_calls", [True, False])
def test_a_streamed_reply_is_stored_as_the_whole_reply_is(keep_calls: bool) -> None:
    whole = oai.chat_assistant_message(TOOL_REPLY_MESSAGE, keep_calls=keep_calls)
    expected = dict(TOOL_REPLY_MESSAGE)
    if not keep_calls:
        del expected["tool_calls"]
    assert whole == expected
    assert streamed(TOOL_REPLY_CHUNKS).message(keep_calls=keep_calls) == whole


def test_a_streamed_refusal_is_stored_as_the_whole_refusal_is() -> None:
    whole = oai.chat_assistant_message(
        {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    )
    assert whole == {
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}],
    }
    chunks = [
        chunk({"role": "assistant", "refusal": "I can't "}),
        chunk({"refusal": "help with that."}, "stop"),
    ]
    assert streamed(chunks).message() == whole


def test_an_empty_reply_is_stored_with_empty_content_either_way() -> None:
    whole = oai.chat_assistant_message({"role": "assistant", "content": None})
    assert whole == {"role": "assistant", "content": ""}
    assert streamed([chunk({"role": "assistant"}, "stop")]).message() == whole
