"""trio_harness: tool-argument validation and the parallel tool-call pool of the DeepSeek Harness, on Trio.

Layout (each layer imports only the layers above it; ``tests/test_layering.py`` enforces it)::

    _errors, _json, _arguments      foundations: errors, lossless JSON, JSON.parse semantics
    _validation/                    mechanism 1: subset, walker, codegen, compiled, dsl (pure)
    _values                         plain values: definitions, results, execution modes
    _session                        the session log and its wire form
    _runtime/                       one call: execution, hooks, define, registry, results,
                                    abort, pipeline, tool_runtime
    _journal, _replay               the durable session log; replay check, repair, presenting
    _pool/                          mechanism 2: machine (pure), driver (Trio), steps (API)
    _timeline                       a traced step, drawn as text or SVG
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
    CONVERSATION_EVENT,
    TURN_END_EVENT,
    Agent,
    AgentLog,
    ConversationState,
    ModelReplied,
    ModelRequested,
    ModelStep,
    PendingStep,
    Recovery,
    StepFinished,
    StepStarted,
    ToolCommitted,
    ToolStarted,
    TurnEvent,
    TurnModel,
    TurnResult,
    abort_on_sigint,
    open_agent,
    open_agent_log,
    read_conversation,
    run_app,
    run_turn,
    settle_step,
    tool,
)
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
from ._log import (
    FSYNC_POLICIES,
    DurableSession,
    FsyncPolicy,
    LoadedSessionLog,
    LogCut,
    MessageSource,
    PresentedCall,
    ReplayReport,
    Session,
    SessionEvent,
    SessionLogError,
    SessionLogLockedError,
    ToolCallData,
    ToolResultBlock,
    ToolResultData,
    ToolResultMessage,
    UnansweredCall,
    check_replay,
    format_presented,
    load_session_log,
    present_log,
    repair_replay,
)
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
from ._timeline import (
    TRACE_EVENT,
    Lane,
    StepTrace,
    render_timeline_svg,
    render_timeline_text,
    traces_from_lines,
)
from ._validation import (
    NormalizedSchema,
    assert_extended_json_schema,
    assert_object_json_schema,
    assert_supported_json_schema,
    normalize_json_schema,
    parameter_schema_spec_to_json_schema,
    validate_args,
    validate_extended_value,
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
    "CONVERSATION_EVENT",
    "DEFAULT_MAX_PARALLEL_SUB_CALLS",
    "DEFAULT_MAX_PARALLEL_TOOL_CALLS",
    "EXCLUSIVE",
    "FSYNC_POLICIES",
    "MAX_SUB_CALL_DEPTH",
    "PARALLEL",
    "SUB_CALL_DEPTH_EXCEEDED",
    "TOOL_ABORTED",
    "TOOL_ABORTED_BEFORE_DISPATCH",
    "TOOL_TIMEOUT",
    "TRACE_EVENT",
    "TURN_END_EVENT",
    "UNSET",
    "Accept",
    "Agent",
    "AgentLog",
    "Allow",
    "ApprovalOutcome",
    "ApprovalRequest",
    "ApprovalService",
    "Ask",
    "Block",
    "ConversationState",
    "Deny",
    "DurableSession",
    "ErrorInfo",
    "ExecutionMode",
    "FsyncPolicy",
    "HarnessError",
    "JsonSchemaError",
    "Lane",
    "LoadedSessionLog",
    "LogCut",
    "MessageSource",
    "ModelReplied",
    "ModelRequested",
    "ModelStep",
    "NormalizedSchema",
    "PendingStep",
    "PostToolDecision",
    "PreToolDecision",
    "PresentedCall",
    "Recovery",
    "ReplayReport",
    "Session",
    "SessionEvent",
    "SessionLogError",
    "SessionLogLockedError",
    "StepFinished",
    "StepOutcome",
    "StepResult",
    "StepStarted",
    "StepTrace",
    "SubCall",
    "SubCallDepthError",
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
    "UnansweredCall",
    "UnreachableVariantError",
    "__version__",
    "abort_on_sigint",
    "aborted_before_dispatch_result",
    "aborted_result",
    "assert_extended_json_schema",
    "assert_object_json_schema",
    "assert_supported_json_schema",
    "cancel_on_abort",
    "check_replay",
    "context_message",
    "define_json_tool",
    "define_tool",
    "error_result",
    "execute_sub_calls",
    "execute_tool_calls",
    "format_presented",
    "is_json_value",
    "load_session_log",
    "normalize_json_schema",
    "open_agent",
    "open_agent_log",
    "parameter_schema_spec_to_json_schema",
    "parse_arguments",
    "present_log",
    "read_conversation",
    "render_timeline_svg",
    "render_timeline_text",
    "repair_replay",
    "run_app",
    "run_turn",
    "settle_step",
    "tool",
    "traces_from_lines",
    "validate_args",
    "validate_extended_value",
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
