"""Property tests of the DSL compilers and validate_args (upstream properties.spec.ts, #36-#41)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from trio_harness import (
    JsonSchemaError,
    parameter_schema_spec_to_json_schema,
    validate_args,
    value_schema_spec_to_json_schema,
)

# -- generators of valid author specs -------------------------------------------------------------

_keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.[]0 ", min_size=1, max_size=6)
_words = st.text(min_size=1, max_size=5)

_leaf = st.one_of(
    st.sampled_from(["string", "number", "integer", "boolean", "null", "json"]).map(
        lambda t: {"type": t}
    ),
    st.lists(_words, min_size=1, max_size=3, unique=True).map(
        lambda members: {"type": "string", "enum": members}
    ),
    _words.map(lambda value: {"type": "string", "const": value}),
    st.just({"oneOf": [{"type": "string"}, {"type": "null"}]}),
)


def _value_spec(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    """A value spec without ``required`` (usable as array items or a value root)."""
    if depth <= 0:
        return _leaf
    return st.one_of(
        _leaf,
        st.builds(
            lambda items: {"type": "array"} if items is None else {"type": "array", "items": items},
            st.none() | _value_spec(depth - 1),
        ),
        st.builds(
            lambda open_, props: {
                "type": "object",
                "additionalProperties": open_,
                "properties": props,
            },
            st.booleans(),
            _param_map(depth - 1),
        ),
    )


def _entry(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda spec, required: {**spec, "required": True} if required else spec,
        _value_spec(depth),
        st.booleans(),
    )


def _param_map(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(_keys, _entry(depth), max_size=4)


# -- valid values for a spec (specs here are small: plain recursion is fine) -------------------

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != 0 or str(f) == "0.0")
    | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=8,
)


def _valid_value(data: st.DataObject, spec: dict[str, Any]) -> Any:
    if "oneOf" in spec:  # only [string, null] is generated
        return data.draw(st.text(max_size=4) | st.none())
    kind = spec["type"]
    if "const" in spec:
        return spec["const"]
    if "enum" in spec:
        return data.draw(st.sampled_from(spec["enum"]))
    if kind == "string":
        return data.draw(st.text(max_size=4))
    if kind == "number":
        return data.draw(
            st.integers(-1000, 1000)
            | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != 0)
        )
    if kind == "integer":
        return data.draw(st.integers() | st.integers(-100, 100).map(float))
    if kind == "boolean":
        return data.draw(st.booleans())
    if kind == "null":
        return None
    if kind == "json":
        return data.draw(_json_values)
    if kind == "array":
        items = spec.get("items")
        count = data.draw(st.integers(0, 3))
        if items is None:
            return [data.draw(_json_values) for _ in range(count)]
        return [_valid_value(data, items) for _ in range(count)]
    return _valid_args(data, spec.get("properties", {}))


def _valid_args(data: st.DataObject, param_map: dict[str, Any]) -> dict[str, Any]:
    # Only declared keys, so closed objects accept them too (as upstream's generator).
    out: dict[str, Any] = {}
    for key, entry in param_map.items():
        if entry.get("required") is True or data.draw(st.booleans()):
            out[key] = _valid_value(data, {k: v for k, v in entry.items() if k != "required"})
    return out


# -- hostile values and arbitrary (often invalid) specs ------------------------------------------


class _Hostile(dict[str, Any]):
    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("hostile __getitem__")

    def __iter__(self) -> Any:
        raise RuntimeError("hostile __iter__")

    def keys(self) -> Any:
        raise RuntimeError("hostile keys")


def _cyclic_dict() -> dict[str, Any]:
    node: dict[str, Any] = {"a": 1}
    node["self"] = node
    return node


def _cyclic_list() -> list[Any]:
    node: list[Any] = [1]
    node.append(node)
    return node


_weird_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=4),
    st.just(-0.0),
    st.just(10**400),
    st.just(Decimal("1.5")),
    st.just({1, 2}),
    st.just((1, "a")),
    st.just(b"bytes"),
    st.builds(object),
    st.builds(_Hostile),
    st.builds(_cyclic_dict),
    st.builds(_cyclic_list),
)

_anything = st.recursive(
    _weird_leaves,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(max_size=3) | st.integers(0, 3), children, max_size=3)
    ),
    max_leaves=10,
)

_dsl_keys = st.sampled_from(
    [
        "type",
        "oneOf",
        "items",
        "properties",
        "additionalProperties",
        "required",
        "enum",
        "const",
        "description",
        "default",
        "extra",
    ]
)
_dsl_type_values = st.sampled_from(
    ["string", "number", "integer", "boolean", "null", "array", "object", "json", "tuple"]
)
_any_spec = st.recursive(
    _weird_leaves | _dsl_type_values,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(_dsl_keys | st.text(max_size=2), children | _dsl_type_values, max_size=4)
    ),
    max_leaves=12,
)


# -- properties ----------------------------------------------------------------------------------


def _required_sets_match(spec: dict[str, Any], schema: dict[str, Any]) -> None:
    flagged = {key for key, entry in spec.items() if entry.get("required") is True}
    assert set(schema.get("required", [])) == flagged
    assert schema.get("required", ["x"]) != []  # absent rather than empty
    for key, entry in spec.items():
        node = schema["properties"][key]
        assert node.get("required") is not True  # the flag never leaks into the schema
        _nested_required(entry, node)


def _nested_required(entry: dict[str, Any], node: dict[str, Any]) -> None:
    if entry.get("type") == "object" and "properties" in entry:
        _required_sets_match(entry["properties"], node)
    elif entry.get("type") == "array" and "items" in entry:
        _nested_required(entry["items"], node["items"])


@given(_param_map(2))
def test_required_equals_the_flagged_keys_at_every_level(spec: dict[str, Any]) -> None:
    # upstream #36
    _required_sets_match(spec, parameter_schema_spec_to_json_schema(spec))


@given(_param_map(3), _value_spec(3))
def test_conversion_is_total_for_generated_specs(
    params: dict[str, Any], value: dict[str, Any]
) -> None:
    # upstream #37
    schema = parameter_schema_spec_to_json_schema(params)
    assert list(schema)[:2] == ["type", "properties"]
    value_schema_spec_to_json_schema(value)


@given(_any_spec, _any_spec)
def test_compilers_raise_only_json_schema_error_for_arbitrary_specs(
    params: Any, value: Any
) -> None:
    for compile_fn, spec in (
        (parameter_schema_spec_to_json_schema, params),
        (value_schema_spec_to_json_schema, value),
    ):
        violations: list[str] = ["compiled"]
        try:
            compile_fn(spec)
        except JsonSchemaError as error:
            violations = error.violations
        assert violations
        assert all(isinstance(v, str) for v in violations)


@given(_param_map(3), _anything)
def test_validate_args_is_total_for_any_input(spec: dict[str, Any], args: Any) -> None:
    # upstream #38
    violations = validate_args(spec, args)
    assert isinstance(violations, list)
    assert all(isinstance(v, str) for v in violations)


@given(_any_spec, _anything)
def test_validate_args_raises_only_json_schema_error_for_any_spec(spec: Any, args: Any) -> None:
    # upstream #38, widened to arbitrary (invalid, cyclic, hostile) specs
    try:
        violations = validate_args(spec, args)
    except JsonSchemaError:
        return
    assert all(isinstance(v, str) for v in violations)


@given(st.data(), _param_map(3))
def test_args_satisfying_the_spec_pass(data: st.DataObject, spec: dict[str, Any]) -> None:
    # upstream #39
    args = _valid_args(data, spec)
    assert validate_args(spec, args) == []


@given(st.data(), _param_map(2))
def test_dropping_a_required_key_is_always_rejected(
    data: st.DataObject, spec: dict[str, Any]
) -> None:
    # upstream #40
    required = [key for key, entry in spec.items() if entry.get("required") is True]
    if not required:
        spec = {**spec, "must": {"type": "string", "required": True}}
        required = ["must"]
    args = _valid_args(data, spec)
    del args[required[0]]
    violations = validate_args(spec, args)
    assert f'missing required property "{required[0]}"' in violations


@given(
    _param_map(2),
    st.one_of(
        st.text(),
        st.integers(),
        st.booleans(),
        st.none(),
        st.lists(st.integers()),
        st.floats(),
        st.tuples(st.text()),
    ),
)
def test_a_non_object_top_level_is_always_rejected(spec: dict[str, Any], args: Any) -> None:
    # upstream #41
    assert validate_args(spec, args) == ['"arguments" must be an object']
