"""validate_args, ToolArgsError, and define_tool's hard and soft argument validation."""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest

import trio_harness as th
from tests.support.dsl_fixtures import host_port_spec
from trio_harness import (
    JsonSchemaError,
    ToolArgsError,
    ToolOutput,
    define_tool,
    error_result,
    validate_args,
)

# -- validate_args --------------------------------------------------------------------------------

READ_SPEC = {"path": {"type": "string", "required": True}, "limit": {"type": "number"}}


def test_valid_args_pass_and_malformed_input_is_one_violation() -> None:
    # upstream #159
    assert validate_args(READ_SPEC, {"path": "/tmp"}) == []
    assert validate_args(READ_SPEC, {"path": "/tmp", "limit": 5}) == []
    bad: object
    for bad in (None, "nope", [], 3, True, ("path",)):
        assert validate_args(READ_SPEC, bad) == ['"arguments" must be an object']


def test_flags_a_missing_required_key() -> None:
    # upstream #160 ({path: undefined} is [JS]: Python has no undefined)
    assert validate_args(READ_SPEC, {}) == ['missing required property "path"']


def test_allows_extra_keys() -> None:
    # upstream #161
    assert validate_args(READ_SPEC, {"path": "/tmp", "extra": 1}) == []


def test_does_not_apply_defaults() -> None:
    # upstream #162
    args: dict[str, Any] = {}
    assert validate_args({"limit": {"type": "number", "default": 25}}, args) == []
    assert args == {}


def test_type_checks_primitives() -> None:
    # upstream #163
    spec = {"s": {"type": "string"}, "n": {"type": "number"}, "b": {"type": "boolean"}}
    assert validate_args(spec, {"s": 1}) == ['"s" must be a string']
    assert validate_args(spec, {"n": "x"}) == ['"n" must be a number']
    assert validate_args(spec, {"b": "x"}) == ['"b" must be a boolean']
    # bool is not a number here, unlike Python's int hierarchy
    assert validate_args(spec, {"n": True}) == ['"n" must be a number']


def test_checks_enum_membership() -> None:
    # upstream #164
    spec = {"color": {"type": "string", "enum": ["red", "green"]}}
    assert validate_args(spec, {"color": "red"}) == []
    assert validate_args(spec, {"color": "blue"}) == ['"color" must be one of ["red","green"]']


def test_enforces_type_correct_scalar_enum_declarations() -> None:
    # upstream #165
    spec = {"n": {"type": "number", "enum": [1, 2]}}
    assert validate_args(spec, {"n": 1}) == []
    assert validate_args(spec, {"n": 3}) == ['"n" must be one of [1,2]']
    with pytest.raises(JsonSchemaError) as info:
        validate_args({"n": {"type": "number", "enum": ["1", "2"]}}, {"n": 1})
    assert info.value.violations == [
        "schema.properties.n.enum must be a non-empty array of number values"
    ]


def test_rejects_an_unknown_schema_type_at_the_author_boundary() -> None:
    # upstream #166
    with pytest.raises(JsonSchemaError) as info:
        validate_args({"x": {"type": "weird"}}, {})
    assert info.value.violations == [
        "parameters.x.type must be string/number/integer/boolean/null/array/object/json, or use oneOf"
    ]


def test_recurses_into_nested_objects() -> None:
    # upstream #167
    spec = {
        "config": host_port_spec(required=True),
        "bag": {"type": "object", "additionalProperties": True},
    }
    assert validate_args(spec, {"config": {"host": "h"}, "bag": {"anything": True}}) == []
    assert validate_args(spec, {"config": {"port": 9}, "bag": 5}) == [
        'missing required property "config.host"',
        '"bag" must be an object',
    ]


def test_recurses_into_array_items() -> None:
    # upstream #168
    spec = {"tags": {"type": "array", "items": {"type": "string"}}, "raw": {"type": "array"}}
    assert validate_args(spec, {"tags": ["a", "b"], "raw": [1, {}, "x"]}) == []
    assert validate_args(spec, {"tags": ["a", 2]}) == ['"tags[1]" must be a string']
    assert validate_args(spec, {"tags": "nope"}) == ['"tags" must be an array']


def test_validates_arrays_of_objects_element_wise() -> None:
    # upstream #169
    spec = {
        "servers": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": True,
                "properties": {"host": {"type": "string", "required": True}},
            },
        }
    }
    assert validate_args(spec, {"servers": [{"host": "a"}, {}]}) == [
        'missing required property "servers[1].host"'
    ]


