"""Validation under attack (issue 8): exact caches, wide unions, hostile keys, threads, rejected
schemas, deep schemas in linear memory, shared sub-structures, and code size linear in the schema.

Memory is measured with :mod:`tracemalloc` (peaks, never times), so these tests are stable on a
loaded machine.
"""

from __future__ import annotations

import gc
import sys
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import trio_harness as th
from tests.support.runtime_helpers import call
from tests.support.runtime_tools import content_tool, runtime_with
from trio_harness import (
    JsonSchemaError,
    assert_supported_json_schema,
    validate_json_schema_value,
)
from trio_harness._validation.compiled import _generated_source
from trio_harness.lowlevel import (
    DEFAULT_JSON_NODE_LIMIT,
    NOT_JSON,
    compile_validator,
    json_node_limit,
    set_json_node_limit,
    snapshot_json_value,
)


def both(schema: Any, value: object, path: str = "value") -> list[str]:
    """The walker's answer, after checking that the compiled validator gives the same."""
    expected = validate_json_schema_value(schema, value, path)
    assert compile_validator(schema)(value, path) == expected
    return expected


# -- item 2: the content cache is keyed exactly ---------------------------------------------------


def _enum_schema(member: object) -> dict[str, Any]:
    return {"type": "object", "properties": {"n": {"type": "number", "enum": [member]}}}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (10**22, 10**22 + 1),  # both render 1e+22 in JavaScript
        (1.2345678901234567e20, 123456789012345670000),  # a float and an int, same rendering
        (0.1, 0.1000000000000000055511151231257827),  # equal floats: the same key is fine
    ],
)
@pytest.mark.parametrize("order", ["first-then-second", "second-then-first"])
def test_content_cache_never_returns_another_schemas_validator(
    first: object, second: object, order: str
) -> None:
    a, b = _enum_schema(first), _enum_schema(second)
    assert_supported_json_schema(a)
    assert_supported_json_schema(b)
    pairs = [(a, first), (b, second)]
    if order == "second-then-first":
        pairs.reverse()
    validators = [(compile_validator(schema), schema) for schema, _ in pairs]
    for (validator, schema), (_, member) in zip(validators, pairs, strict=True):
        for value in (first, second):
            assert validator({"n": value}, "value") == validate_json_schema_value(
                schema, {"n": value}, "value"
            )
        assert validator({"n": member}, "value") == []


def test_content_cache_tells_true_from_one_and_keeps_key_order() -> None:
    ones = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    swapped = {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}}
    value = {"a": "x", "b": 1}
    assert compile_validator(ones)(value, "value") == [
        '"value.a" must be an integer',
        '"value.b" must be a string',
    ]
    assert compile_validator(swapped)(value, "value") == [
        '"value.b" must be a string',
        '"value.a" must be an integer',
    ]
    closed = {"type": "object", "additionalProperties": False, "properties": {}}
    assert compile_validator({**closed, "default": True})({"x": 1}, "v") == both(
        closed, {"x": 1}, "v"
    )


# -- item 4: wide unions compile --------------------------------------------------------------------


def _wide_union(width: int) -> dict[str, Any]:
    return {"oneOf": [{"type": "string", "const": f"c{i}"} for i in range(width)]}


@pytest.mark.parametrize("width", [17, 3_500])
def test_wide_unions_compile_and_equal_the_walker(width: int) -> None:
    schema = _wide_union(width)
    assert_supported_json_schema(schema)
    validator = compile_validator(schema)
    assert "_count(" in _generated_source(validator)  # compiled, not handed to the walker
    assert validator("c7", "value") == []
    assert validator("nope", "value") == both(schema, "nope")
    assert validator("nope", "value") == ['"value" must match exactly one oneOf branch (matched 0)']
    nested = {"type": "object", "properties": {"k": schema}, "required": ["k"]}
    assert both(nested, {"k": f"c{width - 1}"}) == []
    assert both(nested, {"k": 5}) == ['"value.k" must match exactly one oneOf branch (matched 0)']


