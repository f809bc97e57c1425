"""Shared hypothesis strategies: JSON values, hostile/non-JSON values, and subset schemas.

``json_values`` and ``subset_schemas`` are the public ones of :mod:`trio_harness.testing`
(re-exported here); ``any_values`` is the test suite's own.
``json_values()`` are plain lossless JSON (what a parser produces); ``any_values()`` adds the
things the validator must survive (non-finite floats, ``-0.0``, huge ints, tuples, sets,
``Decimal``, dict/list subclasses, non-``str`` keys, cycles). ``subset_schemas()`` produces
schemas that ``assert_supported_json_schema`` accepts.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from trio_harness.testing import json_values, subset_schemas

__all__ = [
    "any_values",
    "drawn",
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


def drawn(strategy: st.SearchStrategy[Any], examples: int, seed: int) -> list[Any]:
    """The values hypothesis generates from ``strategy`` in ``examples`` examples of ``seed``
    (generation only: no shrinking, no database), what a fuzz run of that seed is made of."""
    found: list[Any] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def draw(value: Any) -> None:
        found.append(value)

    draw()
    return found
