"""The code generator behind ``compile_validator``: Python source specialised to one schema.

For an asserted schema, :func:`generate` emits two kinds of functions:

* check-only code (:class:`_ValidGen`): straight-line checks, no message building, no path
  strings; a failing check raises ``_Invalid`` (or returns ``False``);
* collector code (:class:`_CollectGen`): every violation, in the generic walker's order and
  wording, for the node whose check failed.

The generated text refers to runtime helpers by name (``_lossless``, ``_copysign``, ``_Invalid``,
``_walk``) and to non-literal constants through the returned namespace; :mod:`.compiled` supplies
the helpers, compiles the text and owns the caches. Generation walks the schema only; it never
sees a value. Functions are split well before CPython's static block-nesting limit, and a wide
object is checked from tables (constants, not source), so the text stays linear and small.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import attrs

from .._json import MAX_FINITE_JSON_INT, js_json
from .walker import ONE_OF_MISMATCH

__all__ = ["SCALAR_KINDS", "GeneratedSource", "generate"]

#: Open a new generated function once this many blocks are nested (CPython's static limit is 20).
_MAX_BLOCK_DEPTH: Final = 14
#: A container whose subtree has more nodes than this is checked by a call to its own check-only
#: function where code is generated for it more than once (inside another node's function, or
#: in collector code); smaller ones are inlined. So every node's code is emitted a bounded
#: number of times and the generated text is linear in the schema's nodes, not nodes × depth.
_INLINE_NODES: Final = 24
#: Objects with more properties (or required names) than this are checked from tables instead
#: of code per property: a dict from each key to the check function of its schema, one function
#: per distinct scalar schema (see :func:`_leaf_key`). So a wide object costs a table entry per
#: property, not lines of source: ``compile()`` time stays small and linear.
_TABLE: Final = 200
#: A path with this many key/index segments is bound to a variable (collector code only), so a
#: message expression never grows with the depth.
_MAX_SEGMENTS: Final = 8

#: The Python types a scalar schema type can match (enum/const members of other types never can).
SCALAR_KINDS: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _kind_of(type_name: str, value: object) -> bool:
    """Whether an enum/const member can ever equal a value that passed ``type_name``'s check."""
    return type(value) in SCALAR_KINDS[type_name]


@attrs.frozen
class GeneratedSource:
    """The generated module for one schema.

    Attributes:
        text: The Python source of every generated function.
        entry: The name of the ``(value, path) -> list[str]`` entry function.
        constants: Names the text refers to that are not literals (non-string enum members).
    """

    text: str
    entry: str
    constants: dict[str, object]


def generate(schema: dict[str, object]) -> GeneratedSource:
    """Generate the specialised checker source for an asserted ``schema``."""
    source = _Source(schema)
    entry = _CollectGen(source, _ValidGen(source)).root(schema)
    return GeneratedSource(
        "\n".join(["\n".join(fn) for fn in source.functions] + source.trailer),
        entry,
        source.namespace,
    )


#: Unions with more branches than this count their matches in a loop over a tuple of branch
#: functions: one long ``+`` expression makes ``compile()`` recurse once per branch.
_INLINE_UNION: Final = 16


def _union_sum(functions: list[str], var: str) -> str:
    """``f1(v) + f2(v) + ...``, always an ``int`` (a single ``bool`` is counted as 0 or 1)."""
    return " + ".join(["0", *(f"{fn}({var})" for fn in functions)])


def _literal_set(keys: Iterable[str]) -> str:
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


def _leaf_key(node: dict[str, object]) -> object:
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
    if "enum" not in node and "const" not in node:
        return type_name  # the common leaf: its type alone (no allocation)
    enum = node.get("enum")
    members = None if enum is None else tuple(map(_member_key, enum))  # type: ignore[call-overload]
    const = _member_key(node["const"]) if "const" in node else None
    return (type_name, members, "const" in node, const)


class _Source:
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
            return _literal_set(values)  # type: ignore[arg-type]
        return self.const(frozenset(values))


# The bound as an int literal (a code constant): an int compares with an int faster than with a
# float (int-to-float comparison takes the reflected, slower path), and the tested values are ints.
_MAX_LITERAL: Final = repr(MAX_FINITE_JSON_INT)


