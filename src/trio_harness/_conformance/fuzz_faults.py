"""Requests where one rule alone decides the answer: single faults, several violations, outputs.

The general strategies (:mod:`.fuzz_requests`) break a drawn schema with one of a few edits, on
top of whatever else it holds; blind mutants of upstream hid where that never reaches (issue
33). So these flavours draw, each from a table of upstream's own checks:

* **one fault in an otherwise valid schema** (``assert``, ``assertObject``): a node of every
  kind, with valid keywords beside it (annotations, ``enum`` with its ``const``, ``required``
  with its ``properties``), broken in exactly one keyword — every check of the subset's walk
  (unknown keyword, annotation, ``type``, ``oneOf`` and its siblings, keywords on the wrong
  type, ``properties``, ``required``, ``additionalProperties``, ``items``, ``enum``,
  ``const``) — at the root or below a property, an item or a branch; now and then a second
  fault elsewhere, for the walk order;
* **one fault in an otherwise valid DSL spec** (``compileParams``, ``compileValue``,
  ``validateArgs``): every check of the compiler, which stops at the first, and those the
  compiled schema's assertion makes after it;
* **``oneOf`` of one branch** (and of none, and ``anyOf``), compiled, asserted and validated;
* **NaN, infinities and ``-0`` right under ``number`` and ``integer``** (values, items,
  properties, branches; ``enum``/``const`` members of asserted and compiled schemas);
* **arguments that break two or more rules at once** (missing, wrongly typed, outside ``enum``
  or ``const``, undeclared in a closed object, matching no or two branches), for
  ``validateArgs`` and in scheduling calls, where the tool's error text joins them;
* **tools with an output spec** (scheduling): bodies, wrappers and post-execute decisions
  returning values that satisfy it or fail it (``INVALID_TOOL_OUTPUT``), own ``__proto__``
  keys included.

Every number drawn is one JavaScript holds exactly (small integers and short decimals).
"""

from __future__ import annotations

import json
from typing import Any, Final

from hypothesis import strategies as st

__all__ = [
    "fault_validation_requests",
    "multi_violation_scenarios",
    "output_scenarios",
]

# ---------------------------------------------------------------------------------------------
# Raw schemas with one fault
# ---------------------------------------------------------------------------------------------

#: A valid node of each kind, with every optional keyword it may carry beside the one broken.
_RAW_BASES: Final[dict[str, dict[str, Any]]] = {
    "string": {"type": "string", "enum": ["a", "b"], "const": "a", "description": "d"},
    "integer": {"type": "integer", "enum": [1, 2], "title": "t", "default": 1},
    "number": {"type": "number", "const": 2.5, "examples": [2.5]},
    "boolean": {"type": "boolean", "enum": [True]},
    "null": {"type": "null", "enum": [None], "const": None},
    "object": {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    },
    "array": {"type": "array", "items": {"type": "boolean"}, "description": "d"},
    "oneOf": {"oneOf": [{"type": "string"}, {"type": "integer"}], "title": "t"},
    "any": {"description": "anything", "default": {"a": [1]}},
}
_SCALARS: Final = ("string", "integer", "number", "boolean", "null")
_ONE_OF_SIBLINGS: Final[dict[str, Any]] = {
    "properties": {},
    "required": [],
    "additionalProperties": True,
    "items": {},
    "enum": [1],
    "const": 1,
}
#: Per scalar type: enum lists and consts of the wrong type (``-0`` is no JSON number).
_WRONG_MEMBERS: Final[dict[str, list[Any]]] = {
    "string": [1, None, True],
    "integer": [1.5, "1", True, {"$negzero": True}],
    "number": ["1", {"$nan": True}, {"$inf": 1}, {"$negzero": True}, False],
    "boolean": [1, "true", None],
    "null": [0, False, ""],
}

_Fault = tuple[str, str, Any]  # (base kind, keyword, broken value); "" keyword: the whole node


