"""Annotations → JSON Schema, for typed tools.

:class:`SchemaWriter` writes the JSON Schema of one annotation (the forms are listed in
:mod:`.typed` and ``docs/typed-tools.md``): scalars, ``Literal`` and ``Enum``, lists, sets and
tuples, unions, records (attrs classes, dataclasses, ``TypedDict`` s), pydantic models, dicts,
date/time and UUID strings. ``Annotated`` metadata (a description string, pydantic's ``Field``,
``annotated_types`` constraints) becomes keywords; anything else raises :class:`Unsupported`
with the path inside the annotation and what to write instead.

pydantic is optional: nothing here imports it; its objects are recognised by their attributes.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import types
import typing
import uuid
from collections.abc import Callable
from pathlib import PurePath
from typing import Any, Final, Literal

import attrs

from .._validation import normalize_json_schema
from .docstrings import parse_docstring

__all__ = [
    "FORMATS",
    "UNSET",
    "Meta",
    "SchemaWriter",
    "Unsupported",
    "exact_kinds",
    "is_field_info",
    "is_pydantic_model",
    "is_typeddict",
    "read_field_info",
    "strip_qualifiers",
    "without_extensions",
]

_SCALARS: Final[dict[Any, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
#: Strings with a ``format``, and how a JSON string becomes one.
FORMATS: Final[dict[Any, tuple[str, str]]] = {
    datetime.datetime: ("date-time", "an ISO 8601 date-time"),
    datetime.date: ("date", "an ISO 8601 date"),
    datetime.time: ("time", "an ISO 8601 time"),
    uuid.UUID: ("uuid", "a UUID"),
}
#: Types refused with a hint of what to write instead.
_HINTS: Final[dict[Any, str]] = {
    datetime.timedelta: "write float seconds (or an ISO 8601 duration as str)",
    bytes: "write str (base64 text, decoded in the body)",
    bytearray: "write str (base64 text, decoded in the body)",
}
#: Keywords that only the extended vocabulary has: left out of output schemas (which are checked
#: with upstream's strict subset).
_EXTENSION: Final = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minItems",
        "maxItems",
        "uniqueItems",
        "prefixItems",
    }
)
#: Constraint attributes (pydantic ``Field`` / ``annotated_types``) → keywords, by schema type.
_NUMBER_KEYS: Final = {
    "ge": "minimum",
    "gt": "exclusiveMinimum",
    "le": "maximum",
    "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
}
_LENGTH_KEYS: Final = {
    "string": {"min_length": "minLength", "max_length": "maxLength", "pattern": "pattern"},
    "array": {"min_length": "minItems", "max_length": "maxItems"},
}
#: Constraint attributes with no effect on validity here (our validation never coerces).
_NO_EFFECT: Final = frozenset({"strict"})
#: ``Field`` options that would change the argument names or shape: refused, never dropped.
_FIELD_REFUSED: Final = (
    "alias",
    "validation_alias",
    "discriminator",
    "json_schema_extra",
    "union_mode",
)
UNSET: Final[Any] = object()


class Unsupported(Exception):
    """An annotation the schema cannot express (``where`` is the path inside the annotation)."""


# ---------------------------------------------------------------------------------------------
# Metadata: Annotated strings, pydantic Field, annotated_types
# ---------------------------------------------------------------------------------------------


def is_field_info(obj: object) -> bool:
    cls = type(obj)
    return cls.__name__ == "FieldInfo" and cls.__module__.startswith("pydantic")


def _is_constraint(obj: object) -> bool:
    module = type(obj).__module__
    return module.startswith("annotated_types") or (
        module.startswith("pydantic") and not is_field_info(obj)
    )


def _constraint_items(obj: object) -> dict[str, Any]:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {item.name: getattr(obj, item.name) for item in dataclasses.fields(obj)}
    slots = getattr(type(obj), "__slots__", None)
    if slots:
        return {name: getattr(obj, name) for name in slots if hasattr(obj, name)}
    return dict(vars(obj)) if hasattr(obj, "__dict__") else {}


@attrs.define
class Meta:
    description: str | None = None
    title: str | None = None
    examples: Any = None
    constraints: dict[str, Any] = attrs.field(factory=dict)
    default: Any = UNSET
    default_factory: Callable[[], Any] | None = None


def _undefined(value: object) -> bool:
    return type(value).__name__ == "PydanticUndefinedType" or value is Ellipsis


def read_field_info(info: Any, meta: Meta, where: str) -> None:
    for name in _FIELD_REFUSED:
        if getattr(info, name, None) is not None:
            raise Unsupported(
                f"{where}: Field({name}=...) is not supported (the argument is read under its "
                "parameter name); remove it"
            )
    if getattr(info, "description", None) is not None:
        meta.description = info.description
    if getattr(info, "title", None) is not None:
        meta.title = info.title
    if getattr(info, "examples", None) is not None:
        meta.examples = info.examples
    default = getattr(info, "default", UNSET)
    if default is not UNSET and not _undefined(default):
        meta.default = default
    if getattr(info, "default_factory", None) is not None:
        meta.default_factory = info.default_factory
    for item in getattr(info, "metadata", ()):
        _read_constraint(item, meta, where)


def _read_constraint(item: object, meta: Meta, where: str) -> None:
    for key, value in _constraint_items(item).items():
        if value is None or key in _NO_EFFECT:
            continue
        if key in _NUMBER_KEYS or key in ("min_length", "max_length", "pattern"):
            meta.constraints[key] = value
        else:
            raise Unsupported(
                f"{where}: the constraint {type(item).__name__}({key}=...) cannot be checked "
                "before the call; check it in the body instead"
            )


def _read_metadata(extras: tuple[Any, ...], where: str) -> Meta:
    meta = Meta()
    for extra in extras:
        if isinstance(extra, str):
            meta.description = extra
        elif is_field_info(extra):
            read_field_info(extra, meta, where)
        elif _is_constraint(extra):
            _read_constraint(extra, meta, where)
    return meta


def _apply_constraints(spec: dict[str, Any], constraints: dict[str, Any], where: str) -> None:
    """Put constraint keywords on ``spec`` (on each branch they apply to, for a union)."""
    if not constraints:
        return
    if "oneOf" in spec:
        applied = False
        for branch in spec["oneOf"]:
            kind = branch.get("type")
            if kind in ("number", "integer", "string", "array"):
                _apply_constraints(branch, constraints, where)
                applied = True
        if not applied:
            raise Unsupported(f"{where}: constraints {sorted(constraints)} apply to no member")
        return
    kind = spec.get("type")
    for key, value in constraints.items():
        if kind in ("number", "integer") and key in _NUMBER_KEYS:
            spec[_NUMBER_KEYS[key]] = value
        elif kind in _LENGTH_KEYS and key in _LENGTH_KEYS[kind]:
            spec[_LENGTH_KEYS[kind][key]] = value
        else:
            raise Unsupported(f"{where}: the constraint {key} does not apply to {kind or 'it'}")


# ---------------------------------------------------------------------------------------------
# Annotations → JSON Schema
# ---------------------------------------------------------------------------------------------


def is_typeddict(tp: Any) -> bool:
    # typing's and typing_extensions' TypedDict alike (typing.is_typeddict misses the latter).
    return (
        isinstance(tp, type)
        and issubclass(tp, dict)
        and hasattr(tp, "__required_keys__")
        and hasattr(tp, "__total__")
    )


def _is_dataclass(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def is_pydantic_model(tp: Any) -> bool:
    return (
        isinstance(tp, type)
        and callable(getattr(tp, "model_json_schema", None))
        and callable(getattr(tp, "model_validate", None))
    )


def strip_qualifiers(tp: Any) -> Any:
    # TypedDict item qualifiers (typing or typing_extensions): Required, NotRequired, ReadOnly.
    while getattr(typing.get_origin(tp), "_name", None) in ("Required", "NotRequired", "ReadOnly"):
        tp = typing.get_args(tp)[0]
    return tp


def exact_kinds(spec: dict[str, Any]) -> frozenset[str]:
    """The ``type`` s a schema's branches name (``"any"`` for one without a type)."""
    if "oneOf" in spec:
        return frozenset().union(*(exact_kinds(branch) for branch in spec["oneOf"]))
    kind = spec.get("type")
    return frozenset({"any"}) if kind is None else frozenset({kind})


