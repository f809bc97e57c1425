"""``normalize_json_schema``: a foreign JSON Schema rewritten into the subset (+ extension).

Every rewrite keeps the schema's meaning exactly, and every one is reported; what cannot be kept
is removed *and reported* (never silently). The input is never mutated.

Rewrites (each a ``changes`` entry, ``<path>: <what>``):

* dropped keywords that carry no constraint: ``$schema``, ``$id``, ``$anchor``, ``$comment``,
  ``$defs``/``definitions`` (after inlining), ``deprecated``, ``readOnly``, ``writeOnly``,
  ``contentMediaType``, ``contentEncoding``, ``x-*`` vendor keys, ``propertyNames`` that every
  key satisfies (``{"type": "string"}``, ``{}``, ``true``), and annotation payloads that are not
  lossless JSON;
* local ``$ref`` (``#``, ``#/$defs/...``, ``#/definitions/...``, any JSON pointer into the
  document) inlined, its sibling keywords merged when they do not collide; a recursive reference
  is *not* followed: it is an unkept part;
* ``type: [..]`` → ``oneOf`` of one branch per type (keywords go to the branch of their type;
  ``integer`` beside ``number`` is dropped as included), ``nullable: true`` → a ``null`` branch;
* ``anyOf``/``oneOf``/``allOf`` of one branch merged into the node; ``anyOf`` whose branches are
  disjoint (by type, by distinct ``const``/``enum`` values, or by a required discriminator
  property with distinct ``const`` values) → ``oneOf`` (nested unions flattened); ``anyOf``
  branches beside an unconstrained branch of their type dropped (included: ``anyOf: [integer,
  number]`` is ``number``, ``anyOf: [{object with properties}, {"type": "object"}]`` is an
  object); ``allOf`` of non-colliding branches
  merged;
* ``format`` on ``number`` / ``integer`` (OpenAPI's ``int32``, ``int64``, ``float``, ``double``)
  dropped: JSON Schema gives it no assertion there, and the vocabulary has it on strings only;
* ``enum``/``const`` without a type get the type of their members (mixed members → ``oneOf``);
  ``enum`` members of another type than the declared one dropped (they could never match);
* ``required`` names missing from ``properties`` get an unconstrained property ``{}``;
  ``true`` subschemas become ``{}``, ``additionalProperties: {}`` becomes ``true``;
* draft-4 boolean ``exclusiveMinimum``/``exclusiveMaximum`` become the number form, and an array
  ``items`` (draft 4-7 tuples) becomes ``prefixItems`` (``additionalItems`` → ``items``);
* keywords without a ``type`` (``{"minimum": 1}`` constrains numbers only) become ``oneOf`` one
  branch per JSON type, each with the keywords of its type; the root of a tool's ``inputSchema``
  without ``type`` becomes ``type: "object"`` instead (MCP tool arguments are always an object).

Unkept parts (``unkept`` entries, the part removed): unknown keywords (``not``, ``if``,
``patternProperties``, ``contains``, ...), non-disjoint ``anyOf``, colliding ``allOf``, ``false``
subschemas, remote or broken ``$ref``, recursive ``$ref``, and, under the strict vocabulary,
every extension keyword.
"""

from __future__ import annotations

import copy
from typing import Any, Final

import attrs

from .._errors import JsonSchemaError
from .._json import is_json_value
from .extended import (
    EXTENSION_KEYWORDS,
    Vocabulary,
    extended_violations,
)
from .refs import InliningBudget, InliningTooLarge, resolve_pointer
from .schema_types import (
    ANY_TYPE_KEYWORDS,
    KNOWN_TYPES,
    TYPE_KEYWORDS,
    disjoint_by,
    every_key,
    interacts,
    json_type,
    member_fits,
    unique_branches,
)
from .subset import (
    ANNOTATION_KEYWORDS,
    CONSTRAINT_KEYWORDS,
    assert_supported_json_schema,
)

__all__ = ["NormalizedSchema", "normalize_json_schema"]