def _raw_faults() -> list[_Fault]:
    faults: list[_Fault] = []
    key: str
    value: Any  # one loop variable for the tables of every keyword
    every = list(_RAW_BASES)
    for kind in every:
        for key, value in (
            ("format", "email"),
            ("anyOf", [{"type": "string"}]),
            ("$ref", "#"),
            ("minimum", 1),
            ("allOf", []),
            ("description", 1),
            ("title", ["t"]),
            ("default", {"$nan": True}),
            ("examples", [{"$inf": -1}]),
        ):
            faults.append((kind, key, value))
    for kind in every:
        if kind not in ("oneOf", "any"):
            faults.append((kind, "oneOf", [{"type": "string"}, {"type": "null"}]))
    faults.append(("oneOf", "type", "string"))
    for key, value in _ONE_OF_SIBLINGS.items():
        faults.append(("any", key, value))
        faults.append(("oneOf", key, value))
    for value in ({}, [], [{"type": "string"}], "x", None, [{"type": "string"}, 1]):
        faults.append(("oneOf", "oneOf", value))
    for kind in (*_SCALARS, "object", "array"):
        for value in ("text", "json", ["string"], ["string", "null"], 1, None, "Object"):
            faults.append((kind, "type", value))
    for kind in _SCALARS:
        for key, value in (
            ("properties", {}),
            ("required", []),
            ("additionalProperties", False),
            ("items", {}),
        ):
            faults.append((kind, key, value))
        for member in _WRONG_MEMBERS[kind]:
            faults.append((kind, "enum", [member]))
            faults.append((kind, "const", member))
        for value in ([], "a", {}, None):
            faults.append((kind, "enum", value))
    faults.append(("string", "const", "c"))  # well typed, not in enum
    faults.append(("integer", "const", 3))
    faults.append(("boolean", "const", False))
    for key, value in (("items", {}), ("enum", ["a"]), ("const", "a")):
        faults.append(("object", key, value))
    for key, value in (
        ("properties", {}),
        ("required", []),
        ("additionalProperties", True),
        ("enum", [1]),
        ("const", 1),
    ):
        faults.append(("array", key, value))
    for value in ("x", [], None, 1, [{"type": "string"}]):
        faults.append(("object", "properties", value))
    for value in ("a", [1], {}, ["a", 1], None, ["z"], ["a", "zz"], ["toString"], ["b", "b"]):
        faults.append(("object", "required", value))
    for value in (1, "false", None, {}, {"type": "string"}):
        faults.append(("object", "additionalProperties", value))
    for value in ("x", 1, True, None, [], [{"type": "string"}]):
        faults.append(("array", "items", value))
    for value in (None, 1, "x", [], True, [{"type": "string"}]):
        faults.append(("any", "", value))
    return faults


_UNKNOWN: Final = frozenset({"format", "anyOf", "$ref", "minimum", "allOf"})
_ANNOTATIONS: Final = frozenset({"description", "title", "default", "examples"})


def _by_check(faults: list[_Fault], *, per_kind_unknown: bool) -> tuple[tuple[_Fault, ...], ...]:
    """The faults grouped by the check they meet (the keyword, on a scalar, an object, an
    array, a union or an untyped node), so that a check with few table rows is drawn as often
    as one with many: a mutant breaks one check. Annotations are checked alike on every node;
    unknown keywords too in a raw schema, per kind in the DSL (``per_kind_unknown``)."""
    groups: dict[tuple[str, str], list[_Fault]] = {}
    for fault in faults:
        kind = "scalar" if fault[0] in _SCALARS else fault[0]
        key = fault[1]
        if key in _ANNOTATIONS or (key in _UNKNOWN and not per_kind_unknown):
            kind = "*"
        if key in _UNKNOWN:
            key = "unknown"
        elif key == "enum":  # its shape, or its members' type: two checks
            value = fault[2]
            key = "enum-members" if type(value) is list and value else "enum-shape"
        elif key == "additionalProperties" and fault[0] == "object":
            # Present, and a boolean: two checks (the DSL demands it, the raw schema types it).
            key += "-absent" if fault[2] == "absent" else "-type"
        groups.setdefault((key, kind), []).append(fault)
    return tuple(tuple(group) for _, group in sorted(groups.items()))


_RAW_FAULTS: Final = _by_check(_raw_faults(), per_kind_unknown=False)


@st.composite
def _kept(draw: st.DrawFn, base: dict[str, Any], fixed: str) -> dict[str, Any]:
    """``base`` with some of its optional keywords left out (never ``type``/``oneOf``, nor
    ``fixed``), staying valid: ``required`` goes with ``properties``, ``const`` with its
    ``enum``."""
    node: dict[str, Any] = {}
    for key, value in base.items():
        if key in ("type", "oneOf", fixed) or draw(st.integers(0, 2)):
            node[key] = value
    if "required" in node and "properties" not in node:
        del node["required"]
    return node