def test_invalid_spec_raises_even_for_valid_looking_args() -> None:
    with pytest.raises(JsonSchemaError):
        validate_args(None, {})


# -- ToolArgsError --------------------------------------------------------------------------------


def test_tool_args_error_carries_a_stable_code_and_the_violations() -> None:
    # upstream #172
    violations = ['missing required property "a"', '"b" must be a number']
    error = ToolArgsError(violations)
    assert isinstance(error, Exception)
    assert isinstance(error, th.HarnessError)
    assert error.name == "ToolArgsError"
    assert error.code == "INVALID_ARGS"
    assert error.violations == violations
    assert str(error) == 'invalid arguments: missing required property "a"; "b" must be a number'


# -- define_tool ----------------------------------------------------------------------------------


@attrs.define
class FakeCtx:
    """Stand-in for the runtime's run context: the bodies here only read ``call_id``."""

    call_id: str = "c1"


def text_blocks(value: object) -> list[dict[str, Any]]:
    return [{"type": "text", "text": str(value)}]


def make_tool(**overrides: Any) -> th.ToolDefinition:
    async def body(args: dict[str, Any], ctx: Any) -> str:
        return "read " + str(args["path"])

    options: dict[str, Any] = {
        "name": "reader",
        "description": "read a file",
        "parameters": {"path": {"type": "string", "required": True}},
        "output": ToolOutput(
            schema={"type": "string"}, render=lambda args, value: text_blocks(value)
        ),
        "execute": body,
    }
    options.update(overrides)
    return define_tool(**options)


async def test_define_tool_returns_a_definition_with_compiled_schemas() -> None:
    # upstream #140
    async def body(args: dict[str, Any], ctx: Any) -> str:
        text: str = args["text"]
        return text.upper() if args.get("uppercase") else text

    tool = define_tool(
        name="typed-echo",
        description="echo",
        parameters={"text": {"type": "string", "required": True}, "uppercase": {"type": "boolean"}},
        output=ToolOutput(schema={"type": "string"}, render=lambda args, value: text_blocks(value)),
        execute=body,
    )
    assert isinstance(tool, th.ToolDefinition)
    assert tool.name == "typed-echo"
    assert tool.description == "echo"
    assert tool.parameters == {
        "type": "object",
        "properties": {"text": {"type": "string"}, "uppercase": {"type": "boolean"}},
        "required": ["text"],
    }
    assert tool.output.schema == {"type": "string"}
    assert await tool.execute({"text": "hello", "uppercase": True}, FakeCtx()) == "HELLO"
    assert tool.output.render({}, "HELLO") == [{"type": "text", "text": "HELLO"}]


def test_registry_shape_of_a_defined_tool() -> None:
    # upstream #142 (the registry round trip itself belongs to the runtime tests)
    tool = make_tool(
        parameters={
            "req": {"type": "string", "required": True},
            "opt": {"type": "number", "description": "Optional number"},
        }
    )
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "req": {"type": "string"},
            "opt": {"type": "number", "description": "Optional number"},
        },
        "required": ["req"],
    }


def test_output_schema_is_compiled_from_the_value_spec() -> None:
    tool = make_tool(
        output=ToolOutput(
            schema={"type": "array", "items": {"type": "json"}},
            render=lambda args, value: value,
            presentation_meta=lambda args, value: {"n": len(value)},
        )
    )
    assert tool.output.schema == {"type": "array", "items": {}}
    assert tool.output.presentation_meta is not None
    assert tool.output.presentation_meta({}, [1, 2]) == {"n": 2}


async def test_bad_args_raise_tool_args_error_and_never_reach_the_body() -> None:
    # upstream #170, #173
    calls: list[object] = []

    async def body(args: Any, ctx: Any) -> str:
        calls.append(args)
        return "x"

    tool = make_tool(execute=body)
    with pytest.raises(ToolArgsError) as info:
        await tool.execute({}, FakeCtx())
    assert info.value.violations == ['missing required property "path"']
    assert calls == []
    result = error_result(info.value)
    assert result.to_json() == {
        "content": [
            {"type": "text", "text": 'Error: invalid arguments: missing required property "path"'}
        ],
        "isError": True,
        "error": {
            "message": 'invalid arguments: missing required property "path"',
            "info": {"name": "ToolArgsError", "code": "INVALID_ARGS"},
        },
    }
    with pytest.raises(ToolArgsError) as info:
        await tool.execute('{"path": broken', FakeCtx())
    assert info.value.violations == ['"arguments" must be an object']


