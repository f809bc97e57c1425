"""Typed tools: an annotated function becomes a validated tool definition.

:func:`tool` reads the function's signature once, at decoration time, and writes the JSON Schema
of its arguments (then :func:`~trio_harness.define_json_tool` checks it with the extended
vocabulary). The forms, and what each becomes (``docs/typed-tools.md`` has the full table, with
what the peer libraries write for the same form):

* ``str`` / ``int`` / ``float`` / ``bool`` / ``None`` → ``{"type": "string"}`` and so on;
  ``int | float`` → ``{"type": "number"}``;
* ``Literal["a", "b"]`` and ``Enum`` classes → ``{"type": "string", "enum": ["a", "b"]}`` (a
  ``oneOf`` if kinds mix); an enum parameter receives the member;
* ``list[T]`` → ``{"type": "array", "items": <T>}``; ``set[T]`` adds ``uniqueItems``;
  ``tuple[T, ...]`` is a list; ``tuple[A, B]`` → ``prefixItems`` with exactly two items;
* ``X | Y`` (so ``X | None``) → ``{"oneOf": [<X>, <Y>]}``; the members must not overlap;
* an ``attrs`` class, a dataclass or a ``TypedDict`` (``typing`` or ``typing_extensions``, with
  ``Required`` / ``NotRequired``) → a closed object whose fields without a default are required;
  a pydantic model → its own ``model_json_schema()``, normalised; it is built with
  ``model_validate``;
* ``dict[str, Any]`` → an open object; ``dict[str, T]`` → every value a ``<T>``; ``Any`` → any
  JSON value;
* ``datetime`` / ``date`` / ``time`` / ``UUID`` → a string with ``format`` ``date-time`` /
  ``date`` / ``time`` / ``uuid``, parsed with ``fromisoformat`` / ``UUID``;
* ``Annotated[T, "text"]`` → ``<T>`` with ``description`` ``"text"``; pydantic's ``Field(...)``
  (``description``, ``title``, ``examples``, ``ge`` / ``gt`` / ``le`` / ``lt``, ``multiple_of``,
  ``min_length`` / ``max_length``, ``pattern``, ``default`` / ``default_factory``) and
  ``annotated_types`` constraints, in ``Annotated`` or as the default, become keywords that are
  checked before the body runs.

A parameter without a default is required; a default must be a valid value of its annotation and
JSON-expressible (it is written into the schema), or the decorator refuses it. Descriptions come
from ``Annotated`` / ``Field`` or from the docstring (Google ``Args:``, Sphinx ``:param x:``,
NumPy ``Parameters`` sections); the tool description is the docstring's first part. Anything else
(``bytes``, ``Decimal``, overlapping unions such as ``str | Any``, recursive classes, ``*args``) is
refused when the decorator runs, naming the parameter and saying what to write instead.

Validated arguments are structured into the declared types with ``cattrs`` (pydantic models with
``model_validate``) before the body runs; a failure there (an attrs validator, a bad date, a
pydantic validator) is an ``invalid arguments`` result naming the path and the validator's
message. The body's return value is unstructured back to JSON and validated against the return
annotation. A plain ``def`` body runs in a worker thread (``trio.to_thread.run_sync``), so it
never blocks the event loop; a thread cannot be interrupted, so an abort or a timeout takes effect
when the function returns.

pydantic is optional: nothing here imports it; its objects are recognised by their attributes.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import inspect
import re
import types
import typing
import uuid
from collections.abc import Callable
from pathlib import PurePath
from typing import Any, Final, Literal, TypeVar, overload

import attrs
import cattrs
import trio

from .._errors import HarnessError, JsonSchemaError, ToolArgsError
from .._json import NOT_JSON, js_json, snapshot_json_value
from .._runtime import define_json_tool, json_schema_validator
from .._validation import normalize_json_schema
from .._values import ToolDefinition, ToolOutput

__all__ = ["tool"]

_F = TypeVar("_F", bound=Callable[..., Any])

_SCALARS: Final[dict[Any, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
#: Strings with a ``format``, and how a JSON string becomes one.
_FORMATS: Final[dict[Any, tuple[str, str]]] = {
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
_UNSET: Final[Any] = object()


class _Unsupported(Exception):
    """An annotation the schema cannot express (``where`` is the path inside the annotation)."""


# ---------------------------------------------------------------------------------------------
# Docstrings
# ---------------------------------------------------------------------------------------------

_GOOGLE: Final = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|"
    r"Returns?|Yields?|Raises|Examples?|Notes?|Attributes|See Also|Warnings?|References|Todo):\s*$"
)
_GOOGLE_ARGS: Final = frozenset(
    {"Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments"}
    | {"Other Parameters"}
)
_ARG_LINE: Final = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?:\s*(.*)$")
_SPHINX: Final = re.compile(r"^:(\w+)(?:\s+([^:]*?))?:\s*(.*)$")
_UNDERLINE: Final = re.compile(r"^\s*-{3,}\s*$")
_NUMPY_ARG: Final = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::\s*(.*))?$")
_NUMPY_ARGS: Final = frozenset({"Parameters", "Other Parameters", "Keyword Arguments"})


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary part and the parameter descriptions of a docstring.

    Google (``Args:``), Sphinx (``:param name: text``) and NumPy (``Parameters`` underlined)
    styles are read; the summary is everything before the first section or field.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    args: dict[str, list[str]] = {}
    section: str | None = None  # "google:<name>", "numpy:<name>" or "sphinx"
    current: str | None = None
    entry_indent = 0
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if stripped and _UNDERLINE.match(following) and indent == 0:
            section, current = f"numpy:{stripped}", None
            index += 2
            continue
        header = _GOOGLE.match(line)
        if header:
            section, current = f"google:{header.group(1)}", None
            index += 1
            continue
        field = _SPHINX.match(stripped) if indent == 0 else None
        if field:
            section, current = "sphinx", None
            kind, target, text = field.groups()
            if kind in ("param", "parameter", "arg", "argument", "key", "keyword") and target:
                current = target.split()[-1].lstrip("*")
                args[current] = [text]
            index += 1
            continue
        if section is None:
            summary.append(line)
        elif section == "sphinx":
            if current is not None and stripped:
                args[current].append(stripped)
        elif section.startswith("google:"):
            if section[7:] in _GOOGLE_ARGS and stripped:
                match = _ARG_LINE.match(stripped)
                if match and (current is None or indent <= entry_indent):
                    if current is None:
                        entry_indent = indent
                    current = match.group(1).lstrip("*")
                    args[current] = [match.group(2)]
                elif current is not None:
                    args[current].append(stripped)
        elif section[6:] in _NUMPY_ARGS and stripped:
            match = _NUMPY_ARG.match(stripped)
            if indent == 0 and match:
                names = [name.strip().lstrip("*") for name in match.group(1).split(",")]
                current = names[0]
                for name in names:
                    args[name] = []
                # Several names share one description: they all point at the first list.
                for name in names[1:]:
                    args[name] = args[current]
            elif current is not None:
                args[current].append(stripped)
        index += 1
    return "\n".join(summary).strip(), {k: " ".join(v).strip() for k, v in args.items() if v}


# ---------------------------------------------------------------------------------------------
# Metadata: Annotated strings, pydantic Field, annotated_types
# ---------------------------------------------------------------------------------------------


def _is_field_info(obj: object) -> bool:
    cls = type(obj)
    return cls.__name__ == "FieldInfo" and cls.__module__.startswith("pydantic")


def _is_constraint(obj: object) -> bool:
    module = type(obj).__module__
    return module.startswith("annotated_types") or (
        module.startswith("pydantic") and not _is_field_info(obj)
    )


def _constraint_items(obj: object) -> dict[str, Any]:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {item.name: getattr(obj, item.name) for item in dataclasses.fields(obj)}
    slots = getattr(type(obj), "__slots__", None)
    if slots:
        return {name: getattr(obj, name) for name in slots if hasattr(obj, name)}
    return dict(vars(obj)) if hasattr(obj, "__dict__") else {}


@attrs.define
class _Meta:
    description: str | None = None
    title: str | None = None
    examples: Any = None
    constraints: dict[str, Any] = attrs.field(factory=dict)
    default: Any = _UNSET
    default_factory: Callable[[], Any] | None = None


def _undefined(value: object) -> bool:
    return type(value).__name__ == "PydanticUndefinedType" or value is Ellipsis


def _read_field_info(info: Any, meta: _Meta, where: str) -> None:
    for name in _FIELD_REFUSED:
        if getattr(info, name, None) is not None:
            raise _Unsupported(
                f"{where}: Field({name}=...) is not supported (the argument is read under its "
                "parameter name); remove it"
            )
    if getattr(info, "description", None) is not None:
        meta.description = info.description
    if getattr(info, "title", None) is not None:
        meta.title = info.title
    if getattr(info, "examples", None) is not None:
        meta.examples = info.examples
    default = getattr(info, "default", _UNSET)
    if default is not _UNSET and not _undefined(default):
        meta.default = default
    if getattr(info, "default_factory", None) is not None:
        meta.default_factory = info.default_factory
    for item in getattr(info, "metadata", ()):
        _read_constraint(item, meta, where)


def _read_constraint(item: object, meta: _Meta, where: str) -> None:
    for key, value in _constraint_items(item).items():
        if value is None or key in _NO_EFFECT:
            continue
        if key in _NUMBER_KEYS or key in ("min_length", "max_length", "pattern"):
            meta.constraints[key] = value
        else:
            raise _Unsupported(
                f"{where}: the constraint {type(item).__name__}({key}=...) cannot be checked "
                "before the call; check it in the body instead"
            )


def _read_metadata(extras: tuple[Any, ...], where: str) -> _Meta:
    meta = _Meta()
    for extra in extras:
        if isinstance(extra, str):
            meta.description = extra
        elif _is_field_info(extra):
            _read_field_info(extra, meta, where)
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
            raise _Unsupported(f"{where}: constraints {sorted(constraints)} apply to no member")
        return
    kind = spec.get("type")
    for key, value in constraints.items():
        if kind in ("number", "integer") and key in _NUMBER_KEYS:
            spec[_NUMBER_KEYS[key]] = value
        elif kind in _LENGTH_KEYS and key in _LENGTH_KEYS[kind]:
            spec[_LENGTH_KEYS[kind][key]] = value
        else:
            raise _Unsupported(f"{where}: the constraint {key} does not apply to {kind or 'it'}")


# ---------------------------------------------------------------------------------------------
# Annotations → JSON Schema
# ---------------------------------------------------------------------------------------------


def _is_typeddict(tp: Any) -> bool:
    # typing's and typing_extensions' TypedDict alike (typing.is_typeddict misses the latter).
    return (
        isinstance(tp, type)
        and issubclass(tp, dict)
        and hasattr(tp, "__required_keys__")
        and hasattr(tp, "__total__")
    )


def _is_dataclass(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _is_pydantic_model(tp: Any) -> bool:
    return (
        isinstance(tp, type)
        and callable(getattr(tp, "model_json_schema", None))
        and callable(getattr(tp, "model_validate", None))
    )


def _strip_qualifiers(tp: Any) -> Any:
    # TypedDict item qualifiers (typing or typing_extensions): Required, NotRequired, ReadOnly.
    while getattr(typing.get_origin(tp), "_name", None) in ("Required", "NotRequired", "ReadOnly"):
        tp = typing.get_args(tp)[0]
    return tp


def _kinds(spec: dict[str, Any]) -> frozenset[str]:
    """The JSON kinds a schema accepts (``"any"`` for one without a type)."""
    if "oneOf" in spec:
        return frozenset().union(*(_kinds(branch) for branch in spec["oneOf"]))
    kind = spec.get("type")
    if kind is None:
        return frozenset({"any"})
    return frozenset({"integer", "number"}) if kind in ("integer", "number") else frozenset({kind})


def _without_extensions(spec: Any) -> Any:
    """A copy without the extended vocabulary's keywords (for output schemas)."""
    if type(spec) is list:
        return [_without_extensions(item) for item in spec]
    if type(spec) is not dict:
        return spec
    out = {key: _without_extensions(value) for key, value in spec.items() if key not in _EXTENSION}
    if out.get("type") == "object" and isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = True
    return out


