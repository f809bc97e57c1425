"""``normalize_json_schema``: meaning-preserving rewrites, each reported; unkept parts reported;
and the real-world MCP tool schemas (``../shared/mcp/realworld-tool-schemas.json``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import trio_harness as th

ROOT = Path(__file__).resolve().parents[2]
REALWORLD = ROOT.parent / "shared" / "mcp" / "realworld-tool-schemas.json"

PYDANTIC = {
    "$defs": {
        "Color": {"enum": ["red", "green"], "title": "Color", "type": "string"},
        "Item": {
            "properties": {
                "name": {"minLength": 1, "title": "Name", "type": "string"},
                "qty": {"maximum": 100, "minimum": 1, "title": "Qty", "type": "integer"},
            },
            "required": ["name", "qty"],
            "title": "Item",
            "type": "object",
        },
    },
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "properties": {
        "items": {"items": {"$ref": "#/$defs/Item"}, "title": "Items", "type": "array"},
        "color": {"anyOf": [{"$ref": "#/$defs/Color"}, {"type": "null"}], "default": None},
    },
    "required": ["items"],
    "title": "AddItems",
    "type": "object",
}


def test_pydantic_defs_refs_and_optional() -> None:
    original = copy.deepcopy(PYDANTIC)
    normalized = th.schema.normalize_json_schema(PYDANTIC)
    assert original == PYDANTIC  # never mutated
    assert normalized.exact
    assert normalized.schema == {
        "properties": {
            "items": {
                "items": {
                    "properties": {
                        "name": {"minLength": 1, "title": "Name", "type": "string"},
                        "qty": {"maximum": 100, "minimum": 1, "title": "Qty", "type": "integer"},
                    },
                    "required": ["name", "qty"],
                    "title": "Item",
                    "type": "object",
                },
                "title": "Items",
                "type": "array",
            },
            "color": {
                "default": None,
                "oneOf": [
                    {"enum": ["red", "green"], "title": "Color", "type": "string"},
                    {"type": "null"},
                ],
            },
        },
        "required": ["items"],
        "title": "AddItems",
        "type": "object",
    }
    assert normalized.changes == (
        "schema.$defs: removed after inlining its references",
        "schema.$schema: dropped (no constraint)",
        'schema.properties.items.items.$ref: "#/$defs/Item" inlined',
        'schema.properties.color.anyOf[0].$ref: "#/$defs/Color" inlined',
        "schema.properties.color.anyOf: branches disjoint by type: written as oneOf",
    )


def test_recursive_refs_are_reported_not_followed() -> None:
    schema = {
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "type": "object",
        "properties": {"head": {"$ref": "#/$defs/Node"}},
    }
    normalized = th.schema.normalize_json_schema(schema)
    assert normalized.unkept == (
        'schema.properties.head.properties.next.$ref: "#/$defs/Node" is recursive; not followed '
        "(the value there is unchecked)",
    )
    assert not normalized.exact
    assert normalized.schema["properties"]["head"] == {"type": "object", "properties": {"next": {}}}


def test_fanning_out_references_are_bounded_and_reported() -> None:
    def fan_out(levels: int) -> dict[str, object]:
        defs: dict[str, object] = {
            f"d{i}": {
                "type": "object",
                "properties": {
                    "a": {"$ref": f"#/$defs/d{i + 1}"},
                    "b": {"$ref": f"#/$defs/d{i + 1}"},
                },
            }
            for i in range(levels)
        }
        defs[f"d{levels}"] = {"type": "string"}
        return {"$defs": defs, "$ref": "#/$defs/d0"}

    # 2**15 references to inline, 65,535 schema objects: the first 10,000 references are.
    normalized = th.schema.normalize_json_schema(fan_out(15))
    assert any(
        "not inlined: the schema already inlined 10000 references" in line
        for line in normalized.unkept
    )
    assert not normalized.exact
    # 2**30: past the JSON node limit, refused before anything is inlined.
    refused = th.schema.normalize_json_schema(fan_out(30))
    assert refused.unkept == (
        'schema.$ref: "#/$defs/d0" not inlined: the references expand to more than the JSON '
        "node limit of 1000000 schema objects; nothing normalized",
    )
    assert refused.violations[0].startswith("schema is larger than the JSON node limit")


def test_type_arrays_nullable_and_untyped_enums() -> None:
    normalized = th.schema.normalize_json_schema(
        {
            "type": "object",
            "properties": {
                "v": {"type": ["string", "number", "integer"], "minLength": 1, "minimum": 0},
                "n": {"type": "string", "nullable": True, "maxLength": 3},
                "e": {"enum": ["a", 1]},
                "c": {"const": True},
            },
        }
    )
    assert normalized.exact
    properties = normalized.schema["properties"]
    assert properties["v"] == {
        "oneOf": [{"type": "string", "minLength": 1}, {"type": "number", "minimum": 0}]
    }
    assert properties["n"] == {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]}
    assert properties["e"] == {
        "oneOf": [{"type": "string", "enum": ["a"]}, {"type": "integer", "enum": [1]}]
    }
    assert properties["c"] == {"const": True, "type": "boolean"}


def test_unknown_keywords_and_overlapping_any_of_are_unkept_never_silent() -> None:
    normalized = th.schema.normalize_json_schema(
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "not": {"const": "x"}},
                "b": {
                    "anyOf": [
                        {"type": "string", "maxLength": 5},
                        {"type": "string", "minLength": 3},
                    ]
                },
            },
            "patternProperties": {"^x": {"type": "string"}},
        }
    )
    assert normalized.unkept == (
        "schema.properties.a.not: not supported (removed)",
        "schema.properties.b.anyOf: branches overlap by type (anyOf is not expressible as oneOf); removed",
        "schema.patternProperties: not supported (removed)",
    )


def test_strict_vocabulary_reports_every_extension_keyword() -> None:
    normalized = th.schema.normalize_json_schema(PYDANTIC, vocabulary="strict")
    assert normalized.unkept == (
        "schema.properties.items.items.properties.name.minLength: an extension keyword (not in the strict vocabulary)",
        "schema.properties.items.items.properties.qty.maximum: an extension keyword (not in the strict vocabulary)",
        "schema.properties.items.items.properties.qty.minimum: an extension keyword (not in the strict vocabulary)",
    )
    th.assert_supported_json_schema(normalized.schema)


def test_draft4_and_tuple_forms() -> None:
    normalized = th.schema.normalize_json_schema(
        {"type": "number", "minimum": 1, "exclusiveMinimum": True}, tool_input=False
    )
    assert normalized.schema == {"type": "number", "exclusiveMinimum": 1}
    tuple_form = th.schema.normalize_json_schema(
        {"type": "array", "items": [{"type": "string"}], "additionalItems": False}, tool_input=False
    )
    assert tuple_form.exact
    assert tuple_form.schema == {
        "type": "array",
        "prefixItems": [{"type": "string"}],
        "maxItems": 1,
    }


# -- the real-world schemas ----------------------------------------------------------------------

needs_realworld = pytest.mark.skipif(
    not REALWORLD.is_file(), reason=f"{REALWORLD} is absent (shared material)"
)


def realworld() -> list[dict[str, Any]]:
    return json.loads(REALWORLD.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@needs_realworld
def test_all_147_real_world_schemas_register_with_full_checking() -> None:
    entries = realworld()
    assert len(entries) == 147
    strict_ok = 0
    for entry in entries:
        schema = entry["inputSchema"]
        try:
            th.assert_supported_json_schema(schema)
            strict_ok += 1
        except th.JsonSchemaError:
            pass
        normalized = th.schema.normalize_json_schema(schema)
        assert normalized.exact, (entry["tool"], normalized.unkept, normalized.violations)
        th.define_json_tool(name=entry["tool"], description="", input_schema=schema, execute=_never)
    assert strict_ok == 80  # the strict subset alone, unchanged


async def _never(args: Any, ctx: Any) -> Any:
    raise AssertionError("not called")


def _occurrences(node: Any, path: str) -> list[str]:
    """``<path>.<keyword>`` of every keyword in a schema (recursing into subschemas only)."""
    found: list[str] = []
    if type(node) is not dict:
        return found
    for key, value in node.items():
        found.append(f"{path}.{key}")
        if (
            key in ("properties", "$defs", "definitions", "patternProperties")
            and type(value) is dict
        ):
            for name, child in value.items():
                found.extend(_occurrences(child, f"{path}.{key}.{name}"))
        elif key in ("items", "additionalProperties", "not") and type(value) is dict:
            found.extend(_occurrences(value, f"{path}.{key}"))
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and type(value) is list:
            for index, child in enumerate(value):
                found.extend(_occurrences(child, f"{path}.{key}[{index}]"))
    return found


def _lookup(node: Any, path: str) -> bool:
    parts = path.removeprefix("schema.").replace("[", ".[").split(".")
    for part in parts:
        if part.startswith("["):
            index = int(part[1:-1])
            if type(node) is not list or index >= len(node):
                return False
            node = node[index]
        elif type(node) is dict and part in node:
            node = node[part]
        else:
            return False
    return True


@needs_realworld
def test_no_real_world_keyword_is_silently_ignored() -> None:
    """Every keyword of every real-world schema is kept at its place, or its node's rewrite is
    reported in the changes (or unkept parts)."""
    silent: list[str] = []
    kept = 0
    for entry in realworld():
        normalized = th.schema.normalize_json_schema(entry["inputSchema"])
        reported = [line.split(": ", 1)[0] for line in (*normalized.changes, *normalized.unkept)]
        for occurrence in _occurrences(entry["inputSchema"], "schema"):
            if _lookup(normalized.schema, occurrence):
                kept += 1
            elif not any(
                occurrence == prefix or occurrence.startswith((prefix + ".", prefix + "["))
                for prefix in reported
            ):
                silent.append(f"{entry['tool']}: {occurrence}")
    assert silent == []
    assert kept > 2000


@pytest.mark.parametrize(
    ("kind", "keyword", "payload"),
    [
        # One row per keyword the two vocabularies give a type: the normaliser's table is
        # derived from theirs, so a keyword added to either is sorted into its type's branch.
        ("object", "properties", {"a": {"type": "string"}}),
        ("object", "minProperties", 1),
        ("array", "items", {"type": "string"}),
        ("array", "uniqueItems", True),
        ("string", "pattern", "^a"),
        ("number", "multipleOf", 2),
    ],
)
def test_a_type_array_sorts_every_keyword_of_both_vocabularies_into_its_types_branch(
    kind: str, keyword: str, payload: object
) -> None:
    other = "null"
    report = th.schema.normalize_json_schema({"type": [kind, other], keyword: payload})
    assert report.exact, report
    branches = {branch["type"]: branch for branch in report.schema["oneOf"]}
    assert branches[kind][keyword] == payload
    assert keyword not in branches[other]


def test_a_type_array_keeps_the_keywords_in_the_order_they_were_written() -> None:
    report = th.schema.normalize_json_schema(
        {"type": ["string", "null"], "pattern": "a", "maxLength": 3, "minLength": 1}
    )
    assert list(report.schema["oneOf"][0]) == ["type", "pattern", "maxLength", "minLength"]