_DROPPED: Final = frozenset(
    (
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$comment",
        "$vocabulary",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
        "discriminator",
    )
)
#: References inlined per schema at most: a schema whose definitions fan out (each referring to
#: two others, twenty deep) would otherwise grow exponentially.
MAX_INLINED_REFS: Final = 10_000


@attrs.frozen
class NormalizedSchema:
    """What :func:`normalize_json_schema` made of a schema.

    Attributes:
        schema: The rewritten schema (a fresh object; the input is untouched).
        changes: Every meaning-preserving rewrite, as ``"<path>: <what>"``.
        unkept: Every part that could not be kept (removed from ``schema``), as
            ``"<path>: <why>"``. Empty means ``schema`` checks exactly what the input did.
        violations: What the subset (+ extension) assertion still reports on ``schema``.
        refused: The ``unkept`` entries that no option may accept: a union removed (an
            ``anyOf`` whose branches may overlap, a union beside another, an empty one) would
            let any value through, and a ``oneOf`` whose branches lost parts and may overlap
            now would refuse values the schema accepts. ``define_json_tool(allow_unkept=True)``
            still refuses a schema with one.
    """

    schema: Any
    changes: tuple[str, ...]
    unkept: tuple[str, ...]
    violations: tuple[str, ...]
    refused: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        """Whether ``schema`` is supported and checks exactly what the input schema did."""
        return not self.unkept and not self.violations


