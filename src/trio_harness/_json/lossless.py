"""Lossless JSON: the test, the one-pass snapshot and the node limit.

A value is *lossless JSON* when it survives a JSON round trip unchanged, in JavaScript's terms:

* ``None``, ``bool``, ``str`` (exact types, not subclasses);
* an ``int`` (never a ``bool``) whose magnitude fits a finite double, or a finite ``float`` that is
  not ``-0.0``;
* an exact ``list`` of lossless values;
* an exact ``dict`` whose keys are all exact ``str`` and whose values are lossless;
* and no container appears twice along one path (a cycle). The same container in sibling positions
  (a DAG) is fine.

Everything else is rejected: tuples, sets, ``dict``/``list``/``str`` subclasses, ``Decimal``,
``nan``/``inf``/``-0.0``, non-``str`` keys, arbitrary objects. Exact built-in containers run no user
code while they are inspected, so these functions never raise.

Every walk here is iterative, so depth is limited by memory only (the snapshot copies values of
at most a couple of dozen levels recursively, and hands deeper ones to its iterative walker).

Shared containers: a container may appear in several places of a value (a DAG), so a value of a
few dozen lists can expand to billions of nodes. :func:`is_json_value` visits each container
once (its answer does not depend on where a container sits), so its cost is linear in the
distinct containers. :func:`snapshot_json_value` must produce a tree, so it charges every node
the value expands to and rejects a value over the *JSON node limit* (:func:`json_node_limit`,
default :data:`DEFAULT_JSON_NODE_LIMIT`, set with :func:`set_json_node_limit`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from typing import Any, Final

__all__ = [
    "DEFAULT_JSON_NODE_LIMIT",
    "MAX_FINITE_JSON_INT",
    "NOT_JSON",
    "is_json_integer",
    "is_json_number",
    "is_json_value",
    "json_node_count",
    "json_node_limit",
    "node_limit_message",
    "set_json_node_limit",
    "snapshot_json_value",
]


class _NotJson:
    """Sentinel type of :data:`NOT_JSON`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_JSON"

    def __bool__(self) -> bool:
        return False


#: Returned by :func:`snapshot_json_value` for a value that is not lossless JSON.
NOT_JSON: Final = _NotJson()

#: The largest int magnitude that still converts to a finite double (not JavaScript's
#: ``Number.MAX_SAFE_INTEGER``, 2**53 - 1: every int up to this one is a JSON number).
MAX_FINITE_JSON_INT: Final = int(sys.float_info.max)

_NEG_ZERO_SIGN = -1.0
_MAX_FLOAT: Final = sys.float_info.max

#: The default JSON node limit: how many nodes (containers and scalars, a shared container
#: counted at every place it appears) a snapshotted value, a schema or a DSL spec may expand to.
DEFAULT_JSON_NODE_LIMIT: Final = 1_000_000

_node_limit = DEFAULT_JSON_NODE_LIMIT


def json_node_limit() -> int:
    """The current JSON node limit (see :func:`set_json_node_limit`)."""
    return _node_limit


def set_json_node_limit(limit: int) -> int:
    """Set the JSON node limit for the whole process; returns the previous limit.

    A value a tool returns (and any other value the runtime snapshots), a schema and a DSL spec
    may expand to at most ``limit`` nodes: containers and scalars, a container that appears in
    several places counted at each. Over the limit, a tool's value becomes an error result, a
    schema or spec a :class:`~trio_harness.JsonSchemaError`; the message names the limit. The
    walk stops as soon as the limit is passed, so the cost of a hostile value (``v = [v, v]``
    doubled 30 times) is bounded by the limit, not by its expansion.

    Args:
        limit: A positive ``int`` (not a ``bool``).

    Raises:
        ValueError: ``limit`` is not a positive ``int``.
    """
    global _node_limit
    if type(limit) is not int or limit < 1:
        raise ValueError("the JSON node limit must be a positive int")
    previous = _node_limit
    _node_limit = limit
    return previous


def node_limit_message(what: str, limit: int) -> str:
    """``<what> is larger than the JSON node limit of <limit> nodes (...)``."""
    return (
        f"{what} is larger than the JSON node limit of {limit} nodes "
        "(a container shared by several places counts at each; see set_json_node_limit)"
    )


def _number_ok(value: Any, kind: type) -> bool:
    # ``kind`` is ``type(value)``, already known to be ``int`` or ``float`` by the caller.
    if kind is int:
        return bool(-MAX_FINITE_JSON_INT <= value <= MAX_FINITE_JSON_INT)
    # float: finite and not negative zero
    return math.isfinite(value) and not (
        value == 0.0 and math.copysign(1.0, value) == _NEG_ZERO_SIGN
    )


