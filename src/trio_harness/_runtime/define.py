"""``define_tool``: author specs turned into validated tool definitions.

``define_tool`` compiles the parameter map and the output value spec once, at definition time, and
specialises a validator to the parameter schema. The definition it returns validates arguments in
two strengths:

* HARD, for ``execute``: any violation raises ``ToolArgsError`` before the body runs;
* SOFT, for ``present_call`` / ``present_result`` / ``is_concurrency_safe``: invalid arguments give
  ``None`` / ``None`` / ``False`` and never raise, because display and classification may run on
  replayed logs written by older tool versions. An exception raised by the author's own function
  still propagates (the runtime contains it).
"""

from __future__ import annotations

import functools
import inspect
import types
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from .._errors import ToolArgsError
from .._validation import (
    compile_validator,
    parameter_schema_spec_to_json_schema,
    value_schema_spec_to_json_schema,
)
from .._values import ToolDefinition, ToolOutput, is_timeout_ms

__all__ = [
    "ARGS_ROOT",
    "ClassifierPlan",
    "ExecutePlan",
    "always_parallel",
    "check_tool_options",
    "classifier_plan",
    "define_tool",
    "execute_plan",
    "soft_classifier",
    "validated_execute",
]

#: Root path of argument validation: rendered as ``arguments``, properties without a leading dot.
ARGS_ROOT: Final = ""

_F = TypeVar("_F", bound=Callable[..., Any])


