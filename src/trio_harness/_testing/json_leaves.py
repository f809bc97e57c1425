"""Lossless JSON leaves and trees with the edges the validator and the kit care about.

Integral numbers (ints, integral floats, past 2**53 up to the finite-double limit), fractional
numbers (subnormal, tiny), strings (long, empty, non-ASCII, decomposed, JSON-looking), and the
leaves that are *not* lossless JSON (``-0.0``, integers past the double range), which every
subset schema rejects wherever they appear.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Final

from hypothesis import strategies as st

from .._json import MAX_FINITE_JSON_INT
from .value_knobs import DEFAULT_MAX_SIZE, DEFAULT_MAX_STRING_SIZE, Knobs, lazy, make_knobs

__all__ = [
    "BEYOND_INTS",
    "MAX_INT",
    "NEG_ZERO",
    "SAFE_INT",
    "edge_scalars",
    "edge_strings",
    "fractional_numbers",
    "integral_numbers",
    "json_scalars",
    "json_trees",
    "json_values",
    "plain_zero",
]

MAX_INT: Final = MAX_FINITE_JSON_INT
SAFE_INT: Final = 2**53
_MAX_FLOAT: Final = sys.float_info.max

_SPECIAL_STRINGS: Final = (
    "",
    " ",
    "a",
    "é",
    "e\u0301",
    "\x00",
    "\u2028",
    "\ufeff",
    '"',
    "\\",
    "/",
    "😀",
    "null",
    "0",
    "true",
    "{}",
    '{"a": 1}',
    "__proto__",
    "\t\n",
)
_SPECIAL_FRACS: Final = (0.5, -1.5, 0.1, 1e-7, 5e-324, -2.5e-300, 123.456, 1.7976931348623157e-300)
_SMALL_INTEGRAL_FLOATS: Final = (2.0, -1.0, 0.0, 3.0)
_BIG_INTEGRAL_FLOATS: Final = (1e21, 1e300, -1e300, 2.0**53, 2.0**63, _MAX_FLOAT, -_MAX_FLOAT)
_BIG_INTS: Final = (SAFE_INT + 1, -SAFE_INT - 1, 2**64, MAX_INT, -MAX_INT)
#: Leaves no subset schema accepts wherever they appear (not lossless JSON).
NEG_ZERO: Final = -0.0
BEYOND_INTS: Final = (MAX_INT + 1, -MAX_INT - 1, 2**1100, 10**400)


def _non_integral(value: float) -> float:
    return value + 0.5 if value.is_integer() else value


def plain_zero(value: float) -> float:
    return 0.0 if value == 0 else value


def _repeat(unit: str, size: int) -> str:
    return (unit * size)[:size]


@functools.lru_cache(maxsize=64)
def integral_numbers(knobs: Knobs) -> st.SearchStrategy[int | float]:
    """Integral JSON numbers: ints, integral floats (``2.0`` is an integer), and past 2**53
    up to the finite-double limit when ``big_numbers``."""
    parts: list[st.SearchStrategy[int | float]] = [
        st.integers(-SAFE_INT, SAFE_INT),
        st.sampled_from(_SMALL_INTEGRAL_FLOATS),
        st.integers(-SAFE_INT, SAFE_INT).map(float),
    ]
    if knobs.big_numbers:
        parts += [
            st.sampled_from(_BIG_INTS),
            st.integers(SAFE_INT + 1, MAX_INT),
            st.integers(-MAX_INT, -SAFE_INT - 1),
            st.sampled_from(_BIG_INTEGRAL_FLOATS),
        ]
    return st.one_of(parts)


@functools.lru_cache(maxsize=64)
def fractional_numbers(knobs: Knobs) -> st.SearchStrategy[float]:
    return st.one_of(
        st.sampled_from(_SPECIAL_FRACS),
        # Below 2**52 in magnitude, x + 0.5 is exact: the result is never integral.
        st.floats(-(2.0**52 - 1), 2.0**52 - 1, allow_nan=False).map(_non_integral),
    )


@functools.lru_cache(maxsize=64)
def edge_strings(knobs: Knobs) -> st.SearchStrategy[str]:
    size = knobs.max_string_size
    return st.one_of(
        st.text(max_size=min(16, size)),
        st.sampled_from([text for text in _SPECIAL_STRINGS if len(text) <= size]),
        st.builds(_repeat, st.text(min_size=1, max_size=3), st.integers(0, size)),
    )


@functools.lru_cache(maxsize=64)
def edge_scalars(knobs: Knobs) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        integral_numbers(knobs),
        edge_strings(knobs),
        fractional_numbers(knobs),
    )


@functools.lru_cache(maxsize=64)
def json_trees(knobs: Knobs, max_leaves: int | None = None) -> st.SearchStrategy[Any]:
    return st.recursive(
        edge_scalars(knobs),
        lambda children: st.one_of(
            st.lists(children, max_size=knobs.max_size),
            st.dictionaries(knobs.keys, children, max_size=knobs.max_size),
        ),
        max_leaves=knobs.max_leaves if max_leaves is None else max_leaves,
    )


def json_scalars(*, max_string_size: int = 5, big_numbers: bool = False) -> st.SearchStrategy[Any]:
    """Lossless JSON scalars (``-0.0`` never; integers within 2**53 unless ``big_numbers``).

    The defaults keep the small scalars the scheduling scenarios script into tool bodies; pass
    ``big_numbers=True`` and a larger ``max_string_size`` for the edges of :func:`json_values`.
    """

    def build() -> st.SearchStrategy[Any]:
        knobs = make_knobs(
            "json_scalars",
            max_string_size=max_string_size,
            big_numbers=big_numbers,
        )
        return st.one_of(
            st.none(),
            st.booleans(),
            integral_numbers(knobs),
            st.sampled_from([0, 1, 2, 1.0, 2.0, 1.5, -1, "a", "b", ""]),
            fractional_numbers(knobs),
            st.text(max_size=max_string_size),
        )

    return lazy(
        build,
        lambda: ("json_scalars", max_string_size, big_numbers),
    )


def json_values(
    max_leaves: int = 12,
    *,
    max_size: int = DEFAULT_MAX_SIZE,
    max_string_size: int = DEFAULT_MAX_STRING_SIZE,
    big_numbers: bool = True,
    keys: st.SearchStrategy[str] | None = None,
) -> st.SearchStrategy[Any]:
    """Lossless JSON trees: exact ``list`` and ``str``-keyed ``dict`` of scalars.

    Edges: integers past 2**53 up to the finite-double limit and integral floats up to
    ``1.7976931348623157e308`` (``big_numbers``), subnormal and tiny fractions, strings up to
    ``max_string_size`` (empty, non-ASCII, decomposed, NUL, U+2028, JSON-looking), and keys drawn
    from ``keys`` (default: ``""``, non-ASCII, ``__proto__``, array indices and arbitrary text).
    Never ``-0.0``, never an integer past the double range (those are not lossless JSON; see
    :func:`invalid_values`).

    Args:
        max_leaves: Most scalars in one tree.
        max_size: Most items of one array / keys of one object.
        max_string_size: Longest string.
        big_numbers: Draw integers past 2**53 and huge integral floats.
        keys: Strategy for object keys.
    """

    def build() -> st.SearchStrategy[Any]:
        knobs = make_knobs(
            "json_values",
            max_leaves=max_leaves,
            max_size=max_size,
            max_string_size=max_string_size,
            big_numbers=big_numbers,
            keys=keys,
        )
        return json_trees(knobs)

    return lazy(
        build,
        lambda: ("json_values", max_leaves, max_size, max_string_size, big_numbers, keys),
    )
