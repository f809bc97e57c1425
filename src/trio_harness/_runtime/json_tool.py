"""``define_json_tool``: a tool whose arguments are described by a raw JSON Schema.

``define_tool`` takes the author DSL and always uses upstream's strict subset. A tool that comes
with a JSON Schema of its own (an MCP server's tool, a typed function's pydantic schema) is defined
here instead: the schema is normalised (:func:`~trio_harness.schema.normalize_json_schema`, with its
report) and validated with the vocabulary chosen for this tool, ``"strict"`` or ``"extended"``.
The definition-time option checks, HARD validation for ``execute`` (``ToolArgsError`` with every
violation) and SOFT validation for the classifier (invalid arguments classify as ``False``) are
``define_tool``'s own (:mod:`.define`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .._errors import JsonSchemaError
from .._validation import (
    Formats,
    NormalizedSchema,
    Vocabulary,
    assert_supported_json_schema,
    compile_extended_validator,
    compile_validator,
    normalize_json_schema,
)
from .._values import ToolDefinition, ToolOutput
from .define import check_tool_options, soft_classifier, validated_execute

__all__ = ["define_json_tool", "json_schema_validator"]


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
        TypeError: An option has the wrong type, checked as ``define_tool`` checks it (``execute``
            not callable or a synchronous ``def``, ``name``/``description`` not ``str``, ...):
            ``define_json_tool(<name>): execute must be a callable, got int``.
        ValueError: ``timeout_ms`` is not a positive finite number.
        JsonSchemaError: The schema could not be normalised exactly (every unkept part named,
            unless ``allow_unkept``) or is still outside the vocabulary.
    """
    contract = output if output is not None else ToolOutput(schema={}, render=_raw_render)
    check_tool_options(
        "define_json_tool",
        name=name,
        description=description,
        execute=execute,
        output=contract,
        callbacks=(("is_concurrency_safe", is_concurrency_safe),),
        timeout_ms=timeout_ms,
    )
    report = normalize_json_schema(input_schema, vocabulary=vocabulary)
    problems = [*report.violations, *([] if allow_unkept else report.unkept)]
    if problems:
        raise JsonSchemaError(problems)
    check = json_schema_validator(report.schema, vocabulary=vocabulary, formats=formats)
    definition = ToolDefinition(
        name=name,
        description=description,
        parameters=report.schema,
        output=contract,
        execute=validated_execute(check, execute, f"define_json_tool({name})"),
        is_concurrency_safe=None
        if is_concurrency_safe is None
        else soft_classifier(check, is_concurrency_safe),
        timeout_ms=timeout_ms,
    )
    return definition, report