async def test_valid_args_run_the_body() -> None:
    # upstream #171
    assert await make_tool().execute({"path": "/x"}, FakeCtx()) == "read /x"


async def test_body_exceptions_propagate_unchanged() -> None:
    # upstream #174/#175 are the runtime's conversion; here the wrapper must not alter the error
    async def body(args: Any, ctx: Any) -> str:
        raise th.HarnessError("disk full", "ENOSPC")

    with pytest.raises(th.HarnessError, match="disk full"):
        await make_tool(execute=body).execute({"path": "/x"}, FakeCtx())


async def test_execute_that_is_not_async_is_a_clear_type_error() -> None:
    tool = make_tool(execute=lambda args, ctx: "sync")
    with pytest.raises(TypeError, match=r"defineTool\(reader\): execute must be an async function"):
        await tool.execute({"path": "/x"}, FakeCtx())


async def test_parameter_validator_is_compiled_once_at_definition_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import trio_harness._runtime.define as define_module

    compiled: list[object] = []
    real = define_module.compile_validator  # type: ignore[attr-defined]

    def counting(schema: object) -> Any:
        compiled.append(schema)
        return real(schema)

    monkeypatch.setattr(define_module, "compile_validator", counting)
    tool = make_tool(present_call=lambda args: "card", is_concurrency_safe=lambda args: True)
    assert len(compiled) == 1
    for _ in range(3):
        await tool.execute({"path": "/x"}, FakeCtx())
        assert tool.present_call is not None
        assert tool.present_call({"path": "/x"}) == "card"
        assert tool.is_concurrency_safe is not None
        assert tool.is_concurrency_safe({}) is False
    assert compiled == [tool.parameters]


def test_finalize_content_is_forwarded_unchanged() -> None:
    def finalize(exec: Any, result: Any) -> Any:
        return None

    assert make_tool(finalize_content=finalize).finalize_content is finalize
    assert make_tool().finalize_content is None


def test_timeout_ms_is_attached_when_positive_finite() -> None:
    # upstream #177, #178
    assert make_tool(timeout_ms=30000).timeout_ms == 30000
    assert make_tool(timeout_ms=0.5).timeout_ms == 0.5
    assert make_tool().timeout_ms is None


@pytest.mark.parametrize(
    "bad", [0, -5, 0.0, -0.0, math.inf, -math.inf, math.nan, True, "5", 10**400, [1]]
)
def test_timeout_ms_that_is_not_a_positive_finite_number_raises(bad: object) -> None:
    # upstream #179, #180 (plain Error upstream; ValueError here)
    with pytest.raises(ValueError, match="positive finite number") as info:
        make_tool(timeout_ms=bad)
    assert str(info.value) == "defineTool(reader): timeoutMs must be a positive finite number"


def test_invalid_specs_raise_at_definition_time() -> None:
    with pytest.raises(JsonSchemaError) as info:
        make_tool(parameters={"x": {"type": "weird"}})
    assert info.value.violations == [
        "parameters.x.type must be string/number/integer/boolean/null/array/object/json, or use oneOf"
    ]
    with pytest.raises(JsonSchemaError) as info:
        make_tool(output=ToolOutput(schema={"type": "object"}, render=lambda a, v: v))
    assert info.value.violations == ["schema.additionalProperties must be explicitly true or false"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"name": 3}, "defineTool: name must be a str, got int"),
        ({"description": None}, "defineTool(reader): description must be a str, got NoneType"),
        (
            {"output": {"schema": {"type": "string"}, "render": print}},
            "defineTool(reader): output must be a ToolOutput(schema=..., render=...), got dict",
        ),
        ({"execute": "run"}, "defineTool(reader): execute must be a callable, got str"),
        (
            {"output": ToolOutput(schema={"type": "string"}, render=None)},  # type: ignore[arg-type]
            "defineTool(reader): output.render must be a callable, got NoneType",
        ),
        (
            {"present_call": 1},
            "defineTool(reader): present_call must be a callable or None, got int",
        ),
        (
            {"is_concurrency_safe": True},
            "defineTool(reader): is_concurrency_safe must be a callable or None, got bool",
        ),
    ],
)
def test_option_types_are_checked_with_clear_messages(
    overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError) as info:
        make_tool(**overrides)
    assert str(info.value) == message


