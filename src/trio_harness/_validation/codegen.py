"""The code generator behind ``compile_validator``: Python source specialised to one schema.

For an asserted schema, :func:`generate` emits two kinds of functions:

* check-only code (:class:`~.codegen_check.ValidGen`, with the plan both share): straight-line
  checks, no message building, no path strings; a failing check raises ``_Invalid`` (or returns
  ``False``);
* collector code (:class:`_CollectGen`): every violation, in the generic walker's order and
  wording, for the node whose check failed.

The generated text refers to runtime helpers by name (``_lossless``, ``_copysign``, ``_Invalid``,
``_walk``) and to non-literal constants through the returned namespace; :mod:`.compiled` supplies
the helpers, compiles the text and owns the caches. Generation walks the schema only; it never
sees a value. Functions are split well before CPython's static block-nesting limit, and a wide
object is checked from tables (constants, not source), so the text stays linear and small.
"""

from __future__ import annotations

from typing import Final

import attrs

from .._json import js_json
from .codegen_check import (
    INLINE_NODES,
    INLINE_UNION,
    MAX_BLOCK_DEPTH,
    TABLE_WIDTH,
    Source,
    ValidGen,
    kind_of,
    leaf_key,
    literal_set,
    scalar_test,
    union_sum,
    untyped_items,
)
from .rules import Literal, type_test, type_violation_code, violation_code

__all__ = ["GeneratedSource", "generate", "generate_check"]

#: A path with this many key/index segments is bound to a variable (collector code only), so a
#: message expression never grows with the depth.
_MAX_SEGMENTS: Final = 8


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
    source = Source(schema)
    entry = _CollectGen(source, ValidGen(source)).root(schema)
    return GeneratedSource(
        "\n".join(["\n".join(fn) for fn in source.functions] + source.trailer),
        entry,
        source.namespace,
    )


