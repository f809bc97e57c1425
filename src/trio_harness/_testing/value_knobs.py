"""The knobs every value strategy takes, their checks, and the drawing helpers they share.

Part of the hypothesis strategies (see :mod:`.solver` for how values are built); loaded only
through :mod:`.strategies`. A strategy checks its arguments when first drawn from, as
hypothesis's own do, and raises ``hypothesis.errors.InvalidArgument`` for a bad one; built
strategies are memoised by their arguments (:func:`lazy`).
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Hashable
from typing import Any, Final

import attrs
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

__all__ = [
    "BOOLEANS",
    "DEFAULT_KNOBS",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_SIZE",
    "DEFAULT_MAX_STRING_SIZE",
    "Knobs",
    "call",
    "check_bool",
    "check_int",
    "default_keys",
    "lazy",
    "make_knobs",
    "pick",
    "shuffled",
    "upto",
]

#: Default bound of the items of one array and of the undeclared keys of one object.
DEFAULT_MAX_SIZE: Final = 24
#: Default bound of the length of one string.
DEFAULT_MAX_STRING_SIZE: Final = 200
#: Default bound of the nesting depth of the deep argument texts (past ``json``'s own limit of
#: about 1,000 levels, where ``parse_arguments`` switches to its iterative parser).
DEFAULT_MAX_DEPTH: Final = 1200

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


def check_int(owner: str, name: str, value: object, minimum: int) -> int:
    if type(value) is not int or value < minimum:
        raise InvalidArgument(f"{owner}: {name} must be an int >= {minimum}, got {value!r}")
    return value


def check_bool(owner: str, name: str, value: object) -> bool:
    if type(value) is not bool:
        raise InvalidArgument(f"{owner}: {name} must be True or False, got {value!r}")
    return value


_KEYS: Final = st.one_of(st.sampled_from(_SPECIAL_KEYS), st.text(max_size=12))
BOOLEANS: Final = st.booleans()


def default_keys() -> st.SearchStrategy[str]:
    return _KEYS


@functools.lru_cache(maxsize=512)
def upto(limit: int) -> st.SearchStrategy[int]:
    """``integers(0, limit)``, built once per bound (building and validating a strategy costs
    more than drawing from it)."""
    return st.integers(0, limit)


def pick(draw: st.DrawFn, count: int) -> int:
    """An index below ``count`` (shrinks to 0: the first, simplest option)."""
    return draw(upto(count - 1)) if count > 1 else 0


@st.composite
def call(draw: st.DrawFn, build: Callable[[st.DrawFn], Any]) -> Any:
    """``build(draw)`` as a strategy. One module-level composite: ``st.composite`` compiles a
    wrapper each time it decorates, which costs more than most draws."""
    return build(draw)


def shuffled(draw: st.DrawFn, items: list[Any]) -> list[Any]:
    """A permutation of ``items`` drawn by Fisher-Yates; all-zero draws keep the order."""
    items = list(items)
    for index in range(len(items) - 1, 0, -1):
        other = index - draw(upto(index))
        items[index], items[other] = items[other], items[index]
    return items


@attrs.frozen
class Knobs:
    """The size and edge knobs every value strategy takes (validated)."""

    max_leaves: int
    max_size: int
    max_string_size: int
    big_numbers: bool
    keys: st.SearchStrategy[str]


def make_knobs(
    owner: str,
    *,
    max_leaves: object = 12,
    max_size: object = DEFAULT_MAX_SIZE,
    max_string_size: object = DEFAULT_MAX_STRING_SIZE,
    big_numbers: object = True,
    keys: object = None,
) -> Knobs:
    if keys is None:
        keys = default_keys()
    elif not isinstance(keys, st.SearchStrategy):
        raise InvalidArgument(f"{owner}: keys must be a strategy of str, got {keys!r}")
    return Knobs(
        check_int(owner, "max_leaves", max_leaves, 1),
        check_int(owner, "max_size", max_size, 0),
        check_int(owner, "max_string_size", max_string_size, 0),
        check_bool(owner, "big_numbers", big_numbers),
        keys,
    )


#: Built strategies by their arguments (a few hundred at most): ``argument_texts(spec)`` drawn
#: inside a composite, once per example, builds its solver and strategies only once per spec.
_BUILT: collections.OrderedDict[Hashable, st.SearchStrategy[Any]] = collections.OrderedDict()
_BUILT_LIMIT: Final = 512


def lazy(
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


DEFAULT_KNOBS: Final = Knobs(12, DEFAULT_MAX_SIZE, DEFAULT_MAX_STRING_SIZE, True, default_keys())
