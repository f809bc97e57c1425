"""The committed kit: regenerated without drift, every behaviour covered, vectors as recorded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conformance.support import REPO, SHARED, SHARED_REASON, SPEC, cli, kit_cases
from trio_harness._conformance import BEHAVIOURS
from trio_harness._conformance import generate as generate_module
from trio_harness._conformance.generate import (
    COVERAGE_FILE,
    EDGES_FILE,
    SCHEDULING_FILE,
    UPSTREAM,
    coverage_markdown,
    generate_lines,
    kit_files,
)
from trio_harness._conformance.runner import load_cases
from trio_harness._conformance.validation_edges import edge_cases
from trio_harness._conformance.validation_pins import PIN_GROUPS


@pytest.fixture(scope="module")
def fresh_lines() -> list[str]:
    return generate_lines()


@pytest.mark.slow
def test_the_committed_vectors_are_what_the_reference_generates(fresh_lines: list[str]) -> None:
    committed = (SPEC / SCHEDULING_FILE).read_text(encoding="utf-8").split("\n")[:-1]
    assert len(committed) == len(fresh_lines)
    for old, new in zip(committed, fresh_lines, strict=True):
        assert old == new
    assert (SPEC / COVERAGE_FILE).read_text(encoding="utf-8") == coverage_markdown(fresh_lines)
    # Every generated file, the validation edges included, byte for byte.
    for name, text in kit_files(fresh_lines).items():
        assert (SPEC / name).read_text(encoding="utf-8") == text, name


def test_the_validation_edges_keep_their_number_texts() -> None:
    # The runner sends each line's own text: 2.0 reaches the port as 2.0, -0.0 as -0.0.
    text = (SPEC / EDGES_FILE).read_text(encoding="utf-8")
    assert '"value":2.0' in text
    assert '"value":-0.0' in text
    cases = load_cases(SPEC, ["validation/edges/*"])
    assert len(cases) == len(edge_cases()) >= 60
    groups = {"empty-key", "numbers", "argument-text", *(group for group, _ in PIN_GROUPS)}
    assert {case.id.split("/")[3] for case in cases} == groups
    sent = {case.id: case.text for case in cases}
    assert '"value":2.0' in sent["validation/edges/validate/numbers/005"]
    assert all('"expected"' not in line for line in sent.values())


def test_several_hundred_scenarios_without_ties() -> None:
    cases = kit_cases()
    assert len(cases) >= 300
    assert len({case["id"] for case in cases}) == len(cases)
    assert all("ties" not in case["expected"] for case in cases)
    assert all(case["op"] == "schedule" and case["tags"] for case in cases)


def test_every_scheduling_behaviour_has_a_scenario() -> None:
    tagged = {tag for case in kit_cases() for tag in case["tags"]}
    missing = [behaviour.id for behaviour in BEHAVIOURS if behaviour.id not in tagged]
    assert missing == []
    assert tagged <= {behaviour.id for behaviour in BEHAVIOURS}


@pytest.mark.skipif(not (SHARED / "spec").is_dir(), reason=SHARED_REASON)
def test_every_scheduling_section_of_the_upstream_description_has_behaviours() -> None:
    text = (SHARED / "spec" / "upstream-behavior.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^### ([ef]\.\d+) ", text, flags=re.MULTILINE))
    sections |= {"g"} if re.search(r"^## g\. ", text, flags=re.MULTILINE) else set()
    assert sections >= {"e.1", "e.8", "f.1", "f.7", "g"}
    covered = {behaviour.section for behaviour in BEHAVIOURS}
    assert sorted(sections - covered) == []


@pytest.mark.skipif(not (SHARED / "spec").is_dir(), reason=SHARED_REASON)
@pytest.mark.parametrize("name", ["upstream-vectors.jsonl"])
def test_the_validation_vectors_are_the_recorded_upstream_answers(name: str) -> None:
    assert (SPEC / name).read_bytes() == (SHARED / "spec" / name).read_bytes()


@pytest.mark.skipif(not (SHARED / "spec").is_dir(), reason=SHARED_REASON)
def test_the_kit_names_the_upstream_commit_it_was_checked_against() -> None:
    version = (SPEC / "VERSION").read_text(encoding="utf-8")
    assert f"upstream {UPSTREAM[0]} {UPSTREAM[1]}" in version
    for name in ("COVERAGE.md", "FORMAT.md", "README.md"):
        assert UPSTREAM[1] in (SPEC / name).read_text(encoding="utf-8"), name
    assert UPSTREAM[1] in (REPO / "docs" / "howto-port.md").read_text(encoding="utf-8")


def test_version_names_the_upstream_commit_the_vectors_reflect() -> None:
    source = SHARED / "spec" / "upstream-behavior.md"
    if not source.is_file():
        pytest.skip(f"{source} is absent (shared material: upstream's behaviour notes)")
    version = (SPEC / "VERSION").read_text(encoding="utf-8")
    behaviour = source.read_text(encoding="utf-8")
    commit = re.search(r"upstream (\S+) ([0-9a-f]{40})", version)
    assert commit is not None
    assert commit.group(2) in behaviour
    assert commit.group(1) in behaviour


@pytest.mark.slow
def test_generate_check_passes_on_the_repository_and_catches_a_stale_file(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fresh_lines: list[str],
) -> None:
    # The commands generate the same lines as the fixture (compared above); reuse them.
    monkeypatch.setattr(generate_module, "generate_lines", lambda: list(fresh_lines))
    assert cli(capsys, "conformance", "generate", "--check", "--spec", str(SPEC))[0] == 0
    status, _, _ = cli(capsys, "conformance", "generate", "--spec", str(tmp_path))
    assert status == 0
    assert (tmp_path / SCHEDULING_FILE).read_bytes() == (SPEC / SCHEDULING_FILE).read_bytes()
    assert cli(capsys, "conformance", "generate", "--check", "--spec", str(tmp_path))[0] == 0
    (tmp_path / COVERAGE_FILE).write_text("edited\n", encoding="utf-8")
    status, out, _ = cli(capsys, "conformance", "generate", "--check", "--spec", str(tmp_path))
    assert status == 1
    assert f"{COVERAGE_FILE} differs from a fresh generation" in out


def test_coverage_lists_every_behaviour() -> None:
    coverage = (SPEC / COVERAGE_FILE).read_text(encoding="utf-8")
    for behaviour in BEHAVIOURS:
        assert f"| `{behaviour.id}` |" in coverage
    assert f"{len(BEHAVIOURS)} of {len(BEHAVIOURS)} behaviours covered" in coverage
