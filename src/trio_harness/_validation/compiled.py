"""``compile_validator``: per-schema specialised checkers, what ``define_tool`` runs on each call.

The per-schema work is done once: the schema is asserted, then Python source specialised to it is
generated and compiled with ``compile()``. Two functions come out of it:

* ``is_valid(value) -> bool``: straight-line checks, no message building, no path strings;
* ``collect(value, path) -> list[str]``: every violation, in the generic walker's order and
  wording, used only when ``is_valid`` said no.

They are exact: ``is_valid(v)`` is true iff the generic walker returns ``[]``, and ``collect``
returns what the walker returns (both are tested against it on the upstream vectors and with
hypothesis). They rely on the invariant documented in :mod:`.walker` (a passing
node has validated a lossless value), so only the parts of a value no typed node covers (undeclared
keys of open objects, untyped nodes, arrays without ``items``) get a lossless check.

Totality: generated code recurses at most once per schema level (functions are split well before
Python's static block-nesting limit), and schemas deeper than :data:`MAX_COMPILED_DEPTH`, schemas
that fail the assertion, and any exception raised while inspecting a value (hostile dict keys) are
handed to the generic iterative walker, which is total.
"""

from __future__ import annotations

import itertools
import linecache
import math
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

from .._errors import JsonSchemaError
from .._json import MAX_FINITE_JSON_INT, is_json_value
from .rules import CODE_NAMESPACE
from .subset import assert_supported_json_schema
from .walker import validate_json_schema_value

if TYPE_CHECKING:
    from .codegen import GeneratedSource

# The code generator (:mod:`.codegen`) is imported by the functions that generate: it loads on
# the first compiled schema, not with ``import trio_harness`` (issue 30).

_copysign: Final = math.copysign

__all__ = [
    "MAX_COMPILED_DEPTH",
    "STR_KEYED_SIZES",
    "Invalid",
    "Validator",
    "build_check",
    "build_checked",
    "compilable",
    "compile_validator",
]

#: Schemas nested deeper than this are validated by the generic iterative walker.
MAX_COMPILED_DEPTH: Final = 100
#: How many compiled validators are kept per schema identity.
_CACHE_SIZE: Final = 1024
#: Containers the fast lossless test walks (below its first two levels) before deferring to the cycle-aware ``is_json_value``.
_LOSSLESS_BUDGET: Final = 1000

Validator = Callable[[object, str], list[str]]


def compilable(schema: object) -> bool:
    """Whether the generated code is used for ``schema``: it passes the subset assertion and is
    nested at most :data:`MAX_COMPILED_DEPTH` deep.

    Every other schema (a rejected or forged one, a deeper one) is validated by the generic
    walker, with the walker's own behaviour on it: generated code is only ever tested against
    the walker on asserted schemas. Iterative, so it is total.
    """
    try:
        assert_supported_json_schema(schema)
    except JsonSchemaError:
        return False
    # Asserted: an acyclic tree of records whose children sit under oneOf/properties/items.
    stack: list[tuple[dict[str, object], int]] = [(schema, 1)]  # type: ignore[list-item]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_COMPILED_DEPTH:
            return False
        if "oneOf" in node:
            stack.extend((branch, depth + 1) for branch in node["oneOf"])  # type: ignore[attr-defined]
        elif node.get("type") == "object":
            properties: dict[str, dict[str, object]] = node.get("properties") or {}  # type: ignore[assignment]
            stack.extend((child, depth + 1) for child in properties.values())
        elif node.get("type") == "array" and "items" in node:
            stack.append((node["items"], depth + 1))  # type: ignore[arg-type]
    return True


_NONE_TYPE: Final = type(None)


def _plain_key(key: object) -> bool:
    """Whether hashing and comparing ``key`` runs no user code: an exact ``str``, ``int``,
    ``float``, ``bool`` or ``None``. Compared by identity: a set lookup of ``type(key)`` would
    run a metaclass's ``__hash__``/``__eq__``."""
    kind = type(key)
    return kind is str or kind is int or kind is float or kind is bool or kind is _NONE_TYPE


