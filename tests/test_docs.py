"""Every Python example in the README and docs/ runs, in order, one namespace per file; every
test a page cites still exists.

Blocks fenced as ```python run; ```text, ```sh and ```json blocks are prose. A block may use the
names defined by earlier blocks of the same file, as a reader following the page would.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(page: Path) -> list[str]:
    return FENCE.findall(page.read_text(encoding="utf-8"))


def test_the_docs_have_examples() -> None:
    assert python_blocks(ROOT / "README.md")
    assert sum(len(python_blocks(page)) for page in PAGES) >= 5


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=lambda p: p.name)
def test_examples_run(page: Path) -> None:
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for index, block in enumerate(python_blocks(page)):
        code = compile(block, f"{page.name}[python block {index}]", "exec")
        exec(code, namespace)


#: ``tests/runtime/test_define.py::test_x`` and the short form ``runtime/test_define::test_x``
#: (a file under ``tests/`` without ``.py``) as the coverage tables write it.
PIN = re.compile(r"(?:tests/)?((?:[a-z_]+/)*test_[a-z_0-9]+)(?:\.py)?::([A-Za-z_][A-Za-z_0-9]*)")
CITING = [*PAGES, ROOT / "CHANGELOG.md"]


def pins(page: Path) -> list[tuple[str, str]]:
    return PIN.findall(page.read_text(encoding="utf-8"))


def test_the_docs_cite_tests() -> None:
    assert sum(len(pins(page)) for page in CITING) >= 50


@pytest.mark.parametrize("page", [p for p in CITING if pins(p)], ids=lambda p: p.name)
def test_every_cited_test_exists(page: Path) -> None:
    missing = []
    for module, name in pins(page):
        path = ROOT / "tests" / f"{module}.py"
        defined = re.compile(rf"^\s*(?:async def|def|class) {name}\b", re.MULTILINE)
        if not path.is_file() or not defined.search(path.read_text(encoding="utf-8")):
            missing.append(f"{module}::{name}")
    assert missing == []
