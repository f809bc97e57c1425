"""Hypothesis strategies for JSON values, subset schemas and argument text (needs hypothesis).

Loaded only through :mod:`.strategies` (which re-exports every name here), so the rest of the
library never imports hypothesis. Every strategy validates its arguments when it is first drawn
from, as hypothesis's own do, and raises ``hypothesis.errors.InvalidArgument`` for a bad one
(never a silent ``nothing()``).

How values are built. A schema of the enforced subset is a predicate over lossless JSON values.
:class:`_Solver` draws a value satisfying a set of schemas (*pos*) and violating another set
(*negs*) *constructively*: a ``oneOf`` in *pos* picks a branch and adds the other branches to
*negs*; a ``oneOf`` in *negs* is violated by violating every branch or by matching two; then a
kind of value (null, boolean, integral number, string, fractional number, array, object) that
*pos* allows is picked, and the kind's own constraints are combined (enum and const sets,
``items``, and for objects the required, declared and undeclared keys, choosing for each schema in
*negs* one way it is broken). Every choice offered leads to a value, so nothing is filtered:
``valid_values(s)`` is ``(pos=[s], negs=[])``, the lossless part of ``invalid_values(s)`` is
``(pos=[], negs=[s])``, and a ``oneOf`` costs about what its branches cost. Choices are ordered
simplest first (``null`` before strings, a missing key before a wrong one, fewer items before
more), so hypothesis shrinks towards the simplest failing case.

Values that are *not* lossless JSON (``-0.0``, integers past the finite-double limit) are
rejected by every subset schema wherever they appear; ``invalid_values`` plants one in an
otherwise drawn value (``non_lossless=True``).
"""

from __future__ import annotations

import collections
import copy
import functools
import itertools
import json
import math
import sys
import unicodedata
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, Final, Literal, TypeAlias

import attrs
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from .._errors import JsonSchemaError
from .._json import MAX_FINITE_JSON_INT, js_number
from .._validation import (
    assert_supported_json_schema,
    parameter_schema_spec_to_json_schema,
    value_schema_spec_to_json_schema,
)

__all__ = [
    "ARGUMENT_KINDS",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_SIZE",
    "DEFAULT_MAX_STRING_SIZE",
    "ArgumentKind",
    "ArgumentText",
    "argument_texts",
    "invalid_values",
    "json_scalars",
    "json_values",
    "parameter_maps",
    "subset_schemas",
    "valid_values",
]

#: Default bound of the items of one array and of the undeclared keys of one object.
DEFAULT_MAX_SIZE: Final = 24
#: Default bound of the length of one string.
DEFAULT_MAX_STRING_SIZE: Final = 200
#: Default bound of the nesting depth of the deep argument texts (past ``json``'s own limit of
#: about 1,000 levels, where ``parse_arguments`` switches to its iterative parser).
DEFAULT_MAX_DEPTH: Final = 1200

_MAX_INT: Final = MAX_FINITE_JSON_INT
_SAFE: Final = 2**53
_MAX_FLOAT: Final = sys.float_info.max

#: Keys that break things: empty, non-ASCII, decomposed, JavaScript-special, array indices
#: (JavaScript orders them first), the first non-index, separators and quotes.
_SPECIAL_KEYS: Final = (
    "",
    "a",
    "b",
    "id",
    "é",
    "e\u0301",
    "0",
    "1",
    "10",
    "4294967294",
    "4294967295",
    "__proto__",
    "toString",
    "constructor",
    "x.y",
    "a b",
    "😀",
    "\u2028",
    'q"',
    "\\",
)
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
_BIG_INTS: Final = (_SAFE + 1, -_SAFE - 1, 2**64, _MAX_INT, -_MAX_INT)
#: Leaves no subset schema accepts wherever they appear (not lossless JSON).
_NEG_ZERO: Final = -0.0
_BEYOND_INTS: Final = (_MAX_INT + 1, -_MAX_INT - 1, 2**1100, 10**400)


# ---------------------------------------------------------------------------------------------
# Knobs and argument checks
# ---------------------------------------------------------------------------------------------


def _check_int(owner: str, name: str, value: object, minimum: int) -> int:
    if type(value) is not int or value < minimum:
        raise InvalidArgument(f"{owner}: {name} must be an int >= {minimum}, got {value!r}")
    return value


def _check_bool(owner: str, name: str, value: object) -> bool:
    if type(value) is not bool:
        raise InvalidArgument(f"{owner}: {name} must be True or False, got {value!r}")
    return value


_KEYS: Final = st.one_of(st.sampled_from(_SPECIAL_KEYS), st.text(max_size=12))
_BOOLEANS: Final = st.booleans()


def _default_keys() -> st.SearchStrategy[str]:
    return _KEYS


@functools.lru_cache(maxsize=512)
def _upto(limit: int) -> st.SearchStrategy[int]:
    """``integers(0, limit)``, built once per bound (building and validating a strategy costs
    more than drawing from it)."""
    return st.integers(0, limit)


def _pick(draw: st.DrawFn, count: int) -> int:
    """An index below ``count`` (shrinks to 0: the first, simplest option)."""
    return draw(_upto(count - 1)) if count > 1 else 0


@st.composite
def _call(draw: st.DrawFn, build: Callable[[st.DrawFn], Any]) -> Any:
    """``build(draw)`` as a strategy. One module-level composite: ``st.composite`` compiles a
    wrapper each time it decorates, which costs more than most draws."""
    return build(draw)


def _shuffled(draw: st.DrawFn, items: list[Any]) -> list[Any]:
    """A permutation of ``items`` drawn by Fisher-Yates; all-zero draws keep the order."""
    items = list(items)
    for index in range(len(items) - 1, 0, -1):
        other = index - draw(_upto(index))
        items[index], items[other] = items[other], items[index]
    return items


@attrs.frozen
class _Knobs:
    """The size and edge knobs every value strategy takes (validated)."""

    max_leaves: int
    max_size: int
    max_string_size: int
    big_numbers: bool
    keys: st.SearchStrategy[str]


def _knobs(
    owner: str,
    *,
    max_leaves: object = 12,
    max_size: object = DEFAULT_MAX_SIZE,
    max_string_size: object = DEFAULT_MAX_STRING_SIZE,
    big_numbers: object = True,
    keys: object = None,
) -> _Knobs:
    if keys is None:
        keys = _default_keys()
    elif not isinstance(keys, st.SearchStrategy):
        raise InvalidArgument(f"{owner}: keys must be a strategy of str, got {keys!r}")
    return _Knobs(
        _check_int(owner, "max_leaves", max_leaves, 1),
        _check_int(owner, "max_size", max_size, 0),
        _check_int(owner, "max_string_size", max_string_size, 0),
        _check_bool(owner, "big_numbers", big_numbers),
        keys,
    )


