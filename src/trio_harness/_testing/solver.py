"""The solver: values satisfying some schemas and violating others, built constructively.

How values are built. A schema of the enforced subset is a predicate over lossless JSON values.
:class:`Solver` draws a value satisfying a set of schemas (*pos*) and violating another set
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

import copy
import itertools
import math
import unicodedata
from collections.abc import Iterator, Sequence
from typing import Any, Final, TypeAlias

import attrs
from hypothesis import strategies as st

from .json_leaves import MAX_INT, edge_strings, fractional_numbers, integral_numbers, json_trees
from .value_knobs import BOOLEANS, Knobs, call, pick, shuffled, upto

__all__ = ["Node", "Problem", "Solver", "fresh_key", "plant"]

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


class Solver:
    """Draws values satisfying every schema of ``pos`` and violating every one of ``negs``.

    The nodes of ``root`` are numbered once (depth-first), so problems are canonical and the
    choices a draw makes mean the same in every process (hypothesis replays them).
    """

    def __init__(self, root: object, knobs: Knobs) -> None:
        self.knobs = knobs
        self._order: dict[int, int] = {}
        self._options: dict[tuple[tuple[int, ...], tuple[int, ...]], list[_Option]] = {}
        self._plans: dict[tuple[tuple[int, ...], tuple[int, ...]], list[_ObjectPlan]] = {}
        self._strategies: dict[tuple[tuple[int, ...], tuple[int, ...]], Any] = {}
        self._scalars: dict[tuple[str, str], st.SearchStrategy[Any]] = {}
        self._lists: dict[tuple[tuple[int, ...], tuple[int, ...]], st.SearchStrategy[Any]] = {}
        self._number(root)
        self.any_json = json_trees(knobs, max(1, knobs.max_leaves // 2))
        self._extra = st.lists(
            st.tuples(knobs.keys, self.any_json), max_size=min(knobs.max_size, 4)
        )

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
            return candidates[pick(draw, len(candidates))]
        key = (option.kind, repr(excluded))
        strategy = self._scalars.get(key)
        if strategy is None:
            base: st.SearchStrategy[Any]
            if option.kind == "int":
                base = integral_numbers(self.knobs)
            elif option.kind == "frac":
                base = fractional_numbers(self.knobs)
            else:
                base = edge_strings(self.knobs)
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
            if draw(upto(3)) < 3:
                key = self._key(items, ())
                lists = self._lists.get(key)
                if lists is None:
                    lists = self._lists[key] = st.lists(element, max_size=self.knobs.max_size)
                value = draw(lists)
            else:  # a long array of one (copied) element
                one = draw(element)
                count = draw(upto(self.knobs.max_size))
                value = [copy.deepcopy(one) for _ in range(count)]
        for witness in witnesses:
            value.insert(draw(upto(len(value))), witness)
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
        plan = plans[pick(draw, len(plans))]
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
            name = fresh_key(draw(self.knobs.keys), taken | set(entries))
            entries[name] = draw(self.any_json)
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
            if breaks and draw(upto(3)) == 3:
                negs = self._canon(breaks[:1])
                if self.sat(keep, negs):
                    entries[name] = self.draw(draw, keep, negs)
                    continue
            if self.sat(keep, ()) and draw(BOOLEANS):
                entries[name] = self.draw(draw, keep, ())
        if not closed:
            extra = draw(self._extra)
            for name, value in extra:
                name = fresh_key(name, taken | set(entries))
                entries[name] = value
        return {name: entries[name] for name in shuffled(draw, list(entries))}

    # -- drawing -------------------------------------------------------------------------------

    def draw(self, draw: st.DrawFn, pos: tuple[Node, ...], negs: tuple[Node, ...]) -> Any:
        """A value satisfying ``pos`` and violating ``negs`` (the problem must be satisfiable)."""
        if not negs and all(n.get("type") is None and "oneOf" not in n for n in pos):
            return draw(self.any_json)  # any lossless value: a bounded tree
        options = self.options(pos, negs)
        option = options[pick(draw, len(options))]
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

            found = self._strategies[key] = call(solved)
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


def fresh_key(name: str, taken: set[str]) -> str:
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
        if type(value) is int and abs(value) > MAX_INT:
            continue
        out.append(value)
    return out


def _avoid(kind: str, value: Any, excluded: list[Any]) -> Any:
    """``value``, or the nearest value of its kind outside ``excluded`` (a finite set)."""
    if not _member(value, excluded):
        return value
    if kind == "int":
        whole = int(value)
        step = 1 if whole < MAX_INT else -1
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


def plant(draw: st.DrawFn, value: Any, bad: Any, keys: st.SearchStrategy[str]) -> Any:
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
    spot = spots[pick(draw, len(spots))]
    if spot is None:
        return bad
    container, where = spot
    if type(container) is list:
        if where == len(container):
            container.append(bad)
        else:
            container[where] = bad
    elif where is _NEW_KEY:
        container[fresh_key(draw(keys), set(container))] = bad
    else:
        container[where] = bad
    return value
