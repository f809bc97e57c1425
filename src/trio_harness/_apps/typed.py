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

This module holds the decorator and the definition it builds; the annotation → schema rules live
in :mod:`.typed_schema`, the docstring reader in :mod:`.docstrings`, and the ``cattrs``
structuring and its error messages in :mod:`.typed_structure`.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any, overload

import attrs
import cattrs
import trio
from cattrs.fns import identity

from .._errors import HarnessError, JsonSchemaError, ToolArgsError, ToolOutputError
from .._json import NOT_JSON, js_json, snapshot_json_value
from .._runtime import always_parallel, define_json_tool, json_schema_validator
from .._values import ToolDefinition, ToolOutput
from .approval import ApprovalRule
from .approval import needs_approval as approval_definition
from .docstrings import parse_docstring
from .typed_schema import (
    UNSET,
    Meta,
    SchemaWriter,
    Unsupported,
    is_field_info,
    read_field_info,
    without_extensions,
)
from .typed_structure import kept_exact, make_converter, structure_hook, structure_violations

__all__ = ["tool"]

#: What ``tool`` decorates: an annotated function (a plain alias, not a type variable: nothing
#: returned depends on the function's own type, and the API page shows the signature as is).
_Function = Callable[..., Any]


def _default_render(args: Any, value: Any) -> list[dict[str, Any]]:
    text = value if type(value) is str else js_json(value)
    return [{"type": "text", "text": text}]


@overload
def tool(fn: _Function, /) -> ToolDefinition: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    parallel: bool | Callable[[Any], object] = False,
    timeout_ms: float | None = None,
    render: Callable[[Any, Any], Any] | None = None,
    needs_approval: ApprovalRule = False,
) -> Callable[[_Function], ToolDefinition]: ...


def tool(
    fn: _Function | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parallel: bool | Callable[[Any], object] = False,
    timeout_ms: float | None = None,
    render: Callable[[Any, Any], Any] | None = None,
    needs_approval: ApprovalRule = False,
) -> ToolDefinition | Callable[[_Function], ToolDefinition]:
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
        needs_approval: ``True``: every call needs a person's approval before it runs (in an
            agent: see ``docs/approval.md``); a callable ``(args dict) -> object`` decides per
            call over the validated arguments (truthy: ask; a ``str``: ask, with that reason).
            The definition is then an :class:`~trio_harness.agent.ApprovalToolDefinition`.

    Returns:
        The definition (or a decorator producing it). Register it with ``runtime.register``.

    Raises:
        TypeError: An annotation the schema cannot express, a missing annotation, ``*args`` /
            ``**kwargs``, a default that is not a JSON value of its annotation, or a generator
            function (the message names the parameter and what to write instead).
    """

    def decorate(function: _Function) -> ToolDefinition:
        definition = _build(function, name, description, parallel, timeout_ms, render)
        if needs_approval is False:
            return definition
        return approval_definition(definition, needs_approval)

    if fn is not None:
        return decorate(fn)
    return decorate


@attrs.frozen
class _Parameter:
    name: str
    annotation: Any
    positional: bool
    default: Any  # UNSET when required
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
    summary, arg_docs = parse_docstring(function.__doc__)
    writer = SchemaWriter()
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
            if is_field_info(default):
                meta = Meta()
                read_field_info(default, meta, pname)
                default, factory = meta.default, meta.default_factory
                extras = (parameter.default,)
            elif default is parameter.empty:
                default = UNSET
            if extras:
                annotation = typing.Annotated[annotation, *extras]
            entry = writer.spec(annotation, pname)
        except Unsupported as exc:
            message = str(exc).removeprefix(pname + ": ")
            raise TypeError(f'{label}: parameter "{pname}": {message}') from None
        if "description" not in entry and pname in arg_docs:
            entry = {"description": arg_docs[pname], **entry}
        if default is UNSET and factory is None:
            required.append(pname)
        elif default is not UNSET:
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
        output_schema = without_extensions(writer.spec(hints["return"], "return"))
    except Unsupported as exc:
        raise TypeError(f"{label}: {exc}") from None
    return_type = hints["return"]
    converter = make_converter(writer)
    schema: dict[str, Any] = {"type": "object"}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = required

    # Each parameter's hook, looked up on the first call (a TypedDict may refer to types defined
    # after the tool), and the exact type of a value its hook would give back as it is; a hook
    # of None keeps the validated value as it is.
    hooks: list[Any] = []
    # The return type's unstructure hook, looked up on the first call as well; ``None`` when
    # the value is its own unstructured form (cattrs' ``identity``: str, int, float, bool, None).
    returns: list[Any] = []

    async def execute(args: Any, ctx: Any) -> Any:
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        problems: list[str] = []
        if not returns:
            hooks[:] = [
                (structure_hook(converter, p.annotation), kept_exact(p.annotation))
                for p in parameters
            ]
            unstructure = converter.get_unstructure_hook(return_type)
            returns.append(None if unstructure is identity else unstructure)
        for parameter, (hook, kept) in zip(parameters, hooks, strict=True):
            if parameter.name in args:
                value = args[parameter.name]
                if hook is not None and type(value) is not kept:
                    try:
                        value = hook(value, parameter.annotation)
                    except Exception as exc:
                        problems.extend(structure_violations(exc, parameter.name))
                        continue
            elif parameter.factory is not None:
                value = parameter.factory()
            elif parameter.default is not UNSET:
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
        unstructure = returns[0]
        if unstructure is None:
            return value
        try:
            return unstructure(value)
        except (AttributeError, TypeError) as exc:
            # A value not of the annotated type (a dict for a model): say so, not the
            # converter's AttributeError from inside.
            expected = getattr(return_type, "__name__", str(return_type))
            raise ToolOutputError(
                tool_name, [f"the body returned {type(value).__name__}, not {expected}"]
            ) from exc

    execute.__name__ = getattr(function, "__name__", tool_name)
    execute.__qualname__ = getattr(function, "__qualname__", tool_name)
    execute.__doc__ = function.__doc__
    execute.__wrapped__ = function  # type: ignore[attr-defined]

    classify: Callable[[Any], object] | None
    if callable(parallel):
        classify = parallel
    elif parallel is True:
        classify = always_parallel
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
        value = make_converter(SchemaWriter()).unstructure(default, annotation)
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