class _SchemaWriter:
    """Writes the JSON Schema of one annotation; remembers classes on the path (no recursion)."""

    def __init__(self) -> None:
        self._active: set[Any] = set()

    def spec(self, tp: Any, where: str) -> dict[str, Any]:
        tp = _strip_qualifiers(tp)
        meta = _Meta()
        if typing.get_origin(tp) is typing.Annotated:
            tp, *extras = typing.get_args(tp)
            meta = _read_metadata(tuple(extras), where)
        out = self._bare(_strip_qualifiers(tp), where)
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
        if tp in _FORMATS:
            return {"type": "string", "format": _FORMATS[tp][0]}
        if tp in _HINTS:
            raise _Unsupported(f"{where}: {tp.__name__} cannot be sent as JSON; {_HINTS[tp]}")
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is Literal:
            return self._literal(args, where)
        if origin is types.UnionType or origin is typing.Union:
            return self._union(args, where)
        if origin is list or origin in (set, frozenset):
            if len(args) != 1:
                raise _Unsupported(f"{where}: {origin.__name__} needs one item type")
            out: dict[str, Any] = {"type": "array", "items": self.spec(args[0], where + "[]")}
            if origin is not list:
                out["uniqueItems"] = True
            return out
        if tp in (list, set, frozenset, tuple):
            raise _Unsupported(
                f"{where}: write {tp.__name__}[T] ({tp.__name__}[Any] for any items)"
            )
        if origin is tuple:
            return self._tuple(args, where)
        if origin is dict or tp is dict:
            if not args:
                raise _Unsupported(f"{where}: write dict[str, Any] (or dict[str, T])")
            if args[0] is not str:
                raise _Unsupported(f"{where}: JSON object keys are strings; write dict[str, ...]")
            if args[1] is Any:
                return {"type": "object", "additionalProperties": True}
            return {"type": "object", "additionalProperties": self.spec(args[1], where + "{}")}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self._enum(tp, where)
        if isinstance(tp, type) and issubclass(tp, PurePath):
            return {"type": "string"}
        if _is_pydantic_model(tp):
            return self._pydantic(tp, where)
        if attrs.has(tp) or _is_typeddict(tp) or _is_dataclass(tp):
            return self._record(tp, where)
        name = getattr(tp, "__name__", repr(tp))
        if isinstance(tp, type) and tp.__module__ == "decimal":
            raise _Unsupported(f"{where}: {name} cannot be sent as JSON; write float (or str)")
        raise _Unsupported(
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
                raise _Unsupported(f"{where}: Literal value {value!r} is not a JSON scalar")
            groups.setdefault(kind, []).append(value)
        if "integer" in groups and "number" in groups:
            raise _Unsupported(f"{where}: Literal mixes int and float values")
        branches = [{"type": kind, "enum": list(members)} for kind, members in groups.items()]
        if len(branches) == 1:
            return branches[0]
        return {"oneOf": branches}

    def _enum(self, cls: type[enum.Enum], where: str) -> dict[str, Any]:
        if issubclass(cls, enum.Flag):
            raise _Unsupported(f"{where}: {cls.__name__} is a Flag (combinations are not listed)")
        if not list(cls):
            raise _Unsupported(f"{where}: {cls.__name__} has no members")
        values = tuple(member.value for member in cls)
        for value in values:
            if type(value) not in _SCALARS or value is None:
                raise _Unsupported(
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
        plain = [_strip_qualifiers(member) for member in members]
        if int in plain and float in plain:
            # int | float is any number (JSON does not tell them apart by more than the value).
            members = tuple(m for m, p in zip(members, plain, strict=True) if p is not int)
        branches = [self.spec(member, where) for member in members]
        seen: set[str] = set()
        for branch in branches:
            kinds = _kinds(branch)
            if "any" in kinds or kinds & seen or ("object" in kinds and "object" in seen):
                raise _Unsupported(
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
            raise _Unsupported(f"{where}: {cls.__name__} has no JSON Schema: {exc}") from None
        report = normalize_json_schema(raw, tool_input=False)
        if report.violations:
            raise _Unsupported(
                f"{where}: the JSON Schema of {cls.__name__} cannot be checked: "
                + "; ".join(report.violations)
            )
        # Unkept parts (a recursive model, say) are checked by model_validate before the body.
        schema: dict[str, Any] = report.schema
        return schema

    def _record(self, cls: Any, where: str) -> dict[str, Any]:
        if cls in self._active:
            raise _Unsupported(f"{where}: {cls.__name__} is recursive")
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
                        raise _Unsupported(
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
        doc = _parse_docstring(cls.__doc__)[0] if cls.__doc__ else ""
        # A dataclass without a docstring gets its signature as __doc__: not a description.
        if doc and not doc.startswith(cls.__name__ + "("):
            spec = {"description": doc, **spec}
        return spec


def _render(members: tuple[Any, ...]) -> str:
    return " | ".join(getattr(m, "__name__", None) or repr(m) for m in members)


# ---------------------------------------------------------------------------------------------
# Structuring
# ---------------------------------------------------------------------------------------------


class _BadValue(ValueError):
    """A structuring hook's own message: ``"<path>" <message>``."""


@attrs.frozen
class _Step:
    name: str


class _ItemErrors(Exception):
    """Failures of a TypedDict's items, grouped as cattrs groups a class's attributes."""

    def __init__(self, failures: list[tuple[Exception, str]]) -> None:
        super().__init__(f"{len(failures)} item(s) failed")
        self.failures = failures

    def group_exceptions(self) -> tuple[list[tuple[Exception, _Step]], list[Exception]]:
        return [(error, _Step(key)) for error, key in self.failures], []


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if type(value) is bool:
        return "boolean"
    if type(value) is int or (type(value) is float and value.is_integer()):
        return "integer"
    if type(value) is float:
        return "number"
    if type(value) is str:
        return "string"
    if type(value) is list:
        return "array"
    return "object"


def _exact_kinds(spec: dict[str, Any]) -> frozenset[str]:
    if "oneOf" in spec:
        return frozenset().union(*(_exact_kinds(branch) for branch in spec["oneOf"]))
    kind = spec.get("type")
    return frozenset({"any"}) if kind is None else frozenset({kind})


def _is_set_type(tp: Any) -> bool:
    origin: Any = typing.get_origin(tp) or tp
    return origin is set or origin is frozenset or origin is tuple


def _make_converter(writer: _SchemaWriter) -> cattrs.Converter:
    converter = cattrs.Converter()

    def is_union(tp: Any) -> bool:
        return typing.get_origin(tp) in (types.UnionType, typing.Union)

    member_kinds: dict[Any, frozenset[str]] = {}

    def kinds_of(member: Any) -> frozenset[str]:
        kinds = member_kinds.get(member)
        if kinds is None:
            kinds = member_kinds[member] = _exact_kinds(writer.spec(member, "union"))
        return kinds

    def structure_union(value: Any, tp: Any) -> Any:
        # Validation already passed and union members do not overlap: one member takes the
        # value's JSON kind (an integer goes to a number member when no integer one exists).
        kind = _json_kind(value)
        members = typing.get_args(tp)
        for wanted in (kind, "number") if kind == "integer" else (kind,):
            for member in members:
                if wanted in kinds_of(member):
                    return converter.structure(value, member)
        raise TypeError(f"no union member accepts a {kind}")  # pragma: no cover - validated

    def structure_any(value: Any, tp: Any) -> Any:
        return value

    def structure_none(value: Any, tp: Any) -> None:
        if value is not None:  # pragma: no cover - validated
            raise _BadValue("must be null")

    def structure_number(value: Any, tp: Any) -> Any:
        return float(value)

    def structure_formatted(value: Any, tp: Any) -> Any:
        name = _FORMATS[tp][1]
        if type(value) is not str:  # pragma: no cover - validated
            raise _BadValue(f"must be {name}")
        try:
            return uuid.UUID(value) if tp is uuid.UUID else tp.fromisoformat(value)
        except ValueError:
            raise _BadValue(f"must be {name} (got {js_json(value)})") from None

    def structure_model(value: Any, tp: Any) -> Any:
        return tp.model_validate(value)

    def structure_typeddict(value: Any, tp: Any) -> Any:
        # Own hook: cattrs reads NotRequired from __required_keys__, which string annotations
        # (PEP 563) hide; validation already checked which keys must be there.
        hints = typing.get_type_hints(tp, include_extras=True)
        out: dict[str, Any] = {}
        failures: list[tuple[Exception, str]] = []
        for key, item in value.items():
            if key not in hints:
                continue
            try:
                out[key] = converter.structure(item, _strip_qualifiers(hints[key]))
            except Exception as error:
                failures.append((error, key))
        if failures:
            raise _ItemErrors(failures)
        return out

    def structure_path(value: Any, tp: Any) -> Any:
        return tp(value)

    converter.register_structure_hook_func(is_union, structure_union)
    converter.register_structure_hook_func(lambda tp: tp is Any, structure_any)
    converter.register_structure_hook(type(None), structure_none)
    converter.register_structure_hook(float, structure_number)
    for formatted in _FORMATS:
        converter.register_structure_hook(formatted, structure_formatted)
    converter.register_structure_hook_func(_is_pydantic_model, structure_model)
    converter.register_structure_hook_func(_is_typeddict, structure_typeddict)
    converter.register_structure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, PurePath), structure_path
    )

    converter.register_unstructure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, datetime.date | datetime.time),
        lambda value: value.isoformat(),
    )
    converter.register_unstructure_hook(uuid.UUID, str)
    converter.register_unstructure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, PurePath), str
    )
    converter.register_unstructure_hook_func(
        _is_pydantic_model, lambda value: value.model_dump(mode="json")
    )
    converter.register_unstructure_hook_func(
        _is_set_type,  # sets and tuples are JSON arrays
        lambda value: [converter.unstructure(item) for item in value],
    )
    return converter


