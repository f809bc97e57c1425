"""The value-validation rules, as data: keyword → check → message (read this module to port them).

Every validator of the package takes its checks and its wording from here: the generic walker
(:mod:`.walker`) interprets these tables on every call, the code generators
(:mod:`.codegen_check`, :mod:`.codegen`) emit Python text from the same templates once per
schema, and the extended vocabulary's walker and closures (:mod:`.extended`,
:mod:`.extended_compiled`) read the same bounds and messages. Each violation text is built in one
place: :func:`violation` renders a template, :func:`violation_code` writes the expression that
renders the same template inside generated code.

**What a schema node asks of a value** (strict subset; the schema was asserted by :mod:`.subset`):

==========================  ==================  ==========================================================
keyword                     on                  check (violation, when it fails)
==========================  ==================  ==========================================================
``type``                    every typed node    :data:`TYPE_RULES` (``not_object``, ``not_string``, ...);
                                                a failing type check ends the node
``enum``                    scalars             SameValueZero-equal to a member (``not_in_enum``)
``const``                   scalars             SameValueZero-equal to the payload (``not_const``);
                                                checked only when ``enum`` passed: one scalar violation
``required``                ``object``          each name is a key, in schema order (``missing_required``)
``properties``              ``object``          each declared key present is validated by its schema,
                                                in declaration order
``additionalProperties``    ``object``          ``false``: each other exact-``str`` key, in the value's
                                                order (``undeclared``)
``items``                   ``array``           each element, in order; without ``items`` the array is
                                                lossless JSON (``lossless_array``)
``oneOf``                   a union node        exactly one branch reports nothing (``one_of``)
(no ``type``, no ``oneOf``) an untyped node     the value is lossless JSON (``lossless_value``)
==========================  ==================  ==========================================================

Order: a node reports its own violations in the row order above, children's violations at the
point their keyword is checked. An object whose required names, properties and undeclared keys
reported nothing must still be a lossless JSON object: every key an exact ``str`` and every
undeclared value lossless (``lossless_object``). A value that is no JSON at all where a hostile
dict key raised reports ``lossless_value`` at the node being inspected, and nothing else.

**Extended vocabulary** (opt-in, :mod:`.extended`): :data:`BOUNDS` (comparisons on the value or
its length), ``multipleOf`` (decimal-exact, :func:`~.formats.is_multiple`), ``pattern``,
``format`` (when asserted), ``uniqueItems``, ``prefixItems`` and a schema-valued
``additionalProperties``; their messages are in :data:`MESSAGES` too.

Value notions (the Python mapping of upstream's): an object is an exact ``dict``, an array an
exact ``list``; a number is an ``int`` (never a ``bool``) within ``±MAX_FINITE_JSON_INT`` (it
converts to a finite double) or a finite ``float`` other than ``-0.0``; an integral ``float`` is an integer.
"""

from __future__ import annotations

import math
import operator
import string
from collections.abc import Callable
from typing import Any, Final

from .._json import MAX_FINITE_JSON_INT, js_json
from .subset import js_same_value_zero

__all__ = [
    "BOUNDS",
    "CODE_NAMESPACE",
    "MESSAGES",
    "ONE_OF_MISMATCH",
    "PAYLOAD_RULES",
    "SCALAR_KINDS",
    "TYPE_RULES",
    "TYPE_TESTS",
    "Check",
    "Literal",
    "TypeRule",
    "bound_check",
    "bound_test",
    "counted",
    "type_test",
    "type_violation",
    "type_violation_code",
    "violation",
    "violation_code",
]

# ---------------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------------

#: Every violation of a value, by name. Holes: ``{path}`` the node's diagnostic path (the empty
#: root reads ``arguments``); ``{child}`` a property's path below the node (bare at the empty
#: root); ``{enum}``/``{const}``/``{bound}``/``{pattern}`` the schema payload as compact
#: JavaScript JSON; ``{matched}`` how many ``oneOf`` branches matched; ``{count}`` a counted noun
#: (:func:`counted`); ``{format}`` a format name; ``{first}``/``{second}`` element indices.
MESSAGES: Final[dict[str, str]] = {
    # type (TYPE_RULES)
    "not_object": '"{path}" must be an object',
    "not_array": '"{path}" must be an array',
    "not_string": '"{path}" must be a string',
    "not_number": '"{path}" must be a number',
    "not_finite": '"{path}" must be a finite JSON number',
    "not_integer": '"{path}" must be an integer',
    "not_boolean": '"{path}" must be a boolean',
    "not_null": '"{path}" must be null',
    # scalar payloads
    "not_in_enum": '"{path}" must be one of {enum}',
    "not_const": '"{path}" must be {const}',
    # objects
    "missing_required": 'missing required property "{child}"',
    "undeclared": '"{child}" is not a declared property (additionalProperties: false)',
    "lossless_object": '"{path}" must be a lossless JSON object',
    # arrays, untyped nodes, unions
    "lossless_array": '"{path}" must be a dense lossless JSON array',
    "lossless_value": '"{path}" must be a lossless JSON value',
    "one_of": '"{path}" must match exactly one oneOf branch (matched {matched})',
    # extended vocabulary (BOUNDS and the keywords after it)
    "below_minimum": '"{path}" must be >= {bound}',
    "not_above_minimum": '"{path}" must be > {bound}',
    "above_maximum": '"{path}" must be <= {bound}',
    "not_below_maximum": '"{path}" must be < {bound}',
    "too_short": '"{path}" must be at least {count} long',
    "too_long": '"{path}" must be at most {count} long',
    "too_few": '"{path}" must have at least {count}',
    "too_many": '"{path}" must have at most {count}',
    "not_multiple": '"{path}" must be a multiple of {bound}',
    "no_pattern_match": '"{path}" must match pattern {pattern}',
    "bad_format": '"{path}" must be a valid "{format}"',
    "duplicate_items": (
        '"{path}" must not contain duplicate items (items {first} and {second} are equal)'
    ),
}

