"""Planted bug: the schema assertion accepts a ``oneOf`` of one branch."""

from __future__ import annotations

from typing import Any

from _port import serve

_ONE_BRANCH = ".oneOf must be an array of at least two schemas"


def _has_one_branch(node: Any) -> bool:
    if isinstance(node, list):
        return any(_has_one_branch(item) for item in node)
    if not isinstance(node, dict):
        return False
    one_of = node.get("oneOf")
    if isinstance(one_of, list) and len(one_of) == 1:
        return True
    return any(_has_one_branch(item) for item in node.values())


def transform(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    thrown = answer["expected"].get("throws") if isinstance(answer["expected"], dict) else None
    if request.get("op") not in ("assert", "assertObject") or not isinstance(thrown, dict):
        return answer
    if not _has_one_branch(request.get("schema")):
        return answer
    left = [item for item in thrown.get("violations", []) if not item.endswith(_ONE_BRANCH)]
    if not left:
        answer["expected"] = {"ok": True}
    return answer


if __name__ == "__main__":
    serve(transform)