def _quoted(path: str) -> str:
    return f'"{path}"'


def _join(path: str, step: Any) -> str:
    return f"{path}[{step}]" if type(step) is int else f"{path}.{step}"


def _structure_violations(error: BaseException, path: str) -> list[str]:
    """Messages of a structuring failure: the path of each leaf and its own message."""
    out: list[str] = []
    stack: list[tuple[BaseException, str]] = [(error, path)]
    while stack:
        exc, where = stack.pop()
        grouped = getattr(exc, "group_exceptions", None)
        if callable(grouped):
            with_notes, without = grouped()
            children = [(child, _join(where, _note_step(note))) for child, note in with_notes]
            children += [(child, where) for child in without]
            stack.extend(reversed(children))
            continue
        errors = getattr(exc, "errors", None)
        if type(exc).__name__ == "ValidationError" and callable(errors):  # pydantic
            for item in errors():
                place = where
                for step in item.get("loc", ()):
                    place = _join(place, step)
                out.append(f"{_quoted(place)}: {item.get('msg', 'invalid')}")
            continue
        if isinstance(exc, _BadValue):
            out.append(f"{_quoted(where)} {exc}")
        else:
            out.append(f"{_quoted(where)}: {exc}")
    return out


def _note_step(note: Any) -> Any:
    name = getattr(note, "name", None)
    return name if name is not None else getattr(note, "index", "?")


