"""JSON types of schema nodes and values, as :mod:`.normalize` reasons about them: the keywords
each type owns, the type of a value, and whether union branches are disjoint (no value can match
two of them: the one proof an ``anyOf`` needs to be written as ``oneOf``, and a nested union to
be flattened into its parent)."""

from __future__ import annotations

from typing import Any, Final

from .._errors import JsonSchemaError
from .extended import EXTENSION_BY_TYPE, EqualityKeys
from .extended_compiled import compile_extended_validator
from .subset import ANNOTATION_KEYWORDS, STRUCTURAL_BY_TYPE

__all__ = [
    "ANY_TYPE_KEYWORDS",
    "KNOWN_TYPES",
    "TYPE_KEYWORDS",
    "discriminator",
    "disjoint_by",
    "every_key",
    "interacts",
    "json_type",
    "member_fits",
    "unique_branches",
]

KNOWN_TYPES: Final = ("object", "array", "string", "number", "integer", "boolean", "null")
#: The keywords each type owns (the rest are annotations or belong to another type): the strict
#: subset's structural keywords of the type plus the extension keywords of the type.
TYPE_KEYWORDS: Final[dict[str, frozenset[str]]] = {
    name: STRUCTURAL_BY_TYPE[name] | frozenset(EXTENSION_BY_TYPE.get(name, ()))
    for name in KNOWN_TYPES
}
ANY_TYPE_KEYWORDS: Final = frozenset().union(*TYPE_KEYWORDS.values())


def every_key(schema: object) -> bool:
    """Whether a ``propertyNames`` schema holds for every object key: ``true``, ``{}`` or
    ``{"type": "string"}`` (zod v4 writes it for every record), annotations aside."""
    if schema is True:
        return True
    return (
        type(schema) is dict
        and schema.get("type", "string") == "string"
        and all(key == "type" or key in ANNOTATION_KEYWORDS for key in schema)
    )


def interacts(target: dict[str, Any], key: str, value: object) -> bool:
    """Whether adding ``key: value`` from another schema to ``target`` would change what a keyword
    already there (or the added one) sees: ``additionalProperties`` sees its own node's
    ``properties``, ``items`` its own node's ``prefixItems``."""
    if key == "additionalProperties" and value is not True:
        return bool(target.get("properties"))
    if key == "properties" and value:
        return target.get("additionalProperties", True) is not True
    if key == "items":
        return "prefixItems" in target
    if key == "prefixItems":
        return "items" in target
    return False


def json_type(value: object) -> str:
    """The JSON type of a JSON value (an integral float is an ``integer``, as in JSON Schema)."""
    if value is None:
        return "null"
    kind = type(value)
    if kind is bool:
        return "boolean"
    if kind is int or (type(value) is float and value.is_integer()):
        return "integer"
    if kind is float:
        return "number"
    if kind is str:
        return "string"
    return "array" if kind is list else "object"


def member_fits(type_name: str, value: object) -> bool:
    """Whether an ``enum``/``const`` member can match a node of ``type_name``."""
    actual = json_type(value)
    return actual == type_name or (type_name == "number" and actual == "integer")


def _leaves(branches: list[Any]) -> list[Any] | None:
    """The branches with every nested ``oneOf`` of only annotations flattened (an explicit
    stack); ``None`` when a branch is a union with other keywords beside it."""
    out: list[Any] = []
    stack = list(reversed(branches))
    while stack:
        branch = stack.pop()
        if type(branch) is dict and "oneOf" in branch:
            inner = branch["oneOf"]
            if type(inner) is not list or any(
                key != "oneOf" and key not in ANNOTATION_KEYWORDS for key in branch
            ):
                return None
            stack.extend(reversed(inner))
        else:
            out.append(branch)
    return out


def _members(node: object) -> list[Any] | None:
    """The only values ``node`` accepts (its ``const``, else its ``enum``), or ``None``."""
    if type(node) is not dict:
        return None
    if "const" in node:
        return [node["const"]]
    members = node.get("enum")
    return members if type(members) is list else None


