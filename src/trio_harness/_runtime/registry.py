"""The tool registry: registration checks, lookup, schema projection and fail-closed classification.

Work that depends only on the definition is done once, at registration: the output contract is
checked, ``output.schema`` is asserted and compiled to a validator, and the callables the pipeline
needs are captured in a :class:`RegisteredTool`. A call then costs one dict lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import attrs

from .._json import NOT_JSON, snapshot_json_value
from .._validation import assert_supported_json_schema, compile_validator
from .._values import EXCLUSIVE, PARALLEL, ExecutionMode, ToolDefinition, is_timeout_ms
from .define import (
    ARGS_ROOT,
    ClassifierPlan,
    ExecutePlan,
    always_parallel,
    classifier_plan,
    execute_plan,
)
from .execution import UNNOTED, ParsedArguments, ToolExecutionInput, parsed_note

__all__ = ["RegisteredTool", "Registry"]

_OUTPUT_CONTRACT: Final = 'tool "{}" must declare output {{ schema, render, presentationMeta? }}'


@attrs.frozen
class RegisteredTool:
    """A registered definition with everything the pipeline needs, resolved once.

    Attributes:
        definition: The definition as registered (what ``runtime.get`` returns).
        name: The tool name.
        check: The compiled output validator, ``(value, path) -> violations``.
        render: ``output.render``.
        presentation_meta: ``output.presentation_meta`` or ``None``.
        timeout_s: The declared timeout in seconds, or ``None``.
        plan: When ``definition.execute`` is the validating wrapper ``define_tool`` made, what
            it does (``(check, execute, owner)``), so the body can run it without the wrapper's
            coroutine; else ``None``.
        classify: ``is_concurrency_safe``'s plan when it is ``define_tool``'s soft wrapper
            (``(check, classify)``), else ``None``.
    """

    definition: ToolDefinition
    name: str
    check: Callable[[object, str], list[str]]
    render: Callable[[Any, Any], Any]
    presentation_meta: Callable[[Any, Any], Any] | None
    timeout_s: float | None
    plan: ExecutePlan | None = None
    classify: ClassifierPlan | None = None


def _prepare_entry(tool: ToolDefinition) -> RegisteredTool:
    name = tool.name
    output = getattr(tool, "output", None)
    render = getattr(output, "render", None)
    presentation_meta = getattr(output, "presentation_meta", None)
    if (
        output is None
        or not callable(render)
        or not (presentation_meta is None or callable(presentation_meta))
    ):
        raise TypeError(_OUTPUT_CONTRACT.format(name))
    schema = output.schema
    assert_supported_json_schema(schema)
    timeout_ms = getattr(tool, "timeout_ms", None)
    if timeout_ms is not None and not is_timeout_ms(timeout_ms):
        # Upstream throws a plain Error; ValueError is its Python stand-in.
        raise ValueError(f'tool "{name}" timeoutMs must be a positive finite number')
    return RegisteredTool(
        definition=tool,
        name=name,
        check=compile_validator(schema),
        render=render,
        presentation_meta=presentation_meta,
        timeout_s=None if timeout_ms is None else float(timeout_ms) / 1000,
        plan=execute_plan(tool.execute),
        classify=classifier_plan(getattr(tool, "is_concurrency_safe", None)),
    )


class Registry:
    """Name → :class:`RegisteredTool`, in registration order."""

    __slots__ = ("_tools", "lookup")

    def __init__(self) -> None:
        self._tools: dict[str, RegisteredTool] = {}
        #: ``lookup(name)``: the registered entry for ``name``, if any.
        self.lookup: Callable[[str], RegisteredTool | None] = self._tools.get

    def register(self, tool: ToolDefinition) -> Callable[[], None]:
        """Check and add ``tool``; returns a disposer that unregisters exactly this registration.

        Raises:
            TypeError: The output contract is missing or malformed
                (``tool "<name>" must declare output { schema, render, presentationMeta? }``).
            JsonSchemaError: ``output.schema`` is outside the supported subset.
            ValueError: ``timeout_ms`` is not a positive finite number, or the name is taken.
        """
        entry = _prepare_entry(tool)
        name = entry.name
        if name in self._tools:
            # Upstream's wording, kept on purpose although this port has no per-agent registrations.
            raise ValueError(
                f'tool "{name}" is already registered (for a per-agent variant, register through '
                "that agent's `agent.ctx` instead)"
            )
        self._tools[name] = entry

        def dispose() -> None:
            # Only this registration: a later re-registration under the same name survives.
            if self._tools.get(name) is entry:
                del self._tools[name]

        return dispose

    def unregister(self, name: str) -> bool:
        """Remove the tool called ``name``; returns whether there was one."""
        return self._tools.pop(name, None) is not None

    def schemas(self) -> list[dict[str, Any]]:
        """Model-facing projections ``{"name", "description", "parameters"}``, detached copies.

        Raises:
            ValueError: A raw registration's parameters are not lossless JSON
                (``tool "<name>" parameters must be lossless JSON before schema projection``).
        """
        out: list[dict[str, Any]] = []
        for entry in self._tools.values():
            definition = entry.definition
            parameters = snapshot_json_value(definition.parameters)
            if parameters is NOT_JSON:
                raise ValueError(
                    f'tool "{entry.name}" parameters must be lossless JSON before schema projection'
                )
            out.append(
                {
                    "name": definition.name,
                    "description": definition.description,
                    "parameters": parameters,
                }
            )
        return out

    def execution_mode(self, input: ToolExecutionInput) -> ExecutionMode:
        """Fail-closed classification: parallel only when the classifier returns exactly ``True``.

        The classifier gets the arguments as parsed (upstream: the raw, unsnapshotted
        arguments), but never the value the call then validates and runs with: one that mutates
        what it is given must not change the call.

        * Arguments the pool parsed (:func:`~.execution.parsed_input`): the pool's own. The
          call runs with the value the parse proved lossless JSON, or with a copy taken here,
          *before* the classifier runs; that value is checked once (a later classification of
          it by the same check takes that verdict), and the verdict is noted on the input for
          ``prepare`` (the body then takes it too; see ``body._begin``). The classifier is
          handed ``input.arguments`` (whoever else holds the input, a tracer or a wrapper, sees
          them as upstream's ``input.arguments``), which for a proved value is made from the
          parse when first read: the constant classifier reads nothing, so nothing is made.
          Parsed arguments that are not lossless JSON are judged as they are (the call fails
          when prepared).
        * Any other arguments (the caller holds them): the classifier gets a detached copy when
          they are lossless JSON (the caller's object is never touched), and the call snapshots
          them again when it is prepared.

        The constant classifier (:func:`~.define.always_parallel`, ``th.tool(parallel=True)``)
        reads nothing: its verdict is the check's. A classifier that raises is a "no", never a
        crash.
        """
        note = parsed_note(input)
        # A proved value runs as parsed: ``input.arguments`` is read only for a classifier.
        proved = note is not None and note.run_with is not UNNOTED
        arguments = None if proved else input.arguments
        entry = self._tools.get(input.name)
        if entry is None:
            return EXCLUSIVE
        classifier = entry.definition.is_concurrency_safe
        if classifier is None:
            return EXCLUSIVE
        plan = entry.classify
        constant = plan is not None and plan[1] is always_parallel
        try:
            if note is not None:
                # The pool's own parsed value: the check runs on what the call runs with (the
                # value itself when proved, else a copy taken here, before the classifier
                # runs), noted for ``prepare`` with the check's verdict.
                if note.run_with is UNNOTED:
                    copy = snapshot_json_value(arguments)
                    if copy is NOT_JSON:
                        # Not lossless JSON: judged as it is (the call fails when prepared).
                        return _classify(arguments, arguments, classifier, plan, None)
                    note.run_with, note.checked = copy, None  # a verdict is of one value
                elif not constant:  # proved: the input's own, made now for the classifier
                    arguments = note.arguments_of(input)
                return _classify(arguments, note.run_with, classifier, plan, note)
            if constant:
                given = arguments  # the constant classifier reads nothing: no copy to protect
            else:
                copy = snapshot_json_value(arguments)
                given = arguments if copy is NOT_JSON else copy
            return _classify(given, given, classifier, plan, None)
        except Exception:
            return EXCLUSIVE


def _classify(
    given: object,
    checked_on: object,
    classifier: Callable[[Any], object],
    plan: ClassifierPlan | None,
    note: ParsedArguments | None,
) -> ExecutionMode:
    """The verdict of ``classifier`` handed ``given``; ``define_tool``'s soft wrapper (``plan``)
    runs inline on ``checked_on`` (what the call runs with, equal to ``given``): invalid
    arguments are a "no". ``note``: where ``prepare`` takes the check's verdict from (``None``
    there: not checked, or by a check whose verdict may not be reused). What raises goes to the
    caller."""
    if plan is None:
        if note is not None:
            note.checked = None
        verdict = classifier(given)
    else:
        check, classify, pure = plan
        checked = note.checked if note is not None else None
        if checked is not None and checked[0] is check:
            # This call's copy was checked by this very check at an earlier classification
            # (a listener's StepStarted, a reclassification): nobody is handed the copy before
            # ``prepare``, so the verdict stands.
            violations = checked[1]
        else:
            violations = check(checked_on, ARGS_ROOT)
            if note is not None:
                note.checked = (check, violations) if pure else None
        if violations:
            return EXCLUSIVE
        if classify is always_parallel:
            return PARALLEL
        verdict = classify(given)
    return PARALLEL if verdict is True else EXCLUSIVE