@st.composite
def _raw_fault_node(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 7)) == 0:  # no fault: every keyword of a kind, valid, beside another
        kind = draw(st.sampled_from(sorted(_RAW_BASES)))
        return draw(_kept(_RAW_BASES[kind], ""))
    kind, key, value = draw(st.sampled_from(draw(st.sampled_from(_RAW_FAULTS))))
    if not key:
        return value
    node = draw(_kept(_RAW_BASES[kind], key))
    if key in ("type", "oneOf") and key not in _RAW_BASES[kind]:
        # The broken keyword goes in the order a schema author writes it: first, or last.
        node = {key: value, **node} if draw(st.booleans()) else {**node, key: value}
    else:
        node[key] = value
    return node


_NAMES: Final = st.sampled_from(["x", "a", "", "toString", "0"])


@st.composite
def _placed(draw: st.DrawFn, node: Any, valid: st.SearchStrategy[Any]) -> Any:
    """``node`` at the root, or below a property, an item or a ``oneOf`` branch (with ``valid``
    siblings), one or two levels down."""
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2]))):
        where = draw(st.integers(0, 2))
        if where == 0:
            name = draw(_NAMES)
            properties = {"b": draw(valid), name: node} if draw(st.booleans()) else {name: node}
            node = {"type": "object", "properties": properties}
            if draw(st.booleans()):
                node["required"] = [name]
            if draw(st.booleans()):
                node["additionalProperties"] = draw(st.booleans())
            if draw(st.integers(0, 2)) == 0:  # a fault of the object's own tail, after its
                # properties' in the walk
                tail, broken = draw(
                    st.sampled_from(
                        [("required", ["zz"]), ("required", "b"), ("additionalProperties", 1)]
                    )
                )
                node[tail] = broken
        elif where == 1:
            node = {"type": "array", "items": node}
        else:
            # The other branch broken too, now and then: the branches' violations in order.
            other = draw(_raw_fault_node()) if draw(st.integers(0, 2)) == 0 else draw(valid)
            node = {"oneOf": [node, other] if draw(st.booleans()) else [other, node]}
    return node


_RAW_VALID: Final = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer", "enum": [1, 2]},
        {"type": "array", "items": {"type": "null"}},
        {"type": "object", "additionalProperties": True},
        {"description": "any"},
    ]
)


@st.composite
def _raw_fault_request(draw: st.DrawFn) -> dict[str, Any]:
    schema = draw(_placed(draw(_raw_fault_node()), _RAW_VALID))
    more = draw(st.sampled_from([0, 0, 1, 2, 3]))
    if more:
        # More faults, each alone on its own node: the assertion reports every one, in walk
        # order, so each still decides a part of the answer.
        properties = {"f": schema}
        for index in range(more):
            properties[f"g{index}"] = draw(_placed(draw(_raw_fault_node()), _RAW_VALID))
        schema = {"type": "object", "properties": properties}
    op = draw(st.sampled_from(["assert", "assert", "assertObject"]))
    return {"op": op, "schema": schema}


# ---------------------------------------------------------------------------------------------
# DSL specs with one fault
# ---------------------------------------------------------------------------------------------

_DSL_BASES: Final[dict[str, dict[str, Any]]] = {
    "string": {"type": "string", "enum": ["a", "b"], "const": "a", "description": "d"},
    "integer": {"type": "integer", "enum": [1, 2], "title": "t"},
    "number": {"type": "number", "const": 2.5, "default": 1},
    "boolean": {"type": "boolean", "examples": [True]},
    "null": {"type": "null"},
    "json": {"type": "json", "title": "t"},
    "array": {"type": "array", "items": {"type": "string"}},
    "object": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"d": {"type": "integer", "required": True}, "e": {"type": "string"}},
    },
    "oneOf": {"oneOf": [{"type": "string"}, {"type": "integer"}], "description": "d"},
}
_DSL_SCALARS: Final = ("string", "integer", "number", "boolean", "null")


