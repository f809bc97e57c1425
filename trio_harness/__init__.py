"""trio_harness: tool-argument validation and the parallel tool-call pool of the DeepSeek Harness, on Trio.

The public face is re-exported here; implementation modules are private (``_name.py``).
See ``docs/`` for the tutorial, how-to guides, reference and design explanation.
"""

from __future__ import annotations

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
from ._json import NOT_JSON, is_json_value, js_json, snapshot_json_value
from ._types import (
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
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_PARALLEL_TOOL_CALLS",
    "NOT_JSON",
    "TOOL_ABORTED",
    "TOOL_ABORTED_BEFORE_DISPATCH",
    "TOOL_TIMEOUT",
    "UNSET",
    "DispatchOutcome",
    "ErrorInfo",
    "ExecutionMode",
    "HarnessError",
    "JsonSchemaError",
    "Preparation",
    "Scheduler",
    "ToolArgsError",
    "ToolDefinition",
    "ToolError",
    "ToolExecutionInput",
    "ToolExecutionResult",
    "ToolNotFoundError",
    "ToolOutput",
    "ToolOutputError",
    "ToolTimeoutError",
    "UnreachableVariantError",
    "__version__",
    "is_json_value",
    "js_json",
    "snapshot_json_value",
]

# -- validation layer (owner: _schema.py, _validator.py) --
from ._schema import assert_object_json_schema, assert_supported_json_schema
from ._validator import validate_json_schema_value
from ._validator_compiled import compile_validator

__all__ += [
    "assert_object_json_schema",
    "assert_supported_json_schema",
    "compile_validator",
    "validate_json_schema_value",
]

# -- author DSL, define_tool, parse_arguments (owner: _dsl.py, _define.py, _arguments.py) --
from ._arguments import parse_arguments  # noqa: E402
from ._define import define_tool, validate_args  # noqa: E402
from ._dsl import (  # noqa: E402
    parameter_schema_spec_to_json_schema,
    value_schema_spec_to_json_schema,
)

__all__ += [
    "define_tool",
    "parameter_schema_spec_to_json_schema",
    "parse_arguments",
    "validate_args",
    "value_schema_spec_to_json_schema",
]

# -- runtime (owner: _runtime.py and its helpers) --
from ._execution import ToolExecution, context_message  # noqa: E402
from ._hooks import (  # noqa: E402
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
from ._pipeline import ToolScheduler  # noqa: E402
from ._runtime import ToolRuntime  # noqa: E402
from ._types import EXCLUSIVE, PARALLEL  # noqa: E402

__all__ += [
    "EXCLUSIVE",
    "PARALLEL",
    "Accept",
    "Allow",
    "ApprovalOutcome",
    "ApprovalRequest",
    "ApprovalService",
    "Ask",
    "Block",
    "Deny",
    "PostToolDecision",
    "PreToolDecision",
    "ToolExecution",
    "ToolRuntime",
    "ToolScheduler",
    "context_message",
]

# -- pool and session log (owner: _core.py, _pool.py, _session.py) --
from ._core import CallState, Op, StepCore  # noqa: E402
from ._pool import (  # noqa: E402
    DEFAULT_MAX_PARALLEL_SUB_CALLS,
    StepOutcome,
    SubCall,
    ToolCallBlock,
    execute_sub_calls,
    execute_tool_calls,
)
from ._session import (  # noqa: E402
    MessageSource,
    Session,
    SessionEvent,
    ToolCallData,
    ToolResultBlock,
    ToolResultData,
    ToolResultMessage,
)

__all__ += [
    "DEFAULT_MAX_PARALLEL_SUB_CALLS",
    "CallState",
    "MessageSource",
    "Op",
    "Session",
    "SessionEvent",
    "StepCore",
    "StepOutcome",
    "SubCall",
    "ToolCallBlock",
    "ToolCallData",
    "ToolResultBlock",
    "ToolResultData",
    "ToolResultMessage",
    "execute_sub_calls",
    "execute_tool_calls",
]
