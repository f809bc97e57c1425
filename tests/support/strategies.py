"""Shared hypothesis strategies: JSON values, hostile/non-JSON values, and subset schemas.

``json_values()`` are plain lossless JSON (what a parser produces); ``any_values()`` adds the
things the validator must survive (non-finite floats, ``-0.0``, huge ints, tuples, sets,
``Decimal``, dict/list subclasses, non-``str`` keys, cycles). ``subset_schemas()`` produces
schemas that ``assert_supported_json_schema`` accepts.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "any_values",
    "json_scalars",
    "json_values",
    "subset_schemas",
]

_KEYS = st.sampled_from(["a", "b", "c", "id", "", "x.y", "toString", "__proto__", "é"])

_SAFE_INTS = st.integers(min_value=-(2**53), max_value=2**53)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False).filter(
    lambda f: not (f == 0.0 and math.copysign(1.0, f) < 0)
)


def json_scalars() -> st.SearchStrategy[Any]:
    """Lossless JSON scalars (``-0.0`` and ints beyond 2**53 excluded)."""
    return st.one_of(
        st.none(),
        st.booleans(),
        _SAFE_INTS,
        st.sampled_from([0, 1, 2, 1.0, 2.0, 1.5, -1, "a", "b", ""]),
        _FLOATS,
        st.text(max_size=5),
    )


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Lossless JSON trees: exact lists and ``str``-keyed dicts of scalars."""
    return st.recursive(
        json_scalars(),
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(_KEYS, children, max_size=4),
        ),
        max_leaves=max_leaves,
    )


class _DictSub(dict):  # type: ignore[type-arg]
    """A dict subclass: never an object for the validator."""


class _ListSub(list):  # type: ignore[type-arg]
    """A list subclass: never an array for the validator."""


class _Opaque:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("hostile __eq__")

    def __hash__(self) -> int:
        raise RuntimeError("hostile __hash__")


def _cyclic_list(items: list[Any]) -> list[Any]:
    items.append(items)
    return items


def _cyclic_dict(items: dict[str, Any]) -> dict[str, Any]:
    items["self"] = items
    return items


_ODD_SCALARS = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 2**1100, -(2**1100)]),
    st.builds(Decimal, st.integers()),
    st.builds(_Opaque),
    st.just(b"bytes"),
    st.just(object()),
)


def any_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any Python value the validator might be handed, including cycles and hostile objects."""
    return st.recursive(
        st.one_of(json_scalars(), _ODD_SCALARS),
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.dictionaries(_KEYS, children, max_size=3),
            st.dictionaries(st.one_of(_KEYS, st.integers(0, 3)), children, max_size=3),
            st.lists(children, max_size=3).map(tuple),
            st.lists(children, max_size=3).map(_ListSub),
            st.dictionaries(_KEYS, children, max_size=3).map(_DictSub),
            st.frozensets(st.integers(), max_size=3),
            st.lists(children, max_size=2).map(_cyclic_list),
            st.dictionaries(_KEYS, children, max_size=2).map(_cyclic_dict),
        ),
        max_leaves=max_leaves,
    )


_SCALAR_MEMBERS: dict[str, st.SearchStrategy[Any]] = {
    "string": st.sampled_from(["a", "b", "", "é", 'q"']),
    "number": st.sampled_from([0, 1, 1.5, -2, 2.0, 1e21, 1e-7]),
    "integer": st.sampled_from([0, 1, 2, -3, 2.0]),
    "boolean": st.booleans(),
    "null": st.none(),
}


@st.composite
def _scalar_schema(draw: st.DrawFn) -> dict[str, Any]:
    type_name = draw(st.sampled_from(sorted(_SCALAR_MEMBERS)))
    node: dict[str, Any] = {"type": type_name}
    members = _SCALAR_MEMBERS[type_name]
    enum = draw(st.none() | st.lists(members, min_size=1, max_size=3))
    if enum is not None:
        node["enum"] = enum
    if draw(st.booleans()):
        node["const"] = draw(st.sampled_from(enum) if enum else members)
    if draw(st.booleans()):
        node["description"] = "d"
    return node


def _annotations_only() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={"description": st.just("any"), "default": st.none()})


def subset_schemas(max_leaves: int = 8) -> st.SearchStrategy[dict[str, Any]]:
    """Schemas inside the enforced subset (they pass ``assert_supported_json_schema``)."""

    def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        @st.composite
        def obj(draw: st.DrawFn) -> dict[str, Any]:
            node: dict[str, Any] = {"type": "object"}
            if draw(st.booleans()):
                properties = draw(st.dictionaries(_KEYS, children, max_size=3))
                node["properties"] = properties
                required = (
                    draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
                    if properties
                    else []
                )
                if required:
                    node["required"] = required
            additional = draw(st.sampled_from([None, True, False]))
            if additional is not None:
                node["additionalProperties"] = additional
            return node

        @st.composite
        def arr(draw: st.DrawFn) -> dict[str, Any]:
            node: dict[str, Any] = {"type": "array"}
            if draw(st.booleans()):
                node["items"] = draw(children)
            return node

        return st.one_of(
            obj(),
            arr(),
            st.lists(children, min_size=2, max_size=3).map(lambda branches: {"oneOf": branches}),
        )

    return st.recursive(
        st.one_of(_scalar_schema(), _annotations_only()), extend, max_leaves=max_leaves
    )