#: Built strategies by their arguments (a few hundred at most): ``argument_texts(spec)`` drawn
#: inside a composite, once per example, builds its solver and strategies only once per spec.
_BUILT: collections.OrderedDict[Hashable, st.SearchStrategy[Any]] = collections.OrderedDict()
_BUILT_LIMIT: Final = 512


def _lazy(
    build: Callable[[], st.SearchStrategy[Any]], key: Callable[[], Hashable]
) -> st.SearchStrategy[Any]:
    """``build()`` on first use (arguments are checked then, as hypothesis does), memoised by
    ``key()`` (schemas and parameter maps by their ``repr``: equal content, equal strategy)."""

    def memoised() -> st.SearchStrategy[Any]:
        try:
            found_key = key()
            found = _BUILT.get(found_key)
        except TypeError:  # an unhashable (so invalid) argument: build() says what is wrong
            return build()
        if found is not None:
            _BUILT.move_to_end(found_key)
            return found
        strategy = build()
        _BUILT[found_key] = strategy
        if len(_BUILT) > _BUILT_LIMIT:
            _BUILT.popitem(last=False)
        return strategy

    return st.deferred(memoised)


# ---------------------------------------------------------------------------------------------
# Scalars and JSON trees
# ---------------------------------------------------------------------------------------------


def _non_integral(value: float) -> float:
    return value + 0.5 if value.is_integer() else value


def _plain_zero(value: float) -> float:
    return 0.0 if value == 0 else value


def _repeat(unit: str, size: int) -> str:
    return (unit * size)[:size]


@functools.lru_cache(maxsize=64)
def _integral(knobs: _Knobs) -> st.SearchStrategy[int | float]:
    """Integral JSON numbers: ints, integral floats (``2.0`` is an integer), and past 2**53
    up to the finite-double limit when ``big_numbers``."""
    parts: list[st.SearchStrategy[int | float]] = [
        st.integers(-_SAFE, _SAFE),
        st.sampled_from(_SMALL_INTEGRAL_FLOATS),
        st.integers(-_SAFE, _SAFE).map(float),
    ]
    if knobs.big_numbers:
        parts += [
            st.sampled_from(_BIG_INTS),
            st.integers(_SAFE + 1, _MAX_INT),
            st.integers(-_MAX_INT, -_SAFE - 1),
            st.sampled_from(_BIG_INTEGRAL_FLOATS),
        ]
    return st.one_of(parts)


@functools.lru_cache(maxsize=64)
def _fractional(knobs: _Knobs) -> st.SearchStrategy[float]:
    return st.one_of(
        st.sampled_from(_SPECIAL_FRACS),
        # Below 2**52 in magnitude, x + 0.5 is exact: the result is never integral.
        st.floats(-(2.0**52 - 1), 2.0**52 - 1, allow_nan=False).map(_non_integral),
    )


@functools.lru_cache(maxsize=64)
def _strings(knobs: _Knobs) -> st.SearchStrategy[str]:
    size = knobs.max_string_size
    return st.one_of(
        st.text(max_size=min(16, size)),
        st.sampled_from([text for text in _SPECIAL_STRINGS if len(text) <= size]),
        st.builds(_repeat, st.text(min_size=1, max_size=3), st.integers(0, size)),
    )


@functools.lru_cache(maxsize=64)
def _scalars(knobs: _Knobs) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(), st.booleans(), _integral(knobs), _strings(knobs), _fractional(knobs)
    )


