"""JSON as JavaScript reads and writes it.

Modules, in dependency order:

* :mod:`.lossless`: the lossless-JSON test, the one-pass snapshot, the JSON node limit;
* :mod:`.stringify`: ``JSON.stringify`` (compact, JavaScript-exact numbers and strings);
* :mod:`.parse`: ``JSON.parse`` semantics for the model's argument text (``parse_arguments``).

Private package (the lowest layer): it imports the standard library only.
"""

from __future__ import annotations

from .lossless import (
    DEFAULT_JSON_NODE_LIMIT,
    MAX_FINITE_JSON_INT,
    NOT_JSON,
    is_json_integer,
    is_json_number,
    is_json_value,
    json_node_count,
    json_node_limit,
    node_limit_message,
    set_json_node_limit,
    snapshot_json_value,
)
from .parse import loads_any_depth, parse_arguments, parse_arguments_frozen, thaw
from .stringify import js_json, js_json_or_string, js_number

__all__ = [
    "DEFAULT_JSON_NODE_LIMIT",
    "MAX_FINITE_JSON_INT",
    "NOT_JSON",
    "is_json_integer",
    "is_json_number",
    "is_json_value",
    "js_json",
    "js_json_or_string",
    "js_number",
    "json_node_count",
    "json_node_limit",
    "loads_any_depth",
    "node_limit_message",
    "parse_arguments",
    "parse_arguments_frozen",
    "set_json_node_limit",
    "snapshot_json_value",
    "thaw",
]