class _Normalizer:
    def __init__(
        self, root: object, vocabulary: Vocabulary, tool_input: bool, optional_defaults: bool
    ) -> None:
        self.root = root
        self.tool_input = tool_input
        self.optional_defaults = optional_defaults
        self.vocabulary = vocabulary
        self.changes: list[str] = []
        self.unkept: list[str] = []
        self.refused: list[str] = []
        self.resolving: list[str] = []
        self.inlined = 0
        self.budget = InliningBudget(root)
        #: Every dict this normalizer produced, by id: normalized already, a fixed point (held
        #: here so the ids stay unique).
        self.done: dict[int, dict[str, Any]] = {}

    # -- helpers --------------------------------------------------------------------------

    def change(self, path: str, what: str) -> None:
        self.changes.append(f"{path}: {what}")

    def lose(self, path: str, why: str) -> None:
        self.unkept.append(f"{path}: {why}")

    def lose_union(self, path: str, why: str) -> None:
        """An unkept union: without it the node would accept any value (or, for a ``oneOf``
        whose branches lost parts, reject values the schema accepts), so no option keeps it."""
        self.lose(path, why)
        self.refused.append(self.unkept[-1])

    # -- the walk -------------------------------------------------------------------------

    def node(self, schema: object, path: str) -> object:
        """``schema`` normalized; a dict this normalizer produced is returned as it is."""
        if id(schema) in self.done:
            return schema
        if self.resolving:
            self.budget.charge(1, path, self.resolving[0])
        if schema is True:
            self.change(path, "true schema written as {}")
            return {}
        if schema is False:
            self.lose(path, "a false schema (no value allowed) is not expressible")
            return {}
        if type(schema) is not dict:
            return copy.deepcopy(schema)
        node: dict[str, Any] = dict(schema)
        if "$ref" in node:
            node = self.inline(node, path)
        for key in list(node):
            if key in ("$defs", "definitions"):
                del node[key]
                self.change(f"{path}.{key}", "removed after inlining its references")
            elif key in _DROPPED or key.startswith("x-"):
                del node[key]
                self.change(f"{path}.{key}", "dropped (no constraint)")
            elif key == "propertyNames" and every_key(node[key]):
                del node[key]
                self.change(f"{path}.{key}", "dropped (every object key is a string)")
            elif key in ANNOTATION_KEYWORDS and (
                not is_json_value(node[key])
                or (key in ("title", "description") and type(node[key]) is not str)
            ):
                del node[key]
                self.change(
                    f"{path}.{key}", "annotation dropped (not a lossless JSON string/value)"
                )
        self.legacy(node, path)
        if node.get("nullable") is True or "nullable" in node:
            nullable = node.pop("nullable") is True
            if nullable:
                node = self.add_null(node, path)
            else:
                self.change(f"{path}.nullable", "nullable: false dropped (no constraint)")
        if type(node.get("type")) is list:
            return self.node(self.split_types(node, path), path)
        if "allOf" in node:
            node = self.combine(node, "allOf", path)
        if "anyOf" in node:
            node = self.combine(node, "anyOf", path)
        elif "oneOf" in node:
            node = self.combine(node, "oneOf", path)
        if "type" not in node and "oneOf" not in node:
            node = self.infer_type(node, path)
            if type(node.get("type")) is list:
                return self.node(node, path)
            if "oneOf" in node:
                node["oneOf"] = [
                    self.children(branch, f"{path}.oneOf[{index}]")
                    for index, branch in enumerate(node["oneOf"])
                ]
                return self.children(node, path)
        return self.children(node, path)

    def inline(self, node: dict[str, Any], path: str) -> dict[str, Any]:
        ref = node.pop("$ref")
        if type(ref) is not str:
            self.lose(f"{path}.$ref", "is not a string")
            return node
        if ref in self.resolving:
            self.lose(
                f"{path}.$ref", f'"{ref}" is recursive; not followed (the value there is unchecked)'
            )
            return node
        if self.inlined >= MAX_INLINED_REFS:
            self.lose(
                f"{path}.$ref",
                f'"{ref}" not inlined: the schema already inlined {MAX_INLINED_REFS} references',
            )
            return node
        self.inlined += 1
        ok, target = resolve_pointer(self.root, ref)
        if not ok:
            self.lose(f"{path}.$ref", f'"{ref}" {target}')
            return node
        if not self.resolving:
            # Before expanding: the nested references are inside this one's expansion.
            self.budget.charge(self.budget.expansion(ref, target), path, ref)
        self.resolving.append(ref)
        try:
            resolved = self.node(target, path)
        finally:
            self.resolving.pop()
        self.change(f"{path}.$ref", f'"{ref}" inlined')
        if type(resolved) is not dict:
            return node
        merged = dict(resolved)
        self.merge_into(
            merged,
            node,
            path,
            sees="would see the referenced schema's properties/items (not expressible)",
            collides="collides with the referenced schema's {key}",
            source_annotations_win=True,  # the referring node's own annotation wins
        )
        return merged

    def legacy(self, node: dict[str, Any], path: str) -> None:
        for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if type(node.get(bound)) is bool:
                flag = node.pop(bound)
                if flag and plain in node:
                    node[bound] = node.pop(plain)
                    self.change(
                        f"{path}.{bound}", f"draft-4 boolean form written as {bound}: <number>"
                    )
                else:
                    self.change(f"{path}.{bound}", "draft-4 boolean without effect dropped")
        if type(node.get("items")) is list:
            node["prefixItems"] = node.pop("items")
            self.change(f"{path}.items", "tuple form written as prefixItems")
            if "additionalItems" in node:
                node["items"] = node.pop("additionalItems")
                self.change(f"{path}.additionalItems", "written as items")
        elif "additionalItems" in node:
            node.pop("additionalItems")
            self.change(f"{path}.additionalItems", "dropped (no effect without tuple items)")
        if node.get("additionalProperties") == {}:
            node["additionalProperties"] = True
            self.change(f"{path}.additionalProperties", "{} written as true")

    def add_null(self, node: dict[str, Any], path: str) -> dict[str, Any]:
        self.change(f"{path}.nullable", "written as a null branch")
        kind = node.get("type")
        if type(kind) is str:
            node["type"] = [kind, "null"]
        elif type(kind) is list:
            node["type"] = [*kind, "null"]
        else:
            annotations = {key: node.pop(key) for key in list(node) if key in ANNOTATION_KEYWORDS}
            return {**annotations, "anyOf": [node, {"type": "null"}]}
        if "enum" in node and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        return node

    def split_types(self, node: dict[str, Any], path: str) -> dict[str, Any]:
        types = [name for name in node.pop("type") if name in KNOWN_TYPES]
        if "number" in types and "integer" in types:
            types.remove("integer")
            self.change(f"{path}.type", "integer dropped beside number (included)")
        types = list(dict.fromkeys(types))
        if len(types) == 1:
            node["type"] = types[0]
            self.change(f"{path}.type", "one-type array written as a string")
            return node
        outer = {key: value for key, value in node.items() if key not in ANY_TYPE_KEYWORDS}
        branches = []
        for name in types:
            branch: dict[str, Any] = {"type": name}
            owned = TYPE_KEYWORDS[name]
            branch.update((key, value) for key, value in node.items() if key in owned)
            if "enum" in branch:
                branch["enum"] = [m for m in branch["enum"] if member_fits(name, m)]
                if not branch["enum"]:
                    continue
            if "const" in branch and not member_fits(name, branch["const"]):
                continue
            branches.append(branch)
        self.change(f"{path}.type", f"type array {types} written as oneOf (disjoint by type)")
        if len(branches) == 1:
            return {**outer, **branches[0]}
        outer["oneOf"] = branches
        return outer

    def combine(self, node: dict[str, Any], combinator: str, path: str) -> dict[str, Any]:
        branches = node.pop(combinator)
        if type(branches) is not list or not branches:
            self.lose_union(f"{path}.{combinator}", "must be a non-empty array")
            return node
        unkept_before = len(self.unkept)
        if combinator != "allOf" and len(branches) > 1 and "oneOf" not in node:
            shared = [key for key in node if key in ANY_TYPE_KEYWORDS or key == "type"]
            if shared:
                branches = self.distribute(node, shared, branches, f"{path}.{combinator}")
        normalized = [
            self.node(branch, f"{path}.{combinator}[{index}]")
            for index, branch in enumerate(branches)
        ]
        if combinator == "allOf" or len(normalized) == 1:
            merged = node
            for index, branch in enumerate(normalized):
                if type(branch) is not dict:
                    continue
                self.merge_into(
                    merged,
                    branch,
                    f"{path}.{combinator}[{index}]",
                    sees="would see the other branch's properties/items once merged (not expressible)",
                    collides="collides with a sibling keyword (an intersection is not expressible)",
                )
            self.change(f"{path}.{combinator}", "merged into the node")
            return merged
        if "oneOf" in node:
            self.lose_union(f"{path}.{combinator}", "beside another union (not expressible)")
            return node
        if combinator == "anyOf":
            normalized = self.included(normalized, f"{path}.anyOf")
        flat, proof = self.disjoint(
            normalized, f"{path}.{combinator}", any_of=combinator == "anyOf"
        )
        if len(flat) == 1:
            self.change(f"{path}.{combinator}", "one distinct branch merged into the node")
            return self.merge_branch(node, flat[0], path)
        if combinator == "anyOf":
            if proof is None:
                # Not disjoint by type, and no const/enum values or discriminator tell apart
                # the branches that share one.
                self.lose_union(
                    f"{path}.anyOf",
                    "branches overlap by type (anyOf is not expressible as oneOf); removed",
                )
                return node
            self.change(f"{path}.anyOf", f"branches disjoint by {proof}: written as oneOf")
        elif proof is None and len(self.unkept) > unkept_before:
            # Each branch is checked less strictly now: two of them may both match a value that
            # one matched before, and oneOf would refuse it.
            self.lose_union(
                f"{path}.oneOf",
                "its branches lost parts and may overlap now (not disjoint by type, by const/enum "
                "values or by a required discriminator); removed",
            )
            return node
        node["oneOf"] = flat
        return node

    def defaults_optional(
        self, node: dict[str, Any], properties: dict[str, Any], path: str
    ) -> None:
        """``optional_defaults``: the names of defaulted properties leave ``required``."""
        kept = []
        for name in node["required"]:
            child = properties.get(name) if type(name) is str else None
            if type(child) is dict and "default" in child:
                self.change(
                    f"{path}.required", f'"{name}" has a default: optional (optional_defaults)'
                )
            else:
                kept.append(name)
        if kept:
            node["required"] = kept
        else:
            del node["required"]

    def included(self, branches: list[Any], path: str) -> list[Any]:
        """Under ``anyOf``, a branch adds nothing beside an unconstrained branch of its type
        (``{"type": "number"}`` holds every ``integer`` and ``number`` branch, ``{"type":
        "object"}`` every object branch): dropped."""
        bare: dict[str, int] = {}
        for index, branch in enumerate(branches):
            kind = branch.get("type") if type(branch) is dict else None
            if type(kind) is str and all(
                key == "type"
                or key in ANNOTATION_KEYWORDS
                or (key == "additionalProperties" and branch[key] is True)
                for key in branch
            ):
                bare.setdefault(kind, index)
        if not bare:
            return branches
        out = []
        for index, branch in enumerate(branches):
            kind = branch.get("type") if type(branch) is dict else None
            # An unconstrained number holds the integers too.
            keeper = bare.get("number", bare.get("integer")) if kind == "integer" else None
            if keeper is None and type(kind) is str:
                keeper = bare.get(kind)
            if keeper is not None and index != keeper and "oneOf" not in branch:
                self.change(
                    f"{path}[{index}]",
                    f"included in the {branches[keeper]['type']} branch; dropped",
                )
                continue
            out.append(branch)
        return out

    def distribute(
        self, node: dict[str, Any], shared: list[str], branches: list[Any], path: str
    ) -> list[Any]:
        """X and (B1 | ... | Bn) == (X and B1) | ... | (X and Bn): the sibling keywords of a
        union move into each branch; a branch whose type contradicts X can never match (dropped)."""
        moved = {key: node.pop(key) for key in shared}
        out: list[Any] = []
        for index, branch in enumerate(branches):
            if type(branch) is not dict:
                out.append(branch)
                continue
            merged = dict(branch)
            impossible = False
            kind = merged.get("type")
            for key, value in moved.items():
                if key not in merged and interacts(merged, key, value):
                    self.lose(
                        f"{path}[{index}].{key}",
                        "would see the branch's own properties/items once merged (not expressible)",
                    )
                    continue
                if (
                    (
                        type(kind) is str
                        and kind in TYPE_KEYWORDS
                        and key != "type"
                        and key not in TYPE_KEYWORDS[kind]
                        and key not in ("items", "required", "properties", "additionalProperties")
                    )
                    or (
                        type(kind) is str
                        and kind != "object"
                        and key in ("required", "properties", "additionalProperties")
                    )
                    or (type(kind) is str and kind != "array" and key == "items")
                ):
                    continue  # does not constrain values of this branch's type
                if key not in merged:
                    merged[key] = value
                elif merged[key] != value:
                    if key == "type" and type(value) is str and type(merged[key]) is str:
                        pair = {value, merged[key]}
                        if pair == {"number", "integer"}:
                            merged[key] = "integer"
                            continue
                        impossible = True
                        break
                    self.lose(f"{path}[{index}].{key}", "collides with the union's sibling keyword")
            if impossible:
                self.change(
                    f"{path}[{index}]",
                    "branch contradicts the sibling type; never matches, dropped",
                )
                continue
            out.append(merged)
        node_path = path.rsplit(".", 1)[0]
        for key in shared:
            self.change(f"{node_path}.{key}", f"moved into every branch of {path}")
        return out

    def merge_branch(self, node: dict[str, Any], branch: object, path: str) -> dict[str, Any]:
        if type(branch) is not dict:
            return node
        self.merge_into(
            node,
            branch,
            path,
            sees="would see the node's own properties/items (not expressible)",
            collides="collides with the merged branch's keyword",
        )
        return node

    def merge_into(
        self,
        target: dict[str, Any],
        source: dict[str, Any],
        prefix: str,
        *,
        sees: str,
        collides: str,
        source_annotations_win: bool = False,
    ) -> None:
        """Merge ``source``'s keywords into ``target`` wherever the meaning is kept; report the rest.

        A keyword that would start constraining what ``target``'s own properties/items see is
        unkept (``sees``); a keyword whose value differs is unkept (``collides``, which may name
        ``{key}``), except annotations: ``source``'s wins when ``source_annotations_win``, else
        ``target``'s stays.
        """
        for key, value in source.items():
            if key not in target and interacts(target, key, value):
                self.lose(f"{prefix}.{key}", sees)
                continue
            if key in target and target[key] != value:
                if key in ANNOTATION_KEYWORDS:
                    if source_annotations_win:
                        target[key] = value
                    continue
                self.lose(f"{prefix}.{key}", collides.format(key=key))
                continue
            if key not in target:
                target[key] = value

    def disjoint(
        self, branches: list[Any], path: str, *, any_of: bool
    ) -> tuple[list[Any], str | None]:
        """Flatten nested disjoint unions and (for ``anyOf``) drop duplicate branches; tell
        why the branches are disjoint (:func:`.schema_types.disjoint_by`, ``None``: not
        proven). Under ``oneOf`` a duplicate branch is kept: it makes the union fail where it
        matches, which is its meaning."""
        flat: list[Any] = []
        for branch in branches:
            if (
                type(branch) is dict
                and type(branch.get("oneOf")) is list
                and all(key == "oneOf" or key in ANNOTATION_KEYWORDS for key in branch)
                and disjoint_by(branch["oneOf"]) is not None
            ):
                flat.extend(branch["oneOf"])
                self.change(path, "nested union of disjoint branches flattened")
            else:
                flat.append(branch)
        if any_of:
            flat, removed = unique_branches(flat)
            self.changes.extend([f"{path}: duplicate branch removed"] * removed)
        return flat, disjoint_by(flat)

    def infer_type(self, node: dict[str, Any], path: str) -> dict[str, Any]:
        members = node["enum"] if type(node.get("enum")) is list else None
        if "const" in node:
            members = [node["const"]]
        if members:
            types = list(dict.fromkeys(json_type(member) for member in members))
            if "integer" in types and "number" in types:
                types.remove("integer")
            node["type"] = types[0] if len(types) == 1 else types
            self.change(f"{path}.type", f"inferred from the enum/const members: {types}")
            return node
        own = [key for key in node if key in ANY_TYPE_KEYWORDS]
        kinds = {name for name, keys in TYPE_KEYWORDS.items() for key in own if key in keys}
        if own and self.tool_input and path == "schema" and kinds <= {"object"}:
            node["type"] = "object"
            self.change(path, 'type "object" added (tool arguments are always an object)')
        elif own:
            # Untyped keywords constrain only values of their type: one branch per JSON type,
            # each with the keywords of its type, is the same schema (integer is inside number).
            outer = {key: value for key, value in node.items() if key not in ANY_TYPE_KEYWORDS}
            branches = []
            for name in ("object", "array", "string", "number", "boolean", "null"):
                branch: dict[str, Any] = {"type": name}
                branch.update((key, node[key]) for key in own if key in TYPE_KEYWORDS[name])
                branches.append(branch)
            self.change(path, f"keywords {own} without a type written as one oneOf branch per type")
            outer["oneOf"] = branches
            return outer
        return node

    def children(self, node: dict[str, Any], path: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        # Every normalized node comes from here: remembered, it is never walked again (an
        # inlined reference's schema is merged into its referring node, then revisited).
        self.done[id(out)] = out
        kind = node.get("type")
        for key, value in node.items():
            child_path = f"{path}.{key}"
            if key in ("properties",) and type(value) is dict:
                out[key] = {
                    name: self.node(child, f"{path}.properties.{name}")
                    for name, child in value.items()
                }
            elif key in ("items", "additionalProperties") and type(value) is not bool:
                out[key] = self.node(value, child_path)
            elif key == "items" and value is True:
                self.change(child_path, "items: true dropped (no constraint)")
            elif key == "items" and value is False:
                prefix = node.get("prefixItems")
                limit = len(prefix) if type(prefix) is list else 0
                if self.vocabulary == "strict":
                    self.lose(
                        child_path, "items: false needs maxItems (not in the strict vocabulary)"
                    )
                else:
                    current = node.get("maxItems")
                    out["maxItems"] = limit if type(current) is not int else min(current, limit)
                    self.change(child_path, f"items: false written as maxItems: {limit}")
            elif key == "prefixItems" and type(value) is list:
                out[key] = [
                    self.node(child, f"{child_path}[{index}]") for index, child in enumerate(value)
                ]
            elif key == "oneOf" and type(value) is list:
                out[key] = value  # branches were normalized by combine()
            elif key == "format" and kind in ("number", "integer"):
                self.change(
                    child_path,
                    f'format "{value}" on {kind} dropped (an annotation without assertion)',
                )
            elif key in CONSTRAINT_KEYWORDS or key in ANNOTATION_KEYWORDS:
                out[key] = copy.deepcopy(value)
            elif key == "maxItems" and "maxItems" in out:
                continue  # already tightened by items: false
            elif key in EXTENSION_KEYWORDS:
                if self.vocabulary == "strict":
                    self.lose(child_path, "an extension keyword (not in the strict vocabulary)")
                else:
                    out[key] = copy.deepcopy(value)
            else:
                self.lose(child_path, "not supported (removed)")
        if type(kind) is str and "enum" in out and type(out["enum"]) is list:
            fitting = [member for member in out["enum"] if member_fits(kind, member)]
            if len(fitting) != len(out["enum"]) and fitting:
                out["enum"] = fitting
                self.change(
                    f"{path}.enum", f"members that are not {kind} values dropped (never valid)"
                )
        if kind == "object" and type(out.get("required")) is list:
            properties = (
                out.setdefault("properties", {})
                if type(out.get("properties", {})) is dict
                else None
            )
            if properties is not None:
                for name in out["required"]:
                    if type(name) is str and name not in properties:
                        properties[name] = {}
                        self.change(f"{path}.required", f'"{name}" given an unconstrained property')
                if self.optional_defaults:
                    self.defaults_optional(out, properties, path)
                if not properties:
                    del out["properties"]
        return out


def normalize_json_schema(
    schema: object,
    *,
    vocabulary: Vocabulary = "extended",
    tool_input: bool = True,
    optional_defaults: bool = False,
) -> NormalizedSchema:
    """Rewrite a foreign JSON Schema into the subset (+ the extended vocabulary), with a report.

    Args:
        schema: Any JSON Schema (draft 4 to 2020-12, OpenAPI ``nullable``), e.g. an MCP tool's
            ``inputSchema`` or a pydantic ``model_json_schema()``.
        vocabulary: ``"extended"`` (default) keeps the extension keywords; ``"strict"`` reports
            them as unkept.
        tool_input: The schema is a tool's arguments: a root without ``type`` becomes an object.
        optional_defaults: A required property with a ``default`` becomes optional (each one a
            ``changes`` entry): for a server that publishes its schemas as its parser's output
            (zod's output mode lists every defaulted property as required) and fills the
            default in itself. Not the published meaning; opt-in.

    Returns:
        A :class:`NormalizedSchema`: the new schema, every change, every unkept part, and what
        the assertion of the chosen vocabulary still reports.
    """
    normalizer = _Normalizer(schema, vocabulary, tool_input, optional_defaults)
    try:
        result = normalizer.node(schema, "schema")
    except InliningTooLarge as too_large:
        return NormalizedSchema(
            schema={}, changes=(), unkept=(too_large.unkept,), violations=(too_large.violation,)
        )
    except RecursionError:
        return NormalizedSchema(
            schema={},
            changes=(),
            unkept=("schema: nested too deeply to normalize",),
            violations=(),
        )
    if vocabulary == "strict":
        try:
            assert_supported_json_schema(result)
            violations: list[str] = []
        except JsonSchemaError as error:
            violations = list(error.violations)
    else:
        violations = extended_violations(result)
    return NormalizedSchema(
        schema=result,
        changes=tuple(normalizer.changes),
        unkept=tuple(normalizer.unkept),
        violations=tuple(violations),
        refused=tuple(normalizer.refused),
    )
