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
"""

from .compiled import MAX_COMPILED_DEPTH, Validator, compile_validator
from .crosscheck import ValidatorsDisagree, checked_violations
from .dsl import (
    parameter_schema_spec_to_json_schema,
    validate_args,
    value_schema_spec_to_json_schema,
)
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
from .rules import ONE_OF_MISMATCH
from .schema_types import discriminator
from .subset import assert_object_json_schema, assert_supported_json_schema
from .walker import validate_json_schema_value

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