def _number_test(var: str, integer: bool) -> str:
    """An expression true iff ``var`` passes the number (or integer) type check (``_t`` is its type)."""
    not_negative_zero = f"not ({var} == 0.0 and _copysign(1.0, {var}) < 0.0)"
    finite_float = f"{var}.is_integer()" if integer else f"{var} - {var} == 0.0"
    return (
        f"(_t is int and -{_MAX_LITERAL} <= {var} <= {_MAX_LITERAL}"
        f" or _t is float and {finite_float} and {not_negative_zero})"
    )


def _scalar_test(type_name: str, var: str) -> str:
    if type_name == "string":
        return f"type({var}) is str"
    if type_name == "boolean":
        return f"type({var}) is bool"
    if type_name == "null":
        return f"{var} is None"
    return _number_test(var, type_name == "integer")


def _untyped_items(node: dict[str, object]) -> bool:
    """An array whose elements only need the lossless check (no ``items`` or an untyped one)."""
    items = node.get("items")
    return items is None or (type(items) is dict and "oneOf" not in items and "type" not in items)


class _ValidGen:
    """Emits check-only code: no messages, no paths; a failing check runs ``fail``.

    ``direct`` code runs inside a ``try`` whose handler redoes the node with collector code, so
    it may read a required property by subscript (a ``KeyError`` is just another failure).
    """

    def __init__(self, source: _Source) -> None:
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
        leaf = _leaf_key(node)
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
        if calls and _is_container(node) and self.src.sizes[id(node)] > _INLINE_NODES:
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
            branches = [self.function(branch) for branch in node["oneOf"]]  # type: ignore[attr-defined]
            if len(branches) > _INLINE_UNION:
                out.append(f"{pad}if not _one({self.src.union(branches)}, {var}): {fail}")
                return
            out.append(f"{pad}if {_union_sum(branches, var)} != 1: {fail}")
            return
        if "type" not in node:
            out.append(f"{pad}if not _lossless({var}): {fail}")
            return
        type_name: str = node["type"]  # type: ignore[assignment]
        if type_name in ("object", "array") and depth > _MAX_BLOCK_DEPTH:
            out.append(f"{pad}if not {self.function(node)}({var}): {fail}")
            return
        if type_name == "object":
            self._object(node, var, out, depth, fail, direct, calls)
        elif type_name == "array":
            out.append(f"{pad}if type({var}) is not list: {fail}")
            if _untyped_items(node):
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
        out.append(f"{pad}if not {_scalar_test(type_name, var)}: {fail}")
        # After the type check the value is an exact builtin scalar of the declared kind; only
        # enum members of that kind can equal it, and among those, set membership and ``==``
        # are JavaScript's SameValueZero / strict equality (1 == 1.0, True never 1).
        if "enum" in node:
            members = [m for m in node["enum"] if _kind_of(type_name, m)]  # type: ignore[attr-defined]
            out.append(f"{pad}if {var} not in {self.src.members(members)}: {fail}")
        if "const" in node:
            const = node["const"]
            if _kind_of(type_name, const):
                out.append(f"{pad}if {var} != {self.src.const(const)}: {fail}")
            else:
                out.append(f"{pad}{fail}")

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
        required_list: list[str] = node.get("required") or []  # type: ignore[assignment]
        required = set(required_list)
        properties: dict[str, dict[str, object]] = node.get("properties") or {}  # type: ignore[assignment]
        if len(properties) > _TABLE or len(required_list) > _TABLE:
            self._table(node, var, out, pad, fail)
            return
        for name in required_list:
            if not direct or name not in properties:
                out.append(f"{pad}if {src.const(name)} not in {var}: {fail}")
        closed = node.get("additionalProperties") is False and bool(properties)
        # A closed object counts the declared properties it holds; with every key an exact
        # ``str`` (checked last), "no undeclared key" is "as many keys as declared ones found",
        # which saves a set lookup per key. Required declared ones are known present.
        count = src.name("c")
        if closed:
            out.append(f"{pad}{count} = {len(set(required) & properties.keys())}")
        for key in sorted(properties, key=lambda k: _cost(properties[k])):
            # Validity does not depend on the order of checks; a required property is read
            # directly (known present, or a KeyError that the enclosing handler treats as a
            # failure); ``in`` + ``[]`` beats ``.get`` with a sentinel.
            item, name = src.name("p"), src.const(key)
            if key in required:
                out.append(f"{pad}{item} = {var}[{name}]")
                self.child(properties[key], item, out, depth, fail, direct=direct, calls=calls)
            else:
                out.append(f"{pad}if {name} in {var}:")
                if closed:
                    out.append(f"{pad}    {count} += 1")
                out.append(f"{pad}    {item} = {var}[{name}]")
                self.child(properties[key], item, out, depth + 1, fail, direct=direct, calls=calls)
        declared = _literal_set(properties)
        key = src.name("k")
        if node.get("additionalProperties") is False and not properties:
            # Every key of a closed object without properties is a violation.
            out.append(f"{pad}if {var}: {fail}")
        elif closed:
            out.append(f"{pad}if len({var}) != {count}: {fail}")
            out.append(f"{pad}for {key} in {var}:")
            out.append(f"{pad}    if type({key}) is not str: {fail}")
        elif not properties:
            # Open object with nothing declared: every key and value is covered by no node.
            out.append(f"{pad}if not _lossless({var}): {fail}")
        else:
            # Open object: undeclared values are covered by no node, so they need the lossless
            # check themselves (see the invariant in walker.py).
            undeclared = src.name("u")
            out.append(f"{pad}for {key}, {undeclared} in {var}.items():")
            out.append(
                f"{pad}    if type({key}) is not str or "
                f"({key} not in {declared} and not _lossless({undeclared})): {fail}"
            )


