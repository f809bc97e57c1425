"""The author DSL: value specs and parameter maps, compiled to the raw JSON Schema subset.

A *value spec* is one of ``{"type": "string" | "number" | "integer" | "boolean" | "null"}`` (with
optional ``enum`` / ``const``), ``{"type": "array", "items"?: <value spec>}``,
``{"type": "object", "additionalProperties": bool, "properties"?: <parameter map>}``,
``{"type": "json"}`` (any JSON) or ``{"oneOf": [<value spec>, <value spec>, ...]}``; every node may carry
the annotations ``description``, ``title``, ``default`` and ``examples``. A *parameter map* is a
``dict`` of name → value spec whose entries may also carry ``"required": True``; at the top level it
is the implicit open object of a tool's arguments.

Python mapping of the DSL's "plain record": an exact ``dict`` whose keys are all exact ``str``.
Arrays (``oneOf``, ``enum``) are exact ``list`` objects. Exact built-ins run no user code while they
are inspected, so compilation never calls into author objects.

Compilation is fail-fast (the first author mistake raises ``JsonSchemaError([message])``), walks an
explicit task stack (nesting depth is limited by memory only), and finally hands the result to
``assert_supported_json_schema``, which reports every remaining subset violation at once.
"""

from __future__ import annotations

from typing import Any, Final, NoReturn, TypeAlias

from .._errors import JsonSchemaError
from .._json import NOT_JSON, json_node_limit, node_limit_message, snapshot_json_value
from .paths import Path, render_path, root_label
from .subset import (
    ANNOTATION_KEYWORDS,
    ANNOTATION_ORDER,
    assert_supported_json_schema,
    is_schema_record,
)
from .walker import validate_json_schema_value

__all__ = [
    "compile_parameter_spec",
    "compile_value_spec",
    "parameter_schema_spec_to_json_schema",
    "validate_args",
    "value_schema_spec_to_json_schema",
]

#: Annotation keys, in the order the compiled node lists them.

#: The vocabulary of each node kind (keys besides the annotations). ``required`` is never part of
#: a node's vocabulary: it is accepted (and stripped) only on parameter-map entries.
_KIND_KEYS: Final[dict[str, frozenset[str]]] = {
    "string": frozenset({"type", "enum", "const"}),
    "number": frozenset({"type", "enum", "const"}),
    "integer": frozenset({"type", "enum", "const"}),
    "boolean": frozenset({"type", "enum", "const"}),
    "null": frozenset({"type", "enum", "const"}),
    "array": frozenset({"type", "items"}),
    "object": frozenset({"type", "additionalProperties", "properties"}),
    "json": frozenset({"type"}),
}
_VOCABULARY: Final = {kind: keys | ANNOTATION_KEYWORDS for kind, keys in _KIND_KEYS.items()}
# ``type`` belongs to the oneOf vocabulary so that ``{type, oneOf}`` reports the type conflict.
_ONE_OF_VOCABULARY: Final = frozenset({"oneOf", "type"}) | ANNOTATION_KEYWORDS
_SCALAR_KINDS: Final = frozenset({"string", "number", "integer", "boolean", "null"})

_MSG_NOT_NODE: Final = " must be a value schema object"
_MSG_NOT_MAP: Final = " must be an object of value schemas"
_MSG_REQUIRED: Final = ".required must be true when present"
_MSG_CIRCULAR: Final = " is circular"
_MSG_UNSUPPORTED_KEY: Final = " is not supported by the value schema DSL"
_MSG_TYPE_AND_ONE_OF: Final = " cannot declare both type and oneOf"
_MSG_ONE_OF: Final = ".oneOf must be an array of at least two value schemas"
_MSG_OPENNESS: Final = ".additionalProperties must be explicitly true or false"
_MSG_ENUM: Final = ".enum must be a non-empty array of scalar values"
_MSG_TYPE: Final = (
    ".type must be string/number/integer/boolean/null/array/object/json, or use oneOf"
)


def _fail(path: Path, message: str) -> NoReturn:
    raise JsonSchemaError([render_path(path) + message])


def _too_large(path: Path) -> NoReturn:
    raise JsonSchemaError([node_limit_message(root_label(path), json_node_limit())])


def _detach(value: object, path: Path) -> object:
    """A deep copy of lossless JSON data; anything else is kept as-is for the assertion to report.

    A payload over the JSON node limit makes the whole spec too large.
    """
    problems: list[str] = []
    copy = snapshot_json_value(value, problems)
    if problems:
        _too_large(path)
    return value if copy is NOT_JSON else copy


