"""trio_harness: tool-argument validation and the parallel tool-call pool of the DeepSeek Harness, on Trio.

Layout (each layer imports only the layers above it; ``tests/test_layering.py`` enforces it)::

    _errors, _json, _arguments      foundations: errors, lossless JSON, JSON.parse semantics
    _validation/                    mechanism 1: subset, walker, codegen, compiled, dsl (pure)
    _values                         plain values: definitions, results, execution modes
    _session                        the session log and its wire form
    _runtime/                       one call: execution, hooks, define, registry, results,
                                    abort, pipeline, tool_runtime
    _pool/                          mechanism 2: machine (pure), driver (Trio), steps (API)
    _oracle                         the conformance oracle
    _apps/                          agent apps: typed (th.tool), turn (run_turn), sigint
    providers/                      public: OpenAI / Anthropic adapters and ready models
    trio_harness, lowlevel, __main__   the public faces and the command line

This module is the face an application uses; :mod:`trio_harness.lowlevel` holds what only ports,
instrumentation and test tooling need. Every name below is re-exported from a private module;
each private package's ``__init__`` is that package's interface.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

from ._apps import (
    ModelReplied,
    ModelRequested,
    ModelStep,
    StepFinished,
    StepStarted,
    ToolCommitted,
    ToolStarted,
    TurnEvent,
    TurnModel,
    TurnResult,
    abort_on_sigint,
    run_turn,
    tool,
)
from ._arguments import parse_arguments
from ._errors import (
    TOOL_ABORTED,
    TOOL_ABORTED_BEFORE_DISPATCH,
    TOOL_TIMEOUT,
    HarnessError,
    JsonSchemaError,
    ToolArgsError,
    ToolNotFoundError,
    ToolOutputError,
    ToolTimeoutError,
    UnreachableVariantError,
)
from ._json import is_json_value
from ._pool import (
    DEFAULT_MAX_PARALLEL_SUB_CALLS,
    DEFAULT_MAX_PARALLEL_TOOL_CALLS,
    StepOutcome,
    StepResult,
    SubCall,
    SubCallResults,
    ToolCallBlock,
    execute_sub_calls,
    execute_tool_calls,
)
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
    define_tool,
)
from ._session import (
    MessageSource,
    Session,
    SessionEvent,
    ToolCallData,
    ToolResultBlock,
    ToolResultData,
    ToolResultMessage,
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

__version__ = "0.1.0"

# A library logs, the application decides where it goes: without this, Python's last-resort
# handler would print the ``trio_harness`` loggers' warnings to stderr of an app that configured
# no logging.
logging.getLogger("trio_harness").addHandler(logging.NullHandler())

__all__ = [
    "DEFAULT_MAX_PARALLEL_SUB_CALLS",
    "DEFAULT_MAX_PARALLEL_TOOL_CALLS",
    "EXCLUSIVE",
    "PARALLEL",
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
    "MessageSource",
    "ModelReplied",
    "ModelRequested",
    "ModelStep",
    "PostToolDecision",
    "PreToolDecision",
    "Session",
    "SessionEvent",
    "StepFinished",
    "StepOutcome",
    "StepResult",
    "StepStarted",
    "SubCall",
    "SubCallResults",
    "ToolArgsError",
    "ToolCallBlock",
    "ToolCallData",
    "ToolCommitted",
    "ToolDefinition",
    "ToolError",
    "ToolExecution",
    "ToolExecutionInput",
    "ToolExecutionResult",
    "ToolNotFoundError",
    "ToolOutput",
    "ToolOutputError",
    "ToolResultBlock",
    "ToolResultData",
    "ToolResultMessage",
    "ToolRuntime",
    "ToolStarted",
    "ToolTimeoutError",
    "TurnEvent",
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
    "define_tool",
    "error_result",
    "execute_sub_calls",
    "execute_tool_calls",
    "is_json_value",
    "parameter_schema_spec_to_json_schema",
    "parse_arguments",
    "run_turn",
    "tool",
    "validate_args",
    "validate_json_schema_value",
    "value_schema_spec_to_json_schema",
]

#: Names that moved to :mod:`trio_harness.lowlevel` in 0.2; the old spelling still works, with a
#: ``DeprecationWarning``, for one release.
_MOVED_TO_LOWLEVEL = frozenset(
    (
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
)


def __getattr__(name: str) -> Any:
    if name in _MOVED_TO_LOWLEVEL:
        from . import lowlevel

        warnings.warn(
            f"trio_harness.{name} moved to trio_harness.lowlevel.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(lowlevel, name)
    raise AttributeError(f"module 'trio_harness' has no attribute {name!r}")
