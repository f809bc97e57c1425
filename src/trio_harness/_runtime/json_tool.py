"""``define_json_tool``: a tool whose arguments are described by a raw JSON Schema.

``define_tool`` takes the author DSL and always uses upstream's strict subset. A tool that comes
with a JSON Schema of its own (an MCP server's tool, a typed function's pydantic schema) is defined
here instead: the schema is normalised (:func:`~trio_harness.schema.normalize_json_schema`, with its
report) and validated with the vocabulary chosen for this tool, ``"strict"`` or ``"extended"``.
The definition-time option checks, HARD validation for ``execute`` (``ToolArgsError`` with every
violation) and SOFT validation for the classifier (invalid arguments classify as ``False``) are
``define_tool``'s own (:mod:`.define`).

With ``explain_unions=True`` (typed tools and MCP tools ask for it), a value that matches no
branch of a ``oneOf`` is reported by its real cause instead of the bare count: the branch of the
value's JSON type reports its own violations (``"address.zip" must be a string``), a value of
no branch's type names the types allowed (``"limit" must be an integer or null``), a union of
values names them (``"dir" must be 1 or -1``), and in a discriminated union the branch the
value's tag names reports (``missing required property "step.n"``; a wrong tag: ``"step.op" must
be "add" or "reset"``). Upstream's
wording, which ``define_tool`` and the oracle use, is untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .._errors import JsonSchemaError
from .._json import is_json_integer, is_json_number, js_json
from .._validation import ONE_OF_MISMATCH, assert_supported_json_schema, compile_validator
from .._values import ToolDefinition, ToolOutput
from .define import check_tool_options, soft_classifier, validated_execute

if TYPE_CHECKING:
    from .._validation import Formats, NormalizedSchema, Vocabulary

# The normaliser and the extended vocabulary are imported where they are used: they load on the
# first ``define_json_tool``, not with ``import trio_harness`` (issue 30).

__all__ = ["define_json_tool", "json_schema_validator"]

_NO_BRANCH = ONE_OF_MISMATCH[1:] + "0)"  # the text after the quoted path
_NOUNS = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "a boolean",
    "null": "null",
    "array": "an array",
    "object": "an object",
}
_Check = Callable[[object, str], list[str]]


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
    from .._validation import compile_extended_validator

    return compile_extended_validator(schema, formats=formats)


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if type(value) is bool:
        return "boolean"
    if is_json_integer(value):
        return "integer"
    if is_json_number(value):
        return "number"
    if type(value) is str:
        return "string"
    return "array" if type(value) is list else "object" if type(value) is dict else "other"


def _branch_kinds(node: object) -> frozenset[str] | None:
    """The JSON kinds a branch can accept (``None``: any kind)."""
    if type(node) is not dict:
        return None
    if type(node.get("oneOf")) is list:
        found: set[str] = set()
        for branch in node["oneOf"]:
            kinds = _branch_kinds(branch)
            if kinds is None:
                return None
            found |= kinds
        return frozenset(found)
    kind = node.get("type")
    if type(kind) is not str:
        return None
    return frozenset({"integer", "number"}) if kind == "number" else frozenset({kind})


def _describe(node: dict[str, Any]) -> list[str]:
    if type(node.get("oneOf")) is list:
        return [part for branch in node["oneOf"] for part in _describe(branch)]
    if "const" in node:
        return [js_json(node["const"])]
    if type(node.get("enum")) is list:
        return [f"one of {js_json(node['enum'])}"]
    return [_NOUNS.get(node.get("type", ""), "any value")]


def _or(parts: list[str]) -> str:
    parts = list(dict.fromkeys(parts))
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def _label(path: str) -> str:
    return f'"{path or "arguments"}"'


def explain_unions(
    schema: object, check: _Check, branch_check: Callable[[object], _Check]
) -> _Check:
    """``check`` with each ``"<p>" must match exactly one oneOf branch (matched 0)`` replaced by
    its real cause (see the module docstring); other violations are kept, in order.

    Args:
        schema: The normalised schema ``check`` validates.
        check: Its validator ``(value, root path) -> violations``.
        branch_check: The validator of a sub-schema (called for union branches only, cached).
    """
    from .._validation import discriminator

    cache: dict[int, _Check] = {}

    def validator(node: object) -> _Check:
        found = cache.get(id(node))
        if found is None:
            found = cache[id(node)] = branch_check(node)
        return found

    def cause(node: dict[str, Any], value: object, path: str) -> list[str]:
        kind = _json_kind(value)
        candidates = [
            branch
            for branch in node["oneOf"]
            if (kinds := _branch_kinds(branch)) is None or kind in kinds
        ]
        if not candidates or all("const" in b or "enum" in b for b in candidates):
            allowed = [part for branch in node["oneOf"] for part in _describe(branch)]
            return [f"{_label(path)} must be {_or(allowed)}"]
        key = discriminator(candidates) if type(value) is dict else None
        if key is not None:
            # A discriminated union: the branch the value's tag names explains it.
            assert type(value) is dict
            tag_path = f"{path}.{key}" if path else key
            if key not in value:
                return [f'missing required property "{tag_path}"']
            named = [b for b in candidates if not validator(b["properties"][key])(value[key], "")]
            if not named:
                tags = [part for b in candidates for part in _describe(b["properties"][key])]
                return [f"{_label(tag_path)} must be {_or(tags)}"]
            candidates = named[:1]
        if len(candidates) == 1:
            [chosen] = candidates
            own = rewrite(chosen, value, path, validator(chosen)(value, path))
            # A violation of the value itself names the other branches too: "... or null".
            others = [
                part
                for branch in node["oneOf"]
                if branch is not chosen
                for part in _describe(branch)
            ]
            head = f"{_label(path)} must be "
            return [
                f"{violation} or {_or(others)}"
                if violation.startswith(head) and others and "; " not in violation
                else violation
                for violation in own
            ]
        parts = [
            "; ".join(rewrite(branch, value, path, validator(branch)(value, path)))
            for branch in candidates
        ]
        return [
            f"{_label(path)} matches none of the {len(candidates)} branches for {_NOUNS[kind]}: "
            + " | ".join(parts)
        ]

    def rewrite(node: object, value: object, path: str, violations: list[str]) -> list[str]:
        if not any(violation.endswith(_NO_BRANCH) for violation in violations):
            return violations
        causes: dict[str, list[str]] = {}
        stack: list[tuple[object, object, str]] = [(node, value, path)]
        while stack:
            here, item, where = stack.pop()
            if type(here) is not dict:
                continue
            if type(here.get("oneOf")) is list:
                if all(validator(branch)(item, where) for branch in here["oneOf"]):
                    causes[_label(where) + _NO_BRANCH] = cause(here, item, where)
                continue
            if type(item) is dict:
                properties = here.get("properties")
                declared = properties if type(properties) is dict else {}
                extra = here.get("additionalProperties")
                for key, child in item.items():
                    child_path = f"{where}.{key}" if where else key
                    if key in declared:
                        stack.append((declared[key], child, child_path))
                    elif type(extra) is dict:
                        stack.append((extra, child, child_path))
            elif type(item) is list:
                prefix = here.get("prefixItems")
                prefix = prefix if type(prefix) is list else []
                for index, child in enumerate(item):
                    schema_here = prefix[index] if index < len(prefix) else here.get("items")
                    stack.append((schema_here, child, f"{where}[{index}]"))
        out: list[str] = []
        for violation in violations:
            out.extend(causes.get(violation, [violation]))
        return out

    def explained(value: object, path: str) -> list[str]:
        violations = check(value, path)
        # Valid arguments (the common case) have nothing to explain.
        return rewrite(schema, value, path, violations) if violations else violations

    return explained


_explain = explain_unions


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
    explain_unions: bool = False,
    optional_defaults: bool = False,
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
            which); by default such a schema is refused. A union that could not be kept
            (``NormalizedSchema.refused``: without it any value would pass) is refused all the
            same.
        timeout_ms: Optional timeout, as for ``define_tool``.
        explain_unions: Report a value that matches no ``oneOf`` branch by its real cause (see
            the module docstring) instead of upstream's ``must match exactly one oneOf branch``.
        optional_defaults: A required property with a ``default`` is optional
            (:func:`~trio_harness.schema.normalize_json_schema`'s option of that name).

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
    from .._validation import normalize_json_schema

    report = normalize_json_schema(
        input_schema, vocabulary=vocabulary, optional_defaults=optional_defaults
    )
    # A removed union is refused even with allow_unkept: it would widen to "any value".
    problems = [*report.violations, *(report.refused if allow_unkept else report.unkept)]
    if problems:
        raise JsonSchemaError(problems)
    check = json_schema_validator(report.schema, vocabulary=vocabulary, formats=formats)
    if explain_unions:
        check = _explain(
            report.schema,
            check,
            lambda node: json_schema_validator(node, vocabulary=vocabulary, formats=formats),
        )

    definition = ToolDefinition(
        name=name,
        description=description,
        parameters=report.schema,
        output=contract,
        execute=validated_execute(check, execute, f"define_json_tool({name})"),
        is_concurrency_safe=None
        if is_concurrency_safe is None
        # Every engine's check is pure: compiled or interpreted, with no callback of the author.
        else soft_classifier(check, is_concurrency_safe, pure=True),
        timeout_ms=timeout_ms,
    )
    return definition, report
