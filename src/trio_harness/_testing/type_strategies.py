"""Strategies for the library's value types: what ``st.from_type(trio_harness.ToolCallBlock)`` draws.

:func:`register_type_strategies` registers one for each type of :data:`TYPES` (idempotent);
each is built on its first use. It runs when both trio_harness and hypothesis are imported,
whichever comes first: by ``trio_harness`` itself when hypothesis is already imported, else by
the hypothesis setup hook of the distribution (``trio_harness_hypothesis``). Drawn: call ids as
providers write them, tool names, and argument text drawn by :func:`.argument_texts` for a drawn
parameter map (``ArgumentText`` registers itself in :mod:`.raw_arguments`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from .._errors import (
    SUB_CALL_DEPTH_EXCEEDED,
    TOOL_ABORTED,
    TOOL_ABORTED_BEFORE_DISPATCH,
    TOOL_TIMEOUT,
    ToolNotFoundError,
)
from .._pool import StepOutcome, StepResult, SubCall, ToolCallBlock
from .._runtime import Accept, Allow, Ask, Block, Deny
from .._values import (
    EXCLUSIVE,
    PARALLEL,
    ErrorInfo,
    ExecutionMode,
    ToolError,
    ToolExecutionResult,
    aborted_before_dispatch_result,
    aborted_result,
    error_result,
)
from .strategies import argument_texts, json_values, parameter_maps

__all__ = ["TYPES", "register_type_strategies"]

#: The value types that get a strategy.
TYPES: tuple[type, ...] = (
    ToolCallBlock,
    SubCall,
    ExecutionMode,
    ErrorInfo,
    ToolError,
    ToolExecutionResult,
    StepResult,
    StepOutcome,
    Allow,
    Deny,
    Ask,
    Accept,
    Block,
)

_registered = False


def register_type_strategies() -> None:
    """Register a strategy for every type of :data:`TYPES` (idempotent; each built on first use)."""
    global _registered
    if _registered:
        return
    _registered = True
    for cls in TYPES:
        # A resolver, not a strategy: hypothesis calls it (so the strategy is built) only when
        # ``from_type`` first meets the type.
        st.register_type_strategy(cls, functools.partial(_resolve, cls.__name__))


_PREFIXES = ("call_", "toolu_", "fc_", "")


@functools.cache
def _resolve(name: str, thing: object = None) -> Any:
    return _strategy(name)


def _strategy(name: str) -> Any:
    alnum = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1)
    provider_ids = st.builds(
        str.__add__, st.sampled_from(_PREFIXES), alnum.map(lambda text: text[:24])
    )
    call_ids = st.one_of(provider_ids, provider_ids, provider_ids, st.text(max_size=12))
    tool_names = st.one_of(
        st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True),
        st.sampled_from(["read", "write", "search", "kv_get", "kv_put", "missing tool", "é"]),
    )
    contexts = st.lists(json_values(3, max_string_size=40), max_size=2).map(tuple)
    texts = st.text(max_size=40)
    blocks = st.lists(st.builds(lambda text: {"type": "text", "text": text}, texts), max_size=2)
    codes = st.sampled_from(
        [
            TOOL_ABORTED,
            TOOL_ABORTED_BEFORE_DISPATCH,
            TOOL_TIMEOUT,
            SUB_CALL_DEPTH_EXCEEDED,
            "TOOL_ARGS_INVALID",
            "TOOL_NOT_FOUND",
        ]
    )
    infos = st.builds(
        ErrorInfo,
        st.sampled_from(["AbortError", "ToolArgsError", "ToolNotFoundError", "HarnessError"]),
        codes,
    )
    errors = st.builds(ToolError, texts, st.none() | infos)

    @st.composite
    def arguments(draw: st.DrawFn) -> str:
        parameters = draw(parameter_maps(max_size=3))
        return draw(argument_texts(parameters)).text

    def success(text: str, value: Any, contexts: tuple[Any, ...], ends: bool) -> Any:
        return ToolExecutionResult(
            is_error=False,
            content=({"type": "text", "text": text},),
            value=value,
            additional_contexts=contexts,
            concludes_turn=ends,
        )

    def failure(error: ToolError, contexts: tuple[Any, ...]) -> Any:
        return ToolExecutionResult(
            is_error=True,
            content=({"type": "text", "text": "Error: " + error.message},),
            error=error,
            additional_contexts=contexts,
        )

    results = st.one_of(
        st.builds(success, texts, json_values(4, max_string_size=40), contexts, st.booleans()),
        st.builds(failure, errors, contexts),
        st.builds(aborted_result, contexts),
        st.builds(aborted_before_dispatch_result, contexts),
        st.builds(error_result, st.builds(ToolNotFoundError, tool_names)),
    )
    step_results = st.builds(StepResult, call_ids, tool_names, results)
    table: dict[str, Callable[[], Any]] = {
        "ToolCallBlock": lambda: st.builds(ToolCallBlock, call_ids, tool_names, arguments()),
        "SubCall": lambda: st.builds(SubCall, call_ids, tool_names, json_values(6)),
        "ExecutionMode": lambda: st.sampled_from([PARALLEL, EXCLUSIVE]),
        "ErrorInfo": lambda: infos,
        "ToolError": lambda: errors,
        "ToolExecutionResult": lambda: results,
        "StepResult": lambda: step_results,
        "StepOutcome": lambda: st.builds(
            StepOutcome,
            concluded=st.booleans(),
            aborted=st.booleans(),
            results=st.lists(step_results, max_size=3).map(tuple),
        ),
        "Allow": lambda: st.just(Allow()),
        "Deny": lambda: st.builds(Deny, texts),
        "Ask": lambda: st.builds(Ask, st.none() | texts),
        "Accept": lambda: st.one_of(
            st.just(Accept()),
            st.builds(Accept, value=json_values(4)),
            st.builds(Accept, content=blocks),
            st.builds(Accept, additional_contexts=contexts),
        ),
        "Block": lambda: st.builds(Block, blocks, additional_contexts=contexts),
    }
    return table[name]()
