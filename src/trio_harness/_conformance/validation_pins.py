"""Validation edge cases that pin one rule each by at least three cases (``spec/validation-edges.jsonl``).

Each group is a rule a port author must follow and that, before these cases, no case or only
one or two cases guarded (found by probing the oracle and by mutants of upstream written by
someone who had not seen the kit, ``bench/kit_mutants.py``):

* ``untyped`` — a schema without ``type`` (and without ``oneOf``) checks nothing but that the
  value is lossless JSON: its ``enum``/``const`` are ignored by ``validate``;
* ``keyword-order`` — ``assert`` reports unknown keywords and annotations that are not lossless
  JSON in the schema's key order, then ``description``/``title`` that are not strings;
* ``required-first`` — ``missing required property`` comes before the children's violations,
  which come before ``additionalProperties: false`` (in ``validate`` and in ``assert``);
* ``dsl-enum`` — the parameter DSL checks only that ``enum`` is an array; its members' types and
  emptiness are checked by the raw-schema check afterwards (with its message and path);
* ``dsl-shapes`` — the DSL's own shape messages: a parameter or item that is not a value schema
  object, a parameter map (or ``properties``) that is not an object, a ``oneOf`` that is not an
  array;
* ``finite`` — ``NaN``, ``±Infinity`` and ``-0`` under ``number`` are ``must be a finite JSON
  number``, under ``integer`` ``must be an integer``;
* ``const-enum`` — ``assert`` rejects a ``const`` that is not a member of its sibling ``enum``;
* ``null-members`` — ``validate`` (which does not check its schema) reads ``properties: null`` as
  no properties and ``required: null`` as none (upstream's ``?? {}`` / ``?? []`` branches, found
  unreached by the V8 coverage of the upstream port run, ``bench/kit_coverage.py``);
* ``dsl-openness`` — the DSL rejects an object whose ``additionalProperties`` is present but
  not a boolean with its own message (``must be explicitly true or false``), not the
  raw-schema check's ``must be a boolean``;
* ``compiled-order`` — the key order of compiled schemas: ``type``, then ``description``,
  ``title``, ``default``, ``examples``, then ``additionalProperties``, ``properties``,
  ``required`` (objects), ``items`` (arrays), ``enum``, ``const`` (scalars);
* ``keywords`` — every JSON Schema keyword outside the subset (all of draft 2020-12's, and those
  of earlier drafts and OpenAPI that real tool schemas carry: ``$schema``, ``$comment``,
  ``readOnly``, ``nullable``, ...) is rejected, by ``assert`` and by the DSL, at the root, in a
  property, in ``items`` and in a ``oneOf`` branch; only the four annotations are accepted
  (a second blind round of upstream mutants found a port taking ``$schema`` for an annotation
  passing the whole kit).

Not here: ``validate`` with an unknown ``type``. Upstream throws ``Error`` at the root and, below
it, answers ``must be a lossless JSON value`` at the nearest node with a known type (or the
``oneOf`` holding it); the reference throws ``UnreachableVariantError`` at every depth. The cases
wait for the reference to follow upstream (``spec/UNREACHED.md``).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["PIN_GROUPS"]

_NAN: Final = {"$nan": True}
_INF: Final = {"$inf": 1}
_NEG_INF: Final = {"$inf": -1}
_NEG_ZERO: Final = {"$negzero": True}


def _validate(schema: Any, value: Any, path: str = "value") -> dict[str, Any]:
    return {"op": "validate", "schema": schema, "value": value, "path": path}


def _assert(schema: Any) -> dict[str, Any]:
    return {"op": "assert", "schema": schema}


def _params(spec: Any) -> dict[str, Any]:
    return {"op": "compileParams", "spec": spec}


def _value(spec: Any) -> dict[str, Any]:
    return {"op": "compileValue", "spec": spec}


def _args(spec: Any, args: Any) -> dict[str, Any]:
    return {"op": "validateArgs", "spec": spec, "args": args}


def _obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


_UNTYPED: Final = (
    _validate({"enum": [1]}, 2),
    _validate({"const": "a"}, "b"),
    _validate({"enum": ["x"], "const": "x"}, 5, ""),
    _validate(_obj({"a": {"const": 1, "description": "d"}}), {"a": [1, 2]}),
    _validate({"type": "array", "items": {"enum": [True]}}, [False, None, "x"]),
)

_KEYWORD_ORDER: Final = (
    _assert({"foo": 1, "description": 2, "bar": 2}),
    _assert({"a": 1, "default": _NAN, "b": 2, "title": 3}),
    _assert({"title": 1, "examples": [_INF], "zeta": 0, "type": "string", "description": False}),
    _assert(_obj({"p": {"type": "string", "x-1": 1, "title": []}}, description=1)),
)

_REQUIRED_FIRST: Final = (
    _validate(_obj({"a": {}}, required=["a"], additionalProperties=False), {"z": 1}),
    _validate(
        _obj({"a": {}, "b": {"type": "string"}}, required=["a"], additionalProperties=False),
        {"z": 1, "b": 2},
    ),
    _validate(
        _obj({"b": {"type": "integer"}}, required=["b", "c"], additionalProperties=False),
        {"y": True, "x": 1},
        "",
    ),
    _assert({"type": "object", "required": ["q"], "additionalProperties": 1}),
    _assert({"type": "object", "additionalProperties": "no", "required": "q"}),
    _args({"a": {"type": "string", "required": True}}, {"b": 1}),
)

_DSL_ENUM: Final = (
    _params({"a": {"type": "string", "enum": [1]}}),
    _params({"a": {"type": "integer", "enum": []}}),
    _params({"a": {"type": "boolean", "enum": "yes"}}),
    _value({"type": "number", "enum": ["1"]}),
    _value({"type": "array", "items": {"type": "null", "enum": [None, 0]}}),
)

_DSL_SHAPES: Final = (
    _params({"a": 1}),
    _params([]),
    _params({"o": {"type": "object", "additionalProperties": False, "properties": {"p": None}}}),
    _value({"type": "array", "items": "x"}),
    _value({"type": "object", "additionalProperties": True, "properties": 1}),
    _value({"oneOf": {}}),
    _params({"u": {"oneOf": "ab"}}),
    _value({"type": "array", "items": {"oneOf": None}}),
    _params({"o": {"type": "object", "additionalProperties": True, "properties": ["p"]}}),
)

_FINITE: Final = (
    _validate({"type": "number"}, _NAN),
    _validate({"type": "number"}, _INF),
    _validate(_obj({"n": {"type": "number"}}), {"n": _NEG_INF}),
    _validate({"type": "array", "items": {"type": "number"}}, [1, _NEG_ZERO]),
    _validate({"type": "integer"}, _NEG_ZERO),
    _validate(_obj({"i": {"type": "integer", "enum": [0]}}), {"i": _NEG_ZERO}),
    _validate({"type": "array", "items": {"type": "integer"}}, [_NEG_ZERO, 0], "args"),
    _validate({"type": "integer"}, _INF),
)

_CONST_ENUM: Final = (
    _assert({"type": "string", "enum": ["a"], "const": "b"}),
    _assert({"type": "number", "enum": [1, 2], "const": 3}),
    _assert(_obj({"p": {"type": "boolean", "enum": [True], "const": False}})),
    _value({"type": "integer", "enum": [1], "const": 2}),
    _params({"p": {"type": "null", "enum": [None], "const": None}}),
)

_COMPILED_ORDER: Final = (
    _params({"a": {"type": "string", "title": "T", "description": "D", "required": True}}),
    _params(
        {
            "o": {
                "type": "object",
                "additionalProperties": False,
                "title": "t",
                "properties": {"x": {"type": "integer", "examples": [1], "description": "x"}},
            }
        }
    ),
    _value({"examples": [[]], "items": {"type": "boolean"}, "type": "array", "title": "list"}),
    _value(
        {
            "additionalProperties": True,
            "properties": {"q": {"const": "v", "enum": ["v"], "type": "string", "default": "v"}},
            "description": "obj",
            "type": "object",
        }
    ),
    _value({"oneOf": [{"type": "null"}, {"type": "json", "title": "any"}], "description": "u"}),
    _value({"title": "n", "type": "number", "description": "a number", "default": 1}),
    _params(
        {
            "p": {"description": "first", "type": "boolean", "title": "flag"},
            "q": {"type": "object", "description": "q", "additionalProperties": False},
        }
    ),
    _value(
        {
            "type": "array",
            "items": {"type": "object", "title": "row", "additionalProperties": True},
        }
    ),
    _value({"type": "json", "examples": [1], "description": "anything", "title": "any"}),
    _params({"j": {"type": "json", "description": "free", "required": True}}),
    _value({"type": "array", "items": {"type": "json", "default": None, "title": "item"}}),
)

_NULL_MEMBERS: Final = (
    _validate({"type": "object", "properties": None}, {"a": 1}),
    _validate(
        {"type": "object", "required": None, "properties": {"a": {"type": "string"}}}, {"a": 1}
    ),
    _validate(
        {"type": "object", "properties": None, "required": ["a"], "additionalProperties": False},
        {"a": 1},
        "",
    ),
    _validate(
        {"type": "object", "properties": None, "additionalProperties": False}, {"b": []}, "args"
    ),
    _validate({"type": "array", "items": {"type": "object", "required": None}}, [{}]),
    _validate(_obj({"x": {"type": "object", "properties": None}}), {"x": {"q": 1}}),
)

#: ``(group, requests)``, in file order.
_DSL_OPENNESS: Final = (
    _value({"type": "object", "additionalProperties": "no"}),
    _value({"type": "array", "items": {"type": "object", "additionalProperties": None}}),
    _params({"o": {"type": "object", "additionalProperties": 1, "properties": {}}}),
    _params({"o": {"type": "object", "additionalProperties": "false", "required": True}}),
    _value({"oneOf": [{"type": "string"}, {"type": "object", "additionalProperties": {}}]}),
)

#: Every keyword of JSON Schema draft 2020-12 outside the subset (core, applicator, unevaluated,
#: validation, meta-data, format and content vocabularies), then those of earlier drafts and of
#: OpenAPI that real tool schemas carry, each with a value of its own kind. Only ``description``,
#: ``title``, ``default`` and ``examples`` are annotations; a port that takes ``$schema``,
#: ``$comment``, ``readOnly`` or ``deprecated`` for one too is wrong.
_OTHER_KEYWORDS: Final[tuple[tuple[str, Any], ...]] = (
    ("$schema", "https://json-schema.org/draft/2020-12/schema"),
    ("$id", "https://example.com/tool.json"),
    ("$ref", "#/$defs/a"),
    ("$anchor", "a"),
    ("$dynamicRef", "#a"),
    ("$dynamicAnchor", "a"),
    ("$vocabulary", {"https://json-schema.org/draft/2020-12/vocab/core": True}),
    ("$comment", "a comment"),
    ("$defs", {"a": {"type": "string"}}),
    ("prefixItems", [{"type": "string"}]),
    ("contains", {"type": "string"}),
    ("patternProperties", {"^a": {"type": "string"}}),
    ("dependentSchemas", {"a": {"required": ["b"]}}),
    ("propertyNames", {"type": "string"}),
    ("if", {"type": "string"}),
    ("then", {"type": "string"}),
    ("else", {"type": "string"}),
    ("allOf", [{"type": "string"}]),
    ("anyOf", [{"type": "string"}, {"type": "integer"}]),
    ("not", {"type": "null"}),
    ("unevaluatedItems", False),
    ("unevaluatedProperties", False),
    ("multipleOf", 2),
    ("maximum", 10),
    ("exclusiveMaximum", 10),
    ("minimum", 0),
    ("exclusiveMinimum", 0),
    ("maxLength", 8),
    ("minLength", 1),
    ("pattern", "^a"),
    ("maxItems", 3),
    ("minItems", 1),
    ("uniqueItems", True),
    ("maxContains", 2),
    ("minContains", 1),
    ("maxProperties", 4),
    ("minProperties", 1),
    ("dependentRequired", {"a": ["b"]}),
    ("deprecated", True),
    ("readOnly", True),
    ("writeOnly", False),
    ("format", "uri"),
    ("contentEncoding", "base64"),
    ("contentMediaType", "image/png"),
    ("contentSchema", {"type": "string"}),
    ("definitions", {"a": {"type": "string"}}),
    ("dependencies", {"a": ["b"]}),
    ("additionalItems", False),
    ("$recursiveRef", "#"),
    ("$recursiveAnchor", True),
    ("id", "tool"),
    ("nullable", True),
    ("example", "a"),
    ("discriminator", {"propertyName": "kind"}),
    ("externalDocs", {"url": "https://example.com"}),
)


def _keyword_in_schema(index: int, key: str, value: Any) -> dict[str, Any]:
    # Four places in turn: the root, a property, the items, a ``oneOf`` branch.
    node = {"type": "string", key: value}
    return (
        node,
        _obj({"p": node}),
        {"type": "array", "items": node},
        {"oneOf": [{"type": "integer"}, node]},
    )[index % 4]


def _keyword_in_spec(index: int, key: str, value: Any) -> dict[str, Any]:
    # The DSL: a parameter, a nested property, the items, a value schema's root.
    node = {"type": "string", key: value}
    return (
        _params({"p": node}),
        _params(
            {"p": {"type": "object", "additionalProperties": False, "properties": {"q": node}}}
        ),
        _params({"p": {"type": "array", "items": node}}),
        _value(node),
    )[index % 4]


_KEYWORDS: Final = (
    *(_assert(_keyword_in_schema(i, k, v)) for i, (k, v) in enumerate(_OTHER_KEYWORDS)),
    *(_keyword_in_spec(i, k, v) for i, (k, v) in enumerate(_OTHER_KEYWORDS)),
    # The four annotations are accepted everywhere, by both.
    _assert(
        _obj(
            {"p": {"type": "array", "items": {"type": "string", "title": "t", "examples": ["a"]}}},
            description="d",
            default={},
        )
    ),
    _params({"p": {"type": "string", "description": "d", "title": "t", "default": "a"}}),
    _value({"type": "integer", "examples": [1], "default": 0, "title": "n"}),
)

PIN_GROUPS: Final[tuple[tuple[str, tuple[dict[str, Any], ...]], ...]] = (
    ("untyped", _UNTYPED),
    ("keyword-order", _KEYWORD_ORDER),
    ("required-first", _REQUIRED_FIRST),
    ("dsl-enum", _DSL_ENUM),
    ("dsl-shapes", _DSL_SHAPES),
    ("finite", _FINITE),
    ("const-enum", _CONST_ENUM),
    ("compiled-order", _COMPILED_ORDER),
    ("null-members", _NULL_MEMBERS),
    ("dsl-openness", _DSL_OPENNESS),
    ("keywords", _KEYWORDS),
)
