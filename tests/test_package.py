"""The package as an index shows it and as a user installs it: optional extras fail with the
install line, the README renders there with working links, and the wheel and sdist are well
formed (``twine check --strict``), the sdist carrying everything its own tests need.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Runs ``import {module}`` with the distributions in ``{hidden}`` made unimportable (a meta-path
#: finder that refuses them, as if they were not installed), and prints what happened.
HIDING = """
import sys

HIDDEN = {hidden!r}


class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, Hide())
for name in list(sys.modules):
    if name.partition(".")[0] in HIDDEN:
        del sys.modules[name]
try:
    import {module}
except ImportError as error:
    print(f"ImportError: {{error}}")
else:
    print("imported")
"""


def import_without(module: str, *hidden: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-c", HIDING.format(module=module, hidden=hidden)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()


def test_the_testing_namespace_without_hypothesis_names_its_extra() -> None:
    assert import_without("trio_harness.testing", "hypothesis") == (
        "ImportError: trio_harness.testing needs hypothesis: pip install 'trio_harness[testing]'"
    )


def test_the_mcp_namespace_without_the_sdk_names_its_extra() -> None:
    assert import_without("trio_harness.mcp", "mcp") == (
        "ImportError: trio_harness.mcp needs the MCP SDK: pip install 'trio_harness[mcp]'"
    )


def test_the_hiding_finder_hides_only_what_it_is_told() -> None:
    assert import_without("trio_harness.testing", "mcp") == "imported"
    assert import_without("trio_harness.mcp", "hypothesis") == "imported"


OPTIONAL = ("hypothesis", "mcp", "openai", "anthropic", "jsonschema", "httpx", "anyio")


@pytest.mark.parametrize(
    "module",
    [
        "trio_harness",
        "trio_harness.log",
        "trio_harness.lowlevel",
        "trio_harness.schema",
        "trio_harness.timeline",
        "trio_harness.turn",
        "trio_harness.providers.openai",
        "trio_harness.providers.anthropic",
    ],
)
def test_the_core_and_the_providers_need_no_optional_distribution(module: str) -> None:
    assert import_without(module, *OPTIONAL) == "imported"


#: What an app's ``import`` of a core namespace must not load, though installed here: the test
#: framework (``trio.testing`` brings pytest along), the property-testing extra, the testing
#: tools' room beyond the log checker (issue 28), and the conformance kit's runner, command line,
#: port process and fuzzer, with the command-line parser (issue 30: ``import trio_harness`` at
#: most 1.5x ``import trio``).
TEST_TOOLS = (
    "pytest",
    "_pytest",
    "trio.testing",
    "hypothesis",
    "trio_harness.testing",
    "trio_harness._testing.strategies",
    "trio_harness._testing.type_strategies",
    "trio_harness._testing.monitor",
    "trio_harness._testing.rules",
    "trio_harness._conformance.cli",
    "trio_harness._conformance.runner",
    "trio_harness._conformance.port",
    "trio_harness._conformance.fuzz",
    "trio_harness._conformance.fuzz_requests",
    "trio_harness._conformance.generate",
    "trio_harness._conformance.failure_view",
    "argparse",
)


@pytest.mark.parametrize(
    "module", ["trio_harness", "trio_harness.lowlevel", "trio_harness.agent", "trio_harness.turn"]
)
def test_importing_the_core_loads_no_test_framework(module: str) -> None:
    _probe(f"import sys, {module}; print(sorted(set({TEST_TOOLS!r}) & set(sys.modules)))")


def _probe(code: str) -> None:
    """Run ``code`` in a fresh interpreter: it must succeed and print ``[]``."""
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


#: What ``import trio_harness`` (the core: validation, the runtime, the pool, the log in memory)
#: must not load at all, beyond :data:`TEST_TOOLS`: the agent-app layer and what only it needs,
#: the timeline pictures, the conformance kit and the log checker, the durable log and replay,
#: the foreign-schema normaliser and the extended vocabulary, the validators' code generator
#: (until the first compiled schema), and the log writer's ``cattrs``
#: (issue 30: ``import trio_harness`` at most 1.5x ``import trio``). They load on first use of a
#: name that needs them (``th.tool``, ``th.agent``, ``th.lowlevel.run_scenario``,
#: ``th.log.DurableSession``, ``th.schema``, ``define_json_tool``, the first event written).
NOT_IN_THE_CORE = (
    "cattrs",
    "trio_harness.log",
    "trio_harness.lowlevel",
    "trio_harness.schema",
    "trio_harness._log.journal",
    "trio_harness._log.syncer",
    "trio_harness._log.replay",
    "trio_harness._validation.codegen_check",
    "trio_harness._validation.codegen",
    "trio_harness._validation.pattern",
    "trio_harness._validation.formats",
    "trio_harness._validation.extended",
    "trio_harness._validation.extended_compiled",
    "trio_harness._validation.crosscheck",
    "trio_harness._validation.refs",
    "trio_harness._validation.schema_types",
    "trio_harness._validation.normalize",
    "trio_harness._apps",
    "trio_harness._apps.typed",
    "trio_harness._apps.agent",
    "trio_harness._timeline",
    "trio_harness._conformance",
    "trio_harness._testing",
    "trio_harness.agent",
    "trio_harness.turn",
    "trio_harness.timeline",
    "trio_harness.providers",
    "trio_harness.mcp",
)

_LAZY_PROBE = """
import sys, warnings
import trio_harness as th
print(sorted(set(NOT) & set(sys.modules)))
# A private package's lazy name keeps its module; the public namespace still publishes it.
from trio_harness._validation import normalize_json_schema as private
assert private.__module__ == "trio_harness._validation.normalize", private.__module__
assert th.schema.normalize_json_schema is private
assert private.__module__ == "trio_harness.schema", private.__module__
assert th.log.DurableSession.__module__ == "trio_harness.log", th.log.DurableSession.__module__
assert th.lowlevel.compile_extended_validator.__module__ == "trio_harness.lowlevel"
assert th.lowlevel.translate_pattern.__module__ == "trio_harness.lowlevel"
from trio_harness import tool
assert tool is th.tool and tool.__module__ == "trio_harness", tool.__module__
assert th.open_agent.__module__ == "trio_harness" and "open_agent" in dir(th)
assert th.agent.Agent.__module__ == "trio_harness.agent", th.agent.Agent.__module__
assert th.timeline.StepTrace.__module__ == "trio_harness.timeline"
assert th.lowlevel.run_scenario.__module__ == "trio_harness.lowlevel"
assert th.lowlevel.check_log.__module__ == "trio_harness.lowlevel"
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert th.StepTrace is th.timeline.StepTrace
assert [str(w.message) for w in caught] == [
    "trio_harness.StepTrace moved to trio_harness.timeline.StepTrace (the old spelling goes away"
    " in the first release)"
], caught
try:
    th.no_such_name
