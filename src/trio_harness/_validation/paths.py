"""The one path form of validation messages: built lazily, rendered only for a violation.

Every walk over unbounded data (the schema assertion, the DSL compiler, the value walker) labels
what it reports with a path. Building each path as a full string would cost O(depth²) on deep
input, so a path is a chain of small tuples ending in a root label, and it is rendered only when
a violation names it.

A :data:`Path` is the root label (a ``str``) or ``(parent, step, separator)``, where ``separator``
is one of:

* ``"."``: a key below a non-empty path (``a`` + ``b`` → ``a.b``);
* ``""``: the step appended as written: a key below an empty path (shown bare, as upstream shows
  argument names), or a suffix rendered in advance (``".properties.a"``, ``".oneOf[2]"``);
* ``"["``: an element index (``a`` + ``3`` → ``a[3]``).

A plain ``str`` is a :data:`Path` too, so code that builds its paths eagerly (the extended
vocabulary renders one per schema level) uses the same helpers.
"""

from __future__ import annotations

from typing import TypeAlias

__all__ = [
    "Path",
    "child_path",
    "diagnostic_path",
    "is_empty_path",
    "property_path",
    "render_path",
    "root_label",
]

Path: TypeAlias = "str | tuple[Path, str | int, str]"


def is_empty_path(path: Path) -> bool:
    """Whether ``path`` renders as ``""`` (an empty root, or empty keys below one).

    An empty step with the ``""`` separator is only ever built below an empty path (by
    :func:`child_path`), so the last link decides.
    """
    if type(path) is str:
        return path == ""
    return path[2] == "" and path[1] == ""


def child_path(path: Path, key: str) -> Path:
    """The path of property ``key`` below ``path`` (bare below an empty path)."""
    return (path, key, "" if is_empty_path(path) else ".")


def render_path(path: Path) -> str:
    """The text of a path (``""`` for the empty root)."""
    if type(path) is str:
        return path
    parts: list[str] = []
    while type(path) is tuple:
        path, step, separator = path
        parts.append(f"[{step}]" if separator == "[" else separator + step)  # type: ignore[operator]
    parts.append(path)  # type: ignore[arg-type]
    parts.reverse()
    return "".join(parts)


def root_label(path: Path) -> str:
    """The root label a path starts from (``schema``, ``parameters``, ...)."""
    while type(path) is tuple:
        path = path[0]
    return path  # type: ignore[return-value]


def diagnostic_path(path: Path) -> str:
    """The path as violations show it: the empty root reads ``arguments``."""
    return render_path(path) or "arguments"


def property_path(path: Path, key: str) -> str:
    """``<path>.<key>``, or the bare key at the empty root (keys are inserted raw)."""
    if type(path) is str:
        return f"{path}.{key}" if path else key
    return render_path(child_path(path, key))
