"""trio_harness: tool-argument validation and the parallel tool-call pool of the DeepSeek Harness, on Trio.

This namespace is what an application needs, grouped as the imports below are: defining tools,
running a model step, what a tool call sees and returns, policy hooks, the turn loop, the log,
errors, and upstream's validation contract. The rest lives in namespaces named after their users:

* :mod:`trio_harness.log`: the durable log, replay checks and repair, the typed event data;
* :mod:`trio_harness.timeline`: a traced step and its text and SVG pictures;
* :mod:`trio_harness.agent`: the agent's parts (its log, conversation, recovery);
* :mod:`trio_harness.turn`: the events a turn reports;
* :mod:`trio_harness.schema`: foreign JSON Schemas (normalisation, the extended vocabulary);
* :mod:`trio_harness.providers`: OpenAI / Anthropic adapters and ready models;
* :mod:`trio_harness.mcp`: MCP servers' tools (extra ``mcp``);
* :mod:`trio_harness.testing`: hypothesis strategies and pool monitors (extra ``testing``);
* :mod:`trio_harness.lowlevel`: what ports, instrumentation and test tooling need.

Every name is defined in a private package and reports the namespace it is exported from
(``trio_harness.Allow.__module__ == "trio_harness"``). The private packages, their order and the
rule that each imports only those before it are written once, in ``tests/test_layering.py``
(``ORDER``), which enforces them; ``docs/explanation.md`` draws the same map.
"""

from __future__ import annotations

import logging
import sys
import warnings
from typing import TYPE_CHECKING, Any

from ._errors import (
    SUB_CALL_DEPTH_EXCEEDED,
    TOOL_ABORTED,
    TOOL_ABORTED_BEFORE_DISPATCH,
    TOOL_TIMEOUT,
    HarnessError,
    JsonSchemaError,
    SubCallDepthError,
    ToolArgsError,
    ToolNotFoundError,
    ToolOutputError,
    ToolTimeoutError,
    UnreachableVariantError,
)
from ._json import is_json_value, parse_arguments
from ._log import Session, SessionEvent
from ._pool import (
    DEFAULT_MAX_PARALLEL_SUB_CALLS,
    DEFAULT_MAX_PARALLEL_TOOL_CALLS,
    MAX_SUB_CALL_DEPTH,
    StepOutcome,
    StepResult,
    SubCall,
    SubCallResults,
    ToolCallBlock,
    execute_sub_calls,
    execute_tool_calls,
)
from ._public import lazy_attributes, publish
from ._runtime import (
    Accept,
    Allow,
    ApprovalOutcome,
    ApprovalRequest,
    ApprovalService,
    Ask,
    Block,
    Deny,
    PostToolDecision,
    PreToolDecision,
    ToolExecution,
    ToolExecutionInput,
    ToolRuntime,
    cancel_on_abort,
    context_message,
    define_json_tool,
    define_tool,
)
from ._validation import (
    assert_object_json_schema,
    assert_supported_json_schema,
    parameter_schema_spec_to_json_schema,
    validate_args,
    validate_json_schema_value,
    value_schema_spec_to_json_schema,
)
from ._values import (
    EXCLUSIVE,
    PARALLEL,
    UNSET,
    ErrorInfo,
    ExecutionMode,
    ToolDefinition,
    ToolError,
    ToolExecutionResult,
    ToolOutput,
    aborted_before_dispatch_result,
    aborted_result,
    error_result,
)

# By task, for the reader (``__all__`` below is sorted):
# - defining tools: define_tool, tool, define_json_tool, ToolDefinition, ToolOutput;
# - running a model step: ToolRuntime, execute_tool_calls, ToolCallBlock, StepOutcome, StepResult,
#   ExecutionMode, PARALLEL, EXCLUSIVE, DEFAULT_MAX_PARALLEL_TOOL_CALLS; sub-calls:
#   execute_sub_calls, SubCall, SubCallResults, DEFAULT_MAX_PARALLEL_SUB_CALLS, MAX_SUB_CALL_DEPTH;
# - one tool call: ToolExecutionInput, ToolExecution, ToolExecutionResult, ToolError, ErrorInfo,
#   UNSET, error_result, aborted_result, aborted_before_dispatch_result, cancel_on_abort,
#   context_message;
# - policy hooks: Allow, Deny, Ask, Block, Accept, PreToolDecision, PostToolDecision,
#   ApprovalService, ApprovalRequest, ApprovalOutcome;
# - an agent app: open_agent (a model, its tools and a durable log), run_app (Ctrl-C anywhere is
#   one line); the turn loop below it: run_turn, TurnModel, ModelStep, TurnResult, abort_on_sigint;
# - the log in memory: Session, SessionEvent;
# - errors: HarnessError and its subclasses, and the result codes;
# - upstream's validation contract: the six schema functions, is_json_value, parse_arguments.

__version__ = "0.1.0"

# A library logs, the application decides where it goes: without this, Python's last-resort
# handler would print the ``trio_harness`` loggers' warnings to stderr of an app that configured
# no logging.
logging.getLogger("trio_harness").addHandler(logging.NullHandler())