_FORMATTER: Final = string.Formatter()


def violation(name: str, **holes: object) -> str:
    """The violation ``name`` of :data:`MESSAGES`, its holes filled with ``holes``' texts."""
    return MESSAGES[name].format_map(holes)


class Literal(str):
    """A hole of :func:`violation_code` whose text is known when the code is generated."""

    __slots__ = ()


def violation_code(name: str, **holes: str) -> str:
    """A Python expression that builds violation ``name`` at run time, for generated code.

    Each hole is a Python expression evaluating to a ``str`` (a path variable, ``str(m)``), or a
    :class:`Literal` text known now (an enum's JSON); literal pieces are merged into one string
    constant. The expression builds exactly what :func:`violation` returns for the same texts.
    """
    parts: list[str] = []
    literal = ""
    for text, field, _spec, _conversion in _FORMATTER.parse(MESSAGES[name]):
        literal += text
        if field is None:
            continue
        hole = holes[field]
        if type(hole) is Literal:
            literal += hole
            continue
        if literal:
            parts.append(repr(literal))
            literal = ""
        parts.append(hole)
    if literal:
        parts.append(repr(literal))
    return " + ".join(parts)


def counted(count: int, noun: str) -> str:
    """``1 item``, ``2 items``, ``0 properties``: the ``{count}`` hole of the count messages."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} properties" if noun == "property" else f"{count} {noun}s"


#: The ``oneOf`` violation's text between the quoted path and the count of matched branches.
ONE_OF_MISMATCH: Final = MESSAGES["one_of"].split("{path}", 1)[1].split("{matched}", 1)[0]

# ---------------------------------------------------------------------------------------------
# Type checks
# ---------------------------------------------------------------------------------------------


class TypeRule:
    """The check of one schema ``type``: an expression over the value, and its violation.

    ``test`` is a Python expression with the holes ``{v}`` (the value) and ``{t}`` (its exact
    type, ``type(v)``). When it is false the violation is ``violation``, unless ``refine`` is
    set and its test holds for the value: then the refined violation is reported instead.
    """

    __slots__ = ("refine", "test", "violation")

    def __init__(self, test: str, violation: str, refine: tuple[str, str] | None = None) -> None:
        self.test = test
        self.violation = violation
        self.refine = refine


_FINITE_FLOAT: Final = "{v} - {v} == 0.0 and not ({v} == 0.0 and copysign(1.0, {v}) < 0.0)"
_INT_RANGE: Final = f"-{MAX_FINITE_JSON_INT!r} <= {{v}} <= {MAX_FINITE_JSON_INT!r}"

#: ``type`` → its check. A number is an exact ``int`` within the finite double range or a
#: finite ``float`` other than ``-0.0``; an integer is such a number with no fractional part.
TYPE_RULES: Final[dict[str, TypeRule]] = {
    "object": TypeRule("{t} is dict", "not_object"),
    "array": TypeRule("{t} is list", "not_array"),
    "string": TypeRule("{t} is str", "not_string"),
    "number": TypeRule(
        f"({{t}} is int and {_INT_RANGE} or {{t}} is float and {_FINITE_FLOAT})",
        "not_number",
        refine=("{t} is int or {t} is float", "not_finite"),
    ),
    "integer": TypeRule(
        f"({{t}} is int and {_INT_RANGE} or {{t}} is float and {{v}}.is_integer()"
        f" and not ({{v}} == 0.0 and copysign(1.0, {{v}}) < 0.0))",
        "not_integer",
    ),
    "boolean": TypeRule("{t} is bool", "not_boolean"),
    "null": TypeRule("{v} is None", "not_null"),
}

#: The names the expressions of :data:`TYPE_RULES` read; generated modules bind them too.
CODE_NAMESPACE: Final[dict[str, object]] = {"copysign": math.copysign}

#: The Python types a scalar schema type can match (enum/const members of other types never can).
SCALAR_KINDS: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


#: The scalar payload keywords, in the order they are checked, after the type check passed (a
#: scalar reports one violation at most): keyword → (whether the value satisfies the payload,
#: the violation). The violation's hole named like the keyword shows the payload as JSON.
#: Generated code tests the same with ``in``/``==`` on the payload's members of the node's
#: type (:data:`SCALAR_KINDS`): among exact scalars of one kind, those are SameValueZero.
PAYLOAD_RULES: Final[dict[str, tuple[Callable[[Any, object], bool], str]]] = {
    "enum": (
        lambda members, value: any(js_same_value_zero(member, value) for member in members),
        "not_in_enum",
    ),
    "const": (js_same_value_zero, "not_const"),
}


def type_test(type_name: str, var: str, type_var: str | None = None) -> str:
    """The expression of ``type_name``'s check on the variable ``var`` (``type_var``: a variable
    already holding ``type(var)``)."""
    return TYPE_RULES[type_name].test.format(v=var, t=type_var or f"type({var})")


def _predicate(test: str, label: str) -> Callable[[object], bool]:
    namespace = dict(CODE_NAMESPACE)
    source = f"def check(v):\n    t = type(v)\n    return bool({test.format(v='v', t='t')})"
    exec(compile(source, f"<trio_harness rule {label}>", "exec"), namespace)
    return namespace["check"]  # type: ignore[return-value]


#: The checks of :data:`TYPE_RULES` as predicates (compiled from the same expressions), for the
#: validators that interpret a schema rather than generate code for it.
TYPE_TESTS: Final[dict[str, Callable[[object], bool]]] = {
    name: _predicate(rule.test, name) for name, rule in TYPE_RULES.items()
}
_REFINE_TESTS: Final[dict[str, Callable[[object], bool]]] = {
    name: _predicate(rule.refine[0], name + " refined")
    for name, rule in TYPE_RULES.items()
    if rule.refine is not None
}


def type_violation(type_name: str, value: object, path: str) -> str:
    """The violation of a value that failed ``type_name``'s check, at diagnostic ``path``."""
    rule = TYPE_RULES[type_name]
    if rule.refine is not None and _REFINE_TESTS[type_name](value):
        return violation(rule.refine[1], path=path)
    return violation(rule.violation, path=path)