def _has_odd_keys(value: object) -> bool:
    """Whether ``value`` holds a dict key that is not plain (see :func:`_plain_key`).

    Only such a key can run user code (``__hash__``/``__eq__``) when the walker looks a name up
    in a dict. Generated check-only code stops at a union branch's first failure, where the
    walker goes on looking names up; so a union with no single match hands a value holding
    such keys to the walker (see the ``oneOf`` code in :mod:`.codegen`). The value's own level
    is checked in place (the common case: a small object); containers below it are visited
    once each, so cycles end and the cost is linear in the distinct containers.
    """
    stack: list[object] | None = None
    if type(value) is dict:
        for key, child in value.items():
            if type(key) is not str and not _plain_key(key):
                return True
            kind = type(child)
            if kind is dict or kind is list:
                if stack is None:
                    stack = [child]
                else:
                    stack.append(child)
    elif type(value) is list:
        for child in value:
            kind = type(child)
            if kind is dict or kind is list:
                if stack is None:
                    stack = [child]
                else:
                    stack.append(child)
    if stack is None:
        return False
    seen = {id(value)}
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if type(item) is dict:
            for key in item:
                if type(key) is not str and not _plain_key(key):
                    return True
            item = item.values()
        for child in item:  # type: ignore[attr-defined]
            kind = type(child)
            if kind is dict or kind is list:
                stack.append(child)
    return False


#: Dicts with at most this many keys are measured by :func:`_str_keyed_sizes`.
_CALIBRATED_KEYS: Final = 120


def _str_keyed_sizes() -> frozenset[int]:
    """The ``dict.__sizeof__()`` values that only a dict whose keys are all exact ``str`` has.

    CPython stores the keys of such a dict in a table of smaller entries (no per-entry hash;
    the first key of another type, a ``str`` subclass included, converts the table for good),
    and ``__sizeof__`` (plain C, no user code) counts the table. So the generated code can skip
    the per-key ``type(key) is str`` loop of an object when its size is in this set; any other
    size (another layout, a table converted back and forth, a larger table than measured, an
    interpreter laid out differently) takes the loop, which decides.

    Measured, not assumed: for every table size up to :data:`_CALIBRATED_KEYS` keys, built
    alike (so with the same table), the sizes of exact-``str``-keyed dicts and of dicts with one
    ``int`` key. The set is those of the first kind, and only when no size of the second kind
    is among them and a larger table of either kind is larger than every size in the set
    (checked on the measured tables); else (and on an interpreter other than CPython) it is
    empty and the loop always runs.
    """
    if sys.implementation.name != "cpython":
        return frozenset()  # another layout, if any: always the loop
    text: dict[object, None] = {}
    mixed: dict[object, None] = {0: None}
    plain: set[int] = set()
    other: set[int] = set()
    for index in range(_CALIBRATED_KEYS):
        text[f"k{index}"] = None
        mixed[f"k{index}"] = None
        # Grown key by key, and presized from a dict (``fromkeys`` sizes the table for the
        # source's length): between them every table size up to the largest one is built.
        for kind, sizes in ((text, plain), (mixed, other)):
            sizes.add(kind.__sizeof__())
            sizes.add(dict.fromkeys(kind).__sizeof__())
            sizes.add(kind.copy().__sizeof__())
    if plain & other or max(other) < max(plain):
        return frozenset()
    return frozenset(plain)


#: See :func:`_str_keyed_sizes`; generated code reads it as ``_str_keyed``.
STR_KEYED_SIZES: Final = _str_keyed_sizes()


def _count(branches: tuple[Callable[[object], bool], ...], value: object) -> int:
    """How many of a wide union's check-only branch functions accept ``value``."""
    matched = 0
    for branch in branches:
        if branch(value):
            matched += 1
    return matched


