"""Structuring for typed tools: validated JSON into the declared types, and results back.

:func:`make_converter` builds the ``cattrs`` converter of one tool (unions by the value's JSON
kind, date/time and UUID strings, pydantic models with ``model_validate``, ``TypedDict`` s, paths);
:func:`structure_violations` turns a structuring failure into ``invalid arguments`` messages,
each naming the path and the validator's own message.
"""

from __future__ import annotations

import datetime
import types
import typing
import uuid
from pathlib import PurePath
from typing import Any

import attrs
import cattrs
from cattrs.cols import list_structure_factory

from .._json import js_json
from .typed_schema import (
    FORMATS,
    SchemaWriter,
    exact_kinds,
    is_pydantic_model,
    is_typeddict,
    strip_qualifiers,
)

__all__ = ["kept_exact", "make_converter", "structure_hook", "structure_violations"]


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


def _is_literal(tp: Any) -> bool:
    origin: Any = typing.get_origin(tp)
    return origin is typing.Literal


def _literal_members(tp: Any) -> list[Any]:
    # Literal[Literal[1], 2] flattens at construction; a nested alias may not: walk it.
    members: list[Any] = []
    stack = list(reversed(typing.get_args(tp)))
    while stack:
        member = stack.pop()
        if _is_literal(member):
            stack.extend(reversed(typing.get_args(member)))
        else:
            members.append(member)
    return members


#: Types whose validated JSON value is already the structured value (exact ``str`` and ``bool``:
#: validation passed, so the value is of that very type): no hook is called for them.
_AS_IS: frozenset[Any] = frozenset({str, bool, Any})


#: Types whose validated value needs its hook only when it is not of that exact type already
#: (an ``int`` parameter gets ``2`` for the JSON integer ``2.0``, a ``float`` one ``1.0`` for
#: ``1``): structuring an exact ``int`` or ``float`` gives the value itself.
_KEPT_EXACT: dict[Any, type] = {int: int, float: float}


def kept_exact(tp: Any) -> type | None:
    """The exact type of a validated value of ``tp`` that is already structured, or ``None``."""
    return _KEPT_EXACT.get(tp)


def _flat_items(fields: dict[str, Any]) -> tuple[tuple[str, type | None], ...] | None:
    """``(key, exact type or None)`` per item when every item's value is kept as it is (``str``,
    ``bool``, ``Any``) or kept when of an exact type (``int``, ``float``); else ``None``."""
    items: list[tuple[str, type | None]] = []
    for key, tp in fields.items():
        try:
            if tp in _AS_IS:
                items.append((key, None))
            elif tp in _KEPT_EXACT:
                items.append((key, _KEPT_EXACT[tp]))
            else:
                return None
        except TypeError:  # an unhashable annotation: not a scalar
            return None
    return tuple(items)


def _flat_kept(records: list[Any], size: int, exact_items: tuple[tuple[str, type], ...]) -> bool:
    """Whether each of these validated records of a flat ``TypedDict`` is its own structured
    value: it holds every item (its schema allows no other key, so ``size`` keys are every
    item) and each of ``exact_items`` is of that exact type."""
    for record in records:
        if len(record) != size:
            return False
        for key, exact in exact_items:
            if type(record[key]) is not exact:
                return False
    return True


def structure_hook(converter: cattrs.Converter, tp: Any) -> Any:
    """The hook that structures a validated value of ``tp``, or ``None`` when the value is kept
    as it is (``str``, ``bool``, ``Any``)."""
    if tp in _AS_IS:
        return None
    return converter.get_structure_hook(tp)


def _is_set_type(tp: Any) -> bool:
    origin: Any = typing.get_origin(tp) or tp
    return origin is set or origin is frozenset or origin is tuple


