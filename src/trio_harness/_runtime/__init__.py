"""The per-call runtime: definitions, registry, policy hooks, results, abort and the pipeline.

Modules, in dependency order (each imports only those before it, and only from other packages'
interfaces):

* :mod:`.abort` — an abort event turned into cancelled scopes (Trio);
* :mod:`.execution` — one call: its input, the execution that is also the body's ``ctx``, and the
  phase shapes the pool drives (``Preparation``, ``DispatchOutcome``, the ``Scheduler`` protocol);
* :mod:`.hooks` — decisions, hook signatures, the approval service, ``HookList`` and ``Policy``;
* :mod:`.define` — ``define_tool`` (hard and soft argument validation);
* :mod:`.json_tool` — ``define_json_tool``: a raw JSON Schema, normalised, with a chosen vocabulary;
* :mod:`.registry` — registration checks, lookup, fail-closed classification;
* :mod:`.results` — how a body's value, a denial, a block or a cancellation becomes a result;
* :mod:`.body` — the one place a body is awaited (hot, relay and general ways) and its ending
  made a result (Trio);
* :mod:`.pipeline` — ``ToolScheduler``: the policy phases, prepare → dispatch → finalize, then
  finish (Trio);
* :mod:`.tool_runtime` — the ``ToolRuntime`` facade.

This ``__init__`` is the package's interface: code outside the package imports from here only.
"""

from .abort import (
    abort_relay,
    abort_type_error,
    cancel_on_abort,
    current_relay,
    group_leaves,
    raise_sole,
)
from .body import stale_cancellation
from .define import always_parallel, define_tool
from .execution import (
    DispatchOutcome,
    Preparation,
    Runtime,
    Scheduler,
    ToolExecution,
    ToolExecutionInput,
    context_message,
    parsed_input,
)
from .hooks import (
    Accept,
    Allow,
    ApprovalOutcome,
    ApprovalRequest,
    ApprovalService,
    Ask,
    Block,
    Deny,
    ExecuteWrapper,
    Guard,
    Policy,
    PostExecuteHook,
    PostToolDecision,
    PreExecuteHook,
    PreToolDecision,
    ResultObserver,
    refuse_awaitable,
)
from .json_tool import define_json_tool, json_schema_validator
from .pipeline import ToolScheduler
from .tool_runtime import ToolRuntime

__all__ = [
    "Accept",
    "Allow",
    "ApprovalOutcome",
    "ApprovalRequest",
    "ApprovalService",
    "Ask",
    "Block",
    "Deny",
    "DispatchOutcome",
    "ExecuteWrapper",
    "Guard",
    "Policy",
    "PostExecuteHook",
    "PostToolDecision",
    "PreExecuteHook",
    "PreToolDecision",
    "Preparation",
    "ResultObserver",
    "Runtime",
    "Scheduler",
    "ToolExecution",
    "ToolExecutionInput",
    "ToolRuntime",
    "ToolScheduler",
    "abort_relay",
    "abort_type_error",
    "always_parallel",
    "cancel_on_abort",
    "context_message",
    "current_relay",
    "define_json_tool",
    "define_tool",
    "group_leaves",
    "json_schema_validator",
    "parsed_input",
    "raise_sole",
    "refuse_awaitable",
    "stale_cancellation",
]