def _one(branches: tuple[Callable[[object], bool], ...], value: object) -> bool:
    """Whether exactly one of a wide union's check-only branch functions accepts ``value``."""
    matched = False
    for branch in branches:
        if branch(value):
            if matched:
                return False
            matched = True
    return matched


def _lossless(value: object) -> bool:
    """``is_json_value`` for the generated code. Invariant: the same answer on every value.

    An ``int`` is lossless when it lies within ``±MAX_FINITE_JSON_INT``; the test tries the
    sub-range ``±0x3FFFFFFF`` first, which never changes the answer.

    A first pass checks the value's own items and the items of its list items in place, with
    no stack (tool arguments are mostly flat, or hold a list of scalars); containers met deeper
    than that are left to :func:`_lossless_rest`. A ``False`` found on the way is final: a
    value holding a non-lossless part is not lossless, whatever else it holds. Runs no user
    code (dict keys are only type-checked, and not even that for a dict whose size is in
    :data:`STR_KEYED_SIZES`), so never raises.
    """
    # Containers first: the generated code calls this on untyped values, mostly containers.
    kind = type(value)
    items: Iterable[object]
    if kind is dict:
        if value.__sizeof__() not in STR_KEYED_SIZES:
            for key in value:  # type: ignore[attr-defined]
                if type(key) is not str:
                    return False
        items = value.values()  # type: ignore[attr-defined]
    elif kind is list:
        items = value  # type: ignore[assignment]
    elif kind is str or kind is bool or value is None:
        return True
    elif kind is int:
        small: bool = -0x3FFFFFFF <= value <= 0x3FFFFFFF  # type: ignore[operator]
        return small or -MAX_FINITE_JSON_INT <= value <= MAX_FINITE_JSON_INT  # type: ignore[operator]
    elif kind is float:
        return value - value == 0.0 and (value != 0.0 or _copysign(1.0, value) > 0.0)  # type: ignore[operator]
    else:
        return False
    deferred: list[object] | None = None
    for item in items:
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if (
                -0x3FFFFFFF <= item <= 0x3FFFFFFF  # type: ignore[operator]
                or -MAX_FINITE_JSON_INT <= item <= MAX_FINITE_JSON_INT  # type: ignore[operator]
            ):
                continue
            return False
        if kind is float:
            if item - item == 0.0 and (item != 0.0 or _copysign(1.0, item) > 0.0):  # type: ignore[operator]
                continue
            return False
        if kind is list:
            for sub in item:  # type: ignore[attr-defined]
                kind = type(sub)
                if kind is str or kind is bool or sub is None:
                    continue
                if kind is int:
                    if (
                        -0x3FFFFFFF <= sub <= 0x3FFFFFFF
                        or -MAX_FINITE_JSON_INT <= sub <= MAX_FINITE_JSON_INT
                    ):
                        continue
                    return False
                if kind is float:
                    if sub - sub == 0.0 and (sub != 0.0 or _copysign(1.0, sub) > 0.0):
                        continue
                    return False
                if kind is dict or kind is list:
                    if deferred is None:
                        deferred = [sub]
                    else:
                        deferred.append(sub)
                    continue
                return False
            continue
        if kind is dict:
            if deferred is None:
                deferred = [item]
            else:
                deferred.append(item)
            continue
        return False
    return deferred is None or _lossless_rest(value, deferred)


