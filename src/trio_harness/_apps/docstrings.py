"""Docstrings read for typed tools: the summary part and the parameter descriptions.

:func:`parse_docstring` reads Google (``Args:``), Sphinx (``:param name: text``) and NumPy
(``Parameters`` underlined) styles; :func:`~trio_harness.tool` takes the tool description and
the parameters' descriptions from it, and a record class its description.
"""

from __future__ import annotations

import inspect
import re
from typing import Final

__all__ = ["parse_docstring"]

_GOOGLE: Final = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|"
    r"Returns?|Yields?|Raises|Examples?|Notes?|Attributes|See Also|Warnings?|References|Todo):\s*$"
)
_GOOGLE_ARGS: Final = frozenset(
    {"Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments"}
    | {"Other Parameters"}
)
_ARG_LINE: Final = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?:\s*(.*)$")
_SPHINX: Final = re.compile(r"^:(\w+)(?:\s+([^:]*?))?:\s*(.*)$")
_UNDERLINE: Final = re.compile(r"^\s*-{3,}\s*$")
_NUMPY_ARG: Final = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::\s*(.*))?$")
_NUMPY_ARGS: Final = frozenset({"Parameters", "Other Parameters", "Keyword Arguments"})


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary part and the parameter descriptions of a docstring.

    Google (``Args:``), Sphinx (``:param name: text``) and NumPy (``Parameters`` underlined)
    styles are read; the summary is everything before the first section or field.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    args: dict[str, list[str]] = {}
    section: str | None = None  # "google:<name>", "numpy:<name>" or "sphinx"
    current: str | None = None
    entry_indent = 0
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if stripped and _UNDERLINE.match(following) and indent == 0:
            section, current = f"numpy:{stripped}", None
            index += 2
            continue
        header = _GOOGLE.match(line)
        if header:
            section, current = f"google:{header.group(1)}", None
            index += 1
            continue
        field = _SPHINX.match(stripped) if indent == 0 else None
        if field:
            section, current = "sphinx", None
            kind, target, text = field.groups()
            if kind in ("param", "parameter", "arg", "argument", "key", "keyword") and target:
                current = target.split()[-1].lstrip("*")
                args[current] = [text]
            index += 1
            continue
        if section is None:
            summary.append(line)
        elif section == "sphinx":
            if current is not None and stripped:
                args[current].append(stripped)
        elif section.startswith("google:"):
            if section[7:] in _GOOGLE_ARGS and stripped:
                match = _ARG_LINE.match(stripped)
                if match and (current is None or indent <= entry_indent):
                    if current is None:
                        entry_indent = indent
                    current = match.group(1).lstrip("*")
                    args[current] = [match.group(2)]
                elif current is not None:
                    args[current].append(stripped)
        elif section[6:] in _NUMPY_ARGS and stripped:
            match = _NUMPY_ARG.match(stripped)
            if indent == 0 and match:
                names = [name.strip().lstrip("*") for name in match.group(1).split(",")]
                current = names[0]
                for name in names:
                    args[name] = []
                # Several names share one description: they all point at the first list.
                for name in names[1:]:
                    args[name] = args[current]
            elif current is not None:
                args[current].append(stripped)
        index += 1
    return "\n".join(summary).strip(), {k: " ".join(v).strip() for k, v in args.items() if v}
