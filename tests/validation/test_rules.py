"""The rule table (``_validation/rules.py``): one template per violation, used by every engine;
and the compiled validators' ``linecache`` entries, bounded by the validator caches."""

from __future__ import annotations

import gc
import linecache
import math
from typing import Any

import pytest

from trio_harness import validate_json_schema_value
from trio_harness._json.lossless import MAX_FINITE_JSON_INT
from trio_harness._validation import compiled, rules
from trio_harness._validation.extended import validate_extended_value
from trio_harness._validation.extended_compiled import compile_extended_validator
from trio_harness._validation.subset import CONSTRAINT_KEYWORDS, SCALAR_TYPES, STRUCTURAL_BY_TYPE
from trio_harness.lowlevel import compile_validator

#: Values on the edges of the type checks.
EDGE_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2**30,
    2**53 + 1,
    MAX_FINITE_JSON_INT,
    -MAX_FINITE_JSON_INT,
    MAX_FINITE_JSON_INT + 1,
    -MAX_FINITE_JSON_INT - 1,
    0.0,
    -0.0,
    1.0,
    1.5,
    math.inf,
    -math.inf,
    math.nan,
    "",
    "a",
    [],
    {},
    (),
]


def test_every_type_of_the_subset_has_a_rule_and_every_rule_a_message() -> None:
    assert set(rules.TYPE_RULES) == set(STRUCTURAL_BY_TYPE) == SCALAR_TYPES | {"object", "array"}
    for rule in rules.TYPE_RULES.values():
        assert rule.violation in rules.MESSAGES
        if rule.refine is not None:
            assert rule.refine[1] in rules.MESSAGES
    assert {name for _op, _length, name, _noun in rules.BOUNDS.values()} <= set(rules.MESSAGES)
    # The rule table's docstring names every constraint keyword of the subset.
    for keyword in CONSTRAINT_KEYWORDS:
        assert f"``{keyword}``" in (rules.__doc__ or "")


@pytest.mark.parametrize("type_name", sorted(rules.TYPE_RULES))
def test_the_interpreted_and_the_generated_type_check_are_one_expression(type_name: str) -> None:
    # The walker calls TYPE_TESTS; generated code inlines type_test(): same text, same answers.
    generated = eval(  # the expression the code generator emits, evaluated as it would run
        "lambda v: " + rules.type_test(type_name, "v"), dict(rules.CODE_NAMESPACE)
    )
    for value in EDGE_VALUES:
        assert rules.TYPE_TESTS[type_name](value) is bool(generated(value)), value


def test_a_violation_and_its_generated_code_build_the_same_text() -> None:
    path, child = "value.a", "value.a.b"
    assert eval(
        rules.violation_code("one_of", path="path", matched="str(n)"),
        {},
        {
            "path": path,
            "n": 2,
        },
    ) == rules.violation("one_of", path=path, matched=2)
    assert eval(rules.violation_code("missing_required", child="c"), {}, {"c": child}) == (
        'missing required property "value.a.b"'
    )
    shown = rules.Literal('["x","y"]')
    code = rules.violation_code("not_in_enum", path="p", enum=shown)
    assert code == '\'"\' + p + \'" must be one of ["x","y"]\''  # one literal after the path
    assert eval(code, {}, {"p": path}) == '"value.a" must be one of ["x","y"]'


def test_the_engines_report_the_table_s_wording() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "number"},
            "s": {"type": "string", "enum": ["x"]},
            "r": {"type": "null"},
        },
        "required": ["r"],
        "additionalProperties": False,
    }
    value = {"n": math.inf, "s": "y", "z": 1}
    expected = [
        rules.violation("missing_required", child="r"),
        rules.violation("not_finite", path="n"),
        rules.violation("not_in_enum", path="s", enum='["x"]'),
        rules.violation("undeclared", child="z"),
    ]
    assert validate_json_schema_value(schema, value, "") == expected
    assert compile_validator(schema)(value, "") == expected
    assert validate_extended_value(schema, value, "") == expected
    assert compile_extended_validator({**schema, "minProperties": 0})(value, "") == expected


def test_bounds_render_their_counted_nouns() -> None:
    check = rules.bound_check("minProperties", 2)
    assert check({"a": 1}, "value") == '"value" must have at least 2 properties'
    assert check({"a": 1, "b": 2}, "value") is None
    assert rules.bound_check("maxLength", 1)("ab", "s") == '"s" must be at most 1 character long'
    assert rules.bound_check("exclusiveMinimum", 0.5)(0.5, "x") == '"x" must be > 0.5'


def _entries() -> set[str]:
    return {name for name in linecache.cache if name.startswith("<trio_harness validator #")}


def test_linecache_entries_live_as_long_as_their_validators(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    size = 8
    monkeypatch.setattr(compiled, "_CACHE_SIZE", size)
    monkeypatch.setattr(compiled, "_by_identity", {})
    monkeypatch.setattr(compiled, "_by_text", {})
    gc.collect()
    before = _entries()
    kept = compile_validator({"type": "object", "properties": {"kept": {"type": "string"}}})
    for index in range(100):
        compile_validator({"type": "object", "properties": {f"p{index}": {"type": "string"}}})
    gc.collect()
    added = _entries() - before
    # The evicted validators' entries are gone: at most the cached ones (and ``kept``) remain.
    assert 1 <= len(added) <= size + 1
    filename = kept.__code__.co_filename
    assert filename in added  # a live validator still shows its source in tracebacks
    assert linecache.getlines(filename)
    compiled._by_identity.clear()
    compiled._by_text.clear()
    del kept
    gc.collect()
    assert _entries() - before == set()