def _lossless_rest(value: object, stack: list[object]) -> bool:
    """Whether the containers on ``stack`` (found inside ``value``) are lossless.

    No ancestor set: containers are walked as a plain tree (order is irrelevant for a yes/no
    answer) and after :data:`_LOSSLESS_BUDGET` containers the exact, cycle-aware
    ``is_json_value(value)`` decides instead; a cyclic value never ends the plain walk, so it
    always reaches that fallback (the first pass of :func:`_lossless` is bounded by the size of
    two levels, so it cannot loop).
    """
    budget = _LOSSLESS_BUDGET
    while stack:
        container = stack.pop()
        items: Iterable[object]
        if type(container) is dict:
            if container.__sizeof__() not in STR_KEYED_SIZES:
                for key in container:
                    if type(key) is not str:
                        return False
            items = container.values()
        else:
            items = container  # type: ignore[assignment]
        for item in items:
            kind = type(item)
            if kind is str or kind is bool or item is None:
                continue
            if kind is int:
                if (
                    -0x3FFFFFFF <= item <= 0x3FFFFFFF  # type: ignore[operator]
                    or -MAX_FINITE_JSON_INT <= item <= MAX_FINITE_JSON_INT  # type: ignore[operator]
                ):
                    continue
                return False
            if kind is float:
                if item - item == 0.0 and (item != 0.0 or _copysign(1.0, item) > 0.0):  # type: ignore[operator]
                    continue
                return False
            if kind is dict or kind is list:
                budget -= 1
                if budget <= 0:
                    return is_json_value(value)
                stack.append(item)
                continue
            return False
    return True


class Invalid(Exception):
    """Raised by generated check-only code to hand a node over to its collector code."""


#: Numbers the generated modules, so each has its own pseudo-filename.
_serial = itertools.count(1)


def _build(schema: dict[str, object]) -> Validator:
    """Generate, compile and return the specialised ``(value, path) -> list[str]`` checker."""
    from .codegen import generate

    generated = generate(schema)

    def walk(value: object, path: str) -> list[str]:
        # Only a hostile dict key raises; the generic walker reports it upstream's way.
        return validate_json_schema_value(schema, value, path)

    validator: Validator = _load(generated, walk)  # type: ignore[assignment]
    return validator


def build_check(schema: dict[str, object]) -> Callable[[object], bool]:
    """The check-only ``(value) -> bool`` function generated for ``schema`` (see
    :func:`~.codegen.generate_check`): true iff the value has no violation, for a schema
    asserted by the caller, nested at most :data:`MAX_COMPILED_DEPTH` deep; it may raise on
    hostile dict keys (the caller then asks its collector)."""
    from .codegen import generate_check

    check: Callable[[object], bool] = _load(generate_check(schema), None)  # type: ignore[assignment]
    return check


def build_checked(schema: dict[str, object], collect: Validator) -> Validator:
    """A ``(value, path="value") -> list[str]`` validator: the check-only code generated for
    ``schema`` (as :func:`build_check`, inline), ``[]`` when it passes, else (or when it raises
    on a hostile key) ``collect(value, path)``."""
    from .codegen import generate_check

    validator: Validator = _load(generate_check(schema, entry=True), collect)  # type: ignore[assignment]
    return validator


def _load(generated: GeneratedSource, walk: object) -> object:
    """Compile and run a generated module; its entry function.

    The source is compiled under a unique pseudo-filename registered in :mod:`linecache` (as
    cattrs does), so a traceback or a debugger through a compiled validator shows its lines.
    Invariant: the entry lives exactly as long as the entry function (the validator the caches
    hold): a finalizer drops it when the function is collected, so evicted validators leave
    nothing behind.
    """
    namespace: dict[str, object] = {
        **CODE_NAMESPACE,
        **generated.constants,
        "_lossless": _lossless,
        "_odd_keys": _has_odd_keys,
        "_count": _count,
        "_one": _one,
        "_str_keyed": STR_KEYED_SIZES,
        "_copysign": math.copysign,
        "_Invalid": Invalid,
        "_walk": walk,
        "__source__": generated.text,  # for debugging: ``_generated_source``
    }
    filename = f"<trio_harness validator #{next(_serial)} {generated.entry}>"
    linecache.cache[filename] = (
        len(generated.text),
        None,
        generated.text.splitlines(keepends=True),
        filename,
    )
    code = compile(generated.text, filename, "exec")
    exec(code, namespace)  # generated from a well-formed schema; data only as constants
    entry = namespace[generated.entry]
    weakref.finalize(entry, linecache.cache.pop, filename, None)
    return entry


