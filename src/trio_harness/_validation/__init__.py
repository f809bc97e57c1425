"""Mechanism 1, tool-argument validation: pure, synchronous, no Trio.

Modules, in dependency order (each imports only those before it):

* :mod:`.paths` — the one lazy path form of violations (rendered only when reported);
* :mod:`.subset` — the supported JSON-Schema subset: vocabulary tables and the assertion that
  reports every violation of a schema;
* :mod:`.rules` — the value-validation rules as data (keyword → check → message): the one
  module every validator below takes its checks and its wording from;
* :mod:`.walker` — the generic iterative validator, interpreting :mod:`.rules` on every call;
* :mod:`.codegen_check` — the plan of the code generator and its check-only code;
* :mod:`.codegen` — the code generator that specialises a validator to one schema (collector
  code, the module assembled), emitting the checks and messages of :mod:`.rules`;
* :mod:`.compiled` — ``compile_validator``: caches, the compilability check, the helpers the
  generated code calls, and the fallback to the walker;
* :mod:`.dsl` — the author DSL compiled to the subset, and ``validate_args``;
* :mod:`.pattern` — the ECMA-262 ``pattern`` subset, translated to Python ``re`` (opt-in vocabulary);
* :mod:`.formats` — the ``format`` predicates and the decimal-exact ``multipleOf`` (extended only);
* :mod:`.extended` — the opt-in extended vocabulary: keyword tables, assertion, reference walker;
* :mod:`.extended_compiled` — ``compile_extended_validator``: closures built once per schema;
* :mod:`.crosscheck` — every validator on one schema, and the check that they agree (what the
  conformance oracle answers validation cases with);
* :mod:`.refs` — local ``$ref``: JSON pointers, and the budget of what inlining produces;
* :mod:`.normalize` — ``normalize_json_schema``: foreign schemas rewritten into the subset, with a
  report of every change and every unkept part.

This ``__init__`` is the package's interface: code outside the package imports from here only.
The extended vocabulary, the normaliser and the cross-check load on first use of one of their
names (:data:`_LAZY`), so a program that only validates the strict subset never loads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._public import lazy_attributes
from .compiled import MAX_COMPILED_DEPTH, Validator, compile_validator
from .dsl import (
    parameter_schema_spec_to_json_schema,
    validate_args,
    value_schema_spec_to_json_schema,
)
from .rules import ONE_OF_MISMATCH
from .subset import assert_object_json_schema, assert_supported_json_schema
from .walker import validate_json_schema_value

if TYPE_CHECKING:
    from .crosscheck import ValidatorsDisagree, checked_violations
    from .extended import (
        Formats,
        Vocabulary,
        assert_extended_json_schema,
        validate_extended_value,
    )
    from .extended_compiled import compile_extended_validator
    from .formats import FORMAT_ASSERTIONS
    from .normalize import NormalizedSchema, normalize_json_schema
    from .pattern import PatternError, translate_pattern
    from .schema_types import discriminator

__all__ = [
    "FORMAT_ASSERTIONS",
    "MAX_COMPILED_DEPTH",
    "ONE_OF_MISMATCH",
    "Formats",
    "NormalizedSchema",
    "PatternError",
    "Validator",
    "ValidatorsDisagree",
    "Vocabulary",
    "assert_extended_json_schema",
    "assert_object_json_schema",
    "assert_supported_json_schema",
    "checked_violations",
    "compile_extended_validator",
    "compile_validator",
    "discriminator",
    "normalize_json_schema",
    "parameter_schema_spec_to_json_schema",
    "translate_pattern",
    "validate_args",
    "validate_extended_value",
    "validate_json_schema_value",
    "value_schema_spec_to_json_schema",
]

#: Loaded on first use (``import trio_harness`` needs none of them, issue 30): the opt-in
#: extended vocabulary (with its ``pattern`` translator and ``format`` table), the foreign-schema
#: normaliser and the cross-check of every validator.
_LAZY: dict[str, str] = {
    "ValidatorsDisagree": "._validation.crosscheck",
    "checked_violations": "._validation.crosscheck",
    "Formats": "._validation.extended",
    "Vocabulary": "._validation.extended",
    "assert_extended_json_schema": "._validation.extended",
    "validate_extended_value": "._validation.extended",
    "compile_extended_validator": "._validation.extended_compiled",
    "FORMAT_ASSERTIONS": "._validation.formats",
    "NormalizedSchema": "._validation.normalize",
    "normalize_json_schema": "._validation.normalize",
    "PatternError": "._validation.pattern",
    "translate_pattern": "._validation.pattern",
    "discriminator": "._validation.schema_types",
}

__getattr__ = lazy_attributes(__name__, globals(), _LAZY)