def test_present_call_and_present_result_thread_through() -> None:
    # upstream #182
    tool = make_tool(
        parameters={"path": {"type": "string", "required": True}, "n": {"type": "integer"}},
        present_call=lambda args: {
            "card": "generic",
            "title": "Open " + args["path"],
            "kind": "read",
            "rawInput": args["path"],
        },
        present_result=lambda args, result: {
            "card": "generic",
            "title": "Opened " + args["path"],
            "content": result["content"],
        },
    )
    assert tool.present_call is not None
    assert tool.present_result is not None
    assert tool.present_call({"path": "/a", "n": 2}) == {
        "card": "generic",
        "title": "Open /a",
        "kind": "read",
        "rawInput": "/a",
    }
    result = {"content": [{"type": "text", "text": "x"}], "isError": False}
    assert tool.present_result({"path": "/a"}, result) == {
        "card": "generic",
        "title": "Opened /a",
        "content": [{"type": "text", "text": "x"}],
    }


def test_a_tool_without_presenters_leaves_them_none() -> None:
    # upstream #183
    tool = make_tool()
    assert tool.present_call is None
    assert tool.present_result is None
    assert tool.is_concurrency_safe is None


def test_presenters_validate_softly() -> None:
    # upstream #184
    seen: list[object] = []

    def present_call(args: Any) -> str:
        seen.append(args)
        return "card"

    def present_result(args: Any, result: Any) -> str:
        seen.append(args)
        return "done"

    tool = make_tool(present_call=present_call, present_result=present_result)
    assert tool.present_call is not None
    assert tool.present_result is not None
    assert tool.present_call({}) is None
    assert tool.present_result({"wrong": 1}, {"content": [], "isError": False}) is None
    assert tool.present_call("not an object") is None
    assert seen == []
    assert tool.present_call({"path": "/a"}) == "card"


def test_concurrency_classifier_validates_softly_and_returns_the_raw_answer() -> None:
    tool = make_tool(is_concurrency_safe=lambda args: "yes" if args["path"] == "/a" else True)
    classify = tool.is_concurrency_safe
    assert classify is not None
    assert classify({}) is False
    assert classify(None) is False
    assert classify({"path": 1}) is False
    assert classify({"path": "/b"}) is True
    # the raw return is forwarded; the registry requires exactly True
    assert classify({"path": "/a"}) == "yes"


def test_author_presenter_exceptions_propagate() -> None:
    def boom(args: Any) -> Any:
        raise RuntimeError("presenter bug")

    tool = make_tool(present_call=boom, is_concurrency_safe=boom)
    assert tool.present_call is not None
    assert tool.is_concurrency_safe is not None
    with pytest.raises(RuntimeError, match="presenter bug"):
        tool.present_call({"path": "/a"})
    with pytest.raises(RuntimeError, match="presenter bug"):
        tool.is_concurrency_safe({"path": "/a"})
    # invalid args never reach the author's function
    assert tool.present_call({}) is None


def test_soft_wrappers_are_total_over_hostile_arguments() -> None:
    class Weird(dict[str, Any]):
        def __getitem__(self, key: str) -> Any:
            raise RuntimeError("hostile")

    cyclic: dict[str, Any] = {"path": "/a"}
    cyclic["self"] = cyclic
    tool = make_tool(present_call=lambda args: "card", is_concurrency_safe=lambda args: True)
    assert tool.present_call is not None
    assert tool.is_concurrency_safe is not None
    for hostile in (Weird(path="/a"), {"path": math.nan}, {"path": "/a", 1: 2}, object()):
        assert tool.present_call(hostile) is None
        assert tool.is_concurrency_safe(hostile) is False
    # a cycle in an undeclared key of the open root is not lossless JSON
    assert tool.present_call(cyclic) is None


def test_wrappers_keep_the_author_function_identity_for_debugging() -> None:
    def classify_reads(args: Any) -> bool:
        return True

    tool = make_tool(is_concurrency_safe=classify_reads)
    assert tool.is_concurrency_safe is not None
    assert tool.is_concurrency_safe.__name__ == "classify_reads"
    assert tool.is_concurrency_safe.__wrapped__ is classify_reads  # type: ignore[attr-defined]
