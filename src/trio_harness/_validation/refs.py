"""Local ``$ref``: resolving a JSON pointer, and counting what inlining a reference produces.

:mod:`.normalize` inlines every local reference at each place it is used. Definitions that refer
to each other several times expand exponentially, so before a reference is inlined its expansion
is counted here (linear in the distinct definitions) and a schema that would pass the JSON node
limit is refused before anything is expanded.
"""

from __future__ import annotations

from typing import Any

from .._json import json_node_limit, node_limit_message

__all__ = ["InliningBudget", "InliningTooLarge", "resolve_pointer"]


def resolve_pointer(root: object, ref: str) -> tuple[bool, object]:
    """``(True, target)`` for a local reference into ``root``, else ``(False, why)``."""
    if not ref.startswith("#"):
        return False, "is not a local reference (remote references are not fetched)"
    node: object = root
    pointer = ref[1:]
    if pointer and not pointer.startswith("/"):
        return False, "is not a JSON pointer (anchors are not supported)"
    for raw in pointer.split("/")[1:] if pointer else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if type(node) is dict and part in node:
            node = node[part]
        elif type(node) is list and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, "points at nothing"
    return True, node


class InliningTooLarge(Exception):
    """Inlining ``ref`` at ``path`` would produce more schema objects than the JSON node limit.

    Attributes:
        unkept: The report's unkept entry (the reference, and why).
        violation: The report's violation: the node limit's message.
    """

    def __init__(self, path: str, ref: str, limit: int) -> None:
        self.unkept = (
            f'{path}.$ref: "{ref}" not inlined: the references expand to more than the JSON '
            f"node limit of {limit} schema objects; nothing normalized"
        )
        self.violation = node_limit_message("schema", limit)
        super().__init__(self.unkept)


class InliningBudget:
    """The schema objects inlining may produce in one document: the JSON node limit.

    Charged twice over: a top-level reference with its whole expansion before it is inlined
    (:meth:`expansion`, a lower bound), and every schema object as inlining makes it (what the
    lower bound cannot see). Either way inlining stops as soon as it passes the limit.
    """

    __slots__ = ("_limit", "_root", "_sizes", "_used")

    def __init__(self, root: object) -> None:
        self._root = root
        self._limit = json_node_limit()
        self._used = 0
        self._sizes: dict[str, int] = {}

    def charge(self, nodes: int, path: str, ref: str) -> None:
        """Count ``nodes`` more schema objects inlined for ``ref`` (reached at ``path``).

        Raises:
            InliningTooLarge: The count passed the JSON node limit.
        """
        self._used += nodes
        if self._used > self._limit:
            raise InliningTooLarge(path, ref, self._limit)

    def expansion(self, ref: str, target: object) -> int:
        """How many schema objects ``target`` (what ``ref`` points at) expands to once every
        reference below it is inlined, each counted at every place it is referenced: a lower
        bound of what inlining produces (only the schema positions the normaliser keeps are
        counted, union branches themselves are not, a recursive reference counts nothing).
        Iterative, and linear in the distinct definitions (each reference is counted once)."""
        sizes = self._sizes
        known = sizes.get(ref)
        if known is not None:
            return known
        # Frames: [reference, schema objects still to count, count so far]; ``active`` holds the
        # references being counted (a cycle among them is not followed by the normaliser).
        frames: list[list[Any]] = [[ref, [(target, True)], 0]]
        active = {ref}
        while frames:
            frame = frames[-1]
            pending: list[tuple[object, bool]] = frame[1]
            descend: tuple[str, object] | None = None
            while pending and descend is None:
                item, counted = pending.pop()
                if type(item) is not dict:
                    continue
                frame[2] += counted
                for key, value in item.items():
                    if key in ("properties", "$defs", "definitions"):
                        if key == "properties" and type(value) is dict:
                            pending.extend((child, True) for child in value.values())
                    elif key in ("items", "additionalProperties", "additionalItems"):
                        children = value if type(value) is list else [value]
                        pending.extend((child, True) for child in children)
                    elif key in ("prefixItems", "anyOf", "oneOf", "allOf") and type(value) is list:
                        branch = key != "prefixItems"
                        pending.extend((child, not branch) for child in value)
                inner = item.get("$ref")
                if type(inner) is str and inner not in active:
                    size = sizes.get(inner)
                    if size is not None:
                        frame[2] += size
                    else:
                        ok, resolved = resolve_pointer(self._root, inner)
                        if ok:
                            descend = (inner, resolved)
            if descend is not None:
                active.add(descend[0])
                frames.append([descend[0], [(descend[1], True)], 0])
                continue
            frames.pop()
            active.discard(frame[0])
            sizes[frame[0]] = frame[2]
            if frames:
                frames[-1][2] += frame[2]
        return sizes[ref]