def is_json_number(value: object) -> bool:
    """THE finite-number predicate: an exact ``int`` that converts to a finite double, or a finite
    ``float`` other than ``-0.0`` (``bool`` and other subclasses are not numbers here)."""
    kind = type(value)
    return (kind is int or kind is float) and _number_ok(value, kind)


def is_json_integer(value: object) -> bool:
    """A JSON number with no fractional part (``1.0`` is an integer, as in JavaScript)."""
    if type(value) is float:
        return value.is_integer() and _number_ok(value, float)
    return is_json_number(value)


def _entries(container: Any) -> Iterator[tuple[Any, Any]]:
    return iter(container.items()) if type(container) is dict else enumerate(container)


class _Walk(Exception):
    """Raised by the shallow copier: the value is for the iterative walker to judge (deeper
    than the copier goes, over the node limit, or not lossless JSON: the walker's verdict and
    message are the answer)."""


# How deep the recursive copier goes before it hands the value to the iterative walker. Tool
# arguments and results are a few levels deep; a cycle or a deep value ends here too.
_SHALLOW_DEPTH: Final = 24


def _shallow_copy(value: Any, depth: int, nodes: list[int], limit: int) -> Any:
    # ``value`` is an exact dict or list. The copy of every lossless value of at most ``depth``
    # levels and at most ``limit`` nodes, counted in ``nodes[0]``; anything else raises
    # ``_Walk`` (no verdict here: the walker gives it).
    nodes[0] += len(value)
    if nodes[0] >= limit or depth <= 0:
        raise _Walk
    if type(value) is dict:
        out: dict[str, Any] = {}
        for key, child in value.items():
            if type(key) is not str:
                raise _Walk
            kind = type(child)
            if kind is str or kind is bool or child is None:
                out[key] = child
            elif kind is int:
                if not -MAX_FINITE_JSON_INT <= child <= MAX_FINITE_JSON_INT:
                    raise _Walk
                out[key] = child
            elif kind is float:
                # Finite (NaN fails both comparisons) and not -0.0: ``_number_ok``, inline.
                if not -_MAX_FLOAT <= child <= _MAX_FLOAT or (
                    child == 0.0 and math.copysign(1.0, child) < 0.0
                ):
                    raise _Walk
                out[key] = child
            elif kind is dict or kind is list:
                out[key] = _shallow_copy(child, depth - 1, nodes, limit)
            else:
                raise _Walk
        return out
    items: list[Any] = []
    for child in value:
        kind = type(child)
        if kind is str or kind is bool or child is None:
            items.append(child)
        elif kind is int:
            if not -MAX_FINITE_JSON_INT <= child <= MAX_FINITE_JSON_INT:
                raise _Walk
            items.append(child)
        elif kind is float:
            if not -_MAX_FLOAT <= child <= _MAX_FLOAT or (
                child == 0.0 and math.copysign(1.0, child) < 0.0
            ):
                raise _Walk
            items.append(child)
        elif kind is dict or kind is list:
            items.append(_shallow_copy(child, depth - 1, nodes, limit))
        else:
            raise _Walk
    return items


