"""The one cut-short rule every provider shares: a reply that did not finish runs none of its calls."""

from __future__ import annotations

import pytest

import trio_harness as th
from trio_harness.providers import anthropic as anth
from trio_harness.providers import openai as oai
from trio_harness.providers._common import CUT, split_cut

CALLS = [th.ToolCallBlock("c1", "read", "{}"), th.ToolCallBlock("c2", "read", "{}")]


@pytest.mark.parametrize("finish", sorted(CUT))
def test_a_reply_cut_short_runs_none_of_its_calls(finish: str) -> None:
    assert split_cut(finish, list(CALLS)) == ([], CALLS)
    assert split_cut(finish, []) == ([], [])


@pytest.mark.parametrize("finish", ["end", "tool_calls", "pause", None])
def test_a_finished_reply_runs_its_calls(finish: str | None) -> None:
    assert split_cut(finish, list(CALLS)) == (CALLS, [])


@pytest.mark.parametrize(
    ("stop_reason", "cut"),
    [
        ("end_turn", False),
        ("stop_sequence", False),
        ("tool_use", False),
        ("max_tokens", True),
        ("model_context_window_exceeded", True),
        ("refusal", True),
        ("pause_turn", False),
        ("something_new", False),
    ],
)
def test_anthropic_stop_reasons_cut_where_they_did(stop_reason: str, cut: bool) -> None:
    assert (anth.messages_finish(stop_reason) in CUT) is cut


@pytest.mark.parametrize(
    ("finish_reason", "cut"),
    [("stop", False), ("tool_calls", False), ("length", True), ("content_filter", True)],
)
def test_chat_finish_reasons_cut_where_they_did(finish_reason: str, cut: bool) -> None:
    assert (oai.chat_finish(finish_reason) in CUT) is cut
    assert (oai.chat_finish(None, refusal=True) in CUT) is True