def _generated_source(validator: Validator) -> str:
    """The Python source generated for a compiled validator (debugging aid); ``""`` if generic."""
    text = getattr(validator, "__globals__", {}).get("__source__", "")
    return text if type(text) is str else ""


def _generic(schema: object) -> Validator:
    def validate(value: object, path: str = "value") -> list[str]:
        return validate_json_schema_value(schema, value, path)

    return validate


def _scalar_text(value: object) -> str | None:
    kind = type(value)
    if kind is str:
        return repr(value)
    if kind is bool:
        return "T" if value else "F"
    if value is None:
        return "N"
    if kind is int:
        return "i" + hex(value)  # type: ignore[arg-type]
    if kind is float:
        return "f" + float.hex(value)  # type: ignore[arg-type]
    return None


def _content_key(schema: object) -> str | None:
    """An exact text key of an asserted schema's content, or ``None`` when there is none.

    Unlike a JSON rendering, it tells apart every two values that may validate differently:
    each number is written exactly (an ``int`` in hexadecimal, so any size; a ``float`` by
    :meth:`float.hex`), ``True`` from ``1``, ``1`` from ``1.0``, and keys keep their order. A
    container met again is written as a back-reference to its first occurrence, so the key is
    linear in the distinct containers (two schemas that share differently get different keys:
    a cache miss, never a wrong hit). Any other type gives ``None`` (no content caching).

    Every token is self-delimiting (a quoted ``repr``, a one-letter constant, a number up to the
    ``,`` that ends every entry, brackets), so the text is an injective encoding. One pass over
    an explicit stack of iterators, one per open container.
    """
    text = _scalar_text(schema)
    if text is not None:
        return text
    kind = type(schema)
    if kind is not dict and kind is not list:
        return None
    out: list[str] = ["{" if kind is dict else "["]
    append = out.append
    seen: dict[int, int] = {id(schema): 0}
    root: Any = schema
    stack: list[tuple[Iterator[Any], str, bool]] = [
        (iter(root.items()), "}", True) if kind is dict else (iter(root), "]", False)
    ]
    while stack:
        entries, close, is_dict = stack[-1]
        for entry in entries:
            if is_dict:
                key, child = entry
                if type(key) is not str:
                    return None
                append(repr(key) + ":")
            else:
                child = entry
            text = _scalar_text(child)
            if text is not None:
                append(text + ",")
                continue
            kind = type(child)
            if kind is not dict and kind is not list:
                return None
            first = seen.get(id(child))
            if first is not None:
                append(f"@{first},")
                continue
            seen[id(child)] = len(seen)
            if kind is dict:
                append("{")
                stack.append((iter(child.items()), "}", True))
            else:
                append("[")
                stack.append((iter(child), "]", False))
            break
        else:
            stack.pop()
            append(close + ",")
    return "".join(out)


#: Guards the two caches: ``compile_validator`` may be called from several threads.
_lock = threading.Lock()
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
    with _lock:
        hit = _by_identity.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if not compilable(schema):
        validator = _generic(schema)
    else:
        key = _content_key(schema)
        with _lock:
            cached = _by_text.get(key) if key is not None else None
        if cached is None:
            # Built outside the lock: two threads may build the same schema, and one wins.
            cached = _build(schema)  # type: ignore[arg-type]
            if key is not None:
                with _lock:
                    if len(_by_text) >= _CACHE_SIZE:
                        del _by_text[next(iter(_by_text))]
                    _by_text[key] = cached
        validator = cached
    with _lock:
        if len(_by_identity) >= _CACHE_SIZE:
            del _by_identity[next(iter(_by_identity))]
        _by_identity[id(schema)] = (schema, validator)
    return validator