except AttributeError as error:
    assert str(error) == "module 'trio_harness' has no attribute 'no_such_name'", error
else:
    raise AssertionError("no AttributeError")
"""


def test_the_core_loads_the_app_layer_and_the_kit_on_first_use_only() -> None:
    _probe(f"NOT = {NOT_IN_THE_CORE!r}\n{_LAZY_PROBE}")


#: ``[text](target)`` and ``![alt](target)`` in Markdown, and ``<a href=...>``/``<img src=...>``.
LINK = re.compile(r"\]\(([^)\s]+)[^)]*\)|(?:href|src)=[\"']([^\"']+)[\"']")


def test_the_readme_has_only_absolute_links() -> None:
    # The index renders the README out of the repository: a relative link there is broken.
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [a or b for a, b in LINK.findall(text)]
    assert targets
    assert [t for t in targets if not t.startswith("https://")] == []


def test_the_metadata_names_the_license_and_classifiers() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License\n")
    assert "Copyright (c) trio_harness contributors" in license_text
    classifiers = set(project["classifiers"])
    assert {"Framework :: Trio", "Typing :: Typed", "Programming Language :: Python :: 3.11"} <= (
        classifiers
    )
    # A license expression and a License :: classifier together are an error (PEP 639).
    assert not any(c.startswith("License ::") for c in classifiers)


def test_the_python_classifiers_are_the_versions_ci_checks() -> None:
    # 3.11 runs every test; each other version a classifier names gets the wheel and the kit's
    # self-check in .ci/run (issue 29): a classifier nobody checks cannot creep in.
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    prefix = "Programming Language :: Python :: 3."
    named = sorted(
        c.removeprefix("Programming Language :: Python :: ")
        for c in project["classifiers"]
        if c.startswith(prefix)
    )
    loop = re.search(
        r"^for version in ([0-9. ]+); do$",
        (ROOT / ".ci" / "run").read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    assert loop is not None
    assert named == ["3.11", *loop.group(1).split()]
    assert project["requires-python"] == ">=3.11"


#: Files of the source tree the sdist must carry for its tests to run: the tests, the kit, the
#: pages and examples the tests execute, the benchmarks the docs cite.
SHIPPED = ("src", "tests", "spec", "docs", "examples", "bench")
TOP_FILES = ("LICENSE", "README.md", "CHANGELOG.md", "MANIFEST.in", "pyproject.toml")


def source_files() -> set[str]:
    files = set(TOP_FILES)
    for top in SHIPPED:
        for path in (ROOT / top).rglob("*"):
            relative = path.relative_to(ROOT)
            parts = relative.parts
            if not path.is_file() or "__pycache__" in parts or path.suffix == ".pyc":
                continue
            if parts[:2] in {("docs", "_build"), ("bench", "results")}:
                continue
            if any(part.endswith(".egg-info") for part in parts):
                continue
            files.add(relative.as_posix())
    return files


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for tool in ("build", "twine"):
        if importlib.util.find_spec(tool) is None:
            pytest.skip(f"{tool} is not installed in this environment (pip install build twine)")
    out = tmp_path_factory.mktemp("dist")
    # A copy of the tree without build leftovers, so the sdist is what a fresh clone gives.
    source = tmp_path_factory.mktemp("source") / "trio_harness"
    for name in source_files():
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    completed = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return out


@pytest.mark.slow
def test_the_wheel_and_the_sdist_pass_twine_check_strict(dist: Path) -> None:
    built = sorted(dist.iterdir())
    assert sorted(p.name.rpartition(".")[2] for p in built) == ["gz", "whl"]
    completed = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, built)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.count("PASSED") == 2


@pytest.mark.slow
def test_the_wheel_holds_the_package_its_types_and_the_license(dist: Path) -> None:
    [wheel] = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode("utf-8")
    assert "trio_harness/__init__.py" in names
    assert "trio_harness/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "docs/", "bench/")) for n in names)
    assert "License-Expression: MIT" in text
    assert "Classifier: Framework :: Trio" in text
    assert "Description-Content-Type: text/markdown" in text


@pytest.mark.slow
def test_the_sdist_carries_what_its_tests_need_and_they_run(dist: Path, tmp_path: Path) -> None:
    [sdist] = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        shipped = {
            name.split("/", 1)[1]
            for name in archive.getnames()
            if "/" in name and archive.getmember(name).isfile()
        }
        archive.extractall(tmp_path, filter="data")
    missing = source_files() - shipped
    assert sorted(missing) == []
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in shipped)
    # The unpacked sdist's tests import the unpacked sdist's package, and run: every test
    # module collects, and the tests that read the kit, the pages and the examples pass.
    unpacked = tmp_path / top
    env = {**os.environ, "PYTHONPATH": str(unpacked / "src")}
    probe = subprocess.run(
        [sys.executable, "-c", "import trio_harness; print(trio_harness.__file__)"],
        cwd=unpacked,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert Path(probe.stdout.strip()).is_relative_to(unpacked)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "tests/test_docs.py",
            "tests/conformance/test_vectors.py",
            "tests/test_layering.py",
            "-m",
            "not slow",
        ],
        cwd=unpacked,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    collect = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q"],
        cwd=unpacked,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert collect.returncode == 0, collect.stdout[-3000:] + collect.stderr[-3000:]


def test_ci_runs_the_readme_test_command_then_the_slow_lane_and_the_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    command = first_block[1]
    assert '-m "not slow"' in command
    assert "-rs" in command.split()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    steps = [line for line in ci if line and not line.startswith("#")]
    at = steps.index(command)
    assert ".venv/bin/python -m pytest -m slow -n 2 -rs" in steps[at + 1 :]
    assert any(line.startswith(".venv/bin/sphinx-build -W ") for line in steps[at + 1 :])
