"""Scheduling edge cases whose unions can overlap (``edge/union-overlap-*``, issue 27).

A value may match two branches of these ``oneOf`` parameters: the tool's compiled validator must
count every matching branch (``matched 2``) rather than stop at the first match. Before them the
kit's scheduling cases used only unions whose branches cannot overlap, so a bug in the compiled
``oneOf`` path passed the whole kit; ``shared-tag`` (object branches whose string ``const`` tag
two of them share) was added when a blind author's check-only shortcut that picked the branch by
its tag alone passed it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

__all__ = ["union_edges"]

#: Unions whose branches overlap (a value may match two): the tool's compiled validator must
#: count every matching branch (``matched 2``), not stop at the first match.
_UNIONS: Final[tuple[tuple[str, dict[str, Any], tuple[str, ...]], ...]] = (
    (
        "numbers",
        {"n": {"oneOf": [{"type": "number"}, {"type": "integer"}], "required": True}},
        ('{"n": 1.5}', '{"n": 1}', '{"n": 2.0}', '{"n": "1"}', '{"n": -7}'),
    ),
    (
        "any-branch",
        {"v": {"oneOf": [{"type": "json"}, {"type": "string", "enum": ["a", "b"]}]}},
        ('{"v": 1}', '{"v": "a"}', '{"v": "c"}', '{"v": null}', '{"v": "b"}'),
    ),
    (
        "nested",
        {
            "xs": {
                "type": "array",
                "items": {
                    "oneOf": [
                        {"type": "integer", "enum": [1, 2]},
                        {"type": "number", "enum": [2, 3.5]},
                    ]
                },
            },
            "o": {
                "oneOf": [
                    {
                        "type": "object",
                        "additionalProperties": True,
                        "properties": {"a": {"type": "string"}},
                    },
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"b": {"type": "integer"}},
                    },
                ]
            },
        },
        (
            '{"xs": [1, 3.5]}',
            '{"xs": [2]}',
            '{"o": {"b": 1}}',
            '{"o": {"a": "x"}}',
            '{"xs": [1, 2.0, 4], "o": {}}',
        ),
    ),
    (
        # Object branches told apart by a string ``const`` tag, two of which share it: the tag
        # alone cannot pick the branch (a second blind round planted exactly that shortcut).
        "shared-tag",
        {
            "s": {
                "required": True,
                "oneOf": [
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "kind": {"type": "string", "const": "a", "required": True},
                            "x": {"type": "number"},
                        },
                    },
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "kind": {"type": "string", "const": "a", "required": True},
                            "y": {"type": "number"},
                        },
                    },
                    {
                        "type": "object",
                        "additionalProperties": True,
                        "properties": {"kind": {"type": "string", "const": "b", "required": True}},
                    },
                ],
            }
        },
        (
            '{"s": {"kind": "a"}}',
            '{"s": {"kind": "a", "x": 1}}',
            '{"s": {"kind": "a", "y": 2}}',
            '{"s": {"kind": "b", "x": 1}}',
            '{"s": {"kind": "a", "x": 1, "y": 2}}',
            '{"s": {"kind": "c"}}',
        ),
    ),
)


def union_edges() -> Iterator[tuple[str, dict[str, Any]]]:
    """Parallel calls of a tool whose parameters hold unions with overlapping branches: some
    calls match one branch (their body runs), some two or none (rejected before dispatch), in
    one window, so a port whose union check stops at the first match commits a body the
    reference rejects (issue 27: the kit's other unions cannot overlap)."""
    for label, parameters, texts in _UNIONS:
        tool = {"name": "union", "parallel": "always", "parameters": parameters}
        yield (
            f"union-overlap-{label}",
            {
                "tools": [tool],
                "calls": [
                    {"id": f"c{i}", "name": "union", "arguments": text, "body": {"ms": 30 - 5 * i}}
                    for i, text in enumerate(texts)
                ],
                "cap": 3,
            },
        )
