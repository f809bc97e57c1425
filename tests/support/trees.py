"""Facts about JSON-like trees that tests assert (no tests here)."""

from __future__ import annotations

from typing import Any


def containers(value: Any) -> list[int]:
    """The ids of every ``dict`` and ``list`` in ``value``, itself included."""
    ids: list[int] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            ids.append(id(item))
            stack.extend(item.values())
        elif type(item) is list:
            ids.append(id(item))
            stack.extend(item)
    return ids


def detached(copy: Any, value: Any) -> bool:
    """Whether no container of ``copy`` is one of ``value``'s."""
    return not set(containers(copy)) & set(containers(value))
