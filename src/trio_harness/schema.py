"""Foreign JSON Schemas: tools whose schemas were not written in the author DSL (MCP servers,
OpenAPI documents, other frameworks).

:func:`normalize_json_schema` turns such a schema into the strict subset where it can
(:class:`NormalizedSchema` says what was kept, rewritten or left unchecked), and the opt-in
*extended* vocabulary (``pattern``, ``format``, ``minLength``…) is asserted by
:func:`assert_extended_json_schema` and checked by :func:`validate_extended_value`. The strict
subset's own functions (``validate_json_schema_value`` and the rest) are in the top-level
namespace, as upstream's contract has them.
"""

from __future__ import annotations

from ._public import publish
from ._validation import (
    NormalizedSchema,
    assert_extended_json_schema,
    normalize_json_schema,
    validate_extended_value,
)

__all__ = [
    "NormalizedSchema",
    "assert_extended_json_schema",
    "normalize_json_schema",
    "validate_extended_value",
]

publish(__name__, globals(), __all__)