def _dsl_faults() -> list[_Fault]:
    faults: list[_Fault] = []
    key: str
    value: Any  # one loop variable for the tables of every keyword
    for kind in _DSL_BASES:
        for key, value in (
            ("format", "email"),
            ("minimum", 0),
            ("anyOf", [{"type": "string"}]),
            ("description", 1),
            ("title", None),
            ("default", {"$inf": 1}),
            ("examples", {"$nan": True}),
        ):
            faults.append((kind, key, value))
    for kind in _DSL_SCALARS:
        for key, value in (("items", {}), ("properties", {}), ("additionalProperties", True)):
            faults.append((kind, key, value))
        for member in _WRONG_MEMBERS[kind]:
            faults.append((kind, "enum", [member]))
            faults.append((kind, "const", member))
        for value in ("a", {}, 1, [], None):
            faults.append((kind, "enum", value))
    faults.append(("string", "const", "c"))  # well typed, not in enum
    faults.append(("integer", "const", 3))
    for key, value in (("enum", [1]), ("items", {}), ("const", 1), ("properties", {})):
        faults.append(("json", key, value))
    for key, value in (
        ("properties", {}),
        ("enum", [1]),
        ("additionalProperties", False),
        ("const", 1),
    ):
        faults.append(("array", key, value))
    for value in (1, "x", None, [], {"type": "object"}, {"type": "string", "required": True}):
        faults.append(("array", "items", value))
    for key, value in (("items", {}), ("enum", [{}]), ("required", ["d"])):
        faults.append(("object", key, value))
    for value in ("yes", 1, None, "absent"):
        faults.append(("object", "additionalProperties", value))
    for value in ([], "x", None, 1, {"d": 1}, {"d": {"type": "string", "required": False}}):
        faults.append(("object", "properties", value))
    for key, value in (
        ("enum", ["a"]),
        ("properties", {}),
        ("items", {}),
        ("additionalProperties", True),
        ("type", "string"),
        ("const", "a"),
    ):
        faults.append(("oneOf", key, value))
    for value in (
        {},
        "x",
        None,
        [],
        [{"type": "string"}],
        [{"type": "string"}, 1],
        [{"type": "string", "required": True}, {"type": "integer"}],
        [{"type": "string"}, {"type": "object", "properties": {}}],
    ):
        faults.append(("oneOf", "oneOf", value))
    for kind in (*_DSL_SCALARS, "json", "array", "object"):
        for value in ("text", None, 1, ["string"], "any", "absent", "Object"):
            faults.append((kind, "type", value))
    for kind in _DSL_BASES:
        # ``required: true`` is a parameter's only: at the root, an item or a branch the DSL
        # rejects it; below a property map (where ``_dsl_placed`` may put the node) it is valid.
        faults.append((kind, "required", True))
    return faults


_DSL_FAULTS: Final = _by_check(_dsl_faults(), per_kind_unknown=True)


@st.composite
def _dsl_fault_node(draw: st.DrawFn) -> Any:
    kind, key, value = draw(st.sampled_from(draw(st.sampled_from(_DSL_FAULTS))))
    base = _DSL_BASES[kind]
    node: dict[str, Any] = {}
    for name, item in base.items():
        if name in ("type", "oneOf", "additionalProperties", key) or draw(st.integers(0, 2)):
            node[name] = item
    if value == "absent":
        node.pop(key, None)
    elif key == "type" and "type" not in base:
        node = {key: value, **node} if draw(st.booleans()) else {**node, key: value}
    else:
        node[key] = value
    return node


_DSL_VALID: Final = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer", "enum": [1, 2]},
        {"type": "json"},
        {"type": "array", "items": {"type": "boolean"}},
        {"type": "object", "additionalProperties": True},
    ]
)


@st.composite
def _dsl_placed(draw: st.DrawFn, node: Any) -> Any:
    """``node`` as a value spec at the root, or below a property, an item or a branch."""
    for _ in range(draw(st.sampled_from([0, 1, 1, 2]))):
        where = draw(st.integers(0, 2))
        if where == 0:
            entry = node
            if type(node) is dict and draw(st.booleans()):
                entry = {**node, "required": draw(st.sampled_from([True, True, False, "yes"]))}
            properties = {draw(_NAMES): entry}
            if draw(st.booleans()):
                properties = {"b": draw(_DSL_VALID), **properties}
            node = {
                "type": "object",
                "additionalProperties": draw(st.booleans()),
                "properties": properties,
            }
        elif where == 1:
            node = {"type": "array", "items": node}
        else:
            other = draw(_DSL_VALID)
            node = {"oneOf": [node, other] if draw(st.booleans()) else [other, node]}
    return node


