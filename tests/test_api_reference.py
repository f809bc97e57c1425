"""The API reference documents every public name of every public namespace exactly once, under
the namespace it is exported from, and nothing else.

The API pages (``docs/api*.md``) name each object in an autodoc directive, relative to the
namespace of the last ``.. module::`` or ``.. currentmodule::`` line; no page walks a module
(``automodule``), so nothing is documented implicitly or twice. The slow test builds the site
with warnings as errors and reads its object inventory.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import re
import subprocess
import sys
import zlib
from collections import Counter
from pathlib import Path

import pytest

import trio_harness

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

DIRECTIVE = re.compile(
    r"^\.\. (module|currentmodule|auto(?:class|function|data|exception|decorator)"
    r"|py:(?:class|function|data|exception|decorator)):: (\S+)",
    re.MULTILINE,
)


def public_namespaces() -> list[str]:
    found = ["trio_harness"]
    for info in pkgutil.walk_packages(trio_harness.__path__, "trio_harness."):
        parts = info.name.split(".")
        if not any(part.startswith("_") for part in parts):
            found.append(info.name)
    return sorted(found)


def public_names() -> set[str]:
    names: set[str] = set()
    for namespace in public_namespaces():
        module = importlib.import_module(namespace)
        names.update(f"{namespace}.{name}" for name in module.__all__)
    return names


def documented() -> Counter[str]:
    counts: Counter[str] = Counter()
    for page in sorted(DOCS.glob("*.md")):
        module = ""
        for kind, name in DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            if kind in {"module", "currentmodule"}:
                module = name
            else:
                counts[name if name.startswith("trio_harness.") else f"{module}.{name}"] += 1
    return counts


def test_the_namespaces_are_the_documented_ones() -> None:
    assert public_namespaces() == [
        "trio_harness",
        "trio_harness.agent",
        "trio_harness.log",
        "trio_harness.lowlevel",
        "trio_harness.mcp",
        "trio_harness.providers",
        "trio_harness.providers.anthropic",
        "trio_harness.providers.openai",
        "trio_harness.schema",
        "trio_harness.testing",
        "trio_harness.timeline",
        "trio_harness.turn",
    ]


def test_every_public_name_is_documented_exactly_once() -> None:
    counts = documented()
    public = public_names()
    assert {name: n for name, n in counts.items() if n != 1} == {}
    assert sorted(public - counts.keys()) == []
    assert sorted(counts.keys() - public) == []


def test_no_page_documents_a_module_wholesale() -> None:
    pages = [p.name for p in DOCS.glob("*.md") if "automodule::" in p.read_text(encoding="utf-8")]
    assert pages == []


def read_inventory(path: Path) -> dict[str, str]:
    """``{name: "domain:role"}`` of a Sphinx ``objects.inv`` (version 2)."""
    data = path.read_bytes()
    header_end = 0
    for _ in range(4):
        header_end = data.index(b"\n", header_end) + 1
    assert data.startswith(b"# Sphinx inventory version 2\n")
    entries: dict[str, str] = {}
    for line in zlib.decompress(data[header_end:]).decode("utf-8").splitlines():
        match = re.match(r"(.+?)\s+(\S+:\S+)\s+-?\d+\s+\S+\s+.*", line)
        assert match is not None, line
        entries.setdefault(match.group(1), match.group(2))
    return entries


@pytest.mark.slow
def test_the_site_builds_without_warnings_and_lists_every_name_once(tmp_path: Path) -> None:
    if importlib.util.find_spec("sphinx") is None or importlib.util.find_spec("furo") is None:
        pytest.skip("the docs extra is not installed (pip install -e '.[docs]')")
    out = tmp_path / "html"
    completed = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(DOCS), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-5000:]
    inventory = read_inventory(out / "objects.inv")
    python = {name for name, role in inventory.items() if role.startswith("py:")}
    objects = {name for name in python if inventory[name] != "py:module"}
    top_level = {name for name in objects if name.rpartition(".")[0] in public_namespaces()}
    assert top_level == public_names()
    # No private path anywhere, not even as an alias (autodoc's ``:canonical:``).
    assert sorted(n for n in python if any(p.startswith("_") for p in n.split(".")[1:-1])) == []
    assert {n for n in python if inventory[n] == "py:module"} == set(public_namespaces())
    # The changelog is a page of the site (CHANGELOG.md included, its links made relative), and
    # the tools page puts ``tool``, which every tutorial uses, first (issue 29).
    changelog = (out / "changelog.html").read_text(encoding="utf-8")
    assert "Unreleased" in changelog
    assert 'href="agent-tutorial.html"' in changelog
    tools_page = (out / "api-tools.html").read_text(encoding="utf-8")
    assert tools_page.index('id="trio_harness.tool"') < tools_page.index(
        'id="trio_harness.define_tool"'
    )


def test_the_tool_decorator_signature_names_no_private_type_variable() -> None:
    # The API page shows the signature as inspect evaluates it: a TypeVar would read ``~_F``.
    shown = str(inspect.signature(trio_harness.tool, eval_str=True))
    assert "~" not in shown
    assert shown.startswith("(fn: collections.abc.Callable[..., typing.Any] | None = None, /, *")