def _default_render(args: Any, value: Any) -> list[dict[str, Any]]:
    text = value if type(value) is str else js_json(value)
    return [{"type": "text", "text": text}]


# ---------------------------------------------------------------------------------------------
# The decorator
# ---------------------------------------------------------------------------------------------


@overload
def tool(fn: _F, /) -> ToolDefinition: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    parallel: bool | Callable[[Any], object] = False,
    timeout_ms: float | None = None,
    render: Callable[[Any, Any], Any] | None = None,
) -> Callable[[_F], ToolDefinition]: ...


def tool(
    fn: _F | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parallel: bool | Callable[[Any], object] = False,
    timeout_ms: float | None = None,
    render: Callable[[Any, Any], Any] | None = None,
) -> ToolDefinition | Callable[[_F], ToolDefinition]:
    """Turn an annotated function into a :class:`~trio_harness.ToolDefinition`.

    Usable bare (``@th.tool``) or with options (``@th.tool(parallel=True)``). A parameter named
    ``ctx`` receives the run context (``call_id``, ``abort``, ``conclude_turn()``, ...) and is not
    part of the schema (``async def`` only). A plain ``def`` runs in a worker thread.

    Args:
        fn: The function (when used bare).
        name: Model-facing name (default: the function's name).
        description: Model-facing description (default: the docstring's summary part).
        parallel: ``True`` lets the tool's calls run in parallel; a callable
            ``(args dict) -> object`` decides per call (only an exact ``True`` is parallel).
        timeout_ms: Optional timeout, as in ``define_tool``.
        render: ``(args dict, JSON value) -> content blocks``; by default a ``str`` value is
            the text, anything else its compact JSON.

    Returns:
        The definition (or a decorator producing it). Register it with ``runtime.register``.

    Raises:
        TypeError: An annotation the schema cannot express, a missing annotation, ``*args`` /
            ``**kwargs``, a default that is not a JSON value of its annotation, or a generator
            function (the message names the parameter and what to write instead).
    """

    def decorate(function: _F) -> ToolDefinition:
        return _build(function, name, description, parallel, timeout_ms, render)

    if fn is not None:
        return decorate(fn)
    return decorate


