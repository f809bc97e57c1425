"""Typed tools: an annotated async function becomes a validated tool definition.

:func:`tool` reads the function's signature once, at decoration time, and writes the author DSL
for it (then :func:`~trio_harness.define_tool` compiles it as usual):

* ``str`` / ``int`` / ``float`` / ``bool`` / ``None`` → ``{"type": "string"}`` and so on;
* ``Literal["a", "b"]`` → ``{"type": "string", "enum": ["a", "b"]}`` (a ``oneOf`` if kinds mix);
* ``list[T]`` → ``{"type": "array", "items": <T>}``;
* ``X | Y`` (so ``X | None``) → ``{"oneOf": [<X>, <Y>]}``; the members must not overlap;
* an ``attrs`` class, a dataclass or a ``TypedDict`` → a closed object whose fields without a
  default are required;
* ``dict[str, Any]`` → an open object; ``Any`` → any JSON value;
* ``Annotated[T, "text"]`` → ``<T>`` with ``description`` ``"text"``.

A parameter without a default is required. Descriptions come from ``Annotated`` strings or the
docstring's Google-style ``Args:`` section; the tool description is the docstring's first part.
Anything else (tuples, sets, ``dict[str, int]``, overlapping unions such as ``int | float``,
recursive classes, ``*args``) is rejected when the decorator runs, naming the parameter.

Validated arguments are structured into the declared types with ``cattrs`` before the body runs;
the body's return value is unstructured back to JSON and validated against the return annotation.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, TypeVar, overload

import attrs
import cattrs

from .._json import NOT_JSON, js_json, snapshot_json_value
from .._runtime import define_tool
from .._values import ToolDefinition, ToolOutput

__all__ = ["tool"]

_F = TypeVar("_F", bound=Callable[..., Awaitable[Any]])

_SCALARS: Final[dict[Any, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
# Which JSON kinds a value of each spec kind can be (integers are numbers too).
_OVERLAPS: Final[dict[str, frozenset[str]]] = {
    "integer": frozenset({"integer", "number"}),
    "number": frozenset({"integer", "number"}),
}
_SECTION: Final = re.compile(
    r"^(Args|Arguments|Parameters|Returns|Yields|Raises|Examples?|Notes?|Attributes):\s*$"
)
_ARG_LINE: Final = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?:\s*(.*)$")


class _Unsupported(Exception):
    """An annotation the DSL cannot express (``where`` is the path inside the annotation)."""


# ---------------------------------------------------------------------------------------------
# Docstrings
# ---------------------------------------------------------------------------------------------


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary part and the ``Args:`` descriptions of a Google-style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    args: dict[str, list[str]] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section = header.group(1)
            current = None
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters") and line.strip():
            indent = len(line) - len(line.lstrip())
            match = _ARG_LINE.match(line.strip())
            if match and (current is None or indent <= _arg_indent(lines, section)):
                current = match.group(1).lstrip("*")
                args[current] = [match.group(2)]
            elif current is not None:
                args[current].append(line.strip())
    return "\n".join(summary).strip(), {k: " ".join(v).strip() for k, v in args.items()}


def _arg_indent(lines: list[str], section: str) -> int:
    # The indentation of the first entry of the section (continuation lines are deeper).
    seen = False
    for line in lines:
        if _SECTION.match(line):
            seen = line.strip().startswith(section)
            continue
        if seen and line.strip():
            return len(line) - len(line.lstrip())
    return 0


# ---------------------------------------------------------------------------------------------
# Annotations → value specs
# ---------------------------------------------------------------------------------------------


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def _is_dataclass(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _kinds(spec: dict[str, Any]) -> frozenset[str]:
    """The JSON kinds a spec accepts (``"any"`` for a json node)."""
    if "oneOf" in spec:
        return frozenset().union(*(_kinds(branch) for branch in spec["oneOf"]))
    kind = spec["type"]
    return frozenset({"any"}) if kind == "json" else _OVERLAPS.get(kind, frozenset({kind}))


class _SpecWriter:
    """Writes the value spec of one annotation; remembers classes on the path (no recursion)."""

    def __init__(self) -> None:
        self._active: set[Any] = set()

    def spec(self, tp: Any, where: str) -> dict[str, Any]:
        description: str | None = None
        if typing.get_origin(tp) is typing.Annotated:
            tp, *extras = typing.get_args(tp)
            texts = [extra for extra in extras if isinstance(extra, str)]
            if texts:
                description = texts[-1]
        out = self._bare(tp, where)
        if description is not None:
            out = {**out, "description": description}
        return out

    def _bare(self, tp: Any, where: str) -> dict[str, Any]:
        if tp is None:
            tp = type(None)
        if tp in _SCALARS:
            return {"type": _SCALARS[tp]}
        if tp is Any:
            return {"type": "json"}
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is Literal:
            return self._literal(args, where)
        if origin is types.UnionType or origin is typing.Union:
            return self._union(args, where)
        if origin is list:
            if len(args) != 1:
                raise _Unsupported(f"{where}: list needs one item type")
            return {"type": "array", "items": self.spec(args[0], where + "[]")}
        if tp is list:
            raise _Unsupported(f"{where}: write list[T] (list[Any] for any items)")
        if origin is dict or tp is dict:
            if args and (args[0] is not str or args[1] is not Any):
                raise _Unsupported(
                    f"{where}: dict values cannot be typed in the DSL; use dict[str, Any], "
                    "an attrs class or a TypedDict"
                )
            if not args:
                raise _Unsupported(f"{where}: write dict[str, Any]")
            return {"type": "object", "additionalProperties": True}
        if attrs.has(tp) or _is_typeddict(tp) or _is_dataclass(tp):
            return self._record(tp, where)
        name = getattr(tp, "__name__", repr(tp))
        raise _Unsupported(f"{where}: {name} cannot be expressed in the tool schema DSL")

    def _literal(self, values: tuple[Any, ...], where: str) -> dict[str, Any]:
        groups: dict[str, list[Any]] = {}
        for value in values:
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

    def _union(self, members: tuple[Any, ...], where: str) -> dict[str, Any]:
        branches = [self.spec(member, where) for member in members]
        seen: set[str] = set()
        for branch in branches:
            kinds = _kinds(branch)
            if "any" in kinds or kinds & seen or ("object" in kinds and "object" in seen):
                raise _Unsupported(
                    f"{where}: union members overlap ({_render(members)}); a value must match "
                    "exactly one of them"
                )
            seen |= kinds
        return {"oneOf": branches}

    def _record(self, cls: Any, where: str) -> dict[str, Any]:
        if cls in self._active:
            raise _Unsupported(f"{where}: {cls.__name__} is recursive")
        self._active.add(cls)
        try:
            hints = typing.get_type_hints(cls, include_extras=True)
            properties: dict[str, Any] = {}
            if attrs.has(cls):
                for attribute in attrs.fields(cls):
                    if not attribute.init:
                        continue
                    if attribute.name.startswith("_"):
                        raise _Unsupported(
                            f"{where}.{attribute.name}: private attrs fields are not supported"
                        )
                    entry = self.spec(hints[attribute.name], f"{where}.{attribute.name}")
                    if attribute.default is attrs.NOTHING:
                        entry["required"] = True
                    properties[attribute.name] = entry
            elif _is_dataclass(cls):
                for item in dataclasses.fields(cls):
                    if not item.init:
                        continue
                    entry = self.spec(hints[item.name], f"{where}.{item.name}")
                    if (
                        item.default is dataclasses.MISSING
                        and item.default_factory is dataclasses.MISSING
                    ):
                        entry["required"] = True
                    properties[item.name] = entry
            else:
                required = cls.__required_keys__
                for key, hint in hints.items():
                    entry = self.spec(hint, f"{where}.{key}")
                    if key in required:
                        entry["required"] = True
                    properties[key] = entry
        finally:
            self._active.discard(cls)
        spec: dict[str, Any] = {"type": "object", "additionalProperties": False}
        if properties:
            spec["properties"] = properties
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


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if type(value) is bool:
        return "boolean"
    if type(value) is int:
        return "integer"
    if type(value) is float:
        return "number"
    if type(value) is str:
        return "string"
    if type(value) is list:
        return "array"
    return "object"


def _make_converter(writer: _SpecWriter) -> cattrs.Converter:
    converter = cattrs.Converter()

    def is_union(tp: Any) -> bool:
        return typing.get_origin(tp) in (types.UnionType, typing.Union)

    member_kinds: dict[Any, frozenset[str]] = {}

    def structure_union(value: Any, tp: Any) -> Any:
        # Validation already passed and union members do not overlap: exactly one member
        # accepts the value's JSON kind.
        kind = _json_kind(value)
        for member in typing.get_args(tp):
            kinds = member_kinds.get(member)
            if kinds is None:
                kinds = member_kinds[member] = _kinds(writer.spec(member, "union"))
            if kind in kinds or (kind == "integer" and "number" in kinds):
                return converter.structure(value, member)
        raise TypeError(f"no union member accepts a {kind}")  # pragma: no cover - validated

    def structure_any(value: Any, tp: Any) -> Any:
        return value

    converter.register_structure_hook_func(is_union, structure_union)
    converter.register_structure_hook_func(lambda tp: tp is Any, structure_any)
    converter.register_structure_hook(float, lambda value, _: float(value))
    return converter


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
    """Turn an annotated ``async def`` into a :class:`~trio_harness.ToolDefinition`.

    Usable bare (``@th.tool``) or with options (``@th.tool(parallel=True)``). A parameter named
    ``ctx`` receives the run context (``call_id``, ``abort``, ``conclude_turn()``, ...) and is not
    part of the schema.

    Args:
        fn: The async function (when used bare).
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
        TypeError: An annotation the DSL cannot express, a missing annotation, ``*args`` /
            ``**kwargs``, or a function that is not ``async def`` (the message names the
            parameter).
    """

    def decorate(function: _F) -> ToolDefinition:
        return _build(function, name, description, parallel, timeout_ms, render)

    if fn is not None:
        return decorate(fn)
    return decorate


def _build(
    function: Callable[..., Awaitable[Any]],
    name: str | None,
    description: str | None,
    parallel: bool | Callable[[Any], object],
    timeout_ms: float | None,
    render: Callable[[Any, Any], Any] | None,
) -> ToolDefinition:
    tool_name = name if name is not None else function.__name__
    label = f'tool "{tool_name}"'
    if not inspect.iscoroutinefunction(function):
        raise TypeError(f"{label}: {function.__name__} must be an async function")
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
    writer = _SpecWriter()
    parameters: dict[str, Any] = {}
    types_by_name: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    wants_ctx = False
    for parameter in inspect.signature(function).parameters.values():
        pname = parameter.name
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f'{label}: parameter "{pname}": *args and **kwargs are not supported')
        if pname == "ctx":
            wants_ctx = True
            continue
        if pname not in hints:
            raise TypeError(f'{label}: parameter "{pname}" has no annotation')
        try:
            entry = writer.spec(hints[pname], pname)
        except _Unsupported as exc:
            message = str(exc).removeprefix(pname + ": ")
            raise TypeError(f'{label}: parameter "{pname}": {message}') from None
        if "description" not in entry and pname in arg_docs:
            entry = {"description": arg_docs[pname], **entry}
        if parameter.default is parameter.empty:
            entry["required"] = True
        else:
            defaults[pname] = parameter.default
            snapshot = snapshot_json_value(parameter.default)
            if snapshot is not NOT_JSON:
                entry["default"] = snapshot
        parameters[pname] = entry
        types_by_name[pname] = hints[pname]
    if "return" not in hints:
        raise TypeError(f"{label}: the return annotation is missing (write -> None for no value)")
    try:
        output_spec = writer.spec(hints["return"], "return")
    except _Unsupported as exc:
        raise TypeError(f"{label}: {exc}") from None
    return_type = hints["return"]
    converter = _make_converter(writer)
    positional_only = {
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.kind is p.POSITIONAL_ONLY
    }

    async def execute(args: Any, ctx: Any) -> Any:
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        for pname, tp in types_by_name.items():
            if pname in args:
                value = converter.structure(args[pname], tp)
            elif pname in defaults:
                continue
            else:  # pragma: no cover - validation requires it
                raise TypeError(f"missing argument {pname}")
            if pname in positional_only:
                positional.append(value)
            else:
                keywords[pname] = value
        if wants_ctx:
            keywords["ctx"] = ctx
        value = await function(*positional, **keywords)
        return converter.unstructure(value, return_type)

    execute.__name__ = function.__name__
    execute.__qualname__ = function.__qualname__
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
    return define_tool(
        name=tool_name,
        description=description if description is not None else summary,
        parameters=parameters,
        output=ToolOutput(schema=output_spec, render=render or _default_render),
        execute=execute,
        is_concurrency_safe=classify,
        timeout_ms=timeout_ms,
    )


def _always_parallel(args: Any) -> bool:
    return True