@st.composite
def _dsl_fault_request(draw: st.DrawFn) -> dict[str, Any]:
    node = draw(_dsl_placed(draw(_dsl_fault_node())))
    shape = draw(st.integers(0, 5))
    if shape in (0, 1):
        return {"op": "compileValue", "spec": node}
    if shape == 5 and draw(st.booleans()):  # a parameter map that is no map, or an entry that
        spec: Any = draw(st.sampled_from([[], "x", None, 1, {"p": 1}, {"p": []}]))
        return {"op": "compileParams", "spec": spec}
    entry = node
    if type(node) is dict and draw(st.booleans()):
        entry = {**node, "required": draw(st.sampled_from([True, True, False, "yes", 1]))}
    spec = {draw(_NAMES): entry}
    if draw(st.booleans()):
        spec = {"q": draw(_DSL_VALID), **spec}
    if shape in (2, 3, 5):
        return {"op": "compileParams", "spec": spec}
    return {"op": "validateArgs", "spec": spec, "args": {"q": "a", "x": 1}}


# ---------------------------------------------------------------------------------------------
# oneOf of one branch
# ---------------------------------------------------------------------------------------------

_BRANCH: Final = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer", "enum": [1, 2]},
        {"type": "object", "additionalProperties": False, "properties": {"a": {"type": "null"}}},
        {"type": "array", "items": {"type": "boolean"}},
        {"type": "json"},
    ]
)
_BRANCH_VALUES: Final = st.sampled_from(["a", 1, 3, None, {"a": None}, {"b": 1}, [True], [1], {}])


@st.composite
def _one_branch_request(draw: st.DrawFn) -> dict[str, Any]:
    branch = draw(_BRANCH)
    keyword = draw(st.sampled_from(["oneOf", "oneOf", "oneOf", "anyOf"]))
    branches = draw(st.sampled_from([[branch], [branch], [], [branch, branch]]))
    spec: dict[str, Any] = {keyword: branches}
    if draw(st.booleans()):
        spec["description"] = "d"
    if draw(st.booleans()):
        spec = draw(_dsl_placed(spec))
    shape = draw(st.integers(0, 5))
    if shape == 0:
        return {"op": "compileValue", "spec": spec}
    if shape == 1:
        return {"op": "compileParams", "spec": {"p": spec}}
    if shape == 2:
        args = {"p": draw(_BRANCH_VALUES)}
        return {"op": "validateArgs", "spec": {"p": spec}, "args": args}
    # The raw form: a one-branch oneOf is outside the subset, and validates all the same.
    raw = json.loads(json.dumps(spec).replace('{"type": "json"}', "{}"))
    if shape == 3:
        return {"op": draw(st.sampled_from(["assert", "assertObject"])), "schema": raw}
    value = draw(_BRANCH_VALUES)
    return {"op": "validate", "schema": raw, "value": value, "path": "value"}


# ---------------------------------------------------------------------------------------------
# Arguments that break several rules at once
# ---------------------------------------------------------------------------------------------

#: Parameters, each with values that keep and values that break its rules.
_PARAMETERS: Final[dict[str, tuple[dict[str, Any], list[Any], list[Any]]]] = {
    "p": ({"type": "boolean", "required": True}, [True, False], [1, "true", None]),
    "n": ({"type": "integer", "enum": [1, 2]}, [1, 2], [3, 1.5, "1"]),
    "s": ({"type": "string", "const": "a"}, ["a"], ["b", 1, ""]),
    "r": ({"type": "number", "required": True}, [2.5, 0], ["2", True, [1]]),
    "o": (
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {"d": {"type": "number", "required": True}, "e": {"type": "string"}},
        },
        [{"d": 1}, {"d": 2.5, "e": "x"}],
        [{}, {"d": "1"}, {"d": 1, "z": 0}, {"e": 1, "y": 2}, [], "o"],
    ),
    "l": (
        {"type": "array", "items": {"type": "integer"}},
        [[], [1, 2]],
        [[1, "2"], ["a", 2.5], {}],
    ),
    "u": (
        {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"}]},
        ["a"],
        [1, None, [1]],
    ),
    "m": (
        {"type": "object", "additionalProperties": True, "properties": {"k": {"type": "null"}}},
        [{"k": None, "z": 1}],
        [{"k": 0}, 1],
    ),
}


