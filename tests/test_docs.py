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


def map_entries() -> list[tuple[str, str]]:
    """``(folder, file)`` for every ``*.py`` the package map of ``docs/explanation.md`` names at
    the start of a line (the names column; descriptions and their continuation lines aside)."""
    page = (ROOT / "docs" / "explanation.md").read_text(encoding="utf-8")
    block = page.split("## The map", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    folder = ""
    entries = []
    for line in block.splitlines()[1:]:
        top = re.match(r"^[├└]── (.*)", line)
        if top is not None:
            text = top.group(1)
            first = text.split()[0] if text.split() else ""
            folder = first.rstrip("/") if first.endswith("/") else ""
            where = ""
        elif line.startswith("│   ") and not line[4:5].isspace():
            text, where = line[4:], folder
        else:
            continue  # a continuation of a description
        for token in re.split(r" {2,}", text):
            if not re.fullmatch(r"[a-z_]+\.py", token):
                break
            entries.append((where, token))
    return entries


def test_the_package_map_names_every_file_once_and_only_files_that_exist() -> None:
    entries = map_entries()
    assert len(entries) > 80
    package = ROOT / "src" / "trio_harness"
    assert [e for e in entries if not (package / e[0] / e[1]).is_file()] == []
    assert sorted(e for e in set(entries) if entries.count(e) > 1) == []


def test_every_folder_the_tests_readme_names_exists() -> None:
    readme = (ROOT / "tests" / "README.md").read_text(encoding="utf-8")
    folders = re.findall(r"^\| `([a-z_]+)/` \|", readme, re.MULTILINE)
    assert len(folders) >= 9
    assert [f for f in folders if not (ROOT / "tests" / f.removeprefix("tests")).is_dir()] == []


def kit_counts() -> dict[str, int]:
    """The kit's case counts, from its vector files (one JSON line per case)."""
    spec = ROOT / "src" / "trio_harness" / "_conformance" / "spec"

    def lines(name: str) -> int:
        text = (spec / name).read_text(encoding="utf-8")
        return sum(1 for line in text.split("\n") if line.strip())  # not splitlines: U+2028

    upstream, edges = lines("upstream-vectors.jsonl"), lines("validation-edges.jsonl")
    return {
        "validation": upstream + edges,
        "upstream": upstream,
        "edges": edges,
        "scheduling": lines("scheduling-vectors.jsonl"),
    }


def test_the_readme_and_the_port_guide_count_the_kit_as_its_files_do() -> None:
    counts = kit_counts()
    stated = (
        f"{counts['validation']:,} validation cases: {counts['upstream']:,} recorded upstream"
        f" answers and\n{counts['edges']:,} edge cases; {counts['scheduling']:,} scheduling"
        " scenarios"
    )
    assert stated in (ROOT / "README.md").read_text(encoding="utf-8")
    guide = (ROOT / "docs" / "howto-port.md").read_text(encoding="utf-8")
    assert f"**validation**: {counts['validation']:,} cases" in guide
    assert f"**scheduling**: {counts['scheduling']:,} scenarios" in guide
