"""The public face: every name API.md promises is exported, with the right kind, and ``__all__``
is curated (unique, sorted, one literal list, resolvable, no private module leaking)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
import re
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest

import trio_harness as th

INIT = Path(th.__file__)

# Names API.md promises, by kind.
PROMISED_FUNCTIONS = [
    "value_schema_spec_to_json_schema",
    "parameter_schema_spec_to_json_schema",
    "assert_supported_json_schema",
    "assert_object_json_schema",
    "validate_json_schema_value",
    "validate_args",
    "is_json_value",
    "parse_arguments",
    "define_tool",
]
PROMISED_ASYNC_FUNCTIONS = ["execute_tool_calls"]
PROMISED_EXCEPTIONS = [
    "HarnessError",
    "JsonSchemaError",
    "ToolArgsError",
    "ToolOutputError",
    "ToolNotFoundError",
]
PROMISED_CLASSES = [
    "ToolOutput",
    "ToolDefinition",
    "ToolRuntime",
    "ToolExecutionInput",
    "ToolExecutionResult",
    "ExecutionMode",
    "ToolCallBlock",
    "Session",
    "SessionEvent",
    "StepOutcome",
]
PROMISED_CONSTANTS = {
    "DEFAULT_MAX_PARALLEL_TOOL_CALLS": 10,
    "TOOL_ABORTED": "ABORTED",
    "TOOL_ABORTED_BEFORE_DISPATCH": "ABORTED_BEFORE_DISPATCH",
}
# Names this repository adds beyond API.md, documented in docs/reference.md.
EXTRA_CONSTANTS = {
    "DEFAULT_MAX_PARALLEL_SUB_CALLS": 10,
    "TOOL_TIMEOUT": "TOOL_TIMEOUT",
}


@pytest.mark.parametrize("name", PROMISED_FUNCTIONS)
def test_promised_functions_are_exported(name: str) -> None:
    value = getattr(th, name)
    assert inspect.isfunction(value)
    assert not inspect.iscoroutinefunction(value)
    assert name in th.__all__


@pytest.mark.parametrize("name", PROMISED_ASYNC_FUNCTIONS)
def test_promised_async_functions_are_exported(name: str) -> None:
    assert inspect.iscoroutinefunction(getattr(th, name))
    assert name in th.__all__


@pytest.mark.parametrize("name", PROMISED_EXCEPTIONS)
def test_promised_errors_are_harness_errors(name: str) -> None:
    value = getattr(th, name)
    assert inspect.isclass(value)
    assert issubclass(value, th.HarnessError)
    assert issubclass(value, Exception)
    assert name in th.__all__


@pytest.mark.parametrize("name", PROMISED_CLASSES)
def test_promised_classes_are_exported(name: str) -> None:
    assert inspect.isclass(getattr(th, name))
    assert name in th.__all__


@pytest.mark.parametrize(
    ("name", "expected"), [*PROMISED_CONSTANTS.items(), *EXTRA_CONSTANTS.items()]
)
def test_constants_have_their_values(name: str, expected: object) -> None:
    value = getattr(th, name)
    assert type(value) is type(expected)
    assert value == expected
    assert name in th.__all__


def test_execution_mode_constants() -> None:
    assert th.ExecutionMode("parallel") == th.PARALLEL
    assert th.ExecutionMode("exclusive") == th.EXCLUSIVE
    assert {th.PARALLEL.kind, th.EXCLUSIVE.kind} == {"parallel", "exclusive"}


def test_error_codes_match_the_contract() -> None:
    assert th.JsonSchemaError(["a", "b"]).code == "UNSUPPORTED_SCHEMA"
    assert str(th.JsonSchemaError(["a", "b"])) == "unsupported JSON schema: a; b"
    assert th.ToolArgsError(["a"]).code == "INVALID_ARGS"
    assert str(th.ToolArgsError(["a", "b"])) == "invalid arguments: a; b"
    assert th.ToolOutputError("t", ["x"]).code == "INVALID_TOOL_OUTPUT"
    assert str(th.ToolOutputError("t", ["x", "y"])) == 'tool "t" returned invalid output: x; y'
    assert th.ToolNotFoundError("t").code == "UNKNOWN_TOOL"
    assert str(th.ToolNotFoundError("t")) == 'unknown tool "t"'
    assert th.HarnessError("m", "C").code == "C"


def test_runtime_exposes_the_promised_members() -> None:
    runtime = th.ToolRuntime()
    for method in (
        "register",
        "unregister",
        "schemas",
        "execution_mode",
        "add_pre_execute",
        "add_execute_wrapper",
        "add_post_execute",
        "add_guard",
        "add_result_observer",
    ):
        assert callable(getattr(runtime, method)), method
    assert inspect.iscoroutinefunction(runtime.execute)
    scheduler = runtime.scheduler
    for phase in ("prepare", "dispatch", "finalize"):
        assert inspect.iscoroutinefunction(getattr(scheduler, phase)), phase
    assert callable(scheduler.finish)
    assert not inspect.iscoroutinefunction(scheduler.finish)


def test_execute_tool_calls_keywords_match_the_contract() -> None:
    parameters = inspect.signature(th.execute_tool_calls).parameters
    assert list(parameters)[:3] == ["runtime", "session", "tool_calls"]
    for keyword, default in (
        ("turn", 0),
        ("step", 0),
        ("abort", None),
        ("max_parallel_tool_calls", th.DEFAULT_MAX_PARALLEL_TOOL_CALLS),
        ("accept_context", None),
    ):
        assert parameters[keyword].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[keyword].default == default


def test_define_tool_takes_only_keywords() -> None:
    parameters = inspect.signature(th.define_tool).parameters
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values())
    assert list(parameters) == [
        "name",
        "description",
        "parameters",
        "output",
        "execute",
        "is_concurrency_safe",
        "present_call",
        "present_result",
        "finalize_content",
        "timeout_ms",
    ]


def test_all_is_unique_and_every_name_resolves() -> None:
    assert len(th.__all__) == len(set(th.__all__))
    for name in th.__all__:
        assert hasattr(th, name), name


def _all_blocks() -> list[list[str]]:
    """The string lists of every ``__all__ = [...]`` / ``__all__ += [...]`` in ``__init__.py``."""
    blocks: list[list[str]] = []
    for node in ast.parse(INIT.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                assert isinstance(node.value, ast.List)
                blocks.append([ast.literal_eval(item) for item in node.value.elts])
    return blocks


def _isort_key(name: str) -> tuple[int, str]:
    # ruff's RUF022 order: SCREAMING_CASE, then CamelCase, then everything else.
    if name.isupper() or re.fullmatch(r"[A-Z0-9_]+", name):
        return (0, name)
    if name[:1].isupper():
        return (1, name)
    return (2, name)


def test_all_is_one_sorted_literal_list() -> None:
    # One ``__all__ = [...]`` in ruff's RUF022 order, so a reader sees the whole public face at once.
    blocks = _all_blocks()
    assert len(blocks) == 1
    assert blocks[0] == th.__all__
    assert th.__all__ == sorted(th.__all__, key=_isort_key)


def test_result_factories_are_public() -> None:
    # Scheduler wrappers and tests build the upstream synthetic results without private imports.
    assert th.aborted_before_dispatch_result().error == th.ToolError(
        "tool call aborted before dispatch", th.ErrorInfo("AbortError", "ABORTED_BEFORE_DISPATCH")
    )
    assert th.aborted_result().content == ({"type": "text", "text": "Error: tool call aborted"},)
    failed = th.error_result(th.HarnessError("disk full", "ENOSPC"))
    assert failed.to_json() == {
        "content": [{"type": "text", "text": "Error: disk full"}],
        "isError": True,
        "error": {"message": "disk full", "info": {"name": "HarnessError", "code": "ENOSPC"}},
    }


def test_no_private_names_or_modules_leak() -> None:
    for name in th.__all__:
        if name == "__version__":
            continue
        assert not name.startswith("_"), name
        assert not isinstance(getattr(th, name), types.ModuleType), name


def test_public_objects_do_not_advertise_private_modules_as_api() -> None:
    # Exported functions and classes live in private modules, but none of those modules is itself
    # reachable through __all__.
    private_modules = {name for name in vars(th) if name.startswith("_") and not name.endswith("_")}
    assert private_modules.isdisjoint(th.__all__)
    assert all(
        getattr(th, name).__module__.startswith("trio_harness")
        for name in th.__all__
        if inspect.isclass(getattr(th, name)) or inspect.isfunction(getattr(th, name))
    )


def test_every_export_is_documented_in_the_reference() -> None:
    reference = (INIT.parent.parent.parent / "docs" / "reference.md").read_text(encoding="utf-8")
    missing = [name for name in th.__all__ if f"`{name}" not in reference]
    assert missing == []


# The two public faces are pinned as lists: an application's names at the top level, and what only
# ports, instrumentation and test tooling need in ``trio_harness.lowlevel`` (as trio does).
TOP_LEVEL = [
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
LOWLEVEL = [
    "DEFAULT_JSON_NODE_LIMIT",
    "FORMAT_ASSERTIONS",
    "MAX_COMPILED_DEPTH",
    "NOT_JSON",
    "CallState",
    "DispatchOutcome",
    "LogViolation",
    "Op",
    "PatternError",
    "Policy",
    "PoolRuntime",
    "PoolTracer",
    "Preparation",
    "Runtime",
    "ScenarioAnswer",
    "Scheduler",
    "StepCore",
    "ToolScheduler",
    "Validator",
    "answer_case",
    "check_log",
    "compile_extended_validator",
    "compile_validator",
    "is_json_integer",
    "is_json_number",
    "js_json",
    "json_node_limit",
    "run_scenario",
    "set_json_node_limit",
    "snapshot_json_value",
    "translate_pattern",
    "validate_cap",
]


#: The namespaces beside the top level, each named after its users.
NAMESPACES = {
    "agent": [
        "APPROVAL_DECISION_EVENT",
        "APPROVAL_PENDING_EVENT",
        "CONVERSATION_EVENT",
        "TURN_END_EVENT",
        "Agent",
        "AgentLog",
        "ApprovalDecision",
        "ApprovalRule",
        "ApprovalToolDefinition",
        "ConversationState",
        "DecisionCallback",
        "LineReader",
        "PausedStep",
        "PendingApprovalError",
        "PendingCall",
        "PendingStep",
        "Recovery",
        "TerminalApproval",
        "needs_approval",
        "open_agent_log",
        "paused_step",
        "read_conversation",
        "settle_step",
    ],
    "log": [
        "FSYNC_POLICIES",
        "DurableSession",
        "FsyncPolicy",
        "LoadedSessionLog",
        "LogCut",
        "MessageSource",
        "PresentedCall",
        "ReplayReport",
        "SessionLogError",
        "SessionLogLockedError",
        "StoredEvents",
        "StoredTimes",
        "ToolCallData",
        "ToolResultBlock",
        "ToolResultData",
        "ToolResultMessage",
        "UnansweredCall",
        "check_replay",
        "format_presented",
        "load_session_log",
        "present_log",
        "repair_replay",
    ],
    "timeline": [
        "TRACE_EVENT",
        "Lane",
        "StepTrace",
        "render_timeline_svg",
        "render_timeline_text",
        "traces_from_lines",
    ],
    "turn": [
        "FinishReason",
        "HoldPolicy",
        "ModelReplied",
        "ModelRequested",
        "StepFinished",
        "StepStarted",
        "StepStreaming",
        "StreamingTurnModel",
        "TextDelta",
        "ToolCommitted",
        "ToolStarted",
        "TurnEvent",
        "Usage",
        "report_text",
    ],
    "schema": [
        "NormalizedSchema",
        "assert_extended_json_schema",
        "normalize_json_schema",
        "validate_extended_value",
    ],
    "lowlevel": LOWLEVEL,
}

#: Every public namespace whose names are checked for uniqueness and their ``__module__``.
PUBLIC_MODULES = [
    "trio_harness",
    *(f"trio_harness.{name}" for name in NAMESPACES),
    "trio_harness.testing",
    "trio_harness.providers",
    "trio_harness.providers.openai",
    "trio_harness.providers.anthropic",
    "trio_harness.mcp",
]


def test_the_public_faces_are_pinned() -> None:
    assert th.__all__ == TOP_LEVEL
    for name, names in NAMESPACES.items():
        module = importlib.import_module(f"trio_harness.{name}")
        assert module.__all__ == names, name
        assert all(hasattr(module, attribute) for attribute in names)


def test_the_top_level_fits_one_screen() -> None:
    assert len(th.__all__) <= 70


def test_every_object_is_exported_by_exactly_one_namespace() -> None:
    # trio's test_core_is_properly_reexported: one name, one public home. ``providers`` re-exports
    # the ready models of ``providers.openai`` / ``providers.anthropic`` as their short spelling.
    homes: dict[int, list[str]] = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                homes.setdefault(id(value), []).append(f"{module_name}.{name}")
    shared = [places for places in homes.values() if len(places) > 1]
    assert [places for places in shared if not all(".providers" in p for p in places)] == []


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_public_objects_report_their_public_module(module_name: str) -> None:
    module = importlib.import_module(module_name)
    leaking = [
        f"{name}: {getattr(module, name).__module__}"
        for name in module.__all__
        if (inspect.isclass(getattr(module, name)) or inspect.isfunction(getattr(module, name)))
        and _is_private_module(getattr(module, name).__module__)
    ]
    assert leaking == []


def _is_private_module(name: str) -> bool:
    # ``trio_harness._log.journal`` and ``trio_harness.providers._chat`` alike.
    return any(part.startswith("_") for part in name.split(".")[1:])


def test_a_private_module_inside_a_public_package_is_published() -> None:
    import trio_harness.providers
    import trio_harness.providers.openai

    assert trio_harness.providers.openai.ChatCompletionsModel.__module__ == (
        "trio_harness.providers.openai"
    )
    assert trio_harness.providers.openai.responses_tools.__module__ == (
        "trio_harness.providers.openai"
    )
    assert trio_harness.providers.ProviderError.__module__ == "trio_harness.providers"


def test_a_public_class_reports_the_path_users_write() -> None:
    assert th.Allow.__module__ == "trio_harness"
    assert repr(th.ToolCallBlock) == "<class 'trio_harness.ToolCallBlock'>"
    import trio_harness.log

    assert trio_harness.log.DurableSession.__module__ == "trio_harness.log"


def test_published_classes_pickle_and_resolve_their_hints() -> None:
    block = th.ToolCallBlock("c1", "read", '{"path": "a"}')
    assert pickle.loads(pickle.dumps(block)) == block
    error = th.ToolArgsError(["a"])
    assert str(pickle.loads(pickle.dumps(error))) == str(error)
    assert typing.get_type_hints(th.ToolCallBlock)["id"] is str


#: Names that are new in their namespace (never top-level), so they have no old spelling.
NEW_IN_NAMESPACES = {"FinishReason", "Usage", "TextDelta", "report_text"}
NEW_IN_NAMESPACES |= {"CONVERSATION_EVENT", "TURN_END_EVENT", "Agent", "AgentLog"}
NEW_IN_NAMESPACES |= {"ConversationState", "PendingStep", "Recovery", "open_agent_log"}
NEW_IN_NAMESPACES |= {"read_conversation", "settle_step"}
NEW_IN_NAMESPACES |= {"APPROVAL_DECISION_EVENT", "APPROVAL_PENDING_EVENT", "ApprovalDecision"}
NEW_IN_NAMESPACES |= {"ApprovalRule", "ApprovalToolDefinition", "DecisionCallback", "LineReader"}
NEW_IN_NAMESPACES |= {"PausedStep", "PendingApprovalError", "PendingCall", "TerminalApproval"}
NEW_IN_NAMESPACES |= {"needs_approval", "paused_step", "HoldPolicy"}
MOVED = [
    (name, namespace)
    for namespace, names in NAMESPACES.items()
    if namespace != "lowlevel"
    for name in names
    if name not in NEW_IN_NAMESPACES
]


@pytest.mark.parametrize(("name", "namespace"), MOVED)
def test_old_top_level_spellings_warn_and_still_work(name: str, namespace: str) -> None:
    module = importlib.import_module(f"trio_harness.{namespace}")
    with pytest.warns(DeprecationWarning, match=f"trio_harness.{namespace}.{name}"):
        value = getattr(th, name)
    assert value is getattr(module, name)


def test_old_testing_spellings_warn_and_still_work() -> None:
    from trio_harness import lowlevel, testing

    with pytest.warns(DeprecationWarning, match="lowlevel.LogViolation"):
        assert testing.LogViolation is lowlevel.LogViolation
    with pytest.warns(DeprecationWarning, match="lowlevel.run_scenario"):
        old = testing.run_scenario
    scenario = {
        "tools": [{"name": "read"}],
        "calls": [{"id": "c0", "name": "read", "arguments": "{}"}],
    }
    assert old(scenario)["events"] == lowlevel.run_scenario(scenario).answer["events"]


def test_every_namespace_name_is_documented_in_the_reference() -> None:
    reference = (INIT.parent.parent.parent / "docs" / "reference.md").read_text(encoding="utf-8")
    names = {name for names in NAMESPACES.values() for name in names}
    missing = sorted(name for name in names if f"`{name}" not in reference)
    assert missing == []


@pytest.mark.parametrize(
    "name",
    [
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
    ],
)
def test_names_that_moved_to_lowlevel_still_resolve_with_a_deprecation_warning(name: str) -> None:
    import trio_harness.lowlevel as thl

    with pytest.warns(
        DeprecationWarning, match=rf"trio_harness\.{name} moved to trio_harness\.lowlevel\.{name}"
    ):
        value = getattr(th, name)
    assert value is getattr(thl, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        th.nope  # noqa: B018


TESTING = [
    "ARGUMENT_KINDS",
    "ArgumentText",
    "BodyRecord",
    "PoolMonitor",
    "PoolScenario",
    "PoolViolation",
    "ScenarioCall",
    "ScenarioStep",
    "argument_texts",
    "check_session",
    "invalid_values",
    "json_values",
    "parameter_maps",
    "pool_scenarios",
    "run_pool_scenario",
    "scheduling_scenarios",
    "subset_schemas",
    "valid_values",
]


def test_the_testing_module_is_pinned_and_documented() -> None:
    import trio_harness.testing as tht

    assert tht.__all__ == TESTING
    assert all(hasattr(tht, name) for name in TESTING)
    reference = (INIT.parent.parent.parent / "docs" / "reference.md").read_text(encoding="utf-8")
    assert [name for name in TESTING if f"`{name}" not in reference] == []


#: Run in a fresh interpreter: the test run itself has imported both provider modules already.
PROVIDER_ATTRIBUTES = """
import sys
from trio_harness import providers
print('trio_harness.providers.openai' in sys.modules)
print(providers.openai.ChatCompletionsModel.__name__)
print(providers.anthropic.MessagesModel.__name__)
try:
    providers.gemini
except AttributeError as error:
    print(error)
"""


def test_the_provider_modules_are_attributes_of_the_providers_package() -> None:
    # Issue 29: ``providers.openai`` without ``import trio_harness.providers.openai`` first.
    out = subprocess.check_output(
        [sys.executable, "-c", PROVIDER_ATTRIBUTES], text=True, timeout=120
    )
    assert out.splitlines() == [
        "False",
        "ChatCompletionsModel",
        "MessagesModel",
        "module 'trio_harness.providers' has no attribute 'gemini'",
    ]