def _require_callable(owner: str, option: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if not callable(value):
        kind = "a callable or None" if optional else "a callable"
        raise TypeError(f"{owner}: {option} must be {kind}, got {type(value).__name__}")


def _is_sync_def(execute: object) -> bool:
    """A plain ``def`` (not ``async def``, not a lambda): it can only return an awaitable by
    accident, so it is refused at definition time. Lambdas, partials, bound methods of callable
    objects and other callables are trusted to return an awaitable (checked per call)."""
    function = getattr(execute, "__func__", execute)  # a bound method's function
    return (
        inspect.isfunction(function)
        and function.__name__ != "<lambda>"
        and not inspect.iscoroutinefunction(function)
    )


def _wrapping(original: Callable[..., Any]) -> Callable[[_F], _F]:
    """``functools.wraps`` that keeps the wrapper's own type (and tolerates nameless callables)."""

    def apply(wrapper: _F) -> _F:
        functools.update_wrapper(wrapper, original)
        return wrapper

    return apply


_Check = Callable[[object, str], list[str]]


def always_parallel(args: Any) -> bool:
    """The classifier of a tool whose every valid call may run in parallel (``th.tool``'s
    ``parallel=True``). It reads nothing, so the registry hands it no copy of the arguments:
    the verdict is the SOFT check's alone."""
    return True


def soft_classifier(
    check: _Check, classify: Callable[[Any], object], *, pure: bool = False
) -> Callable[[Any], object]:
    """``classify`` behind SOFT validation: invalid arguments classify as ``False``. Its plan
    ``(check, classify, pure)`` is recorded (:func:`classifier_plan`) for the registry to run
    inline. ``pure``: ``check`` has no effect and its verdict depends on the value alone (a
    second check of an unchanged value may take the first one's verdict)."""

    @_wrapping(classify)
    def soft_classifier(args: Any) -> object:
        if check(args, ARGS_ROOT):
            return False
        return classify(args)

    _CLASSIFIER_PLANS[soft_classifier] = (check, classify, pure)
    return soft_classifier


def _soft_present_call(check: _Check, present: Callable[[Any], Any]) -> Callable[[Any], Any]:
    @_wrapping(present)
    def soft_present_call(args: Any) -> Any:
        if check(args, ARGS_ROOT):
            return None
        return present(args)

    return soft_present_call


def _soft_present_result(
    check: _Check, present: Callable[[Any, Any], Any]
) -> Callable[[Any, Any], Any]:
    @_wrapping(present)
    def soft_present_result(args: Any, result: Any) -> Any:
        if check(args, ARGS_ROOT):
            return None
        return present(args, result)

    return soft_present_result


def check_tool_options(
    api: str,
    *,
    name: object,
    description: object,
    execute: object,
    output: object,
    callbacks: tuple[tuple[str, object], ...],
    timeout_ms: object,
) -> None:
    """THE definition-time checks of ``define_tool`` and ``define_json_tool`` (``api`` names the
    caller in the messages: ``<api>(<name>): ...``).

    Raises:
        TypeError: ``name``/``description`` not a ``str``, ``output`` not a ``ToolOutput``,
            ``execute`` or a callback not callable, or ``execute`` a plain synchronous ``def``.
        ValueError: ``timeout_ms`` is not a positive finite number.
    """
    if not isinstance(name, str):
        raise TypeError(f"{api}: name must be a str, got {type(name).__name__}")
    owner = f"{api}({name})"
    if not isinstance(description, str):
        raise TypeError(f"{owner}: description must be a str, got {type(description).__name__}")
    if not isinstance(output, ToolOutput):
        raise TypeError(
            f"{owner}: output must be a ToolOutput(schema=..., render=...), "
            f"got {type(output).__name__}"
        )
    _require_callable(owner, "execute", execute, optional=False)
    if _is_sync_def(execute):
        raise TypeError(
            f"{owner}: execute must be an async function, got the synchronous "
            f"function {getattr(execute, '__qualname__', execute)!r} (write `async def`; a lambda, "
            "functools.partial or callable object that returns an awaitable is accepted)"
        )
    _require_callable(owner, "output.render", output.render, optional=False)
    _require_callable(owner, "output.presentation_meta", output.presentation_meta, optional=True)
    for option, callback in callbacks:
        _require_callable(owner, option, callback, optional=True)
    if timeout_ms is not None and not is_timeout_ms(timeout_ms):
        # Upstream throws a plain Error here; ValueError is its Python stand-in.
        raise ValueError(f"{owner}: timeoutMs must be a positive finite number")


#: What a ``validated_execute`` wrapper does, as data: ``(check, execute, owner)``.
ExecutePlan = tuple[_Check, Callable[[Any, Any], Any], str]

# The plan of every wrapper ``validated_execute`` made, so that the registry can run the check
# and the author's ``execute`` itself (one coroutine less per call) when a definition's
# ``execute`` is exactly such a wrapper. Weak: a plan lives as long as its wrapper.
_PLANS: Final[weakref.WeakKeyDictionary[Callable[..., Any], ExecutePlan]] = (
    weakref.WeakKeyDictionary()
)


#: What a ``soft_classifier`` wrapper does, as data: ``(check, classify, pure)``.
ClassifierPlan = tuple[_Check, Callable[[Any], object], bool]
_CLASSIFIER_PLANS: Final[weakref.WeakKeyDictionary[Callable[..., Any], ClassifierPlan]] = (
    weakref.WeakKeyDictionary()
)


def classifier_plan(classifier: object) -> ClassifierPlan | None:
    """The plan of ``classifier`` when it is a wrapper made by :func:`soft_classifier`, else
    ``None``."""
    if type(classifier) is not types.FunctionType:
        return None
    return _CLASSIFIER_PLANS.get(classifier)


def execute_plan(execute: object) -> ExecutePlan | None:
    """The plan of ``execute`` when it is a wrapper made by :func:`validated_execute` (running
    the plan is exactly what awaiting the wrapper does), else ``None``."""
    if type(execute) is not types.FunctionType:
        return None
    return _PLANS.get(execute)


def validated_execute(
    check: _Check, execute: Callable[[Any, Any], Awaitable[Any]], owner: str
) -> Callable[[Any, Any], Awaitable[Any]]:
    """``execute`` behind HARD validation: ``ToolArgsError`` with every violation before the
    body runs, and a ``TypeError`` naming ``owner`` when ``execute`` returns no awaitable.

    The wrapper's plan is recorded (:func:`execute_plan`); ``_runtime.body`` runs it inline, so
    the two must stay the same steps."""

    @_wrapping(execute)
    async def validated_execute(args: Any, ctx: Any) -> Any:
        violations = check(args, ARGS_ROOT)
        if violations:
            raise ToolArgsError(violations)
        pending = execute(args, ctx)
        if not inspect.isawaitable(pending):
            raise TypeError(
                f"{owner}: execute must be an async function (it returned {type(pending).__name__})"
            )
        return await pending

    _PLANS[validated_execute] = (check, execute, owner)
    return validated_execute


def define_tool(
    *,
    name: str,
    description: str,
    parameters: object,
    output: ToolOutput,
    execute: Callable[[Any, Any], Awaitable[Any]],
    is_concurrency_safe: Callable[[Any], object] | None = None,
    present_call: Callable[[Any], Any] | None = None,
    present_result: Callable[[Any, Any], Any] | None = None,
    finalize_content: Callable[[Any, Any], Any] | None = None,
    timeout_ms: float | None = None,
) -> ToolDefinition:
    """Define a tool from author specs, with argument validation built in.

    Args:
        name: Model-facing tool name.
        description: Model-facing description.
        parameters: A parameter map (``{name: value spec}``, entries may carry ``"required": True``).
        output: ``ToolOutput(schema=<value spec>, render=..., presentation_meta=...)``; the schema
            is compiled here.
        execute: ``async (args, ctx) -> value``; runs only for valid arguments.
        is_concurrency_safe: Optional ``(args) -> object``; only an exact ``True`` lets a call run in
            parallel. Invalid arguments classify as ``False``.
        present_call: Optional ``(args) -> card``; invalid arguments give ``None``.
        present_result: Optional ``(args, result) -> card``; invalid arguments give ``None``.
        finalize_content: Optional ``(exec, result) -> content``; forwarded unchanged.
        timeout_ms: Optional positive finite timeout in milliseconds.

    Returns:
        A :class:`ToolDefinition` whose ``parameters`` and ``output.schema`` are the compiled JSON
        Schemas and whose callables are the validating wrappers (``None`` where not given).

    Raises:
        TypeError: An option has the wrong type (``name``/``description`` not ``str``, ``output``
            not a ``ToolOutput``, a callback not callable, ``execute`` a synchronous ``def``).
        ValueError: ``timeout_ms`` is not a positive finite number
            (``defineTool(<name>): timeoutMs must be a positive finite number``).
        JsonSchemaError: ``parameters`` or ``output.schema`` is not a valid spec.
    """
    check_tool_options(
        "defineTool",
        name=name,
        description=description,
        execute=execute,
        output=output,
        callbacks=(
            ("is_concurrency_safe", is_concurrency_safe),
            ("present_call", present_call),
            ("present_result", present_result),
            ("finalize_content", finalize_content),
        ),
        timeout_ms=timeout_ms,
    )
    parameters_schema = parameter_schema_spec_to_json_schema(parameters)
    output_schema = value_schema_spec_to_json_schema(output.schema)
    # Specialised once here: every call afterwards pays only for the check itself.
    check = compile_validator(parameters_schema)

    return ToolDefinition(
        name=name,
        description=description,
        parameters=parameters_schema,
        output=ToolOutput(
            schema=output_schema,
            render=output.render,
            presentation_meta=output.presentation_meta,
        ),
        execute=validated_execute(check, execute, f"defineTool({name})"),
        is_concurrency_safe=None
        if is_concurrency_safe is None
        # ``compile_validator``'s checks are pure: generated code with no callback.
        else soft_classifier(check, is_concurrency_safe, pure=True),
        present_call=None if present_call is None else _soft_present_call(check, present_call),
        present_result=None
        if present_result is None
        else _soft_present_result(check, present_result),
        finalize_content=finalize_content,
        timeout_ms=timeout_ms,
    )