@functools.lru_cache(maxsize=64)
def _trees(knobs: _Knobs, max_leaves: int | None = None) -> st.SearchStrategy[Any]:
    return st.recursive(
        _scalars(knobs),
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
        knobs = _knobs(
            "json_scalars",
            max_string_size=max_string_size,
            big_numbers=big_numbers,
        )
        return st.one_of(
            st.none(),
            st.booleans(),
            _integral(knobs),
            st.sampled_from([0, 1, 2, 1.0, 2.0, 1.5, -1, "a", "b", ""]),
            _fractional(knobs),
            st.text(max_size=max_string_size),
        )

    return _lazy(
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
        knobs = _knobs(
            "json_values",
            max_leaves=max_leaves,
            max_size=max_size,
            max_string_size=max_string_size,
            big_numbers=big_numbers,
            keys=keys,
        )
        return _trees(knobs)

    return _lazy(
        build,
        lambda: ("json_values", max_leaves, max_size, max_string_size, big_numbers, keys),
    )


# ---------------------------------------------------------------------------------------------
# The solver: values satisfying some schemas and violating others, built constructively
# ---------------------------------------------------------------------------------------------

Node: TypeAlias = dict[str, Any]
_ALL_KINDS: Final = ("null", "boolean", "int", "string", "frac", "array", "object")
_KINDS_OF_TYPE: Final[dict[str, tuple[str, ...]]] = {
    "null": ("null",),
    "boolean": ("boolean",),
    "integer": ("int",),
    "number": ("int", "frac"),
    "string": ("string",),
    "array": ("array",),
    "object": ("object",),
}
_SCALAR_KINDS: Final = frozenset(("null", "boolean", "int", "string", "frac"))
#: At most this many alternatives (oneOf expansions x kinds) and object plans are kept per
#: problem: enough for every schema a tool declares; beyond it the draw is still sound.
_MAX_OPTIONS: Final = 64


def _kinds(node: Node) -> tuple[str, ...]:
    type_name = node.get("type")
    return _ALL_KINDS if type_name is None else _KINDS_OF_TYPE[type_name]


def _kind_of(value: object) -> str:
    if value is None:
        return "null"
    kind = type(value)
    if kind is bool:
        return "boolean"
    if kind is str:
        return "string"
    if kind is float:
        return "int" if value.is_integer() else "frac"  # type: ignore[attr-defined]
    return "int"


def _same(left: object, right: object) -> bool:
    """JavaScript strict equality on JSON scalars (``1 == 1.0``, ``True`` is not ``1``)."""
    lk, rk = type(left), type(right)
    if lk in (int, float) and rk in (int, float):
        return bool(left == right)
    return lk is rk and bool(left == right)


def _member(value: object, members: Sequence[object]) -> bool:
    return any(_same(value, member) for member in members)


def _domain(node: Node, kind: str) -> list[Any] | None:
    """The finite members of ``kind`` a typed scalar node allows; ``None``: every value."""
    members: list[Any] | None = None
    if "enum" in node:
        members = list(node["enum"])
    if "const" in node:
        const = node["const"]
        members = [const] if members is None else [m for m in members if _same(m, const)]
    if members is None:
        return None
    return [member for member in members if _kind_of(member) == kind]


Problem: TypeAlias = tuple[tuple[Node, ...], tuple[Node, ...]]


@attrs.frozen
class _ObjectPlan:
    """One way to build an object: keys left out, keys present (with the schemas their value
    must violate), and how many keys no schema declares must be present."""

    excluded: frozenset[str]
    included: tuple[tuple[str, tuple[Node, ...]], ...]
    fresh: int


@attrs.frozen
class _Option:
    """One satisfiable flat alternative of a problem, for one kind of value."""

    pos: tuple[Node, ...]
    negs: tuple[Node, ...]
    kind: str


class _Solver:
    """Draws values satisfying every schema of ``pos`` and violating every one of ``negs``.

    The nodes of ``root`` are numbered once (depth-first), so problems are canonical and the
    choices a draw makes mean the same in every process (hypothesis replays them).
    """

    def __init__(self, root: object, knobs: _Knobs) -> None:
        self.knobs = knobs
        self._order: dict[int, int] = {}
        self._options: dict[tuple[tuple[int, ...], tuple[int, ...]], list[_Option]] = {}
        self._plans: dict[tuple[tuple[int, ...], tuple[int, ...]], list[_ObjectPlan]] = {}
        self._strategies: dict[tuple[tuple[int, ...], tuple[int, ...]], Any] = {}
        self._scalars: dict[tuple[str, str], st.SearchStrategy[Any]] = {}
        self._lists: dict[tuple[tuple[int, ...], tuple[int, ...]], st.SearchStrategy[Any]] = {}
        self._number(root)
        self._json = _trees(knobs, max(1, knobs.max_leaves // 2))
        self._extra = st.lists(st.tuples(knobs.keys, self._json), max_size=min(knobs.max_size, 4))

    def _number(self, root: object) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            if type(node) is not dict or id(node) in self._order:
                continue
            self._order[id(node)] = len(self._order)
            children: list[object] = []
            if "oneOf" in node:
                children.extend(node["oneOf"])
            children.extend((node.get("properties") or {}).values())
            if "items" in node:
                children.append(node["items"])
            stack.extend(reversed(children))

    # -- problems ------------------------------------------------------------------------------

    def _canon(self, nodes: Iterator[Node] | Sequence[Node]) -> tuple[Node, ...]:
        unique: dict[int, Node] = {}
        for node in nodes:
            unique.setdefault(id(node), node)
        return tuple(sorted(unique.values(), key=lambda node: self._order[id(node)]))

    def _key(
        self, pos: tuple[Node, ...], negs: tuple[Node, ...]
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return tuple(self._order[id(n)] for n in pos), tuple(self._order[id(n)] for n in negs)

    def _expand(self, pos: tuple[Node, ...], negs: tuple[Node, ...]) -> Iterator[Problem]:
        """The flat problems (no oneOf at the top) whose union is the problem."""
        pos_ids = {id(node) for node in pos}
        if any(id(node) in pos_ids for node in negs):
            return
        for node in pos:
            if "oneOf" in node:
                rest = [other for other in pos if other is not node]
                branches = node["oneOf"]
                for index, branch in enumerate(branches):
                    others = [b for i, b in enumerate(branches) if i != index]
                    yield from self._expand(
                        self._canon([*rest, branch]), self._canon([*negs, *others])
                    )
                return
        for node in negs:
            if "oneOf" in node:
                rest = [other for other in negs if other is not node]
                branches = node["oneOf"]
                # Broken by matching no branch, or by matching two.
                yield from self._expand(pos, self._canon([*rest, *branches]))
                for left, right in itertools.combinations(branches, 2):
                    yield from self._expand(self._canon([*pos, left, right]), self._canon(rest))
                return
        yield pos, negs

    def options(self, pos: tuple[Node, ...], negs: tuple[Node, ...]) -> list[_Option]:
        """Every satisfiable (flat problem, kind), simplest kind first."""
        key = self._key(pos, negs)
        found = self._options.get(key)
        if found is not None:
            return found
        self._options[key] = []  # a problem never recurs into itself; this is only a guard
        out: list[_Option] = []
        for flat_pos, flat_negs in self._expand(pos, negs):
            for kind in self._kinds_of(flat_pos, flat_negs):
                out.append(_Option(flat_pos, flat_negs, kind))
            if len(out) >= _MAX_OPTIONS:
                break
        out.sort(key=lambda option: _ALL_KINDS.index(option.kind))
        self._options[key] = out
        return out

    def sat(self, pos: tuple[Node, ...], negs: tuple[Node, ...]) -> bool:
        return bool(self.options(pos, negs))

    def _kinds_of(self, pos: tuple[Node, ...], negs: tuple[Node, ...]) -> Iterator[str]:
        allowed = set(_ALL_KINDS)
        for node in pos:
            allowed.intersection_update(_kinds(node))
        for kind in _ALL_KINDS:
            if kind not in allowed:
                continue
            relevant = tuple(node for node in negs if kind in _kinds(node))
            # An untyped schema accepts every lossless value of every kind.
            if any(node.get("type") is None for node in relevant):
                continue
            if kind in _SCALAR_KINDS:
                ok = self._scalar_plan(pos, relevant, kind) is not None
            elif kind == "array":
                ok = self._array_ok(pos, relevant)
            else:
                ok = bool(self._object_plans(pos, relevant))
            if ok:
                yield kind

    # -- scalars -------------------------------------------------------------------------------

    @staticmethod
    def _scalar_plan(
        pos: tuple[Node, ...], relevant: tuple[Node, ...], kind: str
    ) -> tuple[list[Any] | None, list[Any]] | None:
        """``(finite candidates, [])`` or ``(None, excluded)`` (every value but those)."""
        domain: list[Any] | None = None
        for node in pos:
            members = _domain(node, kind)
            if members is not None:
                domain = members if domain is None else [m for m in domain if _member(m, members)]
        excluded: list[Any] = []
        for node in relevant:
            members = _domain(node, kind)
            if members is None:
                return None
            excluded.extend(members)
        if domain is None and kind == "null":
            domain = [None]
        elif domain is None and kind == "boolean":
            domain = [False, True]
        if domain is None:
            return None, excluded
        candidates = [m for m in domain if not _member(m, excluded)]
        return (candidates, []) if candidates else None

    def _draw_scalar(self, draw: st.DrawFn, option: _Option) -> Any:
        relevant = tuple(n for n in option.negs if option.kind in _kinds(n))
        plan = self._scalar_plan(option.pos, relevant, option.kind)
        assert plan is not None
        candidates, excluded = plan
        if candidates is not None:
            if len(candidates) == 1:
                return candidates[0]
            return candidates[_pick(draw, len(candidates))]
        key = (option.kind, repr(excluded))
        strategy = self._scalars.get(key)
        if strategy is None:
            base: st.SearchStrategy[Any]
            if option.kind == "int":
                base = _integral(self.knobs)
            elif option.kind == "frac":
                base = _fractional(self.knobs)
            else:
                base = _strings(self.knobs)
            near = _near_misses(option.kind, excluded)
            strategy = self._scalars[key] = st.one_of(base, st.sampled_from(near)) if near else base
        return _avoid(option.kind, draw(strategy), excluded)

    # -- arrays --------------------------------------------------------------------------------

    @staticmethod
    def _items(pos: tuple[Node, ...]) -> tuple[Node, ...]:
        return tuple(n["items"] for n in pos if n.get("type") == "array" and "items" in n)

    def _array_ok(self, pos: tuple[Node, ...], relevant: tuple[Node, ...]) -> bool:
        # An array schema without items accepts every lossless array.
        if any("items" not in node for node in relevant):
            return False
        items = self._canon(self._items(pos))
        return all(self.sat(items, (node["items"],)) for node in relevant)

    def _draw_array(self, draw: st.DrawFn, option: _Option) -> list[Any]:
        items = self._canon(self._items(option.pos))
        relevant = [n for n in option.negs if n.get("type") == "array"]
        witnesses = [self.draw(draw, items, (node["items"],)) for node in relevant]
        value: list[Any] = []
        if self.sat(items, ()):
            element = self.strategy(items, ())
            if draw(_upto(3)) < 3:
                key = self._key(items, ())
                lists = self._lists.get(key)
                if lists is None:
                    lists = self._lists[key] = st.lists(element, max_size=self.knobs.max_size)
                value = draw(lists)
            else:  # a long array of one (copied) element
                one = draw(element)
                count = draw(_upto(self.knobs.max_size))
                value = [copy.deepcopy(one) for _ in range(count)]
        for witness in witnesses:
            value.insert(draw(_upto(len(value))), witness)
        return value

    # -- objects -------------------------------------------------------------------------------

    def _object_plans(self, pos: tuple[Node, ...], relevant: tuple[Node, ...]) -> list[_ObjectPlan]:
        key = self._key(pos, relevant)
        found = self._plans.get(key)
        if found is not None:
            return found
        objects = [n for n in pos if n.get("type") == "object"]
        declared = _declared(objects)
        closed = [
            n.get("properties") or {} for n in objects if n.get("additionalProperties") is False
        ]

        def allowed(name: str) -> bool:
            return all(name in props for props in closed)

        required = _required(objects)
        plans: list[_ObjectPlan] = []
        self._plans[key] = plans
        if not all(allowed(name) for name in required):
            return plans

        def key_ok(name: str, negs: tuple[Node, ...]) -> bool:
            return self.sat(self._canon(declared.get(name, ())), self._canon(negs))

        def search(
            index: int, excluded: frozenset[str], included: dict[str, tuple[Node, ...]], fresh: int
        ) -> None:
            if len(plans) >= _MAX_OPTIONS:
                return
            if index == len(relevant):
                if all(key_ok(name, negs) for name, negs in included.items()):
                    plans.append(_ObjectPlan(excluded, tuple(included.items()), fresh))
                return
            node = relevant[index]
            props: dict[str, Node] = node.get("properties") or {}
            is_closed = node.get("additionalProperties") is False
            node_required: list[str] = node.get("required") or []
            already = (
                any(name in excluded for name in node_required)
                or (is_closed and (fresh > 0 or any(name not in props for name in included)))
                or any(
                    name in props and any(neg is props[name] for neg in negs)
                    for name, negs in included.items()
                )
            )
            if already:
                search(index + 1, excluded, included, fresh)
                return
            for name in node_required:  # a required key left out
                if name not in included:
                    search(index + 1, excluded | {name}, included, fresh)
            if is_closed:  # an undeclared key present
                for name in declared:
                    fits = name not in excluded and name not in included and allowed(name)
                    if name not in props and fits:
                        search(index + 1, excluded, {**included, name: ()}, fresh)
                if not closed:
                    search(index + 1, excluded, included, fresh + 1)
            for name, child in props.items():  # a declared key holding a wrong value
                if allowed(name) and name not in excluded:
                    negs = (*included.get(name, ()), child)
                    if key_ok(name, negs):
                        search(index + 1, excluded, {**included, name: negs}, fresh)

        search(0, frozenset(), dict.fromkeys(required, ()), 0)
        return plans

    def _draw_object(self, draw: st.DrawFn, option: _Option) -> dict[str, Any]:
        relevant = tuple(n for n in option.negs if n.get("type") == "object")
        plans = self._object_plans(option.pos, relevant)
        plan = plans[_pick(draw, len(plans))]
        objects = [n for n in option.pos if n.get("type") == "object"]
        declared = _declared(objects)
        closed = [
            n.get("properties") or {} for n in objects if n.get("additionalProperties") is False
        ]
        entries: dict[str, Any] = {}
        for name, negs in plan.included:
            entries[name] = self.draw(draw, self._canon(declared.get(name, ())), self._canon(negs))
        taken = set(declared) | set(plan.excluded)
        for node in option.negs:
            taken.update(node.get("properties") or {})
        for _ in range(plan.fresh):
            name = _fresh_key(draw(self.knobs.keys), taken | set(entries))
            entries[name] = draw(self._json)
        # Optional declared keys; for a broken object, sometimes more keys broken as well (a
        # value with several violations).
        for name in declared:
            if name in entries or name in plan.excluded or not all(name in p for p in closed):
                continue
            keep = self._canon(declared[name])
            breaks = [
                node["properties"][name]
                for node in relevant
                if name in (node.get("properties") or {})
            ]
            if breaks and draw(_upto(3)) == 3:
                negs = self._canon(breaks[:1])
                if self.sat(keep, negs):
                    entries[name] = self.draw(draw, keep, negs)
                    continue
            if self.sat(keep, ()) and draw(_BOOLEANS):
                entries[name] = self.draw(draw, keep, ())
        if not closed:
            extra = draw(self._extra)
            for name, value in extra:
                name = _fresh_key(name, taken | set(entries))
                entries[name] = value
        return {name: entries[name] for name in _shuffled(draw, list(entries))}

    # -- drawing -------------------------------------------------------------------------------

    def draw(self, draw: st.DrawFn, pos: tuple[Node, ...], negs: tuple[Node, ...]) -> Any:
        """A value satisfying ``pos`` and violating ``negs`` (the problem must be satisfiable)."""
        if not negs and all(n.get("type") is None and "oneOf" not in n for n in pos):
            return draw(self._json)  # any lossless value: a bounded tree
        options = self.options(pos, negs)
        option = options[_pick(draw, len(options))]
        if option.kind in _SCALAR_KINDS:
            return self._draw_scalar(draw, option)
        if option.kind == "array":
            return self._draw_array(draw, option)
        return self._draw_object(draw, option)

    def strategy(self, pos: tuple[Node, ...], negs: tuple[Node, ...]) -> st.SearchStrategy[Any]:
        key = self._key(pos, negs)
        found = self._strategies.get(key)
        if found is None:

            def solved(draw: st.DrawFn) -> Any:
                return self.draw(draw, pos, negs)

            found = self._strategies[key] = _call(solved)
        return found

    # -- explanations --------------------------------------------------------------------------

    def why_empty(self, node: Node, path: str = "schema") -> str:
        """Where a schema without valid values goes wrong (for the ``InvalidArgument``)."""
        if "oneOf" in node:
            branches = node["oneOf"]
            if not any(self.sat((b,), ()) for b in branches):
                return self.why_empty(branches[0], f"{path}.oneOf[0]")
            return f"every value matching one branch of {path}.oneOf matches another branch too"
        if node.get("type") == "object":
            properties = node.get("properties") or {}
            for name in node.get("required") or []:
                child = properties.get(name)
                if child is not None and not self.sat((child,), ()):
                    return self.why_empty(child, f"{path}.properties.{name}")
        return f"{path} accepts no value"


def _declared(objects: list[Node]) -> dict[str, list[Node]]:
    declared: dict[str, list[Node]] = {}
    for node in objects:
        for name, child in (node.get("properties") or {}).items():
            declared.setdefault(name, []).append(child)
    return declared


def _required(objects: list[Node]) -> list[str]:
    required: dict[str, None] = {}
    for node in objects:
        for name in node.get("required") or []:
            required.setdefault(name, None)
    return list(required)


def _fresh_key(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    return name


def _near_misses(kind: str, excluded: list[Any]) -> list[Any]:
    """Values just outside a finite excluded set: a neighbour, the other number type, a
    decomposed or differently cased string (each a classic equality bug)."""
    near: list[Any] = []
    for member in excluded:
        if kind == "int":
            whole = int(member)
            near += [whole + 1, whole - 1]
            if type(member) is int and float(member) != member:
                near.append(float(member))  # rounds: JavaScript would call it equal
        elif kind == "frac":
            near += [math.nextafter(member, math.inf), math.nextafter(member, -math.inf)]
        elif kind == "string":
            near += [
                member + " ",
                member[:-1],
                member.swapcase(),
                unicodedata.normalize("NFD", member),
                unicodedata.normalize("NFC", member),
                member + "\x00",
            ]
    out: list[Any] = []
    for value in near:
        if _kind_of(value) != kind or _member(value, excluded) or _member(value, out):
            continue
        if type(value) is int and abs(value) > _MAX_INT:
            continue
        out.append(value)
    return out


def _avoid(kind: str, value: Any, excluded: list[Any]) -> Any:
    """``value``, or the nearest value of its kind outside ``excluded`` (a finite set)."""
    if not _member(value, excluded):
        return value
    if kind == "int":
        whole = int(value)
        step = 1 if whole < _MAX_INT else -1
        while _member(whole, excluded):
            whole += step
        return whole
    if kind == "frac":
        index = 0
        while _member(index + 0.5, excluded):
            index += 1
        return index + 0.5
    while _member(value, excluded):
        value += "_"
    return value


_NEW_KEY: Final = object()


def _plant(draw: st.DrawFn, value: Any, bad: Any, keys: st.SearchStrategy[str]) -> Any:
    """``value`` with ``bad`` at one place: the root, a replaced item or entry, or a new one."""
    spots: list[tuple[Any, Any] | None] = [None]
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is list:
            for index, child in enumerate(node):
                spots.append((node, index))
                stack.append(child)
            spots.append((node, len(node)))
        elif type(node) is dict:
            for name, child in node.items():
                spots.append((node, name))
                stack.append(child)
            spots.append((node, _NEW_KEY))
    spot = spots[_pick(draw, len(spots))]
    if spot is None:
        return bad
    container, where = spot
    if type(container) is list:
        if where == len(container):
            container.append(bad)
        else:
            container[where] = bad
    elif where is _NEW_KEY:
        container[_fresh_key(draw(keys), set(container))] = bad
    else:
        container[where] = bad
    return value


# ---------------------------------------------------------------------------------------------
# Values drawn from a schema
# ---------------------------------------------------------------------------------------------


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
        knobs = _knobs(
            "valid_values",
            max_leaves=max_leaves,
            max_size=max_size,
            max_string_size=max_string_size,
            big_numbers=big_numbers,
            keys=keys,
        )
        root = _subset_schema("valid_values", schema)
        solver = _Solver(root, knobs)
        if not solver.sat((root,), ()):
            raise InvalidArgument(
                f"valid_values({root!r}): no JSON value satisfies this schema "
                f"({solver.why_empty(root)})"
            )
        return solver.strategy((root,), ())

    return _lazy(
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
        knobs = _knobs(
            "invalid_values",
            max_leaves=max_leaves,
            max_size=max_size,
            max_string_size=max_string_size,
            big_numbers=big_numbers,
            keys=keys,
        )
        _check_bool("invalid_values", "non_lossless", non_lossless)
        root = _subset_schema("invalid_values", schema)
        bad_leaves = [_NEG_ZERO, *(_BEYOND_INTS if big_numbers else ())] if non_lossless else []
        return _invalid(root, knobs, bad_leaves)

    return _lazy(
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


def _invalid(root: Node, knobs: _Knobs, bad_leaves: list[Any]) -> st.SearchStrategy[Any]:
    solver = _Solver(root, knobs)
    parts: list[st.SearchStrategy[Any]] = []
    if solver.sat((), (root,)):
        parts.append(solver.strategy((), (root,)))
    if bad_leaves:
        has_valid = solver.sat((root,), ())

        def planted(draw: st.DrawFn) -> Any:
            base = solver.draw(draw, (root,), ()) if has_valid else draw(solver._json)
            bad = bad_leaves[_pick(draw, len(bad_leaves))]
            return _plant(draw, base, bad, knobs.keys)

        parts.append(_call(planted))
    if not parts:
        raise InvalidArgument(
            f"invalid_values({root!r}): the schema accepts every lossless JSON value; "
            "only values that are not lossless JSON break it (non_lossless=True)"
        )
    return st.one_of(parts)


# ---------------------------------------------------------------------------------------------
# Schemas and parameter maps
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _members(type_name: str) -> st.SearchStrategy[Any]:
    """Enum/const members of a scalar type, edges included (big and integral numbers)."""
    if type_name == "string":
        return st.one_of(
            st.sampled_from(["a", "b", "", "é", 'q"', "e\u0301", "0"]), st.text(max_size=6)
        )
    if type_name == "number":
        return st.one_of(
            st.sampled_from([0, 1, -2, 1.5, 2.0, 1e21, 1e-7, _SAFE, _SAFE + 1, 1e300, _MAX_INT]),
            st.integers(-_MAX_INT, _MAX_INT),
            st.floats(allow_nan=False, allow_infinity=False).map(_plain_zero),
        )
    if type_name == "integer":
        return st.one_of(
            st.sampled_from([0, 1, 2, -3, 2.0, _SAFE + 1, -(2**60), 1e300, _MAX_INT]),
            st.integers(-_MAX_INT, _MAX_INT),
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
    type_name = _SCALAR_TYPES[_pick(draw, len(_SCALAR_TYPES))]
    node: dict[str, Any] = {"type": type_name}
    enum = draw(_enums(type_name))
    if enum is not None:
        node["enum"] = enum
    if draw(_BOOLEANS):
        node["const"] = enum[_pick(draw, len(enum))] if enum else draw(_members(type_name))
    _annotate(draw, node)
    return node


@functools.lru_cache(maxsize=1)
def _annotations() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "description": st.text(max_size=8),
            "title": st.text(max_size=8),
            "default": _trees(_DEFAULT_KNOBS, 3),
            "examples": st.lists(_trees(_DEFAULT_KNOBS, 2), max_size=2),
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
    return _Solver(schema, _DEFAULT_KNOBS).sat((schema,), ())


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
        _check_int("subset_schemas", "max_leaves", max_leaves, 1)
        _check_bool("subset_schemas", "satisfiable", satisfiable)
        names = _knobs("subset_schemas", keys=keys).keys

        def extend(
            children: st.SearchStrategy[dict[str, Any]],
        ) -> st.SearchStrategy[dict[str, Any]]:
            maps = st.dictionaries(names, children, max_size=4)

            def obj(draw: st.DrawFn) -> dict[str, Any]:
                node: dict[str, Any] = {"type": "object"}
                if draw(_BOOLEANS):
                    properties = draw(maps)
                    node["properties"] = properties
                    required = [name for name in properties if draw(_BOOLEANS)]
                    if required:
                        node["required"] = _shuffled(draw, required)
                additional = (None, True, False)[_pick(draw, 3)]
                if additional is not None:
                    node["additionalProperties"] = additional
                _annotate(draw, node)
                return node

            def arr(draw: st.DrawFn) -> dict[str, Any]:
                node: dict[str, Any] = {"type": "array"}
                if draw(_BOOLEANS):
                    node["items"] = draw(children)
                _annotate(draw, node)
                return node

            unions = st.lists(children, min_size=2, max_size=3).map(
                lambda branches: {"oneOf": branches}
            )
            if satisfiable:
                unions = unions.filter(_has_valid_value)
            return st.one_of(_call(obj), _call(arr), unions)

        return st.recursive(
            st.one_of(_scalar_schema(), _annotations_only()), extend, max_leaves=max_leaves
        )

    return _lazy(
        build,
        lambda: ("schemas", max_leaves, keys, satisfiable),
    )


_DESCRIPTIONS: Final = st.text(max_size=8)


@st.composite
def _scalar_spec(draw: st.DrawFn) -> dict[str, Any]:
    type_name = _SCALAR_TYPES[_pick(draw, len(_SCALAR_TYPES))]
    spec: dict[str, Any] = {"type": type_name}
    if type_name not in ("boolean", "null"):
        enum = draw(_enums(type_name))
        if enum is not None:
            spec["enum"] = enum
    if draw(_upto(3)) == 3:
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
            if draw(_BOOLEANS):
                spec["items"] = draw(children)
            return spec

        def obj(draw: st.DrawFn) -> dict[str, Any]:
            spec: dict[str, Any] = {"type": "object", "additionalProperties": draw(_BOOLEANS)}
            if draw(_BOOLEANS):
                spec["properties"] = draw(maps)
            return spec

        unions = (
            st.lists(children, min_size=2, max_size=3)
            .map(lambda branches: {"oneOf": branches})
            .filter(_spec_has_valid_value)
        )
        return st.one_of(_call(array), _call(obj), unions)

    return st.recursive(leaves, extend, max_leaves=4)


def _entries(
    names: st.SearchStrategy[str], specs: st.SearchStrategy[Any], min_size: int, max_size: int
) -> st.SearchStrategy[dict[str, Any]]:
    def entry(draw: st.DrawFn) -> dict[str, Any]:
        spec = dict(draw(specs))
        if draw(_BOOLEANS):
            spec["required"] = True
        return spec

    return st.dictionaries(names, _call(entry), min_size=min_size, max_size=max_size)


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
        _check_int("parameter_maps", "min_size", min_size, 0)
        _check_int("parameter_maps", "max_size", max_size, min_size)
        _check_bool("parameter_maps", "nested", nested)
        names = _knobs("parameter_maps", keys=keys).keys
        return _entries(names, _value_specs(names, nested), min_size, max_size)

    return _lazy(
        build,
        lambda: ("maps", min_size, max_size, keys, nested),
    )


# ---------------------------------------------------------------------------------------------
# Raw argument text
# ---------------------------------------------------------------------------------------------

ArgumentKind = Literal["valid", "invalid-json", "not-an-object", "wrong-type", "missing", "extra"]
#: The kinds of :class:`ArgumentText`; every kind but ``valid`` and ``extra`` fails validation.
ARGUMENT_KINDS: Final[tuple[ArgumentKind, ...]] = (
    "valid",
    "invalid-json",
    "not-an-object",
    "wrong-type",
    "missing",
    "extra",
)


@attrs.frozen
class ArgumentText:
    """Raw argument text for a tool, and how it was made.

    Attributes:
        kind: ``valid`` (satisfies the parameters), ``invalid-json`` (not JSON: parses to the raw
            string), ``not-an-object`` (JSON, but not an object), ``wrong-type`` (a declared
            parameter holds a value its schema rejects), ``missing`` (a required parameter left
            out), ``extra`` (valid plus undeclared keys: the root is open, so still valid).
        text: The text, as the model would write it.
    """

    kind: ArgumentKind
    text: str


@attrs.frozen
class _Style:
    """How one argument text is written (JSON has many spellings of one value)."""

    item_separator: str
    key_separator: str
    indent: str | None
    ascii: bool
    numbers: str  # "python", "javascript" or "exponent"
    negative_zero: str


#: Every spelling, as one choice (few choices per example keep shrinking short); the first is
#: the plain one, where a draw shrinks to.
_ALL_STYLES: Final = tuple(
    _Style(*combination)
    for combination in itertools.product(
        [", ", ",", " , "],
        [": ", ":", " :\t"],
        [None, "  ", "\t"],
        [False, True],
        ["python", "javascript", "exponent"],
        ["-0.0", "-0", "-0e0"],
    )
)
_STYLES: Final = st.sampled_from(_ALL_STYLES)
_PLAIN: Final = _Style(", ", ": ", None, False, "python", "-0.0")


def _number_text(value: int | float, style: _Style) -> str:
    if isinstance(value, int):
        return str(value)  # exact at any size
    if value == 0 and math.copysign(1.0, value) < 0:
        return style.negative_zero
    if math.isinf(value):
        return "1e400" if value > 0 else "-1e400"
    if style.numbers == "javascript":
        return js_number(value)
    if style.numbers == "exponent":
        return f"{value:.17E}" if value.is_integer() else repr(value).upper()
    return repr(value)


def _render(value: Any, style: _Style = _PLAIN) -> str:
    """JSON text of ``value`` (iterative: any depth), spelled as ``style`` says."""
    out: list[str] = []
    stack: list[tuple[Any, int, bool]] = [(value, 0, False)]
    indent = style.indent
    while stack:
        item, depth, literal = stack.pop()
        if literal:
            out.append(item)
            continue
        kind = type(item)
        if kind is str:
            out.append(json.dumps(item, ensure_ascii=style.ascii))
        elif item is None:
            out.append("null")
        elif kind is bool:
            out.append("true" if item else "false")
        elif kind is int or kind is float:
            out.append(_number_text(item, style))
        elif kind is list or kind is dict:
            opening, closing = ("[", "]") if kind is list else ("{", "}")
            children = list(item.items()) if kind is dict else list(item)
            if not children:
                out.append(opening + closing)
                continue
            inner = "\n" + indent * (depth + 1) if indent is not None else ""
            outer = "\n" + indent * depth if indent is not None else ""
            separator = (
                style.item_separator.rstrip() if indent is not None else style.item_separator
            )
            pending: list[tuple[Any, int, bool]] = [(opening + inner, 0, True)]
            for position, child in enumerate(children):
                if position:
                    pending.append((separator + inner, 0, True))
                if kind is dict:
                    name, child = child
                    pending.append(
                        (json.dumps(name, ensure_ascii=style.ascii) + style.key_separator, 0, True)
                    )
                pending.append((child, depth + 1, False))
            pending.append((outer + closing, 0, True))
            stack.extend(reversed(pending))
        else:  # pragma: no cover - the strategies only render JSON
            raise TypeError(f"cannot render {kind.__name__}")
    return "".join(out)


def _object_text(entries: list[tuple[str, str]], style: _Style) -> str:
    """An object text from already rendered values (duplicate keys and deep texts allowed)."""
    if not entries:
        return "{}"
    parts = [
        json.dumps(name, ensure_ascii=style.ascii) + style.key_separator + text
        for name, text in entries
    ]
    return "{" + style.item_separator.join(parts) + "}"


_JSON_WHITESPACE: Final = st.sampled_from(["", " ", "\n", "\t", "\r\n", " \t\n\r "])
_WHITESPACE_ONLY: Final = st.text(alphabet=" \t\n\r", min_size=1, max_size=4)
_GARBAGE: Final = ("x", "}", ",", " {}", "]", "\x00", " // note", "\n{}")
_BROKEN: Final = (
    "{",
    '{"a":',
    "{a: 1}",
    "[1,",
    "{'x': 1}",
    "nope",
    "undefined",
    "None",
    "True",
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": -Infinity}',
    '{"a": 1,}',
    '{"a": 01}',
    '{"a": .5}',
    '{"a": +1}',
    '{"a": 1.}',
    '{"a": 0x10}',
    '{"a": "x\ny"}',
    '{"a": "\\x"}',
    '{"a" 1}',
    '{"a": 1 /* c */}',
    "\u00a0{}",
    "{}\u00a0",
)


def _deep(depth: int, kind: int) -> str:
    if kind == 0:
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "null" + "}" * depth


def _check_kinds(kinds: object) -> tuple[ArgumentKind, ...]:
    if isinstance(kinds, str) or not isinstance(kinds, Sequence | set | frozenset):
        raise InvalidArgument(
            f"argument_texts: kinds must be a sequence of kind names, got {kinds!r}"
        )
    out = tuple(kinds)
    unknown = [kind for kind in out if kind not in ARGUMENT_KINDS]
    if unknown:
        raise InvalidArgument(
            f"argument_texts: unknown kinds {unknown!r} (the kinds are {', '.join(ARGUMENT_KINDS)})"
        )
    if not out:
        raise InvalidArgument("argument_texts: kinds is empty")
    return out


def argument_texts(
    parameters: Any,
    kinds: Sequence[ArgumentKind] = ARGUMENT_KINDS,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_size: int = DEFAULT_MAX_SIZE,
    max_string_size: int = DEFAULT_MAX_STRING_SIZE,
    big_numbers: bool = True,
    keys: st.SearchStrategy[str] | None = None,
) -> st.SearchStrategy[ArgumentText]:
    """Raw argument text for a tool whose author parameter map is ``parameters``, by kind.

    The text is written as models (and JSON) allow: compact, spaced or indented, ASCII-escaped
    or not, numbers in Python, JavaScript or exponent form (``2.0``/``2``/``2.00000000000000000E+00``
    for an ``integer``, exact integers past 2**53, ``1e300``), padded with JSON whitespace, a
    key given twice (JavaScript keeps the first position and the last value). The odd texts of
    each kind:

    * ``valid``: the above; ``extra``: plus undeclared keys, one of them possibly nested up to
      ``max_depth`` levels (past ``json``'s recursion limit);
    * ``invalid-json``: a valid text cut short or followed by garbage, a leading BOM, a non-JSON
      space (U+00A0), whitespace only, unclosed deep nesting, ``NaN``/``Infinity``, single
      quotes, comments, trailing commas, leading zeros, raw newlines in strings;
    * ``not-an-object``: scalars and arrays, including a JSON string holding the object's text
      (arguments encoded twice);
    * ``wrong-type``: declared parameters holding values their schemas reject, ``-0`` and
      ``1e400`` and integers past the double range included, or a key whose *last* occurrence
      is wrong;
    * ``missing``: required parameters left out.

    Args:
        parameters: The tool's ``parameters`` (the DSL of ``define_tool``).
        kinds: The kinds to draw from (a kind the parameters cannot produce, e.g. ``missing``
            without a required parameter, is left out).
        max_depth: Deepest nesting of the deep texts.
        max_size, max_string_size, big_numbers, keys: As for :func:`valid_values`.

    Raises:
        InvalidArgument: (when drawn) ``parameters`` is not a parameter map, ``kinds`` names an
            unknown kind or none the parameters can produce, or a knob is bad.
    """

    def build() -> st.SearchStrategy[ArgumentText]:
        wanted = _check_kinds(kinds)
        depth_limit = _check_int("argument_texts", "max_depth", max_depth, 1)
        knobs = _knobs(
            "argument_texts",
            max_size=max_size,
            max_string_size=max_string_size,
            big_numbers=big_numbers,
            keys=keys,
        )
        try:
            schema = parameter_schema_spec_to_json_schema(parameters)
        except JsonSchemaError as error:
            raise InvalidArgument(
                f"argument_texts: parameters is not a parameter map: {'; '.join(error.violations)}"
            ) from None
        return _argument_texts(schema, wanted, depth_limit, knobs)

    return _lazy(
        build,
        lambda: (
            "texts",
            repr(parameters),
            repr(kinds),
            max_depth,
            max_size,
            max_string_size,
            big_numbers,
            keys,
        ),
    )


def _argument_texts(
    schema: Node, wanted: tuple[ArgumentKind, ...], depth_limit: int, knobs: _Knobs
) -> st.SearchStrategy[ArgumentText]:
    solver = _Solver(schema, knobs)
    properties: dict[str, Node] = schema.get("properties", {})
    required: list[str] = list(schema.get("required", []))
    has_valid = solver.sat((schema,), ())
    good = solver.strategy((schema,), ()) if has_valid else None
    trees = _trees(knobs, 6)
    # Argument text can also spell numbers no JSON value holds: 1e400 parses to infinity.
    text_leaves = [_NEG_ZERO, math.inf, -math.inf, *(_BEYOND_INTS if knobs.big_numbers else ())]
    bad_values = {name: _invalid(child, knobs, text_leaves) for name, child in properties.items()}

    objects = st.dictionaries(knobs.keys, trees, max_size=3)
    arrays = st.lists(trees, max_size=3)

    def valid_text(draw: st.DrawFn, value: dict[str, Any], style: _Style) -> str:
        if value and draw(_upto(3)) == 3:  # a key given twice: first junk, last good
            name = list(value)[_pick(draw, len(value))]
            entries = [(key, _render(value[key], style)) for key in value]
            entries[list(value).index(name)] = (name, _render(draw(trees), style))
            entries.append((name, _render(value[name], style)))
            return _object_text(entries, style)
        return _render(value, style)

    def padded(draw: st.DrawFn, text: str) -> str:
        return draw(_JSON_WHITESPACE) + text + draw(_JSON_WHITESPACE)

    options: list[st.SearchStrategy[ArgumentText]] = []
    if "valid" in wanted and good is not None:

        def valid(draw: st.DrawFn) -> ArgumentText:
            return ArgumentText("valid", padded(draw, valid_text(draw, draw(good), draw(_STYLES))))

        options.append(_call(valid))
    if "invalid-json" in wanted:

        def invalid_json(draw: st.DrawFn) -> ArgumentText:
            how = draw(_upto(6))
            if how == 0:
                text = _BROKEN[_pick(draw, len(_BROKEN))]
            elif how == 4:
                text = draw(_WHITESPACE_ONLY)
            elif how == 5:
                depth = 1 + draw(_upto(depth_limit - 1))
                text = ("[", '{"a":')[_pick(draw, 2)] * depth
            else:
                base = draw(good) if good is not None else draw(objects)
                whole = _render(base, draw(_STYLES))
                if how == 1:  # cut short: a proper prefix of an object text is never JSON
                    text = whole[: 1 + draw(_upto(len(whole) - 2))]
                elif how == 2:
                    text = whole + _GARBAGE[_pick(draw, len(_GARBAGE))]
                elif how == 3:
                    text = "\ufeff" + whole
                else:
                    text = "'" + whole[1:-1] + "'" if len(whole) > 2 else "{,}"
            return ArgumentText("invalid-json", text)

        options.append(_call(invalid_json))
    if "not-an-object" in wanted:

        def not_an_object(draw: st.DrawFn) -> ArgumentText:
            how = draw(_upto(3))
            style = draw(_STYLES)
            if how == 3 and good is not None:  # the arguments encoded twice
                value: Any = _render(draw(good), style)
            elif how == 2:
                value = draw(arrays)
            else:
                value = draw(_scalars(knobs))
            return ArgumentText("not-an-object", padded(draw, _render(value, style)))

        options.append(_call(not_an_object))
    if "wrong-type" in wanted and good is not None and properties:
        names = list(properties)
        choices = st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True)

        def wrong(draw: st.DrawFn) -> ArgumentText:
            value = draw(good)
            style = draw(_STYLES)
            broken = draw(choices)
            for name in broken:
                value[name] = draw(bad_values[name])
            if draw(_upto(3)) == 3:  # the wrong value is the last of a duplicate
                name = broken[0]
                entries = [(key, _render(item, style)) for key, item in value.items()]
                entries[list(value).index(name)] = (name, _render(draw(trees), style))
                entries.append((name, _render(value[name], style)))
                return ArgumentText("wrong-type", _object_text(entries, style))
            return ArgumentText("wrong-type", padded(draw, _render(value, style)))

        options.append(_call(wrong))
    if "missing" in wanted and good is not None and required:
        left_out = st.lists(st.sampled_from(required), min_size=1, unique=True)

        def missing(draw: st.DrawFn) -> ArgumentText:
            value = draw(good)
            for name in draw(left_out):
                value.pop(name, None)
            return ArgumentText("missing", padded(draw, _render(value, draw(_STYLES))))

        options.append(_call(missing))
    if "extra" in wanted and good is not None:
        declared = set(properties)

        def extra(draw: st.DrawFn) -> ArgumentText:
            value = draw(good)
            style = draw(_STYLES)
            entries = [(key, _render(item, style)) for key, item in value.items()]
            taken = declared | set(value)
            for position in range(1 + draw(_upto(2))):
                name = _fresh_key(draw(knobs.keys), taken)
                taken.add(name)
                if position == 0 and draw(_upto(3)) == 3:
                    text = _deep(1 + draw(_upto(depth_limit - 1)), _pick(draw, 2))
                else:
                    text = _render(draw(trees), style)
                entries.insert(draw(_upto(len(entries))), (name, text))
            return ArgumentText("extra", padded(draw, _object_text(entries, style)))

        options.append(_call(extra))
    if not options:
        raise InvalidArgument(
            f"argument_texts: these parameters cannot produce any of the kinds {list(wanted)} "
            "(missing needs a required parameter, wrong-type a declared one, valid/extra/missing/"
            "wrong-type a satisfiable map)"
        )
    return st.one_of(options)


_DEFAULT_KNOBS: Final = _Knobs(12, DEFAULT_MAX_SIZE, DEFAULT_MAX_STRING_SIZE, True, _default_keys())


def _argument_text_strategy() -> st.SearchStrategy[ArgumentText]:
    def build(draw: st.DrawFn) -> ArgumentText:
        parameters = draw(parameter_maps(max_size=3))
        text: ArgumentText = draw(argument_texts(parameters))
        return text

    return _call(build)


# ``st.from_type(ArgumentText)``: text for a drawn parameter map (built on first use).
st.register_type_strategy(ArgumentText, lambda thing: _argument_text_strategy())