async def test_wide_unions_pass_define_tool_and_register() -> None:
    branches = [{"type": "string", "const": f"c{i}"} for i in range(4_000)]

    async def run(args: Any, ctx: Any) -> str:
        return str(args["pick"])

    tool = th.define_tool(
        name="wide",
        description="a wide union",
        parameters={"pick": {"oneOf": branches, "required": True}},
        output=th.ToolOutput(schema={"oneOf": branches}, render=lambda args, value: []),
        execute=run,
    )
    th.ToolRuntime().register(tool)
    assert await tool.execute({"pick": "c3999"}, None) == "c3999"
    with pytest.raises(th.ToolArgsError) as caught:
        await tool.execute({"pick": "x"}, None)
    assert caught.value.violations == ['"pick" must match exactly one oneOf branch (matched 0)']


# -- item 13: a hostile key inside a union ----------------------------------------------------------


class _Hostile:
    """A dict key that collides with ``"a"`` and refuses to be compared."""

    def __hash__(self) -> int:
        return hash("a")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparing me")


def test_a_hostile_key_inside_a_union_gets_the_walkers_answer() -> None:
    branch = {
        "type": "object",
        "properties": {"b": {"type": "string"}, "a": {"type": "string"}},
        "required": ["b", "a"],
    }
    schema = {"oneOf": [branch, {"type": "null"}]}
    nested = {"type": "object", "properties": {"u": schema}}
    for root, value in ((schema, {_Hostile(): 1}), (nested, {"u": {_Hostile(): 1}})):
        assert_supported_json_schema(root)
        expected = validate_json_schema_value(root, value, "value")
        assert expected == ['"value" must be a lossless JSON value'] or expected[0].startswith(
            '"value.u"'
        )
        assert compile_validator(root)(value, "value") == expected


def test_odd_but_harmless_keys_in_a_union_still_agree() -> None:
    schema = {"oneOf": [{"type": "object"}, {"type": "null"}]}
    for value in ({1: 2}, {(1, 2): 3}, [{None: 1}]):
        both(schema, value)


# -- item 14: thread safety -------------------------------------------------------------------------


def test_compile_validator_is_thread_safe() -> None:
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def work(worker: int) -> None:
        try:
            start.wait()
            for index in range(4_000):
                # Few distinct contents (cheap cache hits), many identities: both caches evict.
                schema = {"type": "string", "enum": [f"w{worker}-{index % 150}"]}
                validator = compile_validator(schema)
                assert validator(f"w{worker}-{index % 150}", "value") == []
                assert validator("other", "value") != []
        except BaseException as error:  # pragma: no cover - only on failure
            failures.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show at once
    try:
        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []


# -- item 22: rejected schemas go to the walker -----------------------------------------------------


def test_a_single_branch_union_is_validated_by_the_walker() -> None:
    schema = {"oneOf": [{"type": "string"}]}
    with pytest.raises(JsonSchemaError):
        assert_supported_json_schema(schema)
    assert compile_validator(schema)(5, "value") == [
        '"value" must match exactly one oneOf branch (matched 0)'
    ]
    assert compile_validator(schema)("x", "value") == []
    assert _generated_source(compile_validator(schema)) == ""


# -- helpers for the memory tests -------------------------------------------------------------------


