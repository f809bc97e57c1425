"""The error hierarchy and upstream's message extraction (upstream-behavior §0.2, §0.3, §h)."""

from __future__ import annotations

import pytest

import trio_harness as th
from trio_harness._errors import (
    error_message,
    unreachable,
)


def test_tool_args_error_carries_code_and_violations() -> None:
    # upstream #172
    error = th.ToolArgsError(['missing required property "a"', '"b" must be a number'])
    assert isinstance(error, th.HarnessError)
    assert error.name == "ToolArgsError"
    assert error.code == "INVALID_ARGS"
    assert error.violations == ['missing required property "a"', '"b" must be a number']
    assert str(error) == 'invalid arguments: missing required property "a"; "b" must be a number'


def test_tool_not_found_error_has_stable_message() -> None:
    # upstream #80
    error = th.ToolNotFoundError("ghost")
    assert isinstance(error, th.HarnessError)
    assert (error.name, error.code, error.message) == (
        "ToolNotFoundError",
        "UNKNOWN_TOOL",
        'unknown tool "ghost"',
    )


def test_schema_and_output_errors() -> None:
    schema_error = th.JsonSchemaError(["schema.x is circular", "schema.y must be a string"])
    assert schema_error.code == "UNSUPPORTED_SCHEMA"
    assert (
        str(schema_error)
        == "unsupported JSON schema: schema.x is circular; schema.y must be a string"
    )
    output_error = th.ToolOutputError("echo", ['"value" must be a string'])
    assert output_error.code == "INVALID_TOOL_OUTPUT"
    assert str(output_error) == 'tool "echo" returned invalid output: "value" must be a string'


def test_timeout_error_is_a_harness_error_with_its_own_code() -> None:
    error = th.ToolTimeoutError("slow", 1500)
    assert (error.name, error.code) == ("ToolTimeoutError", th.TOOL_TIMEOUT)
    assert str(error) == "tool call timed out after 1500ms"
    # Upstream's timeout-policy text: the budget as JavaScript prints it, the name kept aside.
    assert error.tool_name == "slow"
    assert str(th.ToolTimeoutError("slow", 1500.0)) == "tool call timed out after 1500ms"
    assert str(th.ToolTimeoutError("slow", 0.5)) == "tool call timed out after 0.5ms"
    assert str(th.ToolTimeoutError("slow", 1e21)) == "tool call timed out after 1e+21ms"


def test_constants() -> None:
    assert th.DEFAULT_MAX_PARALLEL_TOOL_CALLS == 10
    assert th.TOOL_ABORTED == "ABORTED"
    assert th.TOOL_ABORTED_BEFORE_DISPATCH == "ABORTED_BEFORE_DISPATCH"


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")


class WithMessage:
    message = "denied by object"


def test_error_message_follows_upstream_extraction() -> None:
    # upstream #154-#156, #79: message of an error, a `message` attribute, str() otherwise.
    assert error_message(th.HarnessError("disk full", "ENOSPC")) == "disk full"
    assert error_message(ValueError("just a message")) == "just a message"
    assert error_message(WithMessage()) == "denied by object"
    assert error_message("kaboom") == "kaboom"
    assert error_message(Unprintable()) == "<unprintable thrown value>"


def test_unreachable_names_the_variant() -> None:
    # upstream #25
    with pytest.raises(
        th.UnreachableVariantError, match=r'unreachable variant in JsonSchemaType: "tuple"'
    ):
        unreachable("JsonSchemaType", "tuple")


def test_the_error_tree_in_the_docstring_lists_every_harness_error() -> None:
    import importlib
    import pkgutil

    import trio_harness._errors as errors_module

    for info in pkgutil.walk_packages(th.__path__, "trio_harness."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
    pending = [th.HarnessError]
    found: list[str] = []
    while pending:
        cls = pending.pop()
        if cls.__module__.startswith("trio_harness"):  # not a test's own subclass
            found.append(cls.__name__)
        pending.extend(cls.__subclasses__())
    tree = errors_module.__doc__ or ""
    assert [name for name in found if f"── {name}(" not in tree and name != "HarnessError"] == []