@st.composite
def _several_violations(draw: st.DrawFn, min_size: int = 2) -> tuple[dict[str, Any], Any]:
    """A parameter map and arguments for it that break ``0`` to several of its rules (mostly
    two or more): values of the wrong kind, absent required ones, undeclared extras."""
    names = draw(st.lists(st.sampled_from(sorted(_PARAMETERS)), min_size=min_size, max_size=5))
    names = list(dict.fromkeys(names))
    spec = {name: _PARAMETERS[name][0] for name in names}
    args: dict[str, Any] = {}
    for name in names:
        good, bad = _PARAMETERS[name][1:]
        choice = draw(st.sampled_from(["bad", "bad", "good", "absent"]))
        if choice != "absent":
            args[name] = draw(st.sampled_from(bad if choice == "bad" else good))
    if draw(st.integers(0, 3)) == 0:
        args["extra"] = 1  # the root is open: an undeclared argument is no violation
    if draw(st.integers(0, 9)) == 0:
        return spec, draw(st.sampled_from([[], "x", None, 1]))
    return spec, args


@st.composite
def _several_violations_request(draw: st.DrawFn) -> dict[str, Any]:
    spec, args = draw(_several_violations())
    return {"op": "validateArgs", "spec": spec, "args": args}


# ---------------------------------------------------------------------------------------------
# Numbers JSON text cannot hold, under number and integer
# ---------------------------------------------------------------------------------------------

_NOT_FINITE: Final = ({"$nan": True}, {"$inf": 1}, {"$inf": -1}, {"$negzero": True})


@st.composite
def _non_finite_request(draw: st.DrawFn) -> dict[str, Any]:
    """NaN, an infinity or ``-0`` right under ``number`` or ``integer`` (their own messages),
    as a value, an item, a property or a branch's value, or as an ``enum``/``const`` member of
    an asserted schema."""
    bad = draw(st.sampled_from(_NOT_FINITE))
    kind = draw(st.sampled_from(["number", "number", "integer"]))
    node: dict[str, Any] = {"type": kind}
    if draw(st.integers(0, 3)) == 0:
        member = draw(st.sampled_from(["enum", "const"]))
        node[member] = [1, bad] if member == "enum" else bad
        if draw(st.booleans()):
            return {"op": "compileValue", "spec": node}
        return {"op": "assert", "schema": node}
    value: Any = bad
    shape = draw(st.integers(0, 3))
    if shape == 1:
        node, value = {"type": "array", "items": node}, [1, bad]
    elif shape == 2:
        node, value = {"type": "object", "properties": {"n": node}}, {"n": bad}
    elif shape == 3:
        node = {"oneOf": [node, {"type": "string"}]}
    return {
        "op": "validate",
        "schema": node,
        "value": value,
        "path": draw(st.sampled_from(["value", "", "args"])),
    }


def fault_validation_requests() -> st.SearchStrategy[dict[str, Any]]:
    """Validation requests of the flavours above: one fault in a schema or a spec, one-branch
    unions, arguments with several violations."""
    return st.one_of(
        _raw_fault_request(),
        _dsl_fault_request(),
        _dsl_fault_request(),
        _one_branch_request(),
        _several_violations_request(),
        _non_finite_request(),
    )


# ---------------------------------------------------------------------------------------------
# Scheduling: several violations in one call, output specs
# ---------------------------------------------------------------------------------------------

_CLASSIFIERS: Final = st.sampled_from(["always", "always", "never", "absent", {"argument": "p"}])