def peak_bytes(run: Callable[[], object]) -> int:
    """The tracemalloc peak of ``run()`` above what was allocated when it started."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def deep_object_schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"child": schema}, "required": ["child"]}
    return schema


def deep_value(depth: int, leaf: object) -> object:
    value: object = leaf
    for _ in range(depth):
        value = {"child": value}
    return value


# -- item 5: any depth in linear memory -------------------------------------------------------------


def deep_spec(depth: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "integer"}
    for _ in range(depth):
        spec = {"type": "object", "additionalProperties": False, "properties": {"c": spec}}
    return spec


def _assertion(depth: int) -> Callable[[], object]:
    schema = deep_object_schema(depth)
    return lambda: assert_supported_json_schema(schema)


def _assertion_rejects(depth: int) -> Callable[[], object]:
    schema = deep_object_schema(depth)
    leaf = schema
    while "properties" in leaf:
        leaf = leaf["properties"]["child"]
    leaf["type"] = "tuple"  # one violation at the bottom: its path is rendered once

    def run() -> None:
        with pytest.raises(JsonSchemaError) as caught:
            assert_supported_json_schema(schema)
        assert caught.value.violations == [
            "schema"
            + ".properties.child" * depth
            + ".type must be one of object/array/string/number/integer/boolean/null"
        ]

    return run


def _walker(depth: int) -> Callable[[], object]:
    schema, value = deep_object_schema(depth), deep_value(depth, "not an integer")

    def run() -> None:
        violations = validate_json_schema_value(schema, value, "value")
        assert violations == ['"value' + ".child" * depth + '" must be an integer']

    return run


def _compiled(depth: int) -> Callable[[], object]:
    validator = compile_validator(deep_object_schema(depth))
    value = deep_value(depth, "not an integer")
    return lambda: validator(value, "value")


def _dsl(depth: int) -> Callable[[], object]:
    spec = deep_spec(depth)
    return lambda: th.value_schema_spec_to_json_schema(spec)


def _validate_args(depth: int) -> Callable[[], object]:
    spec = {"c": deep_spec(depth)}
    return lambda: th.validate_args(spec, {"c": 1})


def _compile_validator(depth: int) -> Callable[[], object]:
    schema = deep_object_schema(depth)
    return lambda: compile_validator(schema)


#: Each deep entry point: depth -> a call with its inputs built in advance (not measured).
ENTRY_POINTS: dict[str, Callable[[int], Callable[[], object]]] = {
    "assertion": _assertion,
    "assertion-rejects": _assertion_rejects,
    "walker": _walker,
    "compiled": _compiled,
    "dsl": _dsl,
    "validate_args": _validate_args,
    "compile_validator": _compile_validator,
}


#: Bytes a level may cost at most (a few small tuples, frames and stack entries per level); a
#: quadratic cost shows as a per-level cost that grows with depth.
BYTES_PER_LEVEL = 1_500


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_deep_schemas_cost_linear_memory(entry: str) -> None:
    # Measured, never timed: the peak at 4,000 levels is linear in the depth (at most
    # BYTES_PER_LEVEL a level, about twice the peak at 2,000 levels).
    small = peak_bytes(ENTRY_POINTS[entry](2_000))
    large = peak_bytes(ENTRY_POINTS[entry](4_000))
    assert large <= BYTES_PER_LEVEL * 4_000
    assert large <= 2.5 * max(small, 1)


@pytest.mark.slow
# The others are these combined (the assertion runs inside the three others, validate_args is
# the DSL and the walker, the compiled validator is the walker at this depth).
@pytest.mark.parametrize("entry", ["assertion-rejects", "walker", "dsl", "compile_validator"])
def test_fifty_thousand_levels_cost_linear_memory(entry: str) -> None:
    assert peak_bytes(ENTRY_POINTS[entry](50_000)) <= BYTES_PER_LEVEL * 50_000


# -- item 12: generated code linear in the schema -------------------------------------------------


def _chain(depth: int) -> dict[str, Any]:
    """An object chain ``depth`` nodes deep (the compiled bound is 100)."""
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(depth - 1):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


def _wide(width: int) -> dict[str, Any]:
    properties = {f"p{i}": {"type": "string"} for i in range(width)}
    return {"type": "object", "properties": properties, "required": ["p0", f"p{width - 1}"]}


def _source(schema: dict[str, Any]) -> str:
    assert_supported_json_schema(schema)
    text = _generated_source(compile_validator(schema))
    assert text  # compiled, not handed to the walker
    return text


def _longest_function(text: str) -> int:
    lengths = [len(chunk.splitlines()) for chunk in text.split("\ndef ")]
    return max(lengths)


def test_generated_code_is_linear_in_the_depth() -> None:
    # Before: each level inlined its whole subtree and rendered its whole path (99 levels:
    # 21,000 lines, 1.8 MB). Now a node's code is emitted a bounded number of times.
    sizes = {depth: len(_source(_chain(depth))) for depth in (25, 50, 99)}
    assert sizes[99] <= 99 * 3_000
    assert sizes[99] / 99 <= 1.3 * sizes[50] / 50
    assert sizes[50] / 50 <= 1.3 * sizes[25] / 25
    value: object = 1
    for _ in range(98):
        value = {"a": value}
    assert both(_chain(99), value) == []
    broken: object = "x"
    for _ in range(98):
        broken = {"a": broken, "b": 1}
    assert both(_chain(99), broken) == ['"value' + ".a" * 98 + '" must be an integer']


def test_generated_code_is_linear_in_the_width_and_split_into_functions() -> None:
    sizes = {width: len(_source(_wide(width))) for width in (1_000, 4_000)}
    assert sizes[4_000] <= 1.2 * 4 * sizes[1_000]
    text = _source(_wide(4_000))
    assert _longest_function(text) <= 2_000  # compile() is superlinear in one function's size
    value = {f"p{i}": "s" for i in range(4_000)}
    assert both(_wide(4_000), value) == []
    value["p17"], value["x"] = 1, None
    del value["p3999"]
    assert both(_wide(4_000), value, "") == [
        'missing required property "p3999"',
        '"p17" must be a string',
    ]


# -- item 11: shared sub-structures are charged at every place ------------------------------------


def doubled(times: int, leaf: Any = 1) -> Any:
    """``v = [leaf]`` doubled ``times`` times (``v = [v, v]``): ``times + 1`` lists, ``2**times``
    leaves."""
    value: Any = [leaf]
    for _ in range(times):
        value = [value, value]
    return value


@pytest.fixture
def node_limit() -> Iterator[Callable[[int], None]]:
    """Set the JSON node limit for one test; the previous limit is restored afterwards."""
    previous = json_node_limit()
    yield lambda limit: set_json_node_limit(limit) and None
    set_json_node_limit(previous)


LIMIT_TAIL = " nodes (a container shared by several places counts at each; see set_json_node_limit)"


async def test_a_shared_value_returned_by_a_tool_is_an_error_result_naming_the_limit() -> None:
    # Before: the 2**21-leaf expansion was copied, validated and rendered as a tree (with 24
    # doublings: 57 s and 3 GB with the event loop blocked; 30 never ended).
    async def body(args: Any, ctx: Any) -> Any:
        return doubled(21)

    runtime = runtime_with(content_tool("dag", body))
    result = await runtime.execute(call("dag"))
    assert result.is_error
    assert result.error is not None
    assert result.error.message == (
        'tool "dag" returned invalid output: value is larger than the JSON node limit of '
        f"{DEFAULT_JSON_NODE_LIMIT}{LIMIT_TAIL}"
    )
    assert result.error.info is not None
    assert result.error.info.code == "INVALID_TOOL_OUTPUT"


async def test_the_node_limit_is_configurable(node_limit: Callable[[int], None]) -> None:
    node_limit(1_000)

    async def body(args: Any, ctx: Any) -> Any:
        return doubled(30) if args.get("big") else doubled(8)  # 2**9 + 2**9 - 1 nodes + 1

    runtime = runtime_with(content_tool("dag", body, parameters={"big": {"type": "boolean"}}))
    small = await runtime.execute(call("dag", {}))
    assert not small.is_error
    big = await runtime.execute(call("dag", {"big": True}))
    assert big.error is not None
    assert big.error.message.endswith(f"JSON node limit of 1000{LIMIT_TAIL}")
    # Exactly at the limit is fine, one more node is not (a list and its elements).
    assert snapshot_json_value(list(range(999))) == list(range(999))
    problems: list[str] = []
    assert snapshot_json_value(list(range(1_000)), problems) is NOT_JSON
    assert snapshot_json_value([{"a": 1}] * 499) == [{"a": 1}] * 499
    assert snapshot_json_value([{"a": 1}] * 500) is NOT_JSON
    assert problems == [f"value is larger than the JSON node limit of 1000{LIMIT_TAIL}"]
    for bad in (0, -1, True, 1.5, "10"):
        with pytest.raises(ValueError, match="positive int"):
            set_json_node_limit(bad)  # type: ignore[arg-type]
    assert json_node_limit() == 1_000


def test_is_json_value_visits_a_shared_container_once() -> None:
    # Linear in the distinct containers: 2**60 leaves, 61 lists. Before: never ended.
    assert th.is_json_value(doubled(60))
    assert not th.is_json_value(doubled(60, leaf=float("nan")))
    cyclic: list[Any] = [1]
    cyclic.append([cyclic, cyclic])
    assert not th.is_json_value(doubled(40, leaf=cyclic))
    assert validate_json_schema_value({"type": "array"}, doubled(60), "value") == []


def test_a_schema_sharing_sub_schemas_is_charged_at_every_place(
    node_limit: Callable[[int], None],
) -> None:
    node_limit(10_000)
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(30):
        schema = {"oneOf": [schema, schema]}
    message = f"schema is larger than the JSON node limit of 10000{LIMIT_TAIL}"
    with pytest.raises(JsonSchemaError) as caught:
        assert_supported_json_schema(schema)
    assert caught.value.violations == [message]
    # compile_validator asserts first: the walker (with its own behaviour) gets it, at once.
    assert _generated_source(compile_validator(schema)) == ""
    annotated = {"type": "string", "default": doubled(40)}
    with pytest.raises(JsonSchemaError) as caught:
        assert_supported_json_schema(annotated)
    assert caught.value.violations == [message]
    # Under the limit, sharing is fine.
    assert_supported_json_schema({"type": "string", "default": doubled(8)})


def test_a_spec_sharing_sub_specs_is_charged_at_every_place(
    node_limit: Callable[[int], None],
) -> None:
    node_limit(10_000)
    spec: dict[str, Any] = {"type": "string"}
    for _ in range(30):
        spec = {"oneOf": [spec, spec]}
    with pytest.raises(JsonSchemaError) as caught:
        th.value_schema_spec_to_json_schema(spec)
    assert caught.value.violations == [
        f"schema is larger than the JSON node limit of 10000{LIMIT_TAIL}"
    ]
    with pytest.raises(JsonSchemaError) as caught:
        th.parameter_schema_spec_to_json_schema({"x": spec})
    assert caught.value.violations == [
        f"parameters is larger than the JSON node limit of 10000{LIMIT_TAIL}"
    ]
    with pytest.raises(JsonSchemaError) as caught:
        th.value_schema_spec_to_json_schema({"type": "json", "examples": doubled(30)})
    assert caught.value.violations == [
        f"schema is larger than the JSON node limit of 10000{LIMIT_TAIL}"
    ]

    async def run(args: Any, ctx: Any) -> Any:
        return None

    with pytest.raises(JsonSchemaError):
        th.define_tool(
            name="shared",
            description="shared sub-specs",
            parameters={"x": spec},
            output=th.ToolOutput(schema={"type": "null"}, render=lambda a, v: []),
            execute=run,
        )


class _Meta(type):
    """A metaclass claiming its classes equal ``str``: a set lookup of a key's type would say
    such a key is a plain string."""

    def __hash__(cls) -> int:
        return hash(str)

    def __eq__(cls, other: object) -> bool:
        return True


class _Disguised(_Hostile, metaclass=_Meta):
    """A hostile key whose type pretends to be ``str``."""

    __hash__ = _Hostile.__hash__


def test_a_hostile_key_with_a_lying_metaclass_still_gets_the_walkers_answer() -> None:
    branch = {
        "type": "object",
        "properties": {"b": {"type": "string"}, "a": {"type": "string"}},
        "required": ["b", "a"],
    }
    schema = {"oneOf": [branch, {"type": "null"}]}
    value = {_Disguised(): 1}
    assert compile_validator(schema)(value, "value") == validate_json_schema_value(
        schema, value, "value"
    )
