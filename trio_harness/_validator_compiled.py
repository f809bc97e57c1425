"""``compile_validator``: per-schema specialised checkers for the hot path (every tool call).

The per-schema work is done once: the schema is asserted, then Python source specialised to it is
generated and compiled with ``compile()``. Two functions come out of it:

* ``is_valid(value) -> bool``: straight-line checks, no message building, no path strings;
* ``collect(value, path) -> list[str]``: every violation, in the generic walker's order and
  wording, used only when ``is_valid`` said no.

They are exact: ``is_valid(v)`` is true iff the generic walker returns ``[]``, and ``collect``
returns what the walker returns (both are tested against it on the upstream vectors and with
hypothesis). They rely on the invariant documented in :mod:`trio_harness._validator` (a passing
node has validated a lossless value), so only the parts of a value no typed node covers (undeclared
keys of open objects, untyped nodes, arrays without ``items``) get a lossless check.

Totality: generated code recurses at most once per schema level (functions are split well before
Python's static block-nesting limit), and schemas deeper than :data:`MAX_COMPILED_DEPTH`, schemas
that fail the assertion, and any exception raised while inspecting a value (hostile dict keys) are
handed to the generic iterative walker, which is total.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

from ._json import MAX_SAFE_JSON_INT, is_json_value, js_json
from ._validator import validate_json_schema_value

__all__ = ["MAX_COMPILED_DEPTH", "compile_validator"]

#: Schemas nested deeper than this are validated by the generic iterative walker.
MAX_COMPILED_DEPTH: Final = 100
#: Open a new generated function once this many blocks are nested (CPython's static limit is 20).
_MAX_BLOCK_DEPTH: Final = 8
#: How many compiled validators are kept per schema identity.
_CACHE_SIZE: Final = 1024

Validator = Callable[[object, str], list[str]]

_MISSING: Final = object()


_SCALAR_KINDS: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _compilable(schema: object) -> bool:
    """Whether the generated code can mirror the generic walker on ``schema``.

    True for every asserted schema within :data:`MAX_COMPILED_DEPTH`, and also for unasserted
    schemas whose walked parts are well formed (the walker ignores unknown or misplaced keywords,
    e.g. an untyped ``enum``). Anything else (unknown types, cycles, odd containers, excessive
    depth) is left to the generic walker. Iterative, with a depth cap, so it is total.
    """
    stack: list[tuple[object, int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_COMPILED_DEPTH or type(node) is not dict:
            return False
        if "oneOf" in node:
            branches = node["oneOf"]
            if type(branches) is not list:
                return False
            stack.extend((branch, depth + 1) for branch in branches)
            continue
        if "type" not in node:
            continue
        type_name = node["type"]
        if type(type_name) is not str:
            return False
        if type_name == "object":
            properties = node.get("properties")
            required = node.get("required")
            if properties is not None and type(properties) is not dict:
                return False
            if required is not None and (
                type(required) is not list or any(type(name) is not str for name in required)
            ):
                return False
            for key, child in (properties or {}).items():
                if type(key) is not str:
                    return False
                stack.append((child, depth + 1))
        elif type_name == "array":
            if "items" in node:
                stack.append((node["items"], depth + 1))
        elif type_name in _SCALAR_KINDS:
            if "enum" in node and type(node["enum"]) is not list:
                return False
        else:
            return False
    return True


def _kind_of(type_name: str, value: object) -> bool:
    """Whether an enum/const member can ever equal a value that passed ``type_name``'s check."""
    return type(value) in _SCALAR_KINDS[type_name]


