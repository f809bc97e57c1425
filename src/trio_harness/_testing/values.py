"""Values drawn from a schema of the enforced subset: :func:`valid_values`, :func:`invalid_values`.

Built by :class:`.solver.Solver`, never filtered; loaded only through :mod:`.strategies` (which
re-exports them), so the rest of the library never imports hypothesis.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from .._errors import JsonSchemaError
from .._validation import assert_supported_json_schema
from .json_leaves import BEYOND_INTS, NEG_ZERO
from .solver import Node, Solver, plant
from .value_knobs import (
    DEFAULT_MAX_SIZE,
    DEFAULT_MAX_STRING_SIZE,
    Knobs,
    call,
    check_bool,
    lazy,
    make_knobs,
    pick,
)

__all__ = ["invalid_strategy", "invalid_values", "valid_values"]


def _subset_schema(owner: str, schema: object) -> Node:
    try:
        assert_supported_json_schema(schema)
    except JsonSchemaError as error:
        raise InvalidArgument(
            f"{owner} needs a schema inside the enforced subset (type/oneOf/properties/required/"
            "additionalProperties/items/enum/const + annotations); it cannot honour other "
            f"keywords (pattern, minLength, ...): {'; '.join(error.violations)}"
        ) from None
    return schema  # type: ignore[return-value]


def valid_values(
    schema: Any,
    *,
    max_leaves: int = 12,
    max_size: int = DEFAULT_MAX_SIZE,
    max_string_size: int = DEFAULT_MAX_STRING_SIZE,
    big_numbers: bool = True,
    keys: st.SearchStrategy[str] | None = None,
) -> st.SearchStrategy[Any]:
    """Lossless JSON values that satisfy ``schema`` (a schema of the enforced subset).

    Built from the schema's keywords, never filtered: a ``oneOf`` value is drawn for one branch
    and made to miss every other branch, so it costs about what a branch costs. Edges: integral
    floats for ``integer`` (``2.0``, ``1e300``), integers past 2**53 up to the finite-double limit
    (``big_numbers``), enum members given as the other number type, objects with their keys in any
    order and undeclared keys from ``keys``, long strings and arrays (up to ``max_string_size`` /
    ``max_size``). Shrinks towards the simplest value (``null`` where allowed, fewer keys, items).

    Args:
        schema: The schema (``assert_supported_json_schema`` must accept it).
        max_leaves: Most scalars in a value drawn for an untyped (``{}``) node.
        max_size: Most items of one array / undeclared keys of one object.
        max_string_size: Longest string.
        big_numbers: Draw integers past 2**53 and huge integral floats.
        keys: Strategy for undeclared object keys (default: ``""``, non-ASCII, ``__proto__``,
            array indices and arbitrary text).

    Raises:
        InvalidArgument: (when drawn) ``schema`` is outside the subset (``pattern``,
            ``minLength``, ... cannot be honoured), no value satisfies it (e.g.
            ``{"oneOf": [{}, {}]}``: every value matches both branches), or a knob is bad.
    """

    def build() -> st.SearchStrategy[Any]:
        knobs = make_knobs(
            "valid_values",
            max_leaves=max_leaves,
            max_size=max_size,
            max_string_size=max_string_size,
            big_numbers=big_numbers,
            keys=keys,
        )
        root = _subset_schema("valid_values", schema)
        solver = Solver(root, knobs)
        if not solver.sat((root,), ()):
            raise InvalidArgument(
                f"valid_values({root!r}): no JSON value satisfies this schema "
                f"({solver.why_empty(root)})"
            )
        return solver.strategy((root,), ())

    return lazy(
        build,
        lambda: ("valid", repr(schema), max_leaves, max_size, max_string_size, big_numbers, keys),
    )


def invalid_values(
    schema: Any,
    *,
    non_lossless: bool = True,
    max_leaves: int = 12,
    max_size: int = DEFAULT_MAX_SIZE,
    max_string_size: int = DEFAULT_MAX_STRING_SIZE,
    big_numbers: bool = True,
    keys: st.SearchStrategy[str] | None = None,
) -> st.SearchStrategy[Any]:
    """Values that violate ``schema`` (a schema of the enforced subset), built, never filtered.

    Lossless JSON values that break the schema one way or several: another type (``null`` first:
    it shrinks there), a fractional number for ``integer``, a scalar just outside ``enum``/``const``
    (a neighbour, ``1`` against ``[1.5]``, a decomposed or recased string), a required property
    left out, an undeclared property under ``additionalProperties: false``, a wrong property
    value or item (recursively, several at once), and at a ``oneOf`` a value matching no branch
    or two. With ``non_lossless`` (default), also values holding a leaf that is not lossless
    JSON — ``-0.0``, or an integer past the finite-double limit (``big_numbers``) — anywhere in
    an otherwise valid value (every subset schema rejects those).

    Python-jsonschema has no notion of lossless JSON: it accepts ``-0.0`` and huge integers.

    Args:
        schema: The schema (``assert_supported_json_schema`` must accept it).
        non_lossless: Also draw values holding ``-0.0`` or an out-of-range integer.
        max_leaves, max_size, max_string_size, big_numbers, keys: As for :func:`valid_values`.

    Raises:
        InvalidArgument: (when drawn) ``schema`` is outside the subset, a knob is bad, or nothing
            can be drawn (``{}`` accepts every lossless value: only ``non_lossless`` breaks it).
    """

    def build() -> st.SearchStrategy[Any]:
        knobs = make_knobs(
            "invalid_values",
            max_leaves=max_leaves,
            max_size=max_size,
            max_string_size=max_string_size,
            big_numbers=big_numbers,
            keys=keys,
        )
        check_bool("invalid_values", "non_lossless", non_lossless)
        root = _subset_schema("invalid_values", schema)
        bad_leaves = [NEG_ZERO, *(BEYOND_INTS if big_numbers else ())] if non_lossless else []
        return invalid_strategy(root, knobs, bad_leaves)

    return lazy(
        build,
        lambda: (
            "invalid",
            repr(schema),
            non_lossless,
            max_leaves,
            max_size,
            max_string_size,
            big_numbers,
            keys,
        ),
    )


def invalid_strategy(root: Node, knobs: Knobs, bad_leaves: list[Any]) -> st.SearchStrategy[Any]:
    solver = Solver(root, knobs)
    parts: list[st.SearchStrategy[Any]] = []
    if solver.sat((), (root,)):
        parts.append(solver.strategy((), (root,)))
    if bad_leaves:
        has_valid = solver.sat((root,), ())

        def planted(draw: st.DrawFn) -> Any:
            base = solver.draw(draw, (root,), ()) if has_valid else draw(solver.any_json)
            bad = bad_leaves[pick(draw, len(bad_leaves))]
            return plant(draw, base, bad, knobs.keys)

        parts.append(call(planted))
    if not parts:
        raise InvalidArgument(
            f"invalid_values({root!r}): the schema accepts every lossless JSON value; "
            "only values that are not lossless JSON break it (non_lossless=True)"
        )
    return st.one_of(parts)