_NUMBERS: Final = frozenset({"integer", "number"})


def _kinds(spec: dict[str, Any]) -> frozenset[str]:
    """The JSON kinds a schema accepts (``"any"`` for one without a type): an integer schema
    and a number schema accept the same kind of JSON value."""
    kinds = exact_kinds(spec)
    return kinds | _NUMBERS if kinds & _NUMBERS else kinds


def without_extensions(spec: Any) -> Any:
    """A copy without the extended vocabulary's keywords (for output schemas)."""
    if type(spec) is list:
        return [without_extensions(item) for item in spec]
    if type(spec) is not dict:
        return spec
    out = {key: without_extensions(value) for key, value in spec.items() if key not in _EXTENSION}
    if out.get("type") == "object" and isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = True
    return out


class SchemaWriter:
    """Writes the JSON Schema of one annotation; remembers classes on the path (no recursion)."""

    def __init__(self) -> None:
        self._active: set[Any] = set()

    def spec(self, tp: Any, where: str) -> dict[str, Any]:
        tp = strip_qualifiers(tp)
        meta = Meta()
        if typing.get_origin(tp) is typing.Annotated:
            tp, *extras = typing.get_args(tp)
            meta = _read_metadata(tuple(extras), where)
        out = self._bare(strip_qualifiers(tp), where)
        _apply_constraints(out, meta.constraints, where)
        annotations = {}
        if meta.description is not None:
            annotations["description"] = meta.description
        if meta.title is not None:
            annotations["title"] = meta.title
        if meta.examples is not None:
            annotations["examples"] = meta.examples
        return {**annotations, **out} if annotations else out

    def _bare(self, tp: Any, where: str) -> dict[str, Any]:
        if tp is None:
            tp = type(None)
        if tp in _SCALARS:
            return {"type": _SCALARS[tp]}
        if tp is Any:
            return {}
        if tp in FORMATS:
            return {"type": "string", "format": FORMATS[tp][0]}
        if tp in _HINTS:
            raise Unsupported(f"{where}: {tp.__name__} cannot be sent as JSON; {_HINTS[tp]}")
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is Literal:
            return self._literal(args, where)
        if origin is types.UnionType or origin is typing.Union:
            return self._union(args, where)
        if origin is list or origin in (set, frozenset):
            if len(args) != 1:
                raise Unsupported(f"{where}: {origin.__name__} needs one item type")
            out: dict[str, Any] = {"type": "array", "items": self.spec(args[0], where + "[]")}
            if origin is not list:
                out["uniqueItems"] = True
            return out
        if tp in (list, set, frozenset, tuple):
            raise Unsupported(f"{where}: write {tp.__name__}[T] ({tp.__name__}[Any] for any items)")
        if origin is tuple:
            return self._tuple(args, where)
        if origin is dict or tp is dict:
            if not args:
                raise Unsupported(f"{where}: write dict[str, Any] (or dict[str, T])")
            if args[0] is not str:
                raise Unsupported(f"{where}: JSON object keys are strings; write dict[str, ...]")
            if args[1] is Any:
                return {"type": "object", "additionalProperties": True}
            return {"type": "object", "additionalProperties": self.spec(args[1], where + "{}")}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self._enum(tp, where)
        if isinstance(tp, type) and issubclass(tp, PurePath):
            return {"type": "string"}
        if is_pydantic_model(tp):
            return self._pydantic(tp, where)
        if attrs.has(tp) or is_typeddict(tp) or _is_dataclass(tp):
            return self._record(tp, where)
        name = getattr(tp, "__name__", repr(tp))
        if isinstance(tp, type) and tp.__module__ == "decimal":
            raise Unsupported(f"{where}: {name} cannot be sent as JSON; write float (or str)")
        raise Unsupported(
            f"{where}: {name} cannot be expressed as a JSON Schema; use a JSON type, an attrs "
            "class, a dataclass, a TypedDict or a pydantic model"
        )

    def _literal(self, values: tuple[Any, ...], where: str) -> dict[str, Any]:
        groups: dict[str, list[Any]] = {}
        for value in values:
            if isinstance(value, enum.Enum):
                value = value.value
            kind = _SCALARS.get(type(value))
            if kind is None:
                raise Unsupported(f"{where}: Literal value {value!r} is not a JSON scalar")
            groups.setdefault(kind, []).append(value)
        if "integer" in groups and "number" in groups:
            raise Unsupported(f"{where}: Literal mixes int and float values")
        branches = [{"type": kind, "enum": list(members)} for kind, members in groups.items()]
        if len(branches) == 1:
            return branches[0]
        return {"oneOf": branches}

    def _enum(self, cls: type[enum.Enum], where: str) -> dict[str, Any]:
        if issubclass(cls, enum.Flag):
            raise Unsupported(f"{where}: {cls.__name__} is a Flag (combinations are not listed)")
        if not list(cls):
            raise Unsupported(f"{where}: {cls.__name__} has no members")
        values = tuple(member.value for member in cls)
        for value in values:
            if type(value) not in _SCALARS or value is None:
                raise Unsupported(
                    f"{where}: {cls.__name__} member value {value!r} is not a JSON string or number"
                )
        out = self._literal(values, where)
        return {"title": cls.__name__, **out}

    def _tuple(self, args: tuple[Any, ...], where: str) -> dict[str, Any]:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": self.spec(args[0], where + "[]")}
        if args == ((),):  # tuple[()]
            args = ()
        items = [self.spec(arg, f"{where}[{index}]") for index, arg in enumerate(args)]
        return {
            "type": "array",
            "prefixItems": items,
            "minItems": len(items),
            "maxItems": len(items),
        }

    def _union(self, members: tuple[Any, ...], where: str) -> dict[str, Any]:
        plain = [strip_qualifiers(member) for member in members]
        if int in plain and float in plain:
            # int | float is any number (JSON does not tell them apart by more than the value).
            members = tuple(m for m, p in zip(members, plain, strict=True) if p is not int)
        branches = [self.spec(member, where) for member in members]
        seen: set[str] = set()
        for branch in branches:
            kinds = _kinds(branch)
            if "any" in kinds or kinds & seen or ("object" in kinds and "object" in seen):
                raise Unsupported(
                    f"{where}: union members overlap ({_render(members)}); a value must match "
                    "exactly one of them (merge them into one class with optional fields, or "
                    "use separate parameters)"
                )
            seen |= kinds
        if len(branches) == 1:
            return branches[0]
        return {"oneOf": branches}

    def _pydantic(self, cls: Any, where: str) -> dict[str, Any]:
        try:
            raw = cls.model_json_schema()
        except Exception as exc:
            raise Unsupported(f"{where}: {cls.__name__} has no JSON Schema: {exc}") from None
        report = normalize_json_schema(raw, tool_input=False)
        if report.violations:
            raise Unsupported(
                f"{where}: the JSON Schema of {cls.__name__} cannot be checked: "
                + "; ".join(report.violations)
            )
        # Unkept parts (a recursive model, say) are checked by model_validate before the body.
        schema: dict[str, Any] = report.schema
        return schema

    def _record(self, cls: Any, where: str) -> dict[str, Any]:
        if cls in self._active:
            raise Unsupported(f"{where}: {cls.__name__} is recursive")
        self._active.add(cls)
        try:
            hints = typing.get_type_hints(cls, include_extras=True)
            properties: dict[str, Any] = {}
            required: list[str] = []
            if attrs.has(cls):
                for attribute in attrs.fields(cls):
                    if not attribute.init:
                        continue
                    if attribute.name.startswith("_"):
                        raise Unsupported(
                            f"{where}.{attribute.name}: private attrs fields are not supported"
                        )
                    properties[attribute.name] = self.spec(
                        hints[attribute.name], f"{where}.{attribute.name}"
                    )
                    if attribute.default is attrs.NOTHING:
                        required.append(attribute.name)
            elif _is_dataclass(cls):
                for item in dataclasses.fields(cls):
                    if not item.init:
                        continue
                    properties[item.name] = self.spec(hints[item.name], f"{where}.{item.name}")
                    if (
                        item.default is dataclasses.MISSING
                        and item.default_factory is dataclasses.MISSING
                    ):
                        required.append(item.name)
            else:
                keys = cls.__required_keys__
                for key, hint in hints.items():
                    properties[key] = self.spec(hint, f"{where}.{key}")
                    # The qualifier itself decides: under string annotations (PEP 563) the
                    # class's __required_keys__ cannot see NotRequired / Required.
                    qualifier = getattr(typing.get_origin(hint), "_name", None)
                    if qualifier == "Required" or (qualifier != "NotRequired" and key in keys):
                        required.append(key)
        finally:
            self._active.discard(cls)
        spec: dict[str, Any] = {"type": "object", "additionalProperties": False}
        if properties:
            spec["properties"] = properties
        if required:
            spec["required"] = required
        doc = parse_docstring(cls.__doc__)[0] if cls.__doc__ else ""
        # A dataclass without a docstring gets its signature as __doc__: not a description.
        if doc and not doc.startswith(cls.__name__ + "("):
            spec = {"description": doc, **spec}
        return spec


def _render(members: tuple[Any, ...]) -> str:
    return " | ".join(getattr(m, "__name__", None) or repr(m) for m in members)
