"""Raw argument text a model writes for a tool, by kind, in every JSON spelling.

:func:`argument_texts` and :class:`ArgumentText` (also registered for ``st.from_type``).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from typing import Any, Final, Literal

import attrs
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from .._errors import JsonSchemaError
from .._json import js_number
from .._validation import parameter_schema_spec_to_json_schema
from .json_leaves import BEYOND_INTS, NEG_ZERO, edge_scalars, json_trees
from .schema_strategies import parameter_maps
from .solver import Node, Solver, fresh_key
from .value_knobs import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_SIZE,
    DEFAULT_MAX_STRING_SIZE,
    Knobs,
    call,
    check_int,
    lazy,
    make_knobs,
    pick,
    upto,
)
from .values import invalid_strategy

__all__ = ["ARGUMENT_KINDS", "ArgumentKind", "ArgumentText", "argument_texts"]

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
        text = js_number(value)
        # JavaScript prints 2**60 as 1152921504606847000, an integer literal the reference
        # reads exactly (not as the double): such a double is written in its own form.
        exact = any(mark in text for mark in ".eE") or int(text) == value
        return text if exact else repr(value)
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
        depth_limit = check_int("argument_texts", "max_depth", max_depth, 1)
        knobs = make_knobs(
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

    return lazy(
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
    schema: Node, wanted: tuple[ArgumentKind, ...], depth_limit: int, knobs: Knobs
) -> st.SearchStrategy[ArgumentText]:
    solver = Solver(schema, knobs)
    properties: dict[str, Node] = schema.get("properties", {})
    required: list[str] = list(schema.get("required", []))
    has_valid = solver.sat((schema,), ())
    good = solver.strategy((schema,), ()) if has_valid else None
    trees = json_trees(knobs, 6)
    # Argument text can also spell numbers no JSON value holds: 1e400 parses to infinity.
    text_leaves = [NEG_ZERO, math.inf, -math.inf, *(BEYOND_INTS if knobs.big_numbers else ())]
    bad_values = {
        name: invalid_strategy(child, knobs, text_leaves) for name, child in properties.items()
    }

    objects = st.dictionaries(knobs.keys, trees, max_size=3)
    arrays = st.lists(trees, max_size=3)

    def valid_text(draw: st.DrawFn, value: dict[str, Any], style: _Style) -> str:
        if value and draw(upto(3)) == 3:  # a key given twice: first junk, last good
            name = list(value)[pick(draw, len(value))]
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

        options.append(call(valid))
    if "invalid-json" in wanted:

        def invalid_json(draw: st.DrawFn) -> ArgumentText:
            how = draw(upto(6))
            if how == 0:
                text = _BROKEN[pick(draw, len(_BROKEN))]
            elif how == 4:
                text = draw(_WHITESPACE_ONLY)
            elif how == 5:
                depth = 1 + draw(upto(depth_limit - 1))
                text = ("[", '{"a":')[pick(draw, 2)] * depth
            else:
                base = draw(good) if good is not None else draw(objects)
                whole = _render(base, draw(_STYLES))
                if how == 1:  # cut short: a proper prefix of an object text is never JSON
                    text = whole[: 1 + draw(upto(len(whole) - 2))]
                elif how == 2:
                    text = whole + _GARBAGE[pick(draw, len(_GARBAGE))]
                elif how == 3:
                    text = "\ufeff" + whole
                else:
                    text = "'" + whole[1:-1] + "'" if len(whole) > 2 else "{,}"
            return ArgumentText("invalid-json", text)

        options.append(call(invalid_json))
    if "not-an-object" in wanted:

        def not_an_object(draw: st.DrawFn) -> ArgumentText:
            how = draw(upto(3))
            style = draw(_STYLES)
            if how == 3 and good is not None:  # the arguments encoded twice
                value: Any = _render(draw(good), style)
            elif how == 2:
                value = draw(arrays)
            else:
                value = draw(edge_scalars(knobs))
            return ArgumentText("not-an-object", padded(draw, _render(value, style)))

        options.append(call(not_an_object))
    if "wrong-type" in wanted and good is not None and properties:
        names = list(properties)
        choices = st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True)

        def wrong(draw: st.DrawFn) -> ArgumentText:
            value = draw(good)
            style = draw(_STYLES)
            broken = draw(choices)
            for name in broken:
                value[name] = draw(bad_values[name])
            if draw(upto(3)) == 3:  # the wrong value is the last of a duplicate
                name = broken[0]
                entries = [(key, _render(item, style)) for key, item in value.items()]
                entries[list(value).index(name)] = (name, _render(draw(trees), style))
                entries.append((name, _render(value[name], style)))
                return ArgumentText("wrong-type", _object_text(entries, style))
            return ArgumentText("wrong-type", padded(draw, _render(value, style)))

        options.append(call(wrong))
    if "missing" in wanted and good is not None and required:
        left_out = st.lists(st.sampled_from(required), min_size=1, unique=True)

        def missing(draw: st.DrawFn) -> ArgumentText:
            value = draw(good)
            for name in draw(left_out):
                value.pop(name, None)
            return ArgumentText("missing", padded(draw, _render(value, draw(_STYLES))))

        options.append(call(missing))
    if "extra" in wanted and good is not None:
        declared = set(properties)

        def extra(draw: st.DrawFn) -> ArgumentText:
            value = draw(good)
            style = draw(_STYLES)
            entries = [(key, _render(item, style)) for key, item in value.items()]
            taken = declared | set(value)
            for position in range(1 + draw(upto(2))):
                name = fresh_key(draw(knobs.keys), taken)
                taken.add(name)
                if position == 0 and draw(upto(3)) == 3:
                    text = _deep(1 + draw(upto(depth_limit - 1)), pick(draw, 2))
                else:
                    text = _render(draw(trees), style)
                entries.insert(draw(upto(len(entries))), (name, text))
            return ArgumentText("extra", padded(draw, _object_text(entries, style)))

        options.append(call(extra))
    if not options:
        raise InvalidArgument(
            f"argument_texts: these parameters cannot produce any of the kinds {list(wanted)} "
            "(missing needs a required parameter, wrong-type a declared one, valid/extra/missing/"
            "wrong-type a satisfiable map)"
        )
    return st.one_of(options)


def _argument_text_strategy() -> st.SearchStrategy[ArgumentText]:
    def build(draw: st.DrawFn) -> ArgumentText:
        parameters = draw(parameter_maps(max_size=3))
        text: ArgumentText = draw(argument_texts(parameters))
        return text

    return call(build)


# ``st.from_type(ArgumentText)``: text for a drawn parameter map (built on first use).
st.register_type_strategy(ArgumentText, lambda thing: _argument_text_strategy())
