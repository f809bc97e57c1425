"""``define_json_tool``: the same definition checks and argument validation as ``define_tool``."""

from __future__ import annotations

from typing import Any

import pytest

import trio_harness as th

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


async def _body(args: Any, ctx: Any) -> Any:
    return args["path"]


def _define(**overrides: Any) -> th.ToolDefinition:
    options: dict[str, Any] = {
        "name": "reader",
        "description": "",
        "input_schema": SCHEMA,
        "execute": _body,
    }
    options.update(overrides)
    definition, _report = th.define_json_tool(**options)
    return definition


def _call(arguments: object) -> th.ToolExecutionInput:
    return th.ToolExecutionInput(call_id="c1", name="reader", arguments=arguments)


def _text(result: th.ToolExecutionResult) -> str:
    return str(result.content[0]["text"])


def test_an_execute_that_is_not_callable_is_refused_at_definition_time() -> None:
    with pytest.raises(TypeError) as info:
        _define(execute=42)
    assert str(info.value) == "define_json_tool(reader): execute must be a callable, got int"


def test_a_synchronous_def_is_refused_at_definition_time_as_define_tool_refuses_it() -> None:
    def body(args: Any, ctx: Any) -> Any:
        return "sync"

    with pytest.raises(TypeError, match=r"^define_json_tool\(reader\): execute must be an async "):
        _define(execute=body)
    with pytest.raises(TypeError, match=r"^defineTool\(reader\): execute must be an async "):
        th.define_tool(
            name="reader",
            description="",
            parameters={},
            output=th.ToolOutput(schema={"type": "json"}, render=lambda a, v: []),
            execute=body,
        )


@pytest.mark.parametrize(
    ("overrides", "error", "message"),
    [
        ({"name": 7}, TypeError, "define_json_tool: name must be a str, got int"),
        (
            {"description": None},
            TypeError,
            "define_json_tool(reader): description must be a str, got NoneType",
        ),
        (
            {"output": {"schema": {}}},
            TypeError,
            "define_json_tool(reader): output must be a ToolOutput(schema=..., render=...), got dict",
        ),
        (
            {"is_concurrency_safe": True},
            TypeError,
            "define_json_tool(reader): is_concurrency_safe must be a callable or None, got bool",
        ),
        (
            {"timeout_ms": 0},
            ValueError,
            "define_json_tool(reader): timeoutMs must be a positive finite number",
        ),
    ],
)
def test_every_option_is_checked_as_define_tool_checks_it(
    overrides: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        _define(**overrides)
    assert str(info.value) == message


async def test_a_lambda_returning_no_awaitable_fails_the_call_with_the_define_tool_message() -> (
    None
):
    runtime = th.ToolRuntime()
    runtime.register(_define(execute=lambda args, ctx: "sync"))
    result = await runtime.execute(_call({"path": "a"}))
    assert _text(result) == (
        "Error: define_json_tool(reader): execute must be an async function (it returned str)"
    )


async def test_arguments_are_validated_hard_for_execute_and_soft_for_the_classifier() -> None:
    definition = _define(is_concurrency_safe=lambda args: True)
    runtime = th.ToolRuntime()
    runtime.register(definition)
    assert _text(await runtime.execute(_call({"path": "a"}))) == "a"
    failed = await runtime.execute(_call({}))
    assert failed.is_error
    assert _text(failed) == 'Error: invalid arguments: missing required property "path"'
    assert definition.is_concurrency_safe is not None
    assert definition.is_concurrency_safe({"path": "a"}) is True
    assert definition.is_concurrency_safe({}) is False


UNIONS = {
    "type": "object",
    "properties": {
        "dir": {"anyOf": [{"type": "number", "const": 1}, {"type": "number", "const": -1}]},
        "step": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"op": {"const": "add"}, "n": {"type": "number"}},
                    "required": ["op", "n"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {"op": {"const": "reset"}},
                    "required": ["op"],
                    "additionalProperties": False,
                },
            ]
        },
    },
}


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        ({"dir": 5}, '"dir" must be 1 or -1'),
        ({"step": {"op": 5}}, '"step.op" must be "add" or "reset"'),
        ({"step": {}}, 'missing required property "step.op"'),
        ({"step": {"op": "add"}}, 'missing required property "step.n"'),
        (
            {"step": {"op": "reset", "n": 1}},
            '"step.n" is not a declared property (additionalProperties: false)',
        ),
    ],
)
async def test_a_union_of_values_or_tags_is_explained_by_the_branch_the_value_names(
    arguments: dict[str, Any], text: str
) -> None:
    runtime = th.ToolRuntime()
    runtime.register(_define(input_schema=UNIONS, explain_unions=True))
    result = await runtime.execute(_call(arguments))
    assert _text(result) == f"Error: invalid arguments: {text}"