@st.composite
def multi_violation_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """Two to four calls of tools with several parameters, whose arguments break none, one or
    several rules at once (the tool's error joins every violation); a body of distinct
    duration each (no ties)."""
    count = draw(st.integers(2, 4))
    spec, _ = draw(_several_violations(min_size=3))
    tools: list[dict[str, Any]] = [
        {"name": "read", "parameters": spec, "parallel": draw(_CLASSIFIERS)},
        {"name": "write", "parameters": spec, "parallel": "never"},
    ]
    durations = draw(st.lists(st.integers(1, 40), min_size=count, max_size=count, unique=True))
    calls = []
    for index, ms in enumerate(durations):
        _, args = draw(_several_violations(min_size=3))
        # The same map, other arguments: drawn from it so that every name is declared.
        args = (
            {key: value for key, value in args.items() if key in spec}
            if type(args) is dict
            else args
        )
        for name in spec:
            if type(args) is dict and name not in args and draw(st.booleans()):
                good, bad = _PARAMETERS[name][1:]
                args[name] = draw(st.sampled_from(bad + good))
        calls.append(
            {
                "id": f"c{index}",
                "name": draw(st.sampled_from(["read", "read", "write"])),
                "arguments": json.dumps(args),
                "body": {"ms": ms},
            }
        )
    return {"tools": tools, "calls": calls}


#: Output specs, each with values that satisfy and values that fail it.
_OUTPUTS: Final[tuple[tuple[dict[str, Any], list[Any], list[Any]], ...]] = (
    ({"type": "string"}, ["ok", ""], [1, None, ["ok"]]),
    ({"type": "integer", "enum": [1, 2]}, [1, 2], [3, 1.5, "1"]),
    ({"type": "number"}, [2.5, 0], ["2", True]),
    ({"type": "boolean"}, [True, False], [0, "true"]),
    ({"type": "null"}, [None], [0, "null"]),
    *[
        (
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "a": {"type": "integer", "required": True},
                    "b": {"type": "string"},
                },
            },
            [{"a": 1}, {"a": 2, "b": "x"}],
            [
                {},
                {"a": "1"},
                {"a": 1, "z": 0},
                {"b": 2, "y": 1},
                {"a": "x", "z": 1},
                {"a": 1, "__proto__": 2},
                [1],
                "a",
            ],
        )
    ]
    * 2,
    *[
        (
            {"type": "array", "items": {"type": "string"}},
            [[], ["a", "b"]],
            [["a", 1], [None, 2], [1, "b", None], {}],
        )
    ]
    * 2,
    (
        {
            "type": "object",
            "additionalProperties": True,
            "properties": {"l": {"type": "array", "items": {"type": "integer"}}},
        },
        [{"l": [1]}, {"q": "x"}],
        [{"l": [1, "2", "3"]}, {"l": ["a"], "q": 1}, {"l": {}}],
    ),
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, ["x", 3], [2.5, None, []]),
    ({"type": "json"}, [{"k": [1, None]}, "x", {"__proto__": 1, "k": [{"__proto__": None}]}], []),
)


@st.composite
def output_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """Two to four calls of tools with an output spec; each call's value (the body's, a
    wrapper's own, or a post-execute replacement) satisfies it or fails it; the call id as the
    default value fails every spec but strings and ``json``."""
    outputs = [draw(st.sampled_from(_OUTPUTS)) for _ in range(2)]
    tools = [
        {"name": "read", "output": outputs[0][0], "parallel": draw(_CLASSIFIERS)},
        {"name": "write", "output": outputs[1][0], "parallel": "never"},
    ]
    count = draw(st.integers(2, 5))
    durations = draw(st.lists(st.integers(1, 40), min_size=count, max_size=count, unique=True))
    calls = []
    for index, ms in enumerate(durations):
        which = draw(st.integers(0, 1))
        _, good, bad = outputs[which]
        value = draw(st.sampled_from(bad + good + bad))
        call: dict[str, Any] = {
            "id": f"c{index}",
            "name": ("read", "write")[which],
            "body": {"ms": ms},
        }
        source = draw(st.sampled_from(["body", "body", "body", "default", "wrapper", "post"]))
        if source == "body":
            call["body"]["returns"] = value
        elif source == "wrapper":
            call["wrapper"] = {"beforeMs": draw(st.integers(0, 5)), "returns": value}
        elif source == "post":
            call["post"] = {"ms": draw(st.integers(0, 5)), "decision": "accept", "value": value}
            if draw(st.booleans()):
                call["body"]["returns"] = draw(st.sampled_from(bad + good))
        calls.append(call)
    return {"tools": tools, "calls": calls}