class _PathCode:
    """A path as code (the generated twin of :data:`.paths.Path`), rendered only inside the
    message-building branches.

    ``base`` is a variable holding a runtime path string (``path``, or a pinned one), which may
    be ``""`` when ``base_may_be_empty``; ``segments`` are the keys (``("key", name)``) and
    element indices (``("index", variable)``) below it, rendered as one flat concatenation with
    the literal pieces merged. Only a key right below a possibly-empty base needs the bare-key
    rule; ``maybe_empty`` (the whole path can still be ``""``) needs ``arguments`` as fallback
    and is bound to a variable first (see ``_CollectGen.pinned``). ``names`` are the variables
    the rendered code reads: a generated function taking them as parameters can render it.
    """

    __slots__ = ("base", "base_may_be_empty", "segments")

    def __init__(
        self, base: str, base_may_be_empty: bool, segments: tuple[tuple[str, str], ...] = ()
    ) -> None:
        self.base = base
        self.base_may_be_empty = base_may_be_empty
        self.segments = segments

    @property
    def maybe_empty(self) -> bool:
        return self.base_may_be_empty and all(
            kind == "key" and text == "" for kind, text in self.segments
        )

    @property
    def names(self) -> tuple[str, ...]:
        return (self.base, *(text for kind, text in self.segments if kind == "index"))

    def _concat(self, head: list[str], segments: tuple[tuple[str, str], ...], dot: bool) -> str:
        parts = list(head)
        literal = ""
        for kind, text in segments:
            if kind == "key":
                literal += ("." if dot else "") + text
            else:
                parts += [repr(literal + "["), f"str({text})"]
                literal = "]"
            dot = True
        if literal:
            parts.append(repr(literal))
        return " + ".join(parts) if parts else "''"

    @property
    def code(self) -> str:
        if not self.segments:
            return self.base
        plain = self._concat([self.base], self.segments, True)
        if self.base_may_be_empty and self.segments[0][0] == "key":
            bare = self._concat([], self.segments, False)
            return f"({plain} if {self.base} else {bare})"
        return f"({plain})"

    def diagnostic(self) -> str:
        return f"({self.code} or 'arguments')" if self.maybe_empty else self.code

    def child(self, key: str) -> _PathCode:
        return _PathCode(self.base, self.base_may_be_empty, (*self.segments, ("key", key)))

    def dynamic_child(self, key_var: str) -> str:
        if self.maybe_empty:
            return f"({self.code} + '.' + {key_var} if {self.code} else {key_var})"
        return f"({self.code} + '.' + {key_var})"

    def item(self, index_var: str) -> _PathCode:
        return _PathCode(self.base, self.base_may_be_empty, (*self.segments, ("index", index_var)))


def _message(path: _PathCode, suffix: str) -> str:
    """Code appending ``"<diagnostic path>" <suffix>`` to the violation list ``o``."""
    return f"o.append('\"' + {path.diagnostic()} + {suffix!r})"


_SCALAR_SUFFIX: Final = {
    "string": '" must be a string',
    "integer": '" must be an integer',
    "boolean": '" must be a boolean',
    "null": '" must be null',
}