@attrs.frozen
class _Parameter:
    name: str
    annotation: Any
    positional: bool
    default: Any  # _UNSET when required
    factory: Callable[[], Any] | None


def _build(
    function: Callable[..., Any],
    name: str | None,
    description: str | None,
    parallel: bool | Callable[[Any], object],
    timeout_ms: float | None,
    render: Callable[[Any, Any], Any] | None,
) -> ToolDefinition:
    tool_name = name if name is not None else getattr(function, "__name__", "tool")
    label = f'tool "{tool_name}"'
    if inspect.isasyncgenfunction(function) or inspect.isgeneratorfunction(function):
        raise TypeError(f"{label}: a generator cannot be a tool; return the value instead")
    if not callable(function):
        raise TypeError(f"{label}: expected a function, got {type(function).__name__}")
    is_async = inspect.iscoroutinefunction(function)
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except NameError as exc:
        raise TypeError(
            f"{label}: cannot resolve the annotations: {exc} (types named in annotations must be "
            "importable from the function's module, not local to another function)"
        ) from None
    except Exception as exc:
        raise TypeError(f"{label}: cannot resolve the annotations: {exc}") from None
    summary, arg_docs = _parse_docstring(function.__doc__)
    writer = _SchemaWriter()
    properties: dict[str, Any] = {}
    required: list[str] = []
    parameters: list[_Parameter] = []
    wants_ctx = False
    for parameter in inspect.signature(function).parameters.values():
        pname = parameter.name
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f'{label}: parameter "{pname}": *args and **kwargs are not supported')
        if pname == "ctx":
            if not is_async:
                raise TypeError(
                    f'{label}: parameter "ctx": a plain def runs in a worker thread, where the '
                    "run context cannot be used; write async def"
                )
            wants_ctx = True
            continue
        if pname not in hints:
            raise TypeError(f'{label}: parameter "{pname}" has no annotation')
        annotation = hints[pname]
        default, factory = parameter.default, None
        extras: tuple[Any, ...] = ()
        try:
            if _is_field_info(default):
                meta = _Meta()
                _read_field_info(default, meta, pname)
                default, factory = meta.default, meta.default_factory
                extras = (parameter.default,)
            elif default is parameter.empty:
                default = _UNSET
            if extras:
                annotation = typing.Annotated[annotation, *extras]
            entry = writer.spec(annotation, pname)
        except _Unsupported as exc:
            message = str(exc).removeprefix(pname + ": ")
            raise TypeError(f'{label}: parameter "{pname}": {message}') from None
        if "description" not in entry and pname in arg_docs:
            entry = {"description": arg_docs[pname], **entry}
        if default is _UNSET and factory is None:
            required.append(pname)
        elif default is not _UNSET:
            entry["default"] = _json_default(label, pname, annotation, default, entry)
        properties[pname] = entry
        parameters.append(
            _Parameter(
                pname, annotation, parameter.kind is parameter.POSITIONAL_ONLY, default, factory
            )
        )
    if "return" not in hints:
        raise TypeError(f"{label}: the return annotation is missing (write -> None for no value)")
    try:
        output_schema = _without_extensions(writer.spec(hints["return"], "return"))
    except _Unsupported as exc:
        raise TypeError(f"{label}: {exc}") from None
    return_type = hints["return"]
    converter = _make_converter(writer)
    schema: dict[str, Any] = {"type": "object"}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = required

    async def execute(args: Any, ctx: Any) -> Any:
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        problems: list[str] = []
        for parameter in parameters:
            if parameter.name in args:
                try:
                    value = converter.structure(args[parameter.name], parameter.annotation)
                except Exception as exc:
                    problems.extend(_structure_violations(exc, parameter.name))
                    continue
            elif parameter.factory is not None:
                value = parameter.factory()
            elif parameter.default is not _UNSET:
                value = parameter.default
            else:  # pragma: no cover - validation requires it
                raise TypeError(f"missing argument {parameter.name}")
            if parameter.positional:
                positional.append(value)
            else:
                keywords[parameter.name] = value
        if problems:
            raise ToolArgsError(problems)
        if wants_ctx:
            keywords["ctx"] = ctx
        if is_async:
            value = await function(*positional, **keywords)
        else:
            value = await trio.to_thread.run_sync(
                functools.partial(function, *positional, **keywords)
            )
        return converter.unstructure(value, return_type)

    execute.__name__ = getattr(function, "__name__", tool_name)
    execute.__qualname__ = getattr(function, "__qualname__", tool_name)
    execute.__doc__ = function.__doc__
    execute.__wrapped__ = function  # type: ignore[attr-defined]

    classify: Callable[[Any], object] | None
    if callable(parallel):
        classify = parallel
    elif parallel is True:
        classify = _always_parallel
    elif parallel is False:
        classify = None
    else:
        raise TypeError(f"{label}: parallel must be a bool or a callable")
    try:
        definition, _ = define_json_tool(
            name=tool_name,
            description=description if description is not None else summary,
            input_schema=schema,
            execute=execute,
            output=ToolOutput(schema=output_schema, render=render or _default_render),
            is_concurrency_safe=classify,
            timeout_ms=timeout_ms,
            allow_unkept=True,  # pydantic models' unkept parts are checked by model_validate
            explain_unions=True,
        )
    except JsonSchemaError as exc:
        raise TypeError(f"{label}: {'; '.join(exc.violations)}") from None
    return definition


def _json_default(label: str, pname: str, annotation: Any, default: Any, entry: Any) -> Any:
    """The default as JSON, checked against its annotation's schema (``TypeError`` otherwise)."""
    where = f'{label}: parameter "{pname}"'
    converter = cattrs.Converter()
    try:
        value = _make_converter(_SchemaWriter()).unstructure(default, annotation)
    except Exception:
        value = converter.unstructure(default)
    snapshot = snapshot_json_value(value)
    if snapshot is NOT_JSON:
        raise TypeError(
            f"{where}: the default {default!r} is not a JSON value, so the schema cannot show it; "
            "use a JSON-expressible default (or None, and set the value in the body)"
        )
    try:
        check = json_schema_validator(entry)
    except (JsonSchemaError, HarnessError) as exc:  # pragma: no cover - checked at definition
        raise TypeError(f"{where}: {exc}") from None
    violations = check(snapshot, pname)
    if violations:
        hint = (
            f"; write {pname}: <type> | None = None"
            if default is None
            else " (the model would be told a default it may not send)"
        )
        raise TypeError(
            f"{where}: the default {default!r} does not match the annotation: "
            + "; ".join(violations)
            + hint
        )
    return snapshot


def _always_parallel(args: Any) -> bool:
    return True
