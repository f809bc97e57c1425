"""The plan and the check-only code behind ``compile_validator`` (see :mod:`.codegen`).

What both emitters share: the analysis of the schema (subtree sizes, the nodes a value can make
arbitrarily large, the scalar schemas that check alike), the generated module under construction
(:class:`Source`: functions, constants, tables) and the expression helpers; and the check-only
emitter (:class:`ValidGen`): straight-line checks with no message building and no path strings,
where a failing check raises ``_Invalid`` (or returns ``False``). :mod:`.codegen` adds the
collector code and assembles the module.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from .rules import BOUNDS, SCALAR_KINDS, bound_test, type_test

__all__ = [
    "INLINE_NODES",
    "INLINE_UNION",
    "MAX_BLOCK_DEPTH",
    "SIZED_KEYS",
    "TABLE_WIDTH",
    "Source",
    "ValidGen",
    "bound_tests",
    "kind_of",
    "leaf_key",
    "literal_set",
    "union_sum",
    "untyped_items",
]

#: Open a new generated function once this many blocks are nested (CPython's static limit is 20).
MAX_BLOCK_DEPTH: Final = 14
#: A container whose subtree has more nodes than this is checked by a call to its own check-only
#: function where code is generated for it more than once (inside another node's function, or
#: in collector code); smaller ones are inlined. So every node's code is emitted a bounded
#: number of times and the generated text is linear in the schema's nodes, not nodes × depth.
INLINE_NODES: Final = 24
#: Objects with more properties (or required names) than this are checked from tables instead
#: of code per property: a dict from each key to the check function of its schema, one function
#: per distinct scalar schema (see :func:`leaf_key`). So a wide object costs a table entry per
#: property, not lines of source: ``compile()`` time stays small and linear.
TABLE_WIDTH: Final = 200


def bound_tests(node: dict[str, object], var: str) -> list[str]:
    """Expressions true iff ``var`` (of the node's type, already checked) is within the node's
    extended-vocabulary bounds (:data:`~.rules.BOUNDS`, the bounds as exact literals).

    Strict schemas have none of these keywords, so their generated code never changes.
    """
    return [bound_test(key, node[key], var) for key in BOUNDS if key in node]


def kind_of(type_name: str, value: object) -> bool:
    """Whether an enum/const member can ever equal a value that passed ``type_name``'s check."""
    return type(value) in SCALAR_KINDS[type_name]


#: Unions with more branches than this count their matches in a loop over a tuple of branch
#: functions: one long ``+`` expression makes ``compile()`` recurse once per branch.
INLINE_UNION: Final = 16


def union_sum(functions: list[str], var: str) -> str:
    """``f1(v) + f2(v) + ...``, always an ``int`` (a single ``bool`` is counted as 0 or 1)."""
    return " + ".join(["0", *(f"{fn}({var})" for fn in functions)])


def literal_set(keys: Iterable[str]) -> str:
    """A membership operand for exact-``str`` members: a set display, which CPython folds into a
    ``frozenset`` constant when it is the right operand of ``in``/``not in``."""
    names = sorted(keys)
    return "{" + ", ".join(map(repr, names)) + "}" if names else "()"


def _cost(node: dict[str, object]) -> int:
    """Check-only order among sibling properties: cheap, bounded checks first, so an invalid
    value usually fails before the expensive parts are walked (validity is order-free)."""
    type_name = node.get("type")
    if "oneOf" in node or type_name is None:
        return 1
    if type_name == "array":
        return 3
    return 2 if type_name == "object" else 0


def _unbounded(schema: dict[str, object]) -> set[int]:
    """Ids of the nodes whose subtree holds an array of containers (or of unions).

    Those are the nodes a value can make arbitrarily large in repeated structure; the collector
    walks them directly instead of first running a check-only pass that may fail late and be
    redone (see ``_CollectGen.emit``). Post-order over an explicit stack; the schema is acyclic.
    """
    found: set[int] = set()
    stack: list[tuple[dict[str, object], bool]] = [(schema, False)]
    while stack:
        node, done = stack.pop()
        children: list[dict[str, object]] = []
        if "oneOf" in node:
            children = list(node["oneOf"])  # type: ignore[call-overload]
        elif node.get("type") == "object":
            children = list((node.get("properties") or {}).values())  # type: ignore[attr-defined]
        elif node.get("type") == "array" and "items" in node:
            children = [node["items"]]  # type: ignore[list-item]
        if not done:
            stack.append((node, True))
            stack.extend((child, False) for child in children)
            continue
        items = node.get("items") if node.get("type") == "array" else None
        if (
            type(items) is dict and ("oneOf" in items or items.get("type") in ("object", "array"))
        ) or any(id(child) in found for child in children):
            found.add(id(node))
    return found


def _children(node: dict[str, object]) -> list[dict[str, object]]:
    if "oneOf" in node:
        branches: list[dict[str, object]] = node["oneOf"]  # type: ignore[assignment]
        return list(branches)
    if node.get("type") == "object":
        properties: dict[str, dict[str, object]] = node.get("properties") or {}  # type: ignore[assignment]
        return list(properties.values())
    if node.get("type") == "array" and "items" in node:
        return [node["items"]]  # type: ignore[list-item]
    return []


def _sizes(schema: dict[str, object]) -> dict[int, int]:
    """Node count of every subtree, by node id (post-order over an explicit stack)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[dict[str, object], bool]] = [(schema, False)]
    while stack:
        node, done = stack.pop()
        children = _children(node)
        if not done:
            stack.append((node, True))
            stack.extend((child, False) for child in children)
            continue
        sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
    return sizes


def _is_container(node: dict[str, object]) -> bool:
    return "oneOf" not in node and node.get("type") in ("object", "array")


def _member_key(value: object) -> object:
    """An exact key of an enum/const member (``True`` is not ``1``, ``1`` is not ``1.0``)."""
    return (type(value).__name__, value.hex() if type(value) is float else value)


def leaf_key(node: dict[str, object]) -> object:
    """What a scalar or untyped schema checks, as a key (annotations do not check anything), or
    ``None`` for a container or a union. Two leaves with one key validate alike, in the same
    words, so they share their generated functions."""
    if "oneOf" in node:
        return None
    type_name = node.get("type")
    if type_name is None:
        return ("any",)
    if type_name == "object" or type_name == "array":
        return None
    if any(key in node for key in BOUNDS):
        return ("bounded", id(node))  # extended-vocabulary bounds: never shared
    if "enum" not in node and "const" not in node:
        return type_name  # the common leaf: its type alone (no allocation)
    enum = node.get("enum")
    members = None if enum is None else tuple(map(_member_key, enum))  # type: ignore[call-overload]
    const = _member_key(node["const"]) if "const" in node else None
    return (type_name, members, "const" in node, const)


class Source:
    """Generated module text plus the constants it refers to by name."""

    def __init__(self, schema: dict[str, object]) -> None:
        self.functions: list[list[str]] = []
        #: Module-level statements run after every function is defined (wide unions' tuples).
        self.trailer: list[str] = []
        self.namespace: dict[str, object] = {}
        self.unbounded = _unbounded(schema)
        self.sizes = _sizes(schema)
        self._counter = 0

    def name(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def const(self, value: object) -> str:
        """A code expression for a scalar constant: a literal for strings, else a global."""
        if type(value) is str:
            return repr(value)
        name = self.name("_k")
        self.namespace[name] = value
        return name

    def table(self, functions: dict[str, str]) -> str:
        """A global dict from each key to the function named for it, bound after every
        function is defined (the key-to-name map is a constant, not source)."""
        names = self.const(functions)
        table = self.name("_t")
        self.trailer.append(f"{table} = {{k: globals()[n] for k, n in {names}.items()}}")
        return table

    def function_list(self, functions: list[str]) -> str:
        """A global tuple of the named functions, bound after every function is defined."""
        names = self.const(tuple(functions))
        table = self.name("_t")
        self.trailer.append(f"{table} = tuple(globals()[n] for n in {names})")
        return table

    def union(self, functions: list[str]) -> str:
        """A global tuple of a wide union's branch functions, bound after they are defined."""
        name = self.name("_u")
        self.trailer.append(f"{name} = (" + ", ".join(functions) + ",)")
        return name

    def members(self, values: list[object]) -> str:
        """A membership operand for a filtered enum: a folded literal when all are strings."""
        if all(type(member) is str for member in values):
            return literal_set(values)  # type: ignore[arg-type]
        return self.const(frozenset(values))


def scalar_test(type_name: str, var: str) -> str:
    """The type check of a scalar (:data:`~.rules.TYPE_RULES`); a number's reads ``_t``."""
    return type_test(type_name, var, "_t" if type_name in ("number", "integer") else None)


#: The exact Python types each schema type's values have (``number`` and ``integer`` overlap).
_TYPE_GROUPS: Final = {
    "string": "str",
    "boolean": "bool",
    "null": "None",
    "object": "dict",
    "array": "list",
    "number": "num",
    "integer": "num",
}


#: Plain leaves (no enum, const or bound) whose whole check is their branch's type test.
_TYPE_ONLY: Final = ("string", "boolean", "null")


def _disjoint_type_tests(branches: list[dict[str, object]], var: str) -> list[str] | None:
    """One test per union branch, true iff ``var`` has a type of that branch, when every branch
    is typed (not itself a union) and no two share a type; else ``None``."""
    if len(branches) > INLINE_UNION:
        return None
    groups = []
    for branch in branches:
        type_name = branch.get("type")
        if "oneOf" in branch or type(type_name) is not str or type_name not in _TYPE_GROUPS:
            return None
        groups.append(_TYPE_GROUPS[type_name])
    if len(set(groups)) != len(groups):
        return None
    tests = {
        "str": f"type({var}) is str",
        "bool": f"type({var}) is bool",
        "None": f"{var} is None",
        "dict": f"type({var}) is dict",
        "list": f"type({var}) is list",
        "num": f"(type({var}) is int or type({var}) is float)",
    }
    return [tests[group] for group in groups]


def _discriminator(branches: list[dict[str, object]]) -> tuple[str, list[str]] | None:
    """``(name, constants)`` when every branch is an object requiring the property ``name``
    whose schema is a string ``const`` (without ``enum``), one distinct constant per branch."""
    if len(branches) > INLINE_UNION or any(branch.get("type") != "object" for branch in branches):
        return None
    first: dict[str, dict[str, object]] = branches[0].get("properties") or {}  # type: ignore[assignment]
    for name in first:
        constants: list[str] = []
        for branch in branches:
            required: list[str] = branch.get("required") or []  # type: ignore[assignment]
            properties: dict[str, dict[str, object]] = branch.get("properties") or {}  # type: ignore[assignment]
            child = properties.get(name)
            if (
                name not in required
                or child is None
                or child.get("type") != "string"
                or "enum" in child
                or type(child.get("const")) is not str
            ):
                break
            constants.append(child["const"])  # type: ignore[arg-type]
        else:
            if len(set(constants)) == len(constants):
                return name, constants
    return None


def untyped_items(node: dict[str, object]) -> bool:
    """An array whose elements only need the lossless check (no ``items`` or an untyped one)."""
    items = node.get("items")
    return items is None or (type(items) is dict and "oneOf" not in items and "type" not in items)


#: Objects with at least this many declared properties test the size of the dict before
#: looping over its keys (see :func:`_exact_keys`). The size test only ever skips the loop for
#: a dict whose keys are all exact ``str``, so the answer is the loop's either way.
SIZED_KEYS: Final = 1


def _exact_keys(var: str, key: str, out: list[str], pad: str, fail: str, declared: int) -> None:
    """Code running ``fail`` unless every key of the dict ``var`` is an exact ``str``.

    For an object with :data:`SIZED_KEYS` or more declared properties, the ``type(key) is str``
    loop is skipped when the dict's ``__sizeof__()`` is one that only
    exact-``str``-keyed dicts have (``_str_keyed``, measured at import, see
    :func:`~.compiled._str_keyed_sizes`); a dict decoded by ``json`` always has one.
    """
    if declared >= SIZED_KEYS:
        out.append(f"{pad}if {var}.__sizeof__() not in _str_keyed:")
        pad += "    "
    out.append(f"{pad}for {key} in {var}:")
    out.append(f"{pad}    if type({key}) is not str: {fail}")


class ValidGen:
    """Emits check-only code: no messages, no paths; a failing check runs ``fail``.

    ``direct`` code runs inside a ``try`` whose handler redoes the node with collector code, so
    it may read a required property by subscript (a ``KeyError`` is just another failure).
    """

    def __init__(self, source: Source) -> None:
        self.src = source
        self._functions: dict[int, str] = {}
        self._leaves: dict[object, str] = {}

    def function(self, node: dict[str, object]) -> str:
        """A ``(v) -> bool`` function for ``node`` (raises only on hostile keys); its name.

        One per node: asking again for the same node returns the same function.
        """
        known = self._functions.get(id(node))
        if known is not None:
            return known
        leaf = leaf_key(node)
        if leaf is not None:
            known = self._leaves.get(leaf)
            if known is not None:
                self._functions[id(node)] = known
                return known
        name = self.src.name("_valid")
        self._functions[id(node)] = name
        if leaf is not None:
            self._leaves[leaf] = name
        body: list[str] = []
        self.emit(node, "v", body, 1, "return False", direct=False, calls=True)
        self.src.functions.append([f"def {name}(v):", *body, "    return True"])
        return name

    def child(
        self,
        node: dict[str, object],
        var: str,
        out: list[str],
        depth: int,
        fail: str,
        *,
        direct: bool,
        calls: bool,
    ) -> None:
        """A child's check: inline, or (``calls``, for a large container) a call of its function."""
        if calls and _is_container(node) and self.src.sizes[id(node)] > INLINE_NODES:
            out.append(f"{'    ' * depth}if not {self.function(node)}({var}): {fail}")
            return
        self.emit(node, var, out, depth, fail, direct=direct, calls=calls)

    def emit(
        self,
        node: dict[str, object],
        var: str,
        out: list[str],
        depth: int,
        fail: str,
        *,
        direct: bool,
        calls: bool = False,
    ) -> None:
        """Check-only code for ``node``; ``calls``: large container children become calls (code
        that is not the one inline copy of the whole tree)."""
        pad = "    " * depth
        if "oneOf" in node:
            union: list[dict[str, object]] = node["oneOf"]  # type: ignore[assignment]
            tests = _disjoint_type_tests(union, var)
            if tests is not None:
                # Branches of pairwise distinct types: "exactly one matches" is "the branch of
                # the value's type matches" (a value of no branch's type matches none).
                for index, (test, branch) in enumerate(zip(tests, union, strict=True)):
                    out.append(f"{pad}{'el' if index else ''}if {test}:")
                    if leaf_key(branch) in _TYPE_ONLY:
                        out.append(f"{pad}    pass")  # the test above is the branch's check
                        continue
                    self.child(branch, var, out, depth + 1, fail, direct=direct, calls=calls)
                out.append(f"{pad}else: {fail}")
                return
            tag = _discriminator(union)
            if tag is not None:
                # Object branches told apart by a required string ``const`` property: at most
                # one branch can match, the one whose constant the value's tag equals.
                name, constants = tag
                value = self.src.name("g")
                out.append(f"{pad}if type({var}) is not dict: {fail}")
                out.append(f"{pad}{value} = {var}.get({name!r})")
                out.append(f"{pad}if type({value}) is not str: {fail}")
                for index, (constant, branch) in enumerate(zip(constants, union, strict=True)):
                    out.append(f"{pad}{'el' if index else ''}if {value} == {constant!r}:")
                    self.child(branch, var, out, depth + 1, fail, direct=direct, calls=calls)
                out.append(f"{pad}else: {fail}")
                return
            branches = [self.function(branch) for branch in node["oneOf"]]  # type: ignore[attr-defined]
            if len(branches) > INLINE_UNION:
                out.append(f"{pad}if not _one({self.src.union(branches)}, {var}): {fail}")
                return
            out.append(f"{pad}if {union_sum(branches, var)} != 1: {fail}")
            return
        if "type" not in node:
            out.append(f"{pad}if not _lossless({var}): {fail}")
            return
        type_name: str = node["type"]  # type: ignore[assignment]
        if type_name in ("object", "array") and depth > MAX_BLOCK_DEPTH:
            out.append(f"{pad}if not {self.function(node)}({var}): {fail}")
            return
        if type_name == "object":
            self._object(node, var, out, depth, fail, direct, calls)
        elif type_name == "array":
            out.append(f"{pad}if type({var}) is not list: {fail}")
            out.extend(f"{pad}if not {test}: {fail}" for test in bound_tests(node, var))
            if untyped_items(node):
                out.append(f"{pad}if not _lossless({var}): {fail}")
            else:
                item = self.src.name("x")
                out.append(f"{pad}for {item} in {var}:")
                self.child(node["items"], item, out, depth + 1, fail, direct=direct, calls=calls)  # type: ignore[arg-type]
        else:
            self._scalar(node, type_name, var, out, pad, fail)

    def _scalar(
        self, node: dict[str, object], type_name: str, var: str, out: list[str], pad: str, fail: str
    ) -> None:
        if type_name in ("number", "integer"):
            out.append(f"{pad}_t = type({var})")
        out.append(f"{pad}if not {scalar_test(type_name, var)}: {fail}")
        # After the type check the value is an exact builtin scalar of the declared kind; only
        # enum members of that kind can equal it, and among those, set membership and ``==``
        # are JavaScript's SameValueZero / strict equality (1 == 1.0, True never 1).
        if "enum" in node:
            members = [m for m in node["enum"] if kind_of(type_name, m)]  # type: ignore[attr-defined]
            out.append(f"{pad}if {var} not in {self.src.members(members)}: {fail}")
        if "const" in node:
            const = node["const"]
            if kind_of(type_name, const):
                out.append(f"{pad}if {var} != {self.src.const(const)}: {fail}")
            else:
                out.append(f"{pad}{fail}")
        out.extend(f"{pad}if not {test}: {fail}" for test in bound_tests(node, var))

    def _table(
        self, node: dict[str, object], var: str, out: list[str], pad: str, fail: str
    ) -> None:
        """A wide object, checked from a table: each key of the value looks up its check."""
        src = self.src
        properties: dict[str, dict[str, object]] = node.get("properties") or {}  # type: ignore[assignment]
        required: list[str] = node.get("required") or []  # type: ignore[assignment]
        if required:
            out.append(f"{pad}if not {var}.keys() >= {src.const(frozenset(required))}: {fail}")
        table = src.table({key: self.function(child) for key, child in properties.items()})
        key, child, check = src.name("k"), src.name("u"), src.name("f")
        out.append(f"{pad}for {key}, {child} in {var}.items():")
        out.append(f"{pad}    if type({key}) is not str: {fail}")
        out.append(f"{pad}    {check} = {table}.get({key})")
        out.append(f"{pad}    if {check} is None:")
        if node.get("additionalProperties") is False:
            out.append(f"{pad}        {fail}")
        else:
            out.append(f"{pad}        if not _lossless({child}): {fail}")
        out.append(f"{pad}    elif not {check}({child}): {fail}")

    def _object(
        self,
        node: dict[str, object],
        var: str,
        out: list[str],
        depth: int,
        fail: str,
        direct: bool,
        calls: bool,
    ) -> None:
        pad = "    " * depth
        src = self.src
        out.append(f"{pad}if type({var}) is not dict: {fail}")
        out.extend(f"{pad}if not {test}: {fail}" for test in bound_tests(node, var))
        required_list: list[str] = node.get("required") or []  # type: ignore[assignment]
        required = set(required_list)
        properties: dict[str, dict[str, object]] = node.get("properties") or {}  # type: ignore[assignment]
        if len(properties) > TABLE_WIDTH or len(required_list) > TABLE_WIDTH:
            self._table(node, var, out, pad, fail)
            return
        for name in required_list:
            if not direct or name not in properties:
                out.append(f"{pad}if {src.const(name)} not in {var}: {fail}")
        closed = node.get("additionalProperties") is False and bool(properties)
        # An object counts the declared properties it holds; with every key an exact ``str``
        # (checked last), "no undeclared key" is "as many keys as declared ones found", which
        # saves a set lookup per key (open: and the lossless test of undeclared values is only
        # needed when the counts differ). Required declared ones are known present. An open
        # object with one declared property is not counted: it would save one lookup at most.
        counted = closed or len(properties) > 1
        present = len(required & properties.keys())
        if present == len(properties):
            count = repr(present)  # every declared property is required: a constant count
        else:
            count = src.name("c")
            if counted:
                out.append(f"{pad}{count} = {present}")
        for key in sorted(properties, key=lambda k: _cost(properties[k])):
            # Validity does not depend on the order of checks; a required property is read
            # directly (known present, or a KeyError that the enclosing handler treats as a
            # failure); an optional one is read only after ``in`` found it.
            item, name = src.name("p"), src.const(key)
            if key in required:
                out.append(f"{pad}{item} = {var}[{name}]")
                self.child(properties[key], item, out, depth, fail, direct=direct, calls=calls)
            else:
                out.append(f"{pad}if {name} in {var}:")
                if counted:
                    out.append(f"{pad}    {count} += 1")
                out.append(f"{pad}    {item} = {var}[{name}]")
                self.child(properties[key], item, out, depth + 1, fail, direct=direct, calls=calls)
        declared = literal_set(properties)
        key = src.name("k")
        if node.get("additionalProperties") is False and not properties:
            # Every key of a closed object without properties is a violation.
            out.append(f"{pad}if {var}: {fail}")
        elif closed:
            out.append(f"{pad}if len({var}) != {count}: {fail}")
            _exact_keys(var, key, out, pad, fail, len(properties))
        elif not properties:
            # Open object with nothing declared: every key and value is covered by no node.
            out.append(f"{pad}if not _lossless({var}): {fail}")
        else:
            # Open object: undeclared values are covered by no node, so they need the lossless
            # check themselves (see the invariant in walker.py).
            undeclared = src.name("u")
            inner = pad
            if counted:
                out.append(f"{pad}if len({var}) == {count}:")
                _exact_keys(var, key, out, pad + "    ", fail, len(properties))
                out.append(f"{pad}else:")
                inner = pad + "    "
            out.append(f"{inner}for {key}, {undeclared} in {var}.items():")
            out.append(
                f"{inner}    if type({key}) is not str or "
                f"({key} not in {declared} and not _lossless({undeclared})): {fail}"
            )