class _CollectGen:
    """Emits violation-collecting code mirroring the generic walker, node by node.

    It also is the hot path: a bounded container node (see :func:`_unbounded`) first runs inline
    check-only code in a ``try`` and only on failure (``_Invalid``, or a ``KeyError`` of a direct
    read) its collector code, so valid parts cost what the check-only code costs and an invalid
    part is walked at most twice; unbounded nodes (arrays of containers and their ancestors) are
    walked by collector code directly, so a late failure never makes a large value walked twice.
    """

    def __init__(self, source: _Source, valid: _ValidGen) -> None:
        self.src = source
        self.valid = valid
        self._shared: dict[object, str] = {}

    def function(self, node: dict[str, object], path: _PathCode) -> str:
        """A ``(v, o, *path.names) -> None`` function appending ``node``'s violations to ``o``.

        The caller passes the path's variables, not the path: it is only built on a violation.
        """
        name = self.src.name("_collect")
        body: list[str] = []
        self.emit(node, "v", path, body, 1)
        params = ", ".join(("v", "o", *path.names))
        self.src.functions.append([f"def {name}({params}):", *body, "    return None"])
        return name

    def shared(self, node: dict[str, object]) -> str:
        """A ``(v, o, path) -> None`` collector taking the rendered path, one per distinct scalar
        schema (see :func:`_leaf_key`), else one per node."""
        leaf = _leaf_key(node)
        key = ("leaf", leaf) if leaf is not None else ("node", id(node))
        known = self._shared.get(key)
        if known is None:
            known = self._shared[key] = self.function(node, _PathCode("path", True))
        return known

    def _table(
        self, node: dict[str, object], var: str, path: _PathCode, out: list[str], inner: str
    ) -> None:
        """A wide object's required names and declared properties, collected from tables in the
        walker's order: required names in order, then the declared properties present, in
        declaration order."""
        src = self.src
        required: list[str] = node.get("required") or []  # type: ignore[assignment]
        properties: dict[str, dict[str, object]] = node.get("properties") or {}  # type: ignore[assignment]
        base = src.name("q")
        out.append(f"{inner}{base} = {path.code}")
        parent = _PathCode(base, path.maybe_empty)
        name = src.name("r")
        if required:
            out.append(f"{inner}for {name} in {src.const(tuple(required))}:")
            out.append(f"{inner}    if {name} not in {var}:")
            out.append(
                f"{inner}        o.append('missing required property \"' + "
                f"{parent.dynamic_child(name)} + '\"')"
            )
        if not properties:
            return
        keys = src.const(tuple(properties))
        index = src.const({key: position for position, key in enumerate(properties)})
        collectors = src.function_list([self.shared(child) for child in properties.values()])
        hits, odd, key, at = src.name("h"), src.name("b"), src.name("k"), src.name("i")
        # The declared keys present: found from the value's keys (usually far fewer) when they
        # are all exact ``str``; else looked up one by one, as the walker does.
        out.append(f"{inner}{hits} = []")
        out.append(f"{inner}{odd} = False")
        out.append(f"{inner}for {key} in {var}:")
        out.append(f"{inner}    if type({key}) is not str:")
        out.append(f"{inner}        {odd} = True")
        out.append(f"{inner}    elif {key} in {index}:")
        out.append(f"{inner}        {hits}.append({index}[{key}])")
        out.append(f"{inner}if {odd}:")
        out.append(
            f"{inner}    {hits} = [{at} for {at}, {key} in enumerate({keys}) if {key} in {var}]"
        )
        out.append(f"{inner}else:")
        out.append(f"{inner}    {hits}.sort()")
        out.append(f"{inner}for {at} in {hits}:")
        out.append(f"{inner}    {key} = {keys}[{at}]")
        out.append(f"{inner}    {collectors}[{at}]({var}[{key}], o, {parent.dynamic_child(key)})")

    def root(self, node: dict[str, object]) -> str:
        """The entry point ``(v, path='value') -> list[str]``; hostile keys go to the walker.

        A bounded root runs check-only code first and calls the collector only when it fails
        (returning from the check is cheaper than raising ``_Invalid`` for a small value).
        """
        name = self.src.name("_collect")
        body: list[str] = []
        bounded = "oneOf" not in node and id(node) not in self.src.unbounded
        if bounded:
            self.collect(node, "v", _PathCode("path", True), body, 2)
        else:
            self.emit(node, "v", _PathCode("path", True), body, 2)
        self.src.functions.append(
            [
                f"def {name}(v, path):",
                "    o = []",
                "    try:",
                *body,
                "    except Exception:",
                "        return _walk(v, path)",
                "    return o",
            ]
        )
        if not bounded:
            return name
        entry = self.src.name("_check")
        check: list[str] = []
        self.valid.emit(node, "v", check, 2, f"return {name}(v, path)", direct=True)
        self.src.functions.append(
            [
                f"def {entry}(v, path='value'):",
                "    try:",
                *check,
                "    except Exception:",
                f"        return {name}(v, path)",
                "    return []",
            ]
        )
        return entry

    def pinned(self, path: _PathCode, out: list[str], pad: str) -> _PathCode:
        """A possibly-empty path is bound to a variable before it is used more than once."""
        if not path.segments or not (path.maybe_empty or len(path.segments) >= _MAX_SEGMENTS):
            return path
        bound = self.src.name("q")
        out.append(f"{pad}{bound} = {path.code}")
        return _PathCode(bound, path.maybe_empty)

    def emit(
        self, node: dict[str, object], var: str, path: _PathCode, out: list[str], depth: int
    ) -> None:
        pad = "    " * depth
        type_name = node.get("type")
        container = "oneOf" not in node and type_name in ("object", "array")
        if container and depth > _MAX_BLOCK_DEPTH:
            args = ", ".join((var, "o", *path.names))
            out.append(f"{pad}{self.function(node, path)}({args})")
            return
        if container and id(node) not in self.src.unbounded:
            if self.src.sizes[id(node)] > _INLINE_NODES:
                # Its check-only function (one per node); a hostile key raising in it reaches
                # the root's handler, which asks the walker.
                out.append(f"{pad}if not {self.valid.function(node)}({var}):")
                self.collect(node, var, path, out, depth + 1)
                return
            out.append(f"{pad}try:")
            self.valid.emit(node, var, out, depth + 1, "raise _Invalid", direct=True)
            out.append(f"{pad}except Exception:")
            self.collect(node, var, path, out, depth + 1)
            return
        self.collect(node, var, path, out, depth)

    def collect(
        self, node: dict[str, object], var: str, path: _PathCode, out: list[str], depth: int
    ) -> None:
        """The collector code proper of one node (children go through :meth:`emit`)."""
        pad = "    " * depth
        src = self.src
        path = self.pinned(path, out, pad)
        if "oneOf" in node:
            branches = [self.valid.function(branch) for branch in node["oneOf"]]  # type: ignore[attr-defined]
            count = src.name("m")
            if len(branches) > _INLINE_UNION:
                out.append(f"{pad}{count} = _count({src.union(branches)}, {var})")
            else:
                out.append(f"{pad}{count} = {_union_sum(branches, var)}")
            out.append(f"{pad}if {count} != 1:")
            # Check-only branches stop at their first failure, where the walker goes on looking
            # names up in dicts; only a key of an odd type can make such a lookup raise, and the
            # walker's answer is then its own: hand the whole value over (see ``compiled``).
            out.append(
                f"{pad}    if (type({var}) is dict or type({var}) is list) and _odd_keys({var}):"
            )
            out.append(f"{pad}        raise _Invalid")
            out.append(
                f"{pad}    o.append('\"' + {path.diagnostic()} + {ONE_OF_MISMATCH!r} + "
                f"str({count}) + ')')"
            )
            return
        if "type" not in node:
            out.append(f"{pad}if not _lossless({var}):")
            out.append(pad + "    " + _message(path, '" must be a lossless JSON value'))
            return
        type_name: str = node["type"]  # type: ignore[assignment]
        if type_name == "object":
            self._object(node, var, path, out, depth)
        elif type_name == "array":
            self._array(node, var, path, out, depth)
        else:
            self._scalar(node, type_name, var, path, out, pad)

    def _array(
        self, node: dict[str, object], var: str, path: _PathCode, out: list[str], depth: int
    ) -> None:
        pad = "    " * depth
        out.append(f"{pad}if type({var}) is not list:")
        out.append(pad + "    " + _message(path, '" must be an array'))
        if "items" not in node:
            out.append(f"{pad}elif not _lossless({var}):")
            out.append(pad + "    " + _message(path, '" must be a dense lossless JSON array'))
            return
        items: dict[str, object] = node["items"]  # type: ignore[assignment]
        index, item = self.src.name("i"), self.src.name("x")
        if _untyped_items(node):
            # Elements only need the lossless check: one pass over the whole array first.
            out.append(f"{pad}elif not _lossless({var}):")
        else:
            out.append(f"{pad}else:")
        out.append(f"{pad}    for {index}, {item} in enumerate({var}):")
        self.emit(items, item, path.item(index), out, depth + 2)

    def _scalar(
        self,
        node: dict[str, object],
        type_name: str,
        var: str,
        path: _PathCode,
        out: list[str],
        pad: str,
    ) -> None:
        src = self.src
        if type_name in ("number", "integer"):
            out.append(f"{pad}_t = type({var})")
        out.append(f"{pad}if not {_scalar_test(type_name, var)}:")
        if type_name == "number":
            out.append(f"{pad}    if _t is int or _t is float:")
            out.append(pad + "        " + _message(path, '" must be a finite JSON number'))
            out.append(f"{pad}    else:")
            out.append(pad + "        " + _message(path, '" must be a number'))
        else:
            out.append(pad + "    " + _message(path, _SCALAR_SUFFIX[type_name]))
        if "enum" in node:
            enum = node["enum"]
            members = [m for m in enum if _kind_of(type_name, m)]  # type: ignore[attr-defined]
            out.append(f"{pad}elif {var} not in {src.members(members)}:")
            out.append(pad + "    " + _message(path, '" must be one of ' + js_json(enum)))
        if "const" in node:
            const = node["const"]
            if _kind_of(type_name, const):
                out.append(f"{pad}elif {var} != {src.const(const)}:")
            else:
                out.append(f"{pad}else:")
            out.append(pad + "    " + _message(path, '" must be ' + js_json(const)))

    def _object(
        self, node: dict[str, object], var: str, path: _PathCode, out: list[str], depth: int
    ) -> None:
        pad = "    " * depth
        inner = pad + "    "
        src = self.src
        out.append(f"{pad}if type({var}) is not dict:")
        out.append(pad + "    " + _message(path, '" must be an object'))
        out.append(f"{pad}else:")
        before = src.name("n")
        out.append(f"{inner}{before} = len(o)")
        required: list[str] = node.get("required") or []  # type: ignore[assignment]
        properties: dict[str, dict[str, object]] = node.get("properties") or {}  # type: ignore[assignment]
        if len(required) > _TABLE or len(properties) > _TABLE:
            self._table(node, var, path, out, inner)
        else:
            for name in required:
                out.append(f"{inner}if {src.const(name)} not in {var}:")
                out.append(
                    f"{inner}    o.append('missing required property \"' + {path.child(name).code}"
                    " + '\"')"
                )
            for key in properties:
                item, name = src.name("p"), src.const(key)
                out.append(f"{inner}if {name} in {var}:")
                out.append(f"{inner}    {item} = {var}[{name}]")
                self.emit(properties[key], item, path.child(key), out, depth + 2)
        declared = (
            src.const(frozenset(properties))
            if len(properties) > _TABLE
            else _literal_set(properties)
        )
        key, child_value = src.name("k"), src.name("u")
        if node.get("additionalProperties") is False:
            # With every undeclared ``str`` key reported, the lossless check of a closed object
            # that reported nothing reduces to "no non-``str`` key": one pass does both.
            odd = src.name("b")
            out.append(f"{inner}{odd} = False")
            out.append(f"{inner}for {key} in {var}:")
            out.append(f"{inner}    if type({key}) is not str:")
            out.append(f"{inner}        {odd} = True")
            out.append(f"{inner}    elif {key} not in {declared}:")
            out.append(
                f"{inner}        o.append('\"' + {path.dynamic_child(key)}"
                " + '\" is not a declared property (additionalProperties: false)')"
            )
            out.append(f"{inner}if {odd} and len(o) == {before}:")
            out.append(inner + "    " + _message(path, '" must be a lossless JSON object'))
            return
        out.append(f"{inner}if len(o) == {before}:")
        if not properties:
            out.append(f"{inner}    if not _lossless({var}):")
            out.append(inner + "        " + _message(path, '" must be a lossless JSON object'))
            return
        out.append(f"{inner}    for {key}, {child_value} in {var}.items():")
        out.append(
            f"{inner}        if type({key}) is not str or "
            f"({key} not in {declared} and not _lossless({child_value})):"
        )
        out.append(inner + "            " + _message(path, '" must be a lossless JSON object'))
        out.append(f"{inner}            break")
