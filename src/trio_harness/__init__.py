"""trio_harness: tool-argument validation and the parallel tool-call pool of the DeepSeek Harness, on Trio.

The public face is re-exported here; implementation modules are private (``_name.py``).
See ``docs/`` for the tutorial, how-to guides, reference and design explanation.
"""

from __future__ import annotations

from ._arguments import (
    parse_arguments,
)
from ._errors import (
    DEFAULT_MAX_PARALLEL_TOOL_CALLS,
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
from ._json import (
    NOT_JSON,
    is_json_value,
    js_json,
    snapshot_json_value,
)
from ._oracle import (
    answer_case,
)
from ._pool.machine import (
    CallState,
    Op,
    StepCore,
)
from ._pool.steps import (
    DEFAULT_MAX_PARALLEL_SUB_CALLS,
    PoolRuntime,
    StepOutcome,
    SubCall,
    ToolCallBlock,
    execute_sub_calls,
    execute_tool_calls,
)
from ._runtime.define import (
    define_tool,
    validate_args,
)
from ._runtime.execution import (
    ToolExecution,
    context_message,
)
from ._runtime.hooks import (
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
)
from ._runtime.pipeline import (
    ToolScheduler,
)
from ._runtime.tool_runtime import (
    ToolRuntime,
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
from ._validation.compiled import (
    compile_validator,
)
from ._validation.dsl import (
    parameter_schema_spec_to_json_schema,
    value_schema_spec_to_json_schema,
)
from ._validation.subset import (
    assert_object_json_schema,
    assert_supported_json_schema,
)
from ._validation.walker import (
    validate_json_schema_value,
)
from ._values import (
    EXCLUSIVE,
    PARALLEL,
    UNSET,
    DispatchOutcome,
    ErrorInfo,
    ExecutionMode,
    Preparation,
    Scheduler,
    ToolDefinition,
    ToolError,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolOutput,
    aborted_before_dispatch_result,
    aborted_result,
    error_result,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_PARALLEL_SUB_CALLS",
    "DEFAULT_MAX_PARALLEL_TOOL_CALLS",
    "EXCLUSIVE",
    "NOT_JSON",
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
    "CallState",
    "Deny",
    "DispatchOutcome",
    "ErrorInfo",
    "ExecutionMode",
    "HarnessError",
    "JsonSchemaError",
    "MessageSource",
    "Op",
    "PoolRuntime",
    "PostToolDecision",
    "PreToolDecision",
    "Preparation",
    "Scheduler",
    "Session",
    "SessionEvent",
    "StepCore",
    "StepOutcome",
    "SubCall",
    "ToolArgsError",
    "ToolCallBlock",
    "ToolCallData",
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
    "ToolScheduler",
    "ToolTimeoutError",
    "UnreachableVariantError",
    "__version__",
    "aborted_before_dispatch_result",
    "aborted_result",
    "answer_case",
    "assert_object_json_schema",
    "assert_supported_json_schema",
    "compile_validator",
    "context_message",
    "define_tool",
    "error_result",
    "execute_sub_calls",
    "execute_tool_calls",
    "is_json_value",
    "js_json",
    "parameter_schema_spec_to_json_schema",
    "parse_arguments",
    "snapshot_json_value",
    "validate_args",
    "validate_json_schema_value",
    "value_schema_spec_to_json_schema",
]
