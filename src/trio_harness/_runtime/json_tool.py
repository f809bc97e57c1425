"""``define_json_tool``: a tool whose arguments are described by a raw JSON Schema.

``define_tool`` takes the author DSL and always uses upstream's strict subset. A tool that comes
with a JSON Schema of its own (an MCP server's tool, a typed function's pydantic schema) is defined
here instead: the schema is normalised (:func:`~trio_harness.schema.normalize_json_schema`, with its
report) and validated with the vocabulary chosen for this tool, ``"strict"`` or ``"extended"``.
Validation strengths are those of ``define_tool``: HARD for ``execute`` (``ToolArgsError`` with
every violation), SOFT for the classifier (invalid arguments classify as ``False``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from .._errors import JsonSchemaError, ToolArgsError
from .._validation import (
    Formats,
    NormalizedSchema,
    Vocabulary,
    compile_extended_validator,
    compile_validator,
    normalize_json_schema,
)
from .._values import ToolDefinition, ToolOutput

__all__ = ["define_json_tool", "json_schema_validator"]

_ARGS_ROOT = ""


def _raw_render(args: Any, value: Any) -> Any:
    return [{"type": "text", "text": value if type(value) is str else str(value)}]


def json_schema_validator(
    schema: object, *, vocabulary: Vocabulary = "extended", formats: Formats = "annotate"
) -> Callable[[object, str], list[str]]:
    """The validator of an already normalised schema under ``vocabulary``.

    Raises:
        JsonSchemaError: The schema is outside the chosen vocabulary.
    """
    if vocabulary == "strict":
        from .._validation import assert_supported_json_schema

        assert_supported_json_schema(schema)
        return compile_validator(schema)
    if vocabulary != "extended":
        raise ValueError(f'vocabulary must be "strict" or "extended", got {vocabulary!r}')
    return compile_extended_validator(schema, formats=formats)


def define_json_tool(
    *,
    name: str,
    description: str,
    input_schema: object,
    execute: Callable[[Any, Any], Awaitable[Any]],
    vocabulary: Vocabulary = "extended",
    formats: Formats = "annotate",
    output: ToolOutput | None = None,
    is_concurrency_safe: Callable[[Any], object] | None = None,
    allow_unkept: bool = False,
    timeout_ms: float | None = None,
) -> tuple[ToolDefinition, NormalizedSchema]:
    """Define a tool from a raw JSON Schema, normalised and checked with the chosen vocabulary.

    Args:
        name: Model-facing tool name.
        description: Model-facing description.
        input_schema: Any JSON Schema of the arguments (normalised first).
        execute: ``async (args, ctx) -> value``; runs only for valid arguments.
        vocabulary: ``"extended"`` (default here) or ``"strict"`` (upstream's subset only).
        formats: ``"annotate"`` (default) or ``"assert"`` (check the common ``format`` names).
        output: The output contract; by default any JSON value, rendered as one text block.
        is_concurrency_safe: Optional ``(args) -> object``; invalid arguments classify as ``False``.
        allow_unkept: Register even when normalisation had to leave parts out (the report says
            which); by default such a schema is refused.
        timeout_ms: Optional timeout, as for ``define_tool``.

    Returns:
        ``(definition, report)``: the definition (``parameters`` is the normalised schema) and the
        normalisation report.

    Raises:
        JsonSchemaError: The schema could not be normalised exactly (every unkept part named,
            unless ``allow_unkept``) or is still outside the vocabulary.
    """
    report = normalize_json_schema(input_schema, vocabulary=vocabulary)
    problems = [*report.violations, *([] if allow_unkept else report.unkept)]
    if problems:
        raise JsonSchemaError(problems)
    check = json_schema_validator(report.schema, vocabulary=vocabulary, formats=formats)

    async def validated_execute(args: Any, ctx: Any) -> Any:
        violations = check(args, _ARGS_ROOT)
        if violations:
            raise ToolArgsError(violations)
        pending = execute(args, ctx)
        if not inspect.isawaitable(pending):
            raise TypeError(f"tool {name}: execute must be an async function")
        return await pending

    classifier = None
    if is_concurrency_safe is not None:
        classify = is_concurrency_safe

        def classifier(args: Any) -> object:
            if check(args, _ARGS_ROOT):
                return False
            return classify(args)

    definition = ToolDefinition(
        name=name,
        description=description,
        parameters=report.schema,
        output=output if output is not None else ToolOutput(schema={}, render=_raw_render),
        execute=validated_execute,
        is_concurrency_safe=classifier,
        timeout_ms=timeout_ms,
    )
    return definition, report