# Task kinds on the explicit stack.
_NODE: Final = 0  # (NODE, spec, path, target, key, required_list)
_MAP: Final = 1  # (MAP, spec, path, owner)
_LEAVE: Final = 2  # (LEAVE, id)
_REQUIRED: Final = 3  # (REQUIRED, owner, required_list)

_Task: TypeAlias = tuple[Any, ...]


class _Compiler:
    """One compilation: the task stack and the ancestor set of the current path.

    Invariant: ``ancestors`` holds the ids of the spec containers (nodes and property maps) whose
    subtree is being compiled; each is removed by its LEAVE task once its children are done. The
    spec stays referenced by the caller for the whole run, so those ids are stable.
    """

    __slots__ = ("ancestors", "budget", "stack")

    def __init__(self) -> None:
        self.ancestors: set[int] = set()
        self.stack: list[_Task] = []
        # Every node and map is charged: a spec sharing sub-specs is compiled as the tree it
        # expands to, so compilation stops at the JSON node limit.
        self.budget = json_node_limit()

    def run(self) -> None:
        stack = self.stack
        while stack:
            task = stack.pop()
            kind = task[0]
            if kind in (_NODE, _MAP):
                self.budget -= 1
                if self.budget < 0:
                    _too_large(task[2])
            if kind == _NODE:
                self._node(task[1], task[2], task[3], task[4], task[5])
            elif kind == _MAP:
                self._map(task[1], task[2], task[3])
            elif kind == _LEAVE:
                self.ancestors.discard(task[1])
            else:
                owner, required = task[1], task[2]
                if required:
                    # ``properties`` is already the last key, so ``required`` lands right after it.
                    owner["required"] = required

    def _map(self, spec: object, path: Path, owner: dict[str, Any]) -> None:
        if not is_schema_record(spec):
            _fail(path, _MSG_NOT_MAP)
        assert type(spec) is dict
        spec_id = id(spec)
        if spec_id in self.ancestors:
            _fail(path, _MSG_CIRCULAR)
        properties: dict[str, Any] = {}
        owner["properties"] = properties
        required: list[str] = []
        self.ancestors.add(spec_id)
        stack = self.stack
        stack.append((_LEAVE, spec_id))
        stack.append((_REQUIRED, owner, required))
        # Keys are rendered raw (no quoting), as upstream does.
        stack.extend(
            (_NODE, entry, (path, "." + key, ""), properties, key, required)
            for key, entry in reversed(spec.items())
        )

    def _node(
        self,
        spec: object,
        path: Path,
        target: dict[str, Any] | list[Any],
        key: str | None,
        required: list[str] | None,
    ) -> None:
        # ``required`` is the owning map's list for a parameter-map entry, None for any other node.
        if not is_schema_record(spec):
            _fail(path, _MSG_NOT_NODE)
        assert type(spec) is dict
        if required is not None and "required" in spec:
            if spec["required"] is not True:
                _fail(path, _MSG_REQUIRED)
            assert key is not None
            required.append(key)
        spec_id = id(spec)
        if spec_id in self.ancestors:
            _fail(path, _MSG_CIRCULAR)

        if "oneOf" in spec:
            self._check_vocabulary(spec, path, _ONE_OF_VOCABULARY, required is not None)
            if "type" in spec:
                _fail(path, _MSG_TYPE_AND_ONE_OF)
            branches = spec["oneOf"]
            if type(branches) is not list:
                _fail(path, _MSG_ONE_OF)
            compiled: list[Any] = []
            out: dict[str, Any] = {"oneOf": compiled}
            self._annotations(spec, out, path)
            self._place(target, key, out)
            self.ancestors.add(spec_id)
            stack = self.stack
            stack.append((_LEAVE, spec_id))
            stack.extend(
                (_NODE, branches[i], (path, f".oneOf[{i}]", ""), compiled, None, None)
                for i in range(len(branches) - 1, -1, -1)
            )
            return

        kind = spec.get("type")
        if type(kind) is not str or kind not in _VOCABULARY:
            _fail(path, _MSG_TYPE)
        self._check_vocabulary(spec, path, _VOCABULARY[kind], required is not None)
        out = {} if kind == "json" else {"type": kind}
        self._annotations(spec, out, path)
        if kind in _SCALAR_KINDS:
            if "enum" in spec:
                members = spec["enum"]
                if type(members) is not list:
                    _fail(path, _MSG_ENUM)
                self.budget -= len(members)
                if self.budget < 0:
                    _too_large(path)
                out["enum"] = [_detach(member, path) for member in members]
            if "const" in spec:
                out["const"] = _detach(spec["const"], path)
            self._place(target, key, out)
        elif kind == "array":
            self._place(target, key, out)
            if "items" in spec:
                self.ancestors.add(spec_id)
                self.stack.append((_LEAVE, spec_id))
                self.stack.append((_NODE, spec["items"], (path, ".items", ""), out, "items", None))
        elif kind == "object":
            openness = spec.get("additionalProperties")
            if type(openness) is not bool:
                _fail(path, _MSG_OPENNESS)
            out["additionalProperties"] = openness
            self._place(target, key, out)
            if "properties" in spec:
                self.ancestors.add(spec_id)
                self.stack.append((_LEAVE, spec_id))
                self.stack.append((_MAP, spec["properties"], (path, ".properties", ""), out))
        else:  # json: annotations only
            self._place(target, key, out)

    @staticmethod
    def _check_vocabulary(
        spec: dict[str, Any], path: Path, vocabulary: frozenset[str], is_entry: bool
    ) -> None:
        for key in spec:
            if key not in vocabulary and not (is_entry and key == "required"):
                _fail(path, "." + key + _MSG_UNSUPPORTED_KEY)

    def _annotations(self, spec: dict[str, Any], out: dict[str, Any], path: Path) -> None:
        for key in ANNOTATION_ORDER:
            if key in spec:
                out[key] = _detach(spec[key], path)

    @staticmethod
    def _place(target: dict[str, Any] | list[Any], key: str | None, out: dict[str, Any]) -> None:
        if key is None:
            target.append(out)  # type: ignore[union-attr]
        else:
            target[key] = out  # type: ignore[call-overload]