class _Source:
    """Generated module text plus the constants it refers to by name."""

    def __init__(self) -> None:
        self.functions: list[list[str]] = []
        self.namespace: dict[str, object] = {
            "_MISSING": _MISSING,
            "_is_json": is_json_value,
            "_copysign": math.copysign,
            "_MAX": MAX_SAFE_JSON_INT,
        }
        self._counter = 0

    def name(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def const(self, value: object) -> str:
        name = self.name("_k")
        self.namespace[name] = value
        return name


def _number_test(var: str, integer: bool) -> str:
    """An expression true iff ``var`` passes the number (or integer) type check."""
    not_negative_zero = f"not ({var} == 0.0 and _copysign(1.0, {var}) < 0.0)"
    finite_float = f"{var}.is_integer()" if integer else f"{var} - {var} == 0.0"
    return (
        f"(_t is int and -_MAX <= {var} <= _MAX"
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


class _ValidGen:
    """Emits check-only code; a failing check runs the placeholder statement ``FAIL``."""

    def __init__(self, source: _Source) -> None:
        self.src = source

    def function(self, node: dict[str, object]) -> str:
        """A ``(v) -> bool`` function for ``node``; returns its name."""
        name = self.src.name("_valid")
        body: list[str] = []
        self.emit(node, "v", body, 1)
        lines = [f"def {name}(v):", *body, "    return True"]
        self.src.functions.append([line.replace("FAIL", "return False") for line in lines])
        return name

    def root(self, node: dict[str, object]) -> str:
        """The entry point ``(v, path) -> list``: ``[]`` when valid, else the slow path."""
        name = self.src.name("_check")
        body: list[str] = []
        self.emit(node, "v", body, 2)
        lines = [
            f"def {name}(v, path='value'):",
            "    try:",
            *body,
            "    except Exception:",
            "        return _slow(v, path)",
            "    return []",
        ]
        self.src.functions.append([line.replace("FAIL", "return _slow(v, path)") for line in lines])
        return name

    def emit(self, node: dict[str, object], var: str, out: list[str], depth: int) -> None:
        pad = "    " * depth
        src = self.src
        if "oneOf" in node:
            branches = [self.function(branch) for branch in node["oneOf"]]  # type: ignore[attr-defined]
            total = " + ".join(f"{fn}({var})" for fn in branches) or "0"
            out.append(f"{pad}if {total} != 1: FAIL")
            return
        if "type" not in node:
            out.append(f"{pad}if not _is_json({var}): FAIL")
            return
        type_name: str = node["type"]  # type: ignore[assignment]
        if type_name in ("object", "array") and depth > _MAX_BLOCK_DEPTH:
            out.append(f"{pad}if not {self.function(node)}({var}): FAIL")
            return
        if type_name == "object":
            self._object(node, var, out, depth)
        elif type_name == "array":
            out.append(f"{pad}if type({var}) is not list: FAIL")
            if "items" not in node:
                out.append(f"{pad}if not _is_json({var}): FAIL")
            else:
                item = src.name("x")
                out.append(f"{pad}for {item} in {var}:")
                self.emit(node["items"], item, out, depth + 1)  # type: ignore[arg-type]
        else:
            if type_name in ("number", "integer"):
                out.append(f"{pad}_t = type({var})")
            out.append(f"{pad}if not {_scalar_test(type_name, var)}: FAIL")
            # After the type check the value is an exact builtin scalar of the declared kind;
            # only enum members of that kind can equal it, and among those, set membership and
            # ``==`` are JavaScript's SameValueZero / strict equality (1 == 1.0, True never 1).
            if "enum" in node:
                members = [m for m in node["enum"] if _kind_of(type_name, m)]  # type: ignore[attr-defined]
                out.append(f"{pad}if {var} not in {src.const(frozenset(members))}: FAIL")
            if "const" in node:
                const = node["const"]
                if _kind_of(type_name, const):
                    out.append(f"{pad}if {var} != {src.const(const)}: FAIL")
                else:
                    out.append(f"{pad}FAIL")

    def _object(self, node: dict[str, object], var: str, out: list[str], depth: int) -> None:
        pad = "    " * depth
        src = self.src
        out.append(f"{pad}if type({var}) is not dict: FAIL")
        required: list[str] = node.get("required") or []  # type: ignore[assignment]
        for name in required:
            out.append(f"{pad}if {src.const(name)} not in {var}: FAIL")
        properties: dict[str, dict[str, object]] = node.get("properties") or {}  # type: ignore[assignment]
        for key, child in properties.items():
            # Validity does not depend on the order of checks, so a required property (known
            # present by now) is read directly; ``in`` + ``[]`` beats ``.get`` with a sentinel.
            item, name = src.name("p"), src.const(key)
            if key in required:
                out.append(f"{pad}{item} = {var}[{name}]")
                self.emit(child, item, out, depth)
            else:
                out.append(f"{pad}if {name} in {var}:")
                out.append(f"{pad}    {item} = {var}[{name}]")
                self.emit(child, item, out, depth + 1)
        declared = src.const(frozenset(properties))
        key = src.name("k")
        if node.get("additionalProperties") is False:
            out.append(f"{pad}for {key} in {var}:")
            out.append(f"{pad}    if type({key}) is not str or {key} not in {declared}: FAIL")
        else:
            # Open object: undeclared values are covered by no node, so they need the lossless
            # check themselves (see the invariant in _validator).
            undeclared = src.name("u")
            out.append(f"{pad}for {key}, {undeclared} in {var}.items():")
            out.append(f"{pad}    if type({key}) is not str: FAIL")
            out.append(f"{pad}    if {key} not in {declared} and not _is_json({undeclared}): FAIL")


def _is_name(expression: str) -> bool:
    return expression.isidentifier()


class _Path:
    """A path as a code expression, built only when a message needs it.

    ``maybe_empty`` is true while the path can still be the empty root (the root variable, or a
    chain of ``""`` keys below it); only such paths need the ``arguments`` fallback and the
    bare-key rule, and they are always simple variable names (see ``_CollectGen.pinned``).
    """

    __slots__ = ("code", "maybe_empty")

    def __init__(self, code: str, maybe_empty: bool) -> None:
        self.code = code
        self.maybe_empty = maybe_empty

    def diagnostic(self) -> str:
        return f"({self.code} or 'arguments')" if self.maybe_empty else self.code

    def child(self, key: str) -> _Path:
        if self.maybe_empty:
            return _Path(f"({self.code} + {'.' + key!r} if {self.code} else {key!r})", key == "")
        return _Path(f"({self.code} + {'.' + key!r})", False)

    def dynamic_child(self, key_var: str) -> str:
        if self.maybe_empty:
            return f"({self.code} + '.' + {key_var} if {self.code} else {key_var})"
        return f"({self.code} + '.' + {key_var})"

    def item(self, index_var: str) -> _Path:
        return _Path(f"({self.code} + '[' + str({index_var}) + ']')", False)


def _message(path: _Path, suffix: str) -> str:
    """Code appending ``"<diagnostic path>" <suffix>`` to the violation list ``o``."""
    return f"o.append('\"' + {path.diagnostic()} + {suffix!r})"


class _CollectGen:
    """Emits violation-collecting code mirroring the generic walker, node by node."""

    def __init__(self, source: _Source, valid: _ValidGen) -> None:
        self.src = source
        self.valid = valid

    def function(self, node: dict[str, object], maybe_empty: bool) -> str:
        """A ``(v, path, o) -> None`` function appending ``node``'s violations to ``o``."""
        name = self.src.name("_collect")
        body: list[str] = []
        self.emit(node, "v", _Path("path", maybe_empty), body, 1)
        self.src.functions.append([f"def {name}(v, path, o):", *body, "    return None"])
        return name

    def pinned(self, path: _Path, out: list[str], pad: str) -> _Path:
        """A possibly-empty path is bound to a variable before it is used more than once."""
        if not path.maybe_empty or _is_name(path.code):
            return path
        bound = self.src.name("q")
        out.append(f"{pad}{bound} = {path.code}")
        return _Path(bound, True)

    def emit(
        self, node: dict[str, object], var: str, path: _Path, out: list[str], depth: int
    ) -> None:
        pad = "    " * depth
        src = self.src
        path = self.pinned(path, out, pad)
        if "oneOf" in node:
            branches = [self.valid.function(branch) for branch in node["oneOf"]]  # type: ignore[attr-defined]
            count = src.name("m")
            out.append(f"{pad}{count} = " + (" + ".join(f"{fn}({var})" for fn in branches) or "0"))
            out.append(f"{pad}if {count} != 1:")
            out.append(
                f"{pad}    o.append('\"' + {path.diagnostic()} + "
                f"'\" must match exactly one oneOf branch (matched ' + str({count}) + ')')"
            )
            return
        if "type" not in node:
            out.append(f"{pad}if not _is_json({var}):")
            out.append(pad + "    " + _message(path, '" must be a lossless JSON value'))
            return
        type_name: str = node["type"]  # type: ignore[assignment]
        if type_name in ("object", "array") and depth > _MAX_BLOCK_DEPTH:
            out.append(f"{pad}{self.function(node, path.maybe_empty)}({var}, {path.code}, o)")
            return
        if type_name == "object":
            self._object(node, var, path, out, depth)
        elif type_name == "array":
            out.append(f"{pad}if type({var}) is not list:")
            out.append(pad + "    " + _message(path, '" must be an array'))
            if "items" not in node:
                out.append(f"{pad}elif not _is_json({var}):")
                out.append(pad + "    " + _message(path, '" must be a dense lossless JSON array'))
                return
            items: dict[str, object] = node["items"]  # type: ignore[assignment]
            index, item = src.name("i"), src.name("x")
            out.append(f"{pad}else:")
            out.append(f"{pad}    for {index}, {item} in enumerate({var}):")
            if "oneOf" in items or items.get("type") in ("object", "array"):
                # Large arrays are mostly valid: a check-only pass skips the passing elements.
                out.append(f"{pad}        if {self.valid.function(items)}({item}): continue")
            self.emit(items, item, path.item(index), out, depth + 2)
        else:
            self._scalar(node, type_name, var, path, out, pad)

    def _scalar(
        self,
        node: dict[str, object],
        type_name: str,
        var: str,
        path: _Path,
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
            suffix = {
                "string": '" must be a string',
                "integer": '" must be an integer',
                "boolean": '" must be a boolean',
                "null": '" must be null',
            }[type_name]
            out.append(pad + "    " + _message(path, suffix))
        if "enum" in node:
            enum = node["enum"]
            members = [m for m in enum if _kind_of(type_name, m)]  # type: ignore[attr-defined]
            out.append(f"{pad}elif {var} not in {src.const(frozenset(members))}:")
            out.append(pad + "    " + _message(path, '" must be one of ' + js_json(enum)))
        if "const" in node:
            const = node["const"]
            if _kind_of(type_name, const):
                out.append(f"{pad}elif {var} != {src.const(const)}:")
            else:
                out.append(f"{pad}else:")
            out.append(pad + "    " + _message(path, '" must be ' + js_json(const)))

    def _object(
        self, node: dict[str, object], var: str, path: _Path, out: list[str], depth: int
    ) -> None:
        pad = "    " * depth
        inner = pad + "    "
        src = self.src
        out.append(f"{pad}if type({var}) is not dict:")
        out.append(pad + "    " + _message(path, '" must be an object'))
        out.append(f"{pad}else:")
        before = src.name("n")
        out.append(f"{inner}{before} = len(o)")
        for name in node.get("required") or []:  # type: ignore[attr-defined]
            out.append(f"{inner}if {src.const(name)} not in {var}:")
            out.append(
                f"{inner}    o.append('missing required property \"' + {path.child(name).code}"
                " + '\"')"
            )
        properties: dict[str, dict[str, object]] = node.get("properties") or {}  # type: ignore[assignment]
        for key, child in properties.items():
            item, name = src.name("p"), src.const(key)
            out.append(f"{inner}if {name} in {var}:")
            out.append(f"{inner}    {item} = {var}[{name}]")
            self.emit(child, item, path.child(key), out, depth + 2)
        declared = src.const(frozenset(properties))
        key, child_value = src.name("k"), src.name("u")
        if node.get("additionalProperties") is False:
            out.append(f"{inner}for {key} in {var}:")
            out.append(f"{inner}    if type({key}) is str and {key} not in {declared}:")
            out.append(
                f"{inner}        o.append('\"' + {path.dynamic_child(key)}"
                " + '\" is not a declared property (additionalProperties: false)')"
            )
        out.append(f"{inner}if len(o) == {before}:")
        out.append(f"{inner}    for {key}, {child_value} in {var}.items():")
        out.append(
            f"{inner}        if type({key}) is not str or "
            f"({key} not in {declared} and not _is_json({child_value})):"
        )
        out.append(inner + "            " + _message(path, '" must be a lossless JSON object'))
        out.append(f"{inner}            break")


def _build(schema: dict[str, object]) -> Validator:
    """Generate, compile and return the specialised ``(value, path) -> list[str]`` checker."""
    source = _Source()
    valid = _ValidGen(source)
    collect = _CollectGen(source, valid).function(schema, True)
    entry = valid.root(schema)

    def slow(value: object, path: str) -> list[str]:
        found: list[str] = []
        try:
            source.namespace[collect](value, path, found)  # type: ignore[operator]
        except Exception:
            # Only a hostile dict key raises; the generic walker reports it upstream's way.
            return validate_json_schema_value(schema, value, path)
        return found

    source.namespace["_slow"] = slow
    text = "\n".join("\n".join(fn) for fn in source.functions)
    code = compile(text, f"<trio_harness validator {entry}>", "exec")
    exec(code, source.namespace)  # generated from a well-formed schema; data only as constants
    return source.namespace[entry]  # type: ignore[return-value]


def _generic(schema: object) -> Validator:
    def validate(value: object, path: str = "value") -> list[str]:
        return validate_json_schema_value(schema, value, path)

    return validate


_by_identity: dict[int, tuple[object, Validator]] = {}
_by_text: dict[str, Validator] = {}


def compile_validator(schema: object) -> Validator:
    """A validator specialised to ``schema``: ``validator(value, path="value") -> list[str]``.

    Returns exactly what ``validate_json_schema_value(schema, value, path)`` returns, faster:
    the schema is analysed once, valid values take a check-only fast path, and invalid ones a
    generated collector. Validators are cached by schema identity (and by content), so calling
    ``compile_validator(schema)(value, path)`` on every tool call is cheap. The schema must not
    be mutated after compilation.

    Args:
        schema: A schema accepted by :func:`assert_supported_json_schema` (others are validated
            by the generic walker, with its behaviour).

    Returns:
        A callable ``(value, path="value") -> list[str]``; never raises for asserted schemas.
    """
    hit = _by_identity.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if not _compilable(schema):
        validator = _generic(schema)
    else:
        # A compilable schema is an acyclic tree of JSON-ish data, so its text is a content key
        # (1 and 1.0 render alike and validate alike; True and 1 do not).
        text = js_json(schema)
        cached = _by_text.get(text)
        if cached is None:
            cached = _build(schema)  # type: ignore[arg-type]
            if len(_by_text) >= _CACHE_SIZE:
                del _by_text[next(iter(_by_text))]
            _by_text[text] = cached
        validator = cached
    if len(_by_identity) >= _CACHE_SIZE:
        del _by_identity[next(iter(_by_identity))]
    _by_identity[id(schema)] = (schema, validator)
    return validator
