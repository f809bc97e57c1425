"""Schemas of the enforced subset and author parameter maps, drawn with their edges.

:func:`subset_schemas` and :func:`parameter_maps` (the DSL of ``define_tool``); only satisfiable
unions are kept where asked, judged by :class:`.solver.Solver`.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from hypothesis import strategies as st

from .._validation import value_schema_spec_to_json_schema
from .json_leaves import MAX_INT, SAFE_INT, json_trees, plain_zero
from .solver import Solver
from .value_knobs import (
    BOOLEANS,
    DEFAULT_KNOBS,
    call,
    check_bool,
    check_int,
    lazy,
    make_knobs,
    pick,
    shuffled,
    upto,
)

__all__ = ["parameter_maps", "subset_schemas"]


@functools.lru_cache(maxsize=8)
def _members(type_name: str) -> st.SearchStrategy[Any]:
    """Enum/const members of a scalar type, edges included (big and integral numbers)."""
    if type_name == "string":
        return st.one_of(
            st.sampled_from(["a", "b", "", "é", 'q"', "e\u0301", "0"]), st.text(max_size=6)
        )
    if type_name == "number":
        return st.one_of(
            st.sampled_from(
                [0, 1, -2, 1.5, 2.0, 1e21, 1e-7, SAFE_INT, SAFE_INT + 1, 1e300, MAX_INT]
            ),
            st.integers(-MAX_INT, MAX_INT),
            st.floats(allow_nan=False, allow_infinity=False).map(plain_zero),
        )
    if type_name == "integer":
        return st.one_of(
            st.sampled_from([0, 1, 2, -3, 2.0, SAFE_INT + 1, -(2**60), 1e300, MAX_INT]),
            st.integers(-MAX_INT, MAX_INT),
        )
    if type_name == "boolean":
        return st.booleans()
    return st.none()


@functools.lru_cache(maxsize=8)
def _enums(type_name: str) -> st.SearchStrategy[list[Any] | None]:
    return st.none() | st.lists(_members(type_name), min_size=1, max_size=4)


_SCALAR_TYPES: Final = ("string", "number", "integer", "boolean", "null")


@st.composite
def _scalar_schema(draw: st.DrawFn) -> dict[str, Any]:
    type_name = _SCALAR_TYPES[pick(draw, len(_SCALAR_TYPES))]
    node: dict[str, Any] = {"type": type_name}
    enum = draw(_enums(type_name))
    if enum is not None:
        node["enum"] = enum
    if draw(BOOLEANS):
        node["const"] = enum[pick(draw, len(enum))] if enum else draw(_members(type_name))
    _annotate(draw, node)
    return node


@functools.lru_cache(maxsize=1)
def _annotations() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "description": st.text(max_size=8),
            "title": st.text(max_size=8),
            "default": json_trees(DEFAULT_KNOBS, 3),
            "examples": st.lists(json_trees(DEFAULT_KNOBS, 2), max_size=2),
        },
    )


def _annotate(draw: st.DrawFn, node: dict[str, Any]) -> None:
    node.update(draw(_annotations()))


@st.composite
def _annotations_only(draw: st.DrawFn) -> dict[str, Any]:
    node: dict[str, Any] = {}
    _annotate(draw, node)
    return node


def _has_valid_value(schema: dict[str, Any]) -> bool:
    return Solver(schema, DEFAULT_KNOBS).sat((schema,), ())


def subset_schemas(
    max_leaves: int = 8,
    *,
    keys: st.SearchStrategy[str] | None = None,
    satisfiable: bool = True,
) -> st.SearchStrategy[dict[str, Any]]:
    """Schemas inside the enforced subset (``assert_supported_json_schema`` accepts them).

    Every keyword of the subset, with edges: enum members that are big or integral numbers
    (``2.0`` for ``integer``, ``2**53 + 1``, ``1e300``, the finite-double limit) or equal across
    number types (``[1, 1.0]``), ``const`` beside ``enum``, property names from ``keys``
    (default: ``""``, non-ASCII, ``__proto__``, array indices, arbitrary text), ``required``,
    open and closed objects, arrays with and without ``items``, nested ``oneOf``, and annotations
    (``description``, ``title``, ``default``, ``examples``) with JSON payloads.

    Args:
        max_leaves: Most leaf schemas (the size knob).
        keys: Strategy for property names.
        satisfiable: Only schemas that some value satisfies (a ``oneOf`` whose branches overlap
            completely, such as ``[{}, {}]``, is left out), so :func:`valid_values` can draw
            from every one.
    """

    def build() -> st.SearchStrategy[dict[str, Any]]:
        check_int("subset_schemas", "max_leaves", max_leaves, 1)
        check_bool("subset_schemas", "satisfiable", satisfiable)
        names = make_knobs("subset_schemas", keys=keys).keys

        def extend(
            children: st.SearchStrategy[dict[str, Any]],
        ) -> st.SearchStrategy[dict[str, Any]]:
            maps = st.dictionaries(names, children, max_size=4)

            def obj(draw: st.DrawFn) -> dict[str, Any]:
                node: dict[str, Any] = {"type": "object"}
                if draw(BOOLEANS):
                    properties = draw(maps)
                    node["properties"] = properties
                    required = [name for name in properties if draw(BOOLEANS)]
                    if required:
                        node["required"] = shuffled(draw, required)
                additional = (None, True, False)[pick(draw, 3)]
                if additional is not None:
                    node["additionalProperties"] = additional
                _annotate(draw, node)
                return node

            def arr(draw: st.DrawFn) -> dict[str, Any]:
                node: dict[str, Any] = {"type": "array"}
                if draw(BOOLEANS):
                    node["items"] = draw(children)
                _annotate(draw, node)
                return node

            unions = st.lists(children, min_size=2, max_size=3).map(
                lambda branches: {"oneOf": branches}
            )
            if satisfiable:
                unions = unions.filter(_has_valid_value)
            return st.one_of(call(obj), call(arr), unions)

        return st.recursive(
            st.one_of(_scalar_schema(), _annotations_only()), extend, max_leaves=max_leaves
        )

    return lazy(
        build,
        lambda: ("schemas", max_leaves, keys, satisfiable),
    )


_DESCRIPTIONS: Final = st.text(max_size=8)


@st.composite
def _scalar_spec(draw: st.DrawFn) -> dict[str, Any]:
    type_name = _SCALAR_TYPES[pick(draw, len(_SCALAR_TYPES))]
    spec: dict[str, Any] = {"type": type_name}
    if type_name not in ("boolean", "null"):
        enum = draw(_enums(type_name))
        if enum is not None:
            spec["enum"] = enum
    if draw(upto(3)) == 3:
        spec["description"] = draw(_DESCRIPTIONS)
    return spec


def _spec_has_valid_value(spec: dict[str, Any]) -> bool:
    return _has_valid_value(value_schema_spec_to_json_schema(spec))


def _value_specs(names: st.SearchStrategy[str], nested: bool) -> st.SearchStrategy[Any]:
    leaves = st.one_of(_scalar_spec(), st.just({"type": "json"}))
    if not nested:
        return _scalar_spec()

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        maps = _entries(names, children, 0, 3)

        def array(draw: st.DrawFn) -> dict[str, Any]:
            spec: dict[str, Any] = {"type": "array"}
            if draw(BOOLEANS):
                spec["items"] = draw(children)
            return spec

        def obj(draw: st.DrawFn) -> dict[str, Any]:
            spec: dict[str, Any] = {"type": "object", "additionalProperties": draw(BOOLEANS)}
            if draw(BOOLEANS):
                spec["properties"] = draw(maps)
            return spec

        unions = (
            st.lists(children, min_size=2, max_size=3)
            .map(lambda branches: {"oneOf": branches})
            .filter(_spec_has_valid_value)
        )
        return st.one_of(call(array), call(obj), unions)

    return st.recursive(leaves, extend, max_leaves=4)


def _entries(
    names: st.SearchStrategy[str], specs: st.SearchStrategy[Any], min_size: int, max_size: int
) -> st.SearchStrategy[dict[str, Any]]:
    def entry(draw: st.DrawFn) -> dict[str, Any]:
        spec = dict(draw(specs))
        if draw(BOOLEANS):
            spec["required"] = True
        return spec

    return st.dictionaries(names, call(entry), min_size=min_size, max_size=max_size)


def parameter_maps(
    min_size: int = 0,
    max_size: int = 4,
    *,
    keys: st.SearchStrategy[str] | None = None,
    nested: bool = True,
) -> st.SearchStrategy[dict[str, Any]]:
    """Author parameter maps (the DSL of ``define_tool``'s ``parameters``).

    Parameters of every DSL kind: scalars (with ``enum``, edge members included), ``json``,
    arrays (with or without ``items``), open and closed objects with their own parameters, and
    ``oneOf`` unions (only satisfiable ones); any of them ``required``. Names come from ``keys``
    (default: ``""``, non-ASCII, ``__proto__``, array indices, arbitrary text).

    Args:
        min_size: Fewest parameters.
        max_size: Most parameters (at the top level).
        keys: Strategy for parameter names.
        nested: Draw arrays, objects, ``json`` and ``oneOf`` parameters; ``False``: scalars only.
    """

    def build() -> st.SearchStrategy[dict[str, Any]]:
        check_int("parameter_maps", "min_size", min_size, 0)
        check_int("parameter_maps", "max_size", max_size, min_size)
        check_bool("parameter_maps", "nested", nested)
        names = make_knobs("parameter_maps", keys=keys).keys
        return _entries(names, _value_specs(names, nested), min_size, max_size)

    return lazy(
        build,
        lambda: ("maps", min_size, max_size, keys, nested),
    )