def _apart(group: list[tuple[int, Any]], keys: EqualityKeys) -> bool:
    """Whether the leaves of ``group`` (``(owner branch, leaf)`` of one JSON type) can share no
    value across owners by their values: no value in the ``const``/``enum`` lists of two owners,
    and at most one owner with a leaf without such a list, which refuses every listed value of
    the other owners (checked with the validator itself, formats as annotations: the most
    permissive reading)."""
    listed: list[tuple[int, list[Any]]] = []
    open_leaves: list[tuple[int, Any]] = []
    for owner, leaf in group:
        members = _members(leaf)
        if members is None:
            open_leaves.append((owner, leaf))
        else:
            listed.append((owner, members))
    if len({owner for owner, _ in open_leaves}) > 1 or not _distinct(listed, keys):
        return False
    for owner, leaf in open_leaves:
        try:
            check = compile_extended_validator(leaf)
        except JsonSchemaError:
            return False
        for other, members in listed:
            if other != owner and any(check(member, "") == [] for member in members):
                return False
    return True


def _distinct(groups: list[tuple[int, list[Any]]], keys: EqualityKeys) -> bool:
    """Whether no value is in the lists of two owners (JSON equality: ``1 == 1.0``, ``True`` is
    not ``1``); a member that is not JSON data proves nothing."""
    owner: dict[Any, int] = {}
    for index, members in groups:
        for member in members:
            try:
                key = keys.key(member)
            except TypeError:
                return False
            if owner.setdefault(key, index) != index:
                return False
    return True


def _discriminator(group: list[tuple[int, Any]], keys: EqualityKeys) -> str | None:
    """A property every leaf (an object schema) requires, whose values (``const``/``enum``)
    no two owners share: a value matches only leaves of the owner its property's value names."""
    required: list[str] | None = None
    for _, leaf in group:
        names = leaf.get("required")
        if type(names) is not list:
            return None
        own = [name for name in names if type(name) is str]
        required = own if required is None else [name for name in required if name in own]
    for name in dict.fromkeys(required or ()):
        lists = []
        for owner, leaf in group:
            properties = leaf.get("properties")
            members = _members(properties.get(name)) if type(properties) is dict else None
            if members is None:
                break
            lists.append((owner, members))
        else:
            if _distinct(lists, keys):
                return name
    return None


def discriminator(branches: list[Any]) -> str | None:
    """The property that tells ``branches`` (object schemas) apart, as :func:`disjoint_by`
    proves it, or ``None``."""
    group = list(enumerate(branches))
    if not all(type(leaf) is dict and leaf.get("type") == "object" for _, leaf in group):
        return None
    return _discriminator(group, EqualityKeys())


def disjoint_by(branches: list[Any]) -> str | None:
    """Why no value can match two of ``branches`` (normalised schema nodes), or ``None`` when
    that is not proven.

    A branch that is itself a union (only annotations beside its ``oneOf``) counts by its
    branches, which need not be disjoint from each other. Proofs, per JSON type (``integer`` with
    ``number``): one branch has leaves of the type, or their ``const``/``enum`` values are
    apart (no value in two branches' lists, and at most one branch without a list, which
    refuses every listed value of the others), or (objects) they all require a property whose
    ``const``/``enum`` values no two branches share (a zod discriminated union).

    Returns:
        ``"type"`` (disjoint by JSON type alone), ``"const/enum values"``, ``'the required
        discriminator "<name>"'`` (the last proof needed, when types alone did not do), or
        ``None``.
    """
    by_type: dict[str, list[tuple[int, Any]]] = {}
    for owner, branch in enumerate(branches):
        leaves = _leaves([branch])
        if leaves is None:
            return None
        for leaf in leaves:
            kind = leaf.get("type") if type(leaf) is dict else None
            if type(kind) is not str or kind not in KNOWN_TYPES:
                return None
            by_type.setdefault("number" if kind == "integer" else kind, []).append((owner, leaf))
    proof = "type"
    keys = EqualityKeys()
    for kind, group in by_type.items():
        if len({owner for owner, _ in group}) == 1:
            continue
        if _apart(group, keys):
            if proof == "type":
                proof = "const/enum values"
            continue
        name = _discriminator(group, keys) if kind == "object" else None
        if name is None:
            return None
        proof = f'the required discriminator "{name}"'
    return proof


def unique_branches(branches: list[Any]) -> tuple[list[Any], int]:
    """``branches`` without repeats (JSON equality: ``True`` is not ``1``), and how many went:
    linear, each branch looked up by its equality key. A branch that is not JSON data is kept
    (the assertion reports it)."""
    unique: list[Any] = []
    seen: set[Any] = set()
    keys = EqualityKeys()
    for branch in branches:
        try:
            key = keys.key(branch)
        except TypeError:
            unique.append(branch)
            continue
        if key not in seen:
            seen.add(key)
            unique.append(branch)
    return unique, len(branches) - len(unique)