def generate_check(schema: dict[str, object], *, entry: bool = False) -> GeneratedSource:
    """Generate only check-only code for ``schema``: the fast path of the extended vocabulary,
    whose inline bounds it tests (see :func:`~.codegen_check.bound_tests`); the caller collects
    violations its own way.

    The entry is a ``(value) -> bool`` function (raises only on hostile keys), or with
    ``entry`` a ``(value, path='value') -> list[str]`` one: ``[]`` when the inline check passes,
    else (or when it raises) what ``_walk(value, path)`` returns.
    """
    source = Source(schema)
    valid = ValidGen(source)
    if entry:
        name = source.name("_check")
        check: list[str] = []
        valid.emit(schema, "v", check, 2, "return _walk(v, path)", direct=True)
        source.functions.append(
            [
                f"def {name}(v, path='value'):",
                "    try:",
                *check,
                "    except Exception:",
                "        return _walk(v, path)",
                "    return []",
            ]
        )
    else:
        name = valid.function(schema)
    return GeneratedSource(
        "\n".join(["\n".join(fn) for fn in source.functions] + source.trailer),
        name,
        source.namespace,
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


def _report(name: str, **holes: str) -> str:
    """Code appending violation ``name`` of :data:`~.rules.MESSAGES` to the violation list ``o``."""
    return f"o.append({violation_code(name, **holes)})"


class _CollectGen:
    """Emits violation-collecting code mirroring the generic walker, node by node.

    Invariant: a value is walked at most twice, and a valid part once, by check-only code. A
    bounded container node (see :func:`~.codegen_check._unbounded`) first runs inline
    check-only code in a ``try`` and only on failure (``_Invalid``, or a ``KeyError`` of a
    direct read) its collector code; below the root (which is checked whole first, see
    :meth:`root`), unbounded nodes (arrays of containers and their ancestors) are walked by
    collector code directly: the root's check up to its first failure, then the collector.
    """

    def __init__(self, source: Source, valid: ValidGen) -> None:
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
        schema (see :func:`leaf_key`), else one per node."""
        leaf = leaf_key(node)
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
                f"{inner}        {_report('missing_required', child=parent.dynamic_child(name))}"
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

        A root that is not a union runs check-only code first (the whole tree inline, also an
        unbounded one) and calls the collector only when it fails (by returning the collector's
        answer, not by raising ``_Invalid``): a valid value is walked once, by the check. An
        invalid one is walked by the check up to its first failure (bounded checks come first,
        see ``_cost``) and then by the collector, which walks unbounded nodes directly.
        """
        name = self.src.name("_collect")
        body: list[str] = []
        bounded = "oneOf" not in node
        self.collect(node, "v", _PathCode("path", True), body, 2)
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
        if container and depth > MAX_BLOCK_DEPTH:
            args = ", ".join((var, "o", *path.names))
            out.append(f"{pad}{self.function(node, path)}({args})")
            return
        if container and id(node) not in self.src.unbounded:
            if self.src.sizes[id(node)] > INLINE_NODES:
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
            if len(branches) > INLINE_UNION:
                out.append(f"{pad}{count} = _count({src.union(branches)}, {var})")
            else:
                out.append(f"{pad}{count} = {union_sum(branches, var)}")
            out.append(f"{pad}if {count} != 1:")
            # Check-only branches stop at their first failure, where the walker goes on looking
            # names up in dicts; only a key of an odd type can make such a lookup raise, and the
            # walker's answer is then its own: hand the whole value over (see ``compiled``).
            out.append(
                f"{pad}    if (type({var}) is dict or type({var}) is list) and _odd_keys({var}):"
            )
            out.append(f"{pad}        raise _Invalid")
            out.append(
                f"{pad}    {_report('one_of', path=path.diagnostic(), matched=f'str({count})')}"
            )
            return
        if "type" not in node:
            out.append(f"{pad}if not _lossless({var}):")
            out.append(f"{pad}    {_report('lossless_value', path=path.diagnostic())}")
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
        out.append(f"{pad}if not {type_test('array', var)}:")
        out.append(f"{pad}    {_report('not_array', path=path.diagnostic())}")
        if "items" not in node:
            out.append(f"{pad}elif not _lossless({var}):")
            out.append(f"{pad}    {_report('lossless_array', path=path.diagnostic())}")
            return
        items: dict[str, object] = node["items"]  # type: ignore[assignment]
        index, item = self.src.name("i"), self.src.name("x")
        if untyped_items(node):
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
        out.append(f"{pad}if not {scalar_test(type_name, var)}:")
        cases = type_violation_code(type_name, var, "_t", path.diagnostic())
        if len(cases) == 1:
            out.append(f"{pad}    o.append({cases[0][1]})")
        else:
            for index, (test, message) in enumerate(cases):
                keyword = "else" if not test else ("elif " if index else "if ") + test
                out.append(f"{pad}    {keyword}:")
                out.append(f"{pad}        o.append({message})")
        if "enum" in node:
            enum = node["enum"]
            members = [m for m in enum if kind_of(type_name, m)]  # type: ignore[attr-defined]
            out.append(f"{pad}elif {var} not in {src.members(members)}:")
            shown = Literal(js_json(enum))
            out.append(f"{pad}    {_report('not_in_enum', path=path.diagnostic(), enum=shown)}")
        if "const" in node:
            const = node["const"]
            if kind_of(type_name, const):
                out.append(f"{pad}elif {var} != {src.const(const)}:")
            else:
                out.append(f"{pad}else:")
            shown = Literal(js_json(const))
            out.append(f"{pad}    {_report('not_const', path=path.diagnostic(), const=shown)}")

    def _object(
        self, node: dict[str, object], var: str, path: _PathCode, out: list[str], depth: int
    ) -> None:
        pad = "    " * depth
        inner = pad + "    "
        src = self.src
        out.append(f"{pad}if not {type_test('object', var)}:")
        out.append(f"{pad}    {_report('not_object', path=path.diagnostic())}")
        out.append(f"{pad}else:")
        before = src.name("n")
        out.append(f"{inner}{before} = len(o)")
        required: list[str] = node.get("required") or []  # type: ignore[assignment]
        properties: dict[str, dict[str, object]] = node.get("properties") or {}  # type: ignore[assignment]
        if len(required) > TABLE_WIDTH or len(properties) > TABLE_WIDTH:
            self._table(node, var, path, out, inner)
        else:
            for name in required:
                out.append(f"{inner}if {src.const(name)} not in {var}:")
                out.append(f"{inner}    {_report('missing_required', child=path.child(name).code)}")
            for key in properties:
                item, name = src.name("p"), src.const(key)
                out.append(f"{inner}if {name} in {var}:")
                out.append(f"{inner}    {item} = {var}[{name}]")
                self.emit(properties[key], item, path.child(key), out, depth + 2)
        declared = (
            src.const(frozenset(properties))
            if len(properties) > TABLE_WIDTH
            else literal_set(properties)
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
            out.append(f"{inner}        {_report('undeclared', child=path.dynamic_child(key))}")
            out.append(f"{inner}if {odd} and len(o) == {before}:")
            out.append(f"{inner}    {_report('lossless_object', path=path.diagnostic())}")
            return
        out.append(f"{inner}if len(o) == {before}:")
        if not properties:
            out.append(f"{inner}    if not _lossless({var}):")
            out.append(f"{inner}        {_report('lossless_object', path=path.diagnostic())}")
            return
        out.append(f"{inner}    for {key}, {child_value} in {var}.items():")
        out.append(
            f"{inner}        if type({key}) is not str or "
            f"({key} not in {declared} and not _lossless({child_value})):"
        )
        out.append(f"{inner}            {_report('lossless_object', path=path.diagnostic())}")
        out.append(f"{inner}            break")