def make_converter(writer: SchemaWriter) -> cattrs.Converter:
    converter = cattrs.Converter()

    def is_union(tp: Any) -> bool:
        return typing.get_origin(tp) in (types.UnionType, typing.Union)

    member_kinds: dict[Any, frozenset[str]] = {}
    # The hook of each flat TypedDict (see ``_flat_items``) -> its ``_flat_kept`` plan.
    flat_records: dict[Any, tuple[int, tuple[tuple[str, type], ...]]] = {}

    def kinds_of(member: Any) -> frozenset[str]:
        kinds = member_kinds.get(member)
        if kinds is None:
            kinds = member_kinds[member] = exact_kinds(writer.spec(member, "union"))
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
        name = FORMATS[tp][1]
        if type(value) is not str:  # pragma: no cover - validated
            raise _BadValue(f"must be {name}")
        try:
            return uuid.UUID(value) if tp is uuid.UUID else tp.fromisoformat(value)
        except ValueError:
            raise _BadValue(f"must be {name} (got {js_json(value)})") from None

    def structure_model(value: Any, tp: Any) -> Any:
        return tp.model_validate(value)

    def typeddict_hook(tp: Any) -> Any:
        # Own hook: cattrs reads NotRequired from __required_keys__, which string annotations
        # (PEP 563) hide; validation already checked which keys must be there. Built once per
        # TypedDict (a hook factory): its items' types are resolved here, and each item's hook
        # is looked up on first use (not here: a TypedDict may contain itself).
        fields = {
            key: strip_qualifiers(hint)
            for key, hint in typing.get_type_hints(tp, include_extras=True).items()
        }
        # key -> (its hook or None: the value as it is; the item's type; the exact type of a
        # value that is already structured), filled on first use.
        plans: dict[str, tuple[Any, Any, Any]] = {}
        # A record of scalars only (every item kept as it is, or an int/float kept when of that
        # exact type): (key, exact type or None) per item, so that a record holding every item,
        # each as it is kept, is its own structured value. None for any other record.
        flat = _flat_items(fields)
        if flat is not None:
            # Of such a record, the items that must also be of an exact type.
            flat_plan = (len(flat), tuple((key, exact) for key, exact in flat if exact is not None))

        def plan(key: str) -> tuple[Any, Any, Any]:
            tp = fields[key]
            planned = plans[key] = (structure_hook(converter, tp), tp, kept_exact(tp))
            return planned

        def structure_typeddict(value: Any, _tp: Any) -> Any:
            if flat is not None and _flat_kept([value], *flat_plan):
                return value  # what the loop below builds, as it is
            out: dict[str, Any] = {}
            failures: list[tuple[Exception, str]] = []
            for key, item in value.items():
                try:
                    hook, tp, kept = plans[key]
                except KeyError:
                    if key not in fields:
                        continue
                    hook, tp, kept = plan(key)
                if hook is None or type(item) is kept:
                    out[key] = item
                    continue
                try:
                    out[key] = hook(item, tp)
                except Exception as error:
                    failures.append((error, key))
            if failures:
                raise _ItemErrors(failures)
            return out

        if flat is not None:
            flat_records[structure_typeddict] = flat_plan
        return structure_typeddict

    def structure_path(value: Any, tp: Any) -> Any:
        return tp(value)

    def structure_literal(value: Any, tp: Any) -> Any:
        # The member itself, matched as JSON equality matches (validation already passed):
        # `true` is never 1, and an integral number is the int member (JSON 1.0 is 1), as an
        # int parameter gets 2 for 2.0.
        for member in _literal_members(tp):
            if type(member) is bool or type(value) is bool:
                if member is value:
                    return member
            elif member == value and (
                type(member) is type(value) or _json_kind(member) == _json_kind(value)
            ):
                return member
        raise _BadValue("must be one of the literal values")  # pragma: no cover - validated

    def is_list(tp: Any) -> bool:
        return tp is list or typing.get_origin(tp) is list

    def list_hook(tp: Any) -> Any:
        # A list of values kept as they are (scalars kept as they are, flat records each its
        # own structured value) is its own structured value, as a kept parameter is: the body
        # gets the execution's own arguments, as upstream's does. Any other list: cattrs' own
        # list hook notes the index of every item that fails; validation already passed, so
        # items rarely fail: each is structured in one quick pass first, and only a failing
        # list is structured again by cattrs' hook, for its report.
        args = typing.get_args(tp)
        item = args[0] if args else Any
        try:
            hook = structure_hook(converter, item)
        except RecursionError:  # a type that contains itself: bind late, as cattrs does
            hook = converter.structure
        kept = kept_exact(item)
        detailed: list[Any] = []
        records = flat_records.get(hook)

        def structure_list(value: Any, _tp: Any) -> Any:
            if hook is None or (records is not None and _flat_kept(value, *records)):
                return value
            try:
                return [
                    element if type(element) is kept else hook(element, item) for element in value
                ]
            except Exception:
                if not detailed:
                    detailed.append(list_structure_factory(tp, converter))
                return detailed[0](value, _tp)

        return structure_list

    converter.register_structure_hook_factory(is_list, list_hook)
    converter.register_structure_hook_func(is_union, structure_union)
    converter.register_structure_hook_func(lambda tp: tp is Any, structure_any)
    converter.register_structure_hook(type(None), structure_none)
    converter.register_structure_hook(float, structure_number)
    for formatted in FORMATS:
        converter.register_structure_hook(formatted, structure_formatted)
    converter.register_structure_hook_func(is_pydantic_model, structure_model)
    converter.register_structure_hook_factory(is_typeddict, typeddict_hook)
    converter.register_structure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, PurePath), structure_path
    )
    converter.register_structure_hook_func(_is_literal, structure_literal)

    converter.register_unstructure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, datetime.date | datetime.time),
        lambda value: value.isoformat(),
    )
    converter.register_unstructure_hook(uuid.UUID, str)
    converter.register_unstructure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, PurePath), str
    )
    converter.register_unstructure_hook_func(
        is_pydantic_model, lambda value: value.model_dump(mode="json")
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


def structure_violations(error: BaseException, path: str) -> list[str]:
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