def snapshot_json_value(value: Any, problems: list[str] | None = None) -> Any:
    """Validate ``value`` as lossless JSON and deep-copy it in the same pass.

    The copy is a tree: a container shared by several places is copied at each, and every node
    is charged against the JSON node limit (:func:`json_node_limit`); the walk stops as soon as
    the value expands to more nodes than that.

    Args:
        value: Any value.
        problems: When given, a value rejected for the node limit appends its reason here
            (``value is larger than the JSON node limit of <n> nodes (...)``).

    Returns:
        A detached deep copy (fresh ``dict``/``list`` containers, the same immutable scalars), or
        :data:`NOT_JSON` when ``value`` is not lossless JSON or is larger than the node limit.
    """
    kind = type(value)
    if kind is str:
        return value
    limit = _node_limit
    root: Any
    if kind is dict or kind is list:
        # Most values (tool arguments and results) are shallow: copied recursively; a deep,
        # cyclic, oversized or not-lossless one is left to the walker below.
        try:
            if kind is dict and len(value) < limit:
                # The top level inline (arguments are mostly a dict of scalars).
                flat: dict[str, Any] = {}
                counter: list[int] | None = None
                for key, child in value.items():
                    if type(key) is not str:
                        raise _Walk
                    ck = type(child)
                    if ck is str or ck is bool or child is None:
                        flat[key] = child
                    elif ck is int or ck is float:
                        if not _number_ok(child, ck):
                            raise _Walk
                        flat[key] = child
                    elif ck is dict or ck is list:
                        if counter is None:
                            counter = [1 + len(value)]
                        flat[key] = _shallow_copy(child, _SHALLOW_DEPTH - 1, counter, limit)
                    else:
                        raise _Walk
                return flat
            if kind is list and len(value) < limit:
                # A list of dicts of scalars (content blocks): its items copied inline too.
                items: list[Any] = []
                count = 1 + len(value)
                for child in value:
                    ck = type(child)
                    if ck is dict and len(child) + count < limit:
                        count += len(child)
                        block: dict[str, Any] = {}
                        for key, item in child.items():
                            if type(key) is not str:
                                raise _Walk
                            ik = type(item)
                            if ik is str or ik is bool or item is None:
                                block[key] = item
                            elif ik is dict or ik is list:
                                block[key] = _shallow_copy(
                                    item, _SHALLOW_DEPTH - 2, tally := [count], limit
                                )
                                count = tally[0]
                            elif ik is int or ik is float:
                                if not _number_ok(item, ik):
                                    raise _Walk
                                block[key] = item
                            else:
                                raise _Walk
                        items.append(block)
                    elif ck is str or ck is bool or child is None:
                        items.append(child)
                    elif ck is int or ck is float:
                        if not _number_ok(child, ck):
                            raise _Walk
                        items.append(child)
                    elif ck is dict or ck is list:
                        items.append(
                            _shallow_copy(child, _SHALLOW_DEPTH - 1, tally := [count], limit)
                        )
                        count = tally[0]
                    else:
                        raise _Walk
                return items
            return _shallow_copy(value, _SHALLOW_DEPTH, [1], limit)
        except _Walk:
            pass
        root = {} if kind is dict else []
    elif kind is bool or value is None:
        return value
    elif kind is int or kind is float:
        return value if _number_ok(value, kind) else NOT_JSON
    else:
        return NOT_JSON
    nodes = 1
    # Invariant: ``ancestors`` holds exactly the ids of the source containers on the current path;
    # the sources stay referenced by ``value`` for the whole walk, so their ids are stable.
    ancestors = {id(value)}
    stack: list[tuple[Any, Any, Iterator[tuple[Any, Any]]]] = [(value, root, _entries(value))]
    while stack:
        source, copy, it = stack[-1]
        is_dict = type(copy) is dict
        for key, child in it:
            if is_dict and type(key) is not str:
                return NOT_JSON
            nodes += 1
            if nodes > limit:
                return _over_limit(problems, limit)
            ck = type(child)
            if ck is str or ck is bool or child is None:
                new: Any = child
            elif ck is int or ck is float:
                if not _number_ok(child, ck):
                    return NOT_JSON
                new = child
            elif ck is dict or ck is list:
                if id(child) in ancestors:
                    return NOT_JSON
                new = {} if ck is dict else []
                if is_dict:
                    copy[key] = new
                else:
                    copy.append(new)
                ancestors.add(id(child))
                stack.append((child, new, _entries(child)))
                break
            else:
                return NOT_JSON
            if is_dict:
                copy[key] = new
            else:
                copy.append(new)
        else:
            stack.pop()
            ancestors.discard(id(source))
    return root


def json_node_count(value: Any, limit: int) -> int:
    """How many nodes an acyclic ``value`` expands to (a shared container counted at each place),
    or ``limit + 1`` when that is more than ``limit``: the walk stops there, so it is bounded."""
    nodes = 0
    stack = [value]
    while stack:
        item = stack.pop()
        nodes += 1
        if nodes > limit:
            return limit + 1
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
    return nodes


def _over_limit(problems: list[str] | None, limit: int) -> Any:
    if problems is not None:
        problems.append(node_limit_message("value", limit))
    return NOT_JSON


def is_json_value(value: Any) -> bool:
    """Whether ``value`` is lossless JSON (see the module docstring). Never raises.

    Each container is inspected once, however many places share it, so the cost is linear in
    the distinct containers (a container found lossless below one place is lossless below any
    other: it cannot contain a container of the current path without containing itself).
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int or kind is float:
        return _number_ok(value, kind)
    if kind is not dict and kind is not list:
        return False
    # Invariant: ``done`` holds the ids of containers whose whole subtree was found lossless;
    # ``ancestors`` those on the current path. ``value`` keeps all of them alive, so ids are stable.
    done: set[int] = set()
    ancestors = {id(value)}
    stack: list[tuple[Any, Iterator[tuple[Any, Any]]]] = [(value, _entries(value))]
    while stack:
        source, it = stack[-1]
        is_dict = type(source) is dict
        for key, child in it:
            if is_dict and type(key) is not str:
                return False
            ck = type(child)
            if ck is str or ck is bool or child is None:
                continue
            if ck is int or ck is float:
                if not _number_ok(child, ck):
                    return False
                continue
            if ck is dict or ck is list:
                if id(child) in done:
                    continue
                if id(child) in ancestors:
                    return False
                ancestors.add(id(child))
                stack.append((child, _entries(child)))
                break
            return False
        else:
            stack.pop()
            ancestors.discard(id(source))
            done.add(id(source))
    return True
