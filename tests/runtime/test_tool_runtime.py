"""``ToolRuntime``: registration, schemas, execution and result building (upstream §5)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.support.runtime_helpers import call, first_text, text_blocks
from tests.support.runtime_tools import content_tool, echo_tool, raw_tool, runtime_with
from trio_harness import (
    HarnessError,
    JsonSchemaError,
    ToolDefinition,
    ToolExecution,
    ToolExecutionResult,
    ToolNotFoundError,
    ToolOutput,
    ToolRuntime,
)

OUTPUT_INFO = {"name": "ToolOutputError", "code": "INVALID_TOOL_OUTPUT"}


def _observed(runtime: ToolRuntime) -> list[tuple[ToolExecution, ToolExecutionResult]]:
    seen: list[tuple[ToolExecution, ToolExecutionResult]] = []
    runtime.add_result_observer(lambda exec, result: seen.append((exec, result)))
    return seen


# -- registration and schemas -------------------------------------------------------------------


def test_register_exposes_schemas_without_callbacks() -> None:  # upstream #52
    runtime = runtime_with(echo_tool())
    assert runtime.schemas() == [
        {
            "name": "echo",
            "description": "echo arguments back",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        }
    ]


def test_schemas_drop_host_callbacks_and_timeout() -> None:  # upstream #53, #54
    runtime = runtime_with(
        content_tool(
            "present",
            finalize_content=lambda exec, result: None,
            present_call=lambda args: None,
            present_result=lambda args, result: None,
            timeout_ms=5000,
        )
    )
    assert sorted(runtime.schemas()[0]) == ["description", "name", "parameters"]


def test_registration_requires_an_output_contract() -> None:  # upstream #61
    async def body(args: Any, ctx: Any) -> str:
        return ""

    message = 'tool "bare" must declare output { schema, render, presentationMeta? }'
    bare = ToolDefinition(name="bare", description="", parameters={}, output=None, execute=body)  # type: ignore[arg-type]
    with pytest.raises(TypeError) as info:
        ToolRuntime().register(bare)
    assert str(info.value) == message
    not_callable = ToolDefinition(
        name="bare",
        description="",
        parameters={},
        output=ToolOutput(schema={}, render="nope"),  # type: ignore[arg-type]
        execute=body,
    )
    with pytest.raises(TypeError, match="must declare output"):
        ToolRuntime().register(not_callable)
    bad_meta = ToolDefinition(
        name="bare",
        description="",
        parameters={},
        output=ToolOutput(schema={}, render=lambda a, v: [], presentation_meta=1),  # type: ignore[arg-type]
        execute=body,
    )
    with pytest.raises(TypeError, match="must declare output"):
        ToolRuntime().register(bad_meta)


def test_registration_asserts_the_output_schema() -> None:
    tool = raw_tool()
    bad = ToolDefinition(
        name="bad",
        description="",
        parameters={},
        output=ToolOutput(schema={"type": "tuple"}, render=tool.output.render),
        execute=tool.execute,
    )
    with pytest.raises(JsonSchemaError) as info:
        ToolRuntime().register(bad)
    assert info.value.violations == [
        "schema.type must be one of object/array/string/number/integer/boolean/null"
    ]


@pytest.mark.parametrize("timeout_ms", [0, -5, math.inf, math.nan, True, "10"])
def test_registration_rejects_a_bad_timeout(timeout_ms: Any) -> None:  # upstream #132
    with pytest.raises(ValueError, match="timeoutMs") as info:
        ToolRuntime().register(raw_tool("slow", timeout_ms=timeout_ms))
    assert str(info.value) == 'tool "slow" timeoutMs must be a positive finite number'


def test_duplicate_names_are_rejected_and_disposers_unregister() -> None:  # upstream #133, #134
    runtime = ToolRuntime()
    dispose = runtime.register(echo_tool())
    runtime.register(raw_tool("scoped"))
    with pytest.raises(ValueError, match="already registered") as info:
        runtime.register(echo_tool())
    assert str(info.value) == (
        'tool "echo" is already registered (for a per-agent variant, register through that '
        "agent's `agent.ctx` instead)"
    )
    assert [schema["name"] for schema in runtime.schemas()] == ["echo", "scoped"]
    dispose()
    assert runtime.get("echo") is None
    assert [schema["name"] for schema in runtime.schemas()] == ["scoped"]
    # A disposer removes only its own registration, and only once.
    again = echo_tool()
    runtime.register(again)
    dispose()
    assert runtime.get("echo") is again
    assert runtime.unregister("echo") is True
    assert runtime.unregister("echo") is False


def test_get_returns_the_definition_or_none() -> None:  # upstream #157, #158
    runtime = ToolRuntime()
    tool = echo_tool()
    runtime.register(tool)
    assert runtime.get("echo") is tool
    assert runtime.get("nope") is None


def test_schemas_are_detached_copies() -> None:  # upstream #129
    runtime = runtime_with(echo_tool())
    first = runtime.schemas()
    first[0]["parameters"]["properties"]["text"]["type"] = "number"
    first[0]["name"] = "mutated"
    assert runtime.schemas()[0]["parameters"]["properties"]["text"] == {"type": "string"}
    assert runtime.schemas()[0]["name"] == "echo"


def test_schemas_copy_deeply_nested_parameters() -> None:  # upstream #130
    node: dict[str, Any] = {"type": "string"}
    for _ in range(5000):
        node = {"oneOf": [node, {"type": "null"}]}
    runtime = runtime_with(
        raw_tool("deep", parameters={"type": "object", "properties": {"x": node}})
    )
    copy = runtime.schemas()[0]["parameters"]
    depth = 0
    current = copy["properties"]["x"]
    while "oneOf" in current:
        current = current["oneOf"][0]
        depth += 1
    assert depth == 5000


def test_schemas_reject_non_lossless_raw_parameters() -> None:  # upstream #131
    runtime = runtime_with(
        raw_tool("lossy-schema", parameters={"type": "object", "default": math.nan})
    )
    with pytest.raises(ValueError, match="lossless JSON") as info:
        runtime.schemas()
    assert str(info.value) == (
        'tool "lossy-schema" parameters must be lossless JSON before schema projection'
    )


# -- execution and createSuccessResult ----------------------------------------------------------


async def test_executes_a_tool_and_notifies_observers() -> None:  # upstream #55
    runtime = runtime_with(echo_tool())
    seen = _observed(runtime)
    result = await runtime.execute(call("echo", {"text": "hi"}))
    expected = {"content": text_blocks("hi"), "isError": False, "value": "hi"}
    assert result.to_json() == expected
    assert [observed.to_json() for _, observed in seen] == [expected]
    assert seen[0][1] is result
    assert seen[0][0].call_id == "c1"


async def test_projects_presentation_meta_from_the_value() -> None:  # upstream #56
    diffs = {"diffs": [{"path": "a", "oldText": None, "newText": "x"}]}
    runtime = runtime_with(echo_tool("meta-tool", presentation_meta=lambda args, value: diffs))
    result = await runtime.execute(call("meta-tool", {"text": "ok"}))
    assert result.to_json() == {
        "content": text_blocks("ok"),
        "isError": False,
        "meta": diffs,
        "value": "ok",
    }


async def test_omits_meta_without_a_projector() -> None:  # upstream #57
    runtime = runtime_with(echo_tool())
    result = await runtime.execute(call("echo", {"text": "ok"}))
    assert "meta" not in result.to_json()


async def test_non_lossless_meta_is_an_invalid_output_failure() -> None:  # upstream #58
    runtime = runtime_with(echo_tool(presentation_meta=lambda args, value: lambda: None))
    seen = _observed(runtime)
    result = await runtime.execute(call("echo", {"text": "ok"}))
    assert result.is_error
    assert first_text(result) == (
        'Error: tool "echo" returned invalid output: '
        "output.presentationMeta returned non-lossless JSON"
    )
    assert result.to_json()["error"]["info"] == OUTPUT_INFO
    assert [observed.is_error for _, observed in seen] == [True]


async def test_final_content_transform_sees_the_projection_failure() -> None:  # upstream #59
    # Python analogue of the throwing getter: the projector returns a set (not JSON).
    calls: list[ToolExecutionResult] = []

    def truncate(exec: ToolExecution, result: ToolExecutionResult) -> Any:
        calls.append(result)
        return [{"type": "text", "text": first_text(result)[:32]}]

    runtime = runtime_with(
        echo_tool(
            "throwing-meta",
            presentation_meta=lambda args, value: {"bad": {1, 2}},
            finalize_content=truncate,
        )
    )
    result = await runtime.execute(call("throwing-meta", {"text": "x"}))
    assert result.is_error
    assert first_text(result).startswith('Error: tool "throwing-meta"')
    assert len(first_text(result)) == 32
    assert len(calls) == 1


async def test_a_raising_final_content_transform_is_not_invoked_again() -> None:  # upstream #60
    calls = 0

    def finalizer(exec: ToolExecution, result: ToolExecutionResult) -> Any:
        nonlocal calls
        calls += 1
        raise RuntimeError("finalizer violated its total contract")

    runtime = runtime_with(echo_tool(finalize_content=finalizer))
    result = await runtime.execute(call("echo", {"text": "x"}))
    assert result.to_json() == {
        "content": text_blocks("Error: finalizer violated its total contract"),
        "isError": True,
        "error": {"message": "finalizer violated its total contract"},
    }
    assert calls == 1


async def test_final_content_transform_returning_none_keeps_content() -> None:  # upstream #94
    calls = 0

    def finalizer(exec: ToolExecution, result: ToolExecutionResult) -> None:
        nonlocal calls
        calls += 1

    runtime = runtime_with(echo_tool(finalize_content=finalizer))
    result = await runtime.execute(call("echo", {}))
    assert result.to_json()["content"] == text_blocks("")
    assert calls == 1


async def test_lossy_and_schema_mismatched_values_fail_before_post_execute() -> (
    None
):  # upstream #62
    async def returns_function(args: Any, ctx: Any) -> Any:
        return lambda: None

    async def returns_int(args: Any, ctx: Any) -> Any:
        return 42

    runtime = runtime_with(
        echo_tool("lossy", output_schema={"type": "json"}, execute=returns_function)
    )
    runtime.register(echo_tool("typed", execute=returns_int))
    lossy = await runtime.execute(call("lossy"))
    assert lossy.to_json()["error"] == {
        "message": 'tool "lossy" returned invalid output: value is not lossless JSON',
        "info": OUTPUT_INFO,
    }
    typed = await runtime.execute(call("typed"))
    assert typed.to_json()["error"] == {
        "message": 'tool "typed" returned invalid output: "value" must be a string',
        "info": OUTPUT_INFO,
    }


async def test_dict_subclass_value_is_not_lossless() -> None:  # upstream #63 (Python analogue)
    class Tricky(dict[str, Any]):
        pass

    async def body(args: Any, ctx: Any) -> Any:
        return [Tricky(a=1)]

    runtime = runtime_with(content_tool("tricky", body))
    result = await runtime.execute(call("tricky"))
    assert result.error is not None
    assert (
        result.error.message == 'tool "tricky" returned invalid output: value is not lossless JSON'
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"render": "raise"}, "output.render failed: renderer exploded"),
        ({"presentation_meta": "raise"}, "output.presentationMeta failed: metadata exploded"),
        ({"render": "set"}, "output.render returned non-lossless JSON"),
        ({"presentation_meta": "set"}, "output.presentationMeta returned non-lossless JSON"),
        ({"render": "dict"}, "output.render must return a list of content blocks"),
    ],
)
async def test_projector_failures_are_one_failed_call(
    options: dict[str, str], message: str
) -> None:  # upstream #64, #65 (a set stands for the throwing getter)
    def projector(kind: str, error: str) -> Any:
        def project(args: Any, value: Any) -> Any:
            if kind == "raise":
                raise RuntimeError(error)
            if kind == "set":
                return [{"type": "text", "text": {1}}]
            return {"type": "text", "text": value}

        return project

    built: dict[str, Any] = {}
    if "render" in options:
        built["render"] = projector(options["render"], "renderer exploded")
    if "presentation_meta" in options:
        built["presentation_meta"] = projector(options["presentation_meta"], "metadata exploded")
    runtime = runtime_with(echo_tool(**built))
    result = await runtime.execute(call("echo", {"text": "x"}))
    assert result.to_json() == {
        "content": text_blocks(f'Error: tool "echo" returned invalid output: {message}'),
        "isError": True,
        "error": {
            "message": f'tool "echo" returned invalid output: {message}',
            "info": OUTPUT_INFO,
        },
    }


async def test_unknown_and_throwing_tools_become_failures() -> None:  # upstream #78, #80
    async def explode(args: Any, ctx: Any) -> Any:
        raise RuntimeError("exploded")

    runtime = runtime_with(content_tool("boom", explode))
    unknown = await runtime.execute(call("nope"))
    assert unknown.to_json() == {
        "content": text_blocks('Error: unknown tool "nope"'),
        "isError": True,
        "error": {
            "message": 'unknown tool "nope"',
            "info": {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
        },
    }
    assert first_text(await runtime.execute(call("boom"))) == "Error: exploded"
    error = ToolNotFoundError("ghost")
    assert isinstance(error, HarnessError)
    assert (error.name, error.code, error.message) == (
        "ToolNotFoundError",
        "UNKNOWN_TOOL",
        'unknown tool "ghost"',
    )


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str either")


class _MessageOnly(Exception):
    """Python stand-in for ``throw {message: ...}``: the message lives in an attribute."""

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def __str__(self) -> str:
        return self.message


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (_Unprintable(), "Error: <unprintable thrown value>"),  # upstream #79
        (_MessageOnly("denied by object"), "Error: denied by object"),  # upstream #154
        (RuntimeError("kaboom"), "Error: kaboom"),  # upstream #155
        (Exception(), "Error: "),  # upstream #156: no message at all
    ],
)
async def test_thrown_values_are_reported_by_message(error: Exception, text: str) -> None:
    async def body(args: Any, ctx: Any) -> Any:
        raise error

    runtime = runtime_with(content_tool("thrower", body))
    assert first_text(await runtime.execute(call("thrower"))) == text


async def test_harness_errors_keep_their_info_plain_errors_do_not() -> None:  # upstream #174, #175
    async def disk_full(args: Any, ctx: Any) -> Any:
        raise HarnessError("disk full", "ENOSPC")

    async def plain(args: Any, ctx: Any) -> Any:
        raise ValueError("just a message")

    runtime = runtime_with(content_tool("full", disk_full))
    runtime.register(content_tool("plain", plain))
    full = await runtime.execute(call("full"))
    assert full.to_json()["error"] == {
        "message": "disk full",
        "info": {"name": "HarnessError", "code": "ENOSPC"},
    }
    assert first_text(full) == "Error: disk full"
    assert (await runtime.execute(call("plain"))).to_json()["error"] == {
        "message": "just a message"
    }


async def test_invalid_arguments_surface_the_structured_error() -> (
    None
):  # upstream #170, #171, #173
    async def read(args: Any, ctx: Any) -> Any:
        return text_blocks(f"read {args['path']}")

    runtime = runtime_with(
        content_tool("reader", read, parameters={"path": {"type": "string", "required": True}})
    )
    bad = await runtime.execute(call("reader", {}))
    assert bad.to_json() == {
        "content": text_blocks('Error: invalid arguments: missing required property "path"'),
        "isError": True,
        "error": {
            "message": 'invalid arguments: missing required property "path"',
            "info": {"name": "ToolArgsError", "code": "INVALID_ARGS"},
        },
    }
    good = await runtime.execute(call("reader", {"path": "/x"}))
    assert good.to_json() == {
        "content": text_blocks("read /x"),
        "isError": False,
        "value": text_blocks("read /x"),
    }


async def test_raw_tools_are_not_argument_validated() -> None:  # upstream #143, #176
    async def body(args: Any, ctx: Any) -> Any:
        return args.get("path", "none")

    parameters = {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }
    runtime = runtime_with(raw_tool("raw", parameters=parameters, execute=body))
    assert runtime.schemas()[0]["parameters"] == parameters
    assert first_text(await runtime.execute(call("raw", {"path": "/tmp"}))) == "/tmp"
    assert (await runtime.execute(call("raw", {}))).is_error is False


async def _upper_if_asked(args: Any, ctx: Any) -> Any:
    return args["text"].upper() if args.get("uppercase") else args["text"]


async def _req_and_optional(args: Any, ctx: Any) -> Any:
    return f"{args['req']}:{args.get('opt', 'none')}"


@pytest.mark.parametrize(
    ("body", "parameters", "schema", "arguments", "expected"),
    [
        (
            _upper_if_asked,
            {"text": {"type": "string", "required": True}, "uppercase": {"type": "boolean"}},
            {
                "type": "object",
                "properties": {"text": {"type": "string"}, "uppercase": {"type": "boolean"}},
                "required": ["text"],
            },
            {"text": "hello", "uppercase": True},
            "HELLO",
        ),
        (  # upstream #142 exactly: execute {req:'hello'} → text `hello:none`
            _req_and_optional,
            {
                "req": {"type": "string", "required": True},
                "opt": {"type": "number", "description": "Optional number"},
            },
            {
                "type": "object",
                "properties": {
                    "req": {"type": "string"},
                    "opt": {"type": "number", "description": "Optional number"},
                },
                "required": ["req"],
            },
            {"req": "hello"},
            "hello:none",
        ),
    ],
)
async def test_define_tool_round_trips_through_the_registry(
    body: Any, parameters: Any, schema: Any, arguments: Any, expected: str
) -> None:  # upstream #140, #142: the schema is projected as declared, execution round-trips
    runtime = runtime_with(echo_tool("round-trip", parameters=parameters, execute=body))
    assert runtime.schemas()[0]["parameters"] == schema
    result = await runtime.execute(call("round-trip", arguments))
    assert (result.value, result.to_json()["content"]) == (expected, text_blocks(expected))
    assert first_text(result) == expected
    assert result.is_error is False


async def test_results_are_frozen_and_detached_from_the_body() -> None:  # upstream #119 (part)
    import attrs

    produced: list[Any] = []

    async def body(args: Any, ctx: Any) -> Any:
        blocks = text_blocks("original")
        produced.append(blocks)
        return blocks

    runtime = runtime_with(content_tool("fresh", body))
    result = await runtime.execute(call("fresh"))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        result.value = "changed"  # type: ignore[misc]
    produced[0][0]["text"] = "mutated later"
    assert result.to_json()["value"] == text_blocks("original")
    assert result.to_json()["content"] == text_blocks("original")