def type_violation_code(
    type_name: str, var: str, type_var: str, path: str
) -> list[tuple[str, str]]:
    """Generated code for a failed ``type_name`` check: ``(condition, message expression)``
    pairs, tried in order (the last condition is ``""``: always)."""
    rule = TYPE_RULES[type_name]
    plain = ("", violation_code(rule.violation, path=path))
    if rule.refine is None:
        return [plain]
    test, refined = rule.refine
    return [(test.format(v=var, t=type_var), violation_code(refined, path=path)), plain]


# ---------------------------------------------------------------------------------------------
# Extended bounds
# ---------------------------------------------------------------------------------------------

#: Extended bounds: keyword → (comparison, whether it compares the value's length, violation,
#: the noun a length counts). Each holds when ``measure <comparison> bound``; ``measure`` is the
#: value or its length (code points of a string, elements, keys).
BOUNDS: Final[dict[str, tuple[str, bool, str, str]]] = {
    "minimum": (">=", False, "below_minimum", ""),
    "exclusiveMinimum": (">", False, "not_above_minimum", ""),
    "maximum": ("<=", False, "above_maximum", ""),
    "exclusiveMaximum": ("<", False, "not_below_maximum", ""),
    "minLength": (">=", True, "too_short", "character"),
    "maxLength": ("<=", True, "too_long", "character"),
    "minItems": (">=", True, "too_few", "item"),
    "maxItems": ("<=", True, "too_many", "item"),
    "minProperties": (">=", True, "too_few", "property"),
    "maxProperties": ("<=", True, "too_many", "property"),
}

_COMPARE: Final[dict[str, Callable[[Any, Any], Any]]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}

#: A check of the extended vocabulary: ``(value, diagnostic path) -> violation or None``.
Check = Callable[[Any, str], "str | None"]


def bound_check(keyword: str, bound: object) -> Check:
    """The check of ``keyword: bound`` (:data:`BOUNDS`) on a value of the keyword's type."""
    comparison, on_length, name, noun = BOUNDS[keyword]
    compare = _COMPARE[comparison]
    if on_length:
        limit = int(bound)  # type: ignore[call-overload]
        count = counted(limit, noun)

        def length_check(value: object, path: str) -> str | None:
            if compare(len(value), limit):  # type: ignore[arg-type]
                return None
            return violation(name, path=path, count=count)

        return length_check
    shown = js_json(bound)

    def value_check(value: object, path: str) -> str | None:
        return None if compare(value, bound) else violation(name, path=path, bound=shown)

    return value_check


def bound_test(keyword: str, bound: object, var: str) -> str:
    """The expression of :func:`bound_check`'s test for generated code (the bound a literal)."""
    comparison, on_length, _name, _noun = BOUNDS[keyword]
    if on_length:
        return f"len({var}) {comparison} {int(bound)!r}"  # type: ignore[call-overload]
    return f"{var} {comparison} {bound!r}"
