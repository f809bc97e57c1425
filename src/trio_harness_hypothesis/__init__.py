"""The hypothesis plugin of trio_harness: strategies for the library's value types, lazily.

Hypothesis runs :func:`_hypothesis_setup_hook` when it is imported (the ``hypothesis`` entry
point of the trio_harness distribution). Importing trio_harness takes about a second, so this
module imports nothing of it: the strategies are registered as soon as trio_harness is imported
(at once if it already is), and each is built on its first draw (``st.deferred``). After that,
``st.from_type(trio_harness.ToolCallBlock)`` (and ``st.builds`` of anything taking one) draws
meaningful values: call ids as providers write them, tool names, and argument text drawn by
``trio_harness.testing.argument_texts`` for a drawn parameter map.

Registered: ``ToolCallBlock``, ``SubCall``, ``ExecutionMode``, ``ErrorInfo``, ``ToolError``,
``ToolExecutionResult``, ``StepResult``, ``StepOutcome``, and the hook decisions ``Allow``,
``Deny``, ``Ask``, ``Accept``, ``Block`` (``trio_harness.testing.ArgumentText`` registers itself
when ``trio_harness.testing`` is imported). :func:`register` does the same by hand (for a run
with ``HYPOTHESIS_NO_PLUGINS`` set, or a source tree that was never installed).
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

__all__ = ["register"]

#: The value types of ``trio_harness`` that get a strategy, by name.
TYPES = (
    "ToolCallBlock",
    "SubCall",
    "ExecutionMode",
    "ErrorInfo",
    "ToolError",
    "ToolExecutionResult",
    "StepResult",
    "StepOutcome",
    "Allow",
    "Deny",
    "Ask",
    "Accept",
    "Block",
)

_registered = False


def register() -> None:
    """Register a strategy for every type of :data:`TYPES` (imports ``trio_harness``).

    Idempotent. Each strategy is built on first use.
    """
    global _registered
    if _registered:
        return
    _registered = True
    from hypothesis import strategies as st

    import trio_harness

    for name in TYPES:
        # A resolver, not a strategy: hypothesis calls it (so the strategy is built) only when
        # ``from_type`` first meets the type.
        st.register_type_strategy(getattr(trio_harness, name), functools.partial(_resolve, name))


class _RegisteringLoader(importlib.abc.Loader):
    """The loader of ``trio_harness``, registering the strategies once the module ran."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        register()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _WhenImported(importlib.abc.MetaPathFinder):
    """Waits for ``import trio_harness`` (a one-shot finder, first on ``sys.meta_path``)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "trio_harness":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader)
        return spec


def _hypothesis_setup_hook() -> None:
    """The entry point: register now if trio_harness is imported, else once it is."""
    module = sys.modules.get("trio_harness")
    spec = getattr(module, "__spec__", None)
    if module is not None and not getattr(spec, "_initializing", False):
        register()
    elif module is None and not any(isinstance(f, _WhenImported) for f in sys.meta_path):
        sys.meta_path.insert(0, _WhenImported())


# ---------------------------------------------------------------------------------------------
# The strategies (built on first draw; trio_harness and its testing module are imported by then)
# ---------------------------------------------------------------------------------------------

_PREFIXES = ("call_", "toolu_", "fc_", "")


@functools.cache
def _resolve(name: str, thing: object = None) -> Any:
    return _strategy(name)


def _strategy(name: str) -> Any:
    from hypothesis import strategies as st

    import trio_harness as th
    from trio_harness import testing

    alnum = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1)
    provider_ids = st.builds(
        str.__add__, st.sampled_from(_PREFIXES), alnum.map(lambda text: text[:24])
    )
    call_ids = st.one_of(provider_ids, provider_ids, provider_ids, st.text(max_size=12))
    tool_names = st.one_of(
        st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True),
        st.sampled_from(["read", "write", "search", "kv_get", "kv_put", "missing tool", "é"]),
    )
    contexts = st.lists(testing.json_values(3, max_string_size=40), max_size=2).map(tuple)
    texts = st.text(max_size=40)
    blocks = st.lists(st.builds(lambda text: {"type": "text", "text": text}, texts), max_size=2)
    codes = st.sampled_from(
        [
            th.TOOL_ABORTED,
            th.TOOL_ABORTED_BEFORE_DISPATCH,
            th.TOOL_TIMEOUT,
            th.SUB_CALL_DEPTH_EXCEEDED,
            "TOOL_ARGS_INVALID",
            "TOOL_NOT_FOUND",
        ]
    )
    infos = st.builds(
        th.ErrorInfo,
        st.sampled_from(["AbortError", "ToolArgsError", "ToolNotFoundError", "HarnessError"]),
        codes,
    )
    errors = st.builds(th.ToolError, texts, st.none() | infos)

    @st.composite
    def arguments(draw: st.DrawFn) -> str:
        parameters = draw(testing.parameter_maps(max_size=3))
        return draw(testing.argument_texts(parameters)).text

    def success(text: str, value: Any, contexts: tuple[Any, ...], ends: bool) -> Any:
        return th.ToolExecutionResult(
            is_error=False,
            content=({"type": "text", "text": text},),
            value=value,
            additional_contexts=contexts,
            concludes_turn=ends,
        )

    def failure(error: th.ToolError, contexts: tuple[Any, ...]) -> Any:
        return th.ToolExecutionResult(
            is_error=True,
            content=({"type": "text", "text": "Error: " + error.message},),
            error=error,
            additional_contexts=contexts,
        )

    results = st.one_of(
        st.builds(
            success, texts, testing.json_values(4, max_string_size=40), contexts, st.booleans()
        ),
        st.builds(failure, errors, contexts),
        st.builds(th.aborted_result, contexts),
        st.builds(th.aborted_before_dispatch_result, contexts),
        st.builds(th.error_result, st.builds(th.ToolNotFoundError, tool_names)),
    )
    step_results = st.builds(th.StepResult, call_ids, tool_names, results)
    table: dict[str, Callable[[], Any]] = {
        "ToolCallBlock": lambda: st.builds(th.ToolCallBlock, call_ids, tool_names, arguments()),
        "SubCall": lambda: st.builds(th.SubCall, call_ids, tool_names, testing.json_values(6)),
        "ExecutionMode": lambda: st.sampled_from([th.PARALLEL, th.EXCLUSIVE]),
        "ErrorInfo": lambda: infos,
        "ToolError": lambda: errors,
        "ToolExecutionResult": lambda: results,
        "StepResult": lambda: step_results,
        "StepOutcome": lambda: st.builds(
            th.StepOutcome,
            concluded=st.booleans(),
            aborted=st.booleans(),
            results=st.lists(step_results, max_size=3).map(tuple),
        ),
        "Allow": lambda: st.just(th.Allow()),
        "Deny": lambda: st.builds(th.Deny, texts),
        "Ask": lambda: st.builds(th.Ask, st.none() | texts),
        "Accept": lambda: st.one_of(
            st.just(th.Accept()),
            st.builds(th.Accept, value=testing.json_values(4)),
            st.builds(th.Accept, content=blocks),
            st.builds(th.Accept, additional_contexts=contexts),
        ),
        "Block": lambda: st.builds(th.Block, blocks, additional_contexts=contexts),
    }
    return table[name]()