__all__ = [
    "DEFAULT_MAX_PARALLEL_SUB_CALLS",
    "DEFAULT_MAX_PARALLEL_TOOL_CALLS",
    "EXCLUSIVE",
    "MAX_SUB_CALL_DEPTH",
    "PARALLEL",
    "SUB_CALL_DEPTH_EXCEEDED",
    "TOOL_ABORTED",
    "TOOL_ABORTED_BEFORE_DISPATCH",
    "TOOL_TIMEOUT",
    "UNSET",
    "Accept",
    "Allow",
    "ApprovalOutcome",
    "ApprovalRequest",
    "ApprovalService",
    "Ask",
    "Block",
    "Deny",
    "ErrorInfo",
    "ExecutionMode",
    "HarnessError",
    "JsonSchemaError",
    "ModelStep",
    "PostToolDecision",
    "PreToolDecision",
    "Session",
    "SessionEvent",
    "StepOutcome",
    "StepResult",
    "SubCall",
    "SubCallDepthError",
    "SubCallResults",
    "ToolArgsError",
    "ToolCallBlock",
    "ToolDefinition",
    "ToolError",
    "ToolExecution",
    "ToolExecutionInput",
    "ToolExecutionResult",
    "ToolNotFoundError",
    "ToolOutput",
    "ToolOutputError",
    "ToolRuntime",
    "ToolTimeoutError",
    "TurnModel",
    "TurnResult",
    "UnreachableVariantError",
    "__version__",
    "abort_on_sigint",
    "aborted_before_dispatch_result",
    "aborted_result",
    "assert_object_json_schema",
    "assert_supported_json_schema",
    "cancel_on_abort",
    "context_message",
    "define_json_tool",
    "define_tool",
    "error_result",
    "execute_sub_calls",
    "execute_tool_calls",
    "is_json_value",
    "open_agent",
    "parameter_schema_spec_to_json_schema",
    "parse_arguments",
    "run_app",
    "run_turn",
    "tool",
    "validate_args",
    "validate_json_schema_value",
    "value_schema_spec_to_json_schema",
]

if TYPE_CHECKING:
    from . import agent as agent
    from . import log as log
    from . import lowlevel as lowlevel
    from . import schema as schema
    from . import timeline as timeline
    from . import turn as turn
    from ._apps import (
        ModelStep,
        TurnModel,
        TurnResult,
        abort_on_sigint,
        open_agent,
        run_app,
        run_turn,
        tool,
    )

#: Loaded on first use: the agent-app layer and the namespaces built on it (or on the timeline),
#: and the ``log``, ``schema`` and ``lowlevel`` namespaces (the durable log, the foreign-schema
#: tools, the parts below the application surface). Running a pool needs none of them, so
#: ``import trio_harness`` does not load them (nor ``cattrs``); ``NOT_IN_THE_CORE`` in
#: ``tests/test_package.py`` names what the core must not load. The namespaces are attributes
#: (``th.log.DurableSession``), as ``trio.lowlevel`` is; ``testing`` (hypothesis), ``mcp`` and
#: ``providers`` stay opt-in imports.
_LAZY: dict[str, str] = {
    **dict.fromkeys(
        (
            "ModelStep",
            "TurnModel",
            "TurnResult",
            "abort_on_sigint",
            "open_agent",
            "run_app",
            "run_turn",
            "tool",
        ),
        "._apps",
    ),
    **dict.fromkeys(("agent", "log", "lowlevel", "schema", "timeline", "turn"), ""),
}

publish(__name__, globals(), [name for name in __all__ if name not in _LAZY])

#: Pre-release spellings that still work, with a ``DeprecationWarning``, until the first release
#: (0.1.0), which drops them: the namespace each moved to. Everything in ``log``, ``timeline``,
#: ``turn`` and ``schema`` was top-level once, but for the names new in them.
_MOVED_TO_LOWLEVEL = (
    "CallState",
    "DispatchOutcome",
    "NOT_JSON",
    "Op",
    "PoolRuntime",
    "Preparation",
    "Scheduler",
    "StepCore",
    "ToolScheduler",
    "answer_case",
    "compile_validator",
    "js_json",
    "snapshot_json_value",
)
_MOVED_NAMESPACES = ("log", "timeline", "turn", "schema")

_load = lazy_attributes(__name__, globals(), _LAZY)


def _moved_to(name: str) -> str | None:
    if name in _MOVED_TO_LOWLEVEL:
        return "lowlevel"
    if name in ("FinishReason", "TextDelta", "Usage", "report_text"):
        return None
    for namespace in _MOVED_NAMESPACES:
        if name in getattr(sys.modules[__name__], namespace).__all__:
            return namespace
    return None


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return _load(name)
    if name.startswith("__"):
        # Probes such as ``__path__``/``__wrapped__`` never load the lazy namespaces.
        raise AttributeError(f"module 'trio_harness' has no attribute {name!r}")
    namespace = _moved_to(name)
    if namespace is not None:
        module = getattr(sys.modules[__name__], namespace)
        warnings.warn(
            f"trio_harness.{name} moved to trio_harness.{namespace}.{name} (the old spelling "
            "goes away in the first release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(module, name)
    raise AttributeError(f"module 'trio_harness' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# The strategies of the value types (``st.from_type(ToolCallBlock)``) when hypothesis was imported
# first: its setup hook (``trio_harness_hypothesis``) ran before this package existed. Importing
# trio_harness never imports hypothesis itself.
if "hypothesis" in sys.modules:  # pragma: no branch - both ways are run by tests in subprocesses
    from ._testing import register_type_strategies

    register_type_strategies()