def compile_value_spec(spec: object) -> dict[str, Any]:
    """Compile a value spec without the final subset assertion (fail-fast author checks only)."""
    holder: list[Any] = []
    compiler = _Compiler()
    compiler.stack.append((_NODE, spec, "schema", holder, None, None))
    compiler.run()
    result: dict[str, Any] = holder[0]
    return result


def compile_parameter_spec(spec: object) -> dict[str, Any]:
    """Compile a parameter map without the final subset assertion (fail-fast author checks only)."""
    root: dict[str, Any] = {"type": "object"}
    compiler = _Compiler()
    compiler.stack.append((_MAP, spec, "parameters", root))
    compiler.run()
    return root


def value_schema_spec_to_json_schema(spec: object) -> dict[str, Any]:
    """Compile an author value spec to the raw JSON Schema subset.

    Args:
        spec: A value spec (see the module docstring); root path label ``schema``.

    Returns:
        A fresh JSON Schema ``dict``, keys in upstream order (``type``, annotations, then
        ``enum``/``const``, ``items`` or ``additionalProperties``/``properties``/``required``;
        ``oneOf`` first on a union; a ``json`` node keeps only its annotations).

    Raises:
        JsonSchemaError: The first author mistake (one violation), or every subset violation of
            the compiled schema (paths under ``schema``).
    """
    schema = compile_value_spec(spec)
    assert_supported_json_schema(schema)
    return schema


def parameter_schema_spec_to_json_schema(spec: object) -> dict[str, Any]:
    """Compile an author parameter map to the JSON Schema of a tool's arguments.

    The map becomes an implicit open object: ``{"type": "object", "properties": {...},
    "required": [...]}`` with ``required`` (the entries flagged ``"required": True``, in key order)
    only when non-empty.

    Args:
        spec: A ``dict`` of name → value spec; root path label ``parameters``.

    Returns:
        A fresh JSON Schema ``dict``.

    Raises:
        JsonSchemaError: The first author mistake (one violation), or every subset violation of
            the compiled schema (paths under ``schema``).
    """
    schema = compile_parameter_spec(spec)
    assert_supported_json_schema(schema)
    return schema


#: Root path of argument validation: rendered as ``arguments``, properties without a leading dot.
_ARGS_ROOT = ""


def validate_args(spec: object, args: object) -> list[str]:
    """Validate ``args`` against a parameter-map spec.

    The spec is compiled on every call (cache the result of :func:`define_tool` instead on a hot
    path). Defaults are never applied; undeclared keys are allowed (the root is open).

    Args:
        spec: A parameter map (``{name: value spec}``).
        args: Any value, typically parsed model arguments.

    Returns:
        Every violation in upstream order and wording (``[]`` = valid), e.g.
        ``['missing required property "path"']`` or ``['"arguments" must be an object']``.

    Raises:
        JsonSchemaError: ``spec`` is not a valid parameter map.
    """
    schema = parameter_schema_spec_to_json_schema(spec)
    return validate_json_schema_value(schema, args, _ARGS_ROOT)
