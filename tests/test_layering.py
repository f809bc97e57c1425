"""The package's layering, written once and pinned (as trio pins its ``_core`` rule).

:data:`ORDER` below is the one written statement of the layers: every module of the package, in
the order it may be imported (a module imports only modules of strictly lower rank). The package
docstring of ``trio_harness`` points here, and ``docs/explanation.md`` draws the same rooms as a
map (:func:`test_the_docs_map_names_every_room` keeps the map and the tree in step).

Every module's imports are read from its source (``TYPE_CHECKING`` imports included) and checked:
code outside a package imports only its interface (``__init__``); no underscored name is imported
across modules; the import graph has no cycle; the pool's state machine imports the standard
library only; and only the modules that run Trio machinery import ``trio``.
"""

from __future__ import annotations

import ast
import inspect
import sys
import typing
from pathlib import Path

import pytest

import trio_harness
import trio_harness.lowlevel

PACKAGE = Path(trio_harness.__file__).parent

#: (module, rank): a module may import modules of strictly lower rank (see the docstring).
ORDER: list[tuple[str, float]] = [
    ("_public", 0.5),
    ("_json.lossless", 1.0),
    ("_json.stringify", 1.01),
    ("_json.parse", 1.02),
    ("_json", 1.09),
    ("_errors", 1.1),
    ("_validation.paths", 1.9),
    ("_validation.subset", 2.0),
    ("_validation.rules", 2.05),
    ("_validation.walker", 2.1),
    ("_validation.codegen_check", 2.15),
    ("_validation.codegen", 2.2),
    ("_validation.compiled", 2.3),
    ("_validation.dsl", 2.4),
    ("_validation.pattern", 2.5),
    ("_validation.formats", 2.55),
    ("_validation.extended", 2.6),
    ("_validation.extended_compiled", 2.65),
    ("_validation.crosscheck", 2.66),
    ("_validation.refs", 2.68),
    ("_validation.schema_types", 2.69),
    ("_validation.normalize", 2.7),
    ("_validation", 2.9),
    ("_values", 3.0),
    ("_log.events", 4.0),
    ("_log.read", 4.1),
    ("_log.session", 4.2),
    ("_log.syncer", 4.4),
    ("_log.stored", 4.45),
    ("_log.journal", 4.5),
    ("_log.replay", 4.6),
    ("_log", 4.9),
    ("_runtime.abort", 5.0),
    ("_runtime.execution", 5.1),
    ("_runtime.hooks", 5.2),
    ("_runtime.define", 5.3),
    ("_runtime.json_tool", 5.35),
    ("_runtime.registry", 5.4),
    ("_runtime.results", 5.5),
    ("_runtime.body", 5.55),
    ("_runtime.pipeline", 5.6),
    ("_runtime.tool_runtime", 5.7),
    ("_runtime", 5.9),
    ("_pool.machine", 6.0),
    ("_pool.protocols", 6.05),
    ("_pool.driver", 6.1),
    ("_pool.steps", 6.2),
    ("_pool", 6.9),
    ("_timeline.trace", 6.91),
    ("_timeline.text", 6.92),
    ("_timeline.svg", 6.93),
    ("_timeline", 6.95),
    ("_testing.checklog", 7.01),
    ("_testing.value_knobs", 7.0201),
    ("_testing.json_leaves", 7.0202),
    ("_testing.solver", 7.0203),
    ("_testing.values", 7.0205),
    ("_testing.schema_strategies", 7.0206),
    ("_testing.raw_arguments", 7.0207),
    ("_testing.strategies", 7.021),
    ("_testing.type_strategies", 7.022),
    ("_testing.rules", 7.03),
    ("_testing.monitor", 7.04),
    ("_testing.scenarios", 7.045),
    ("_testing", 7.05),
    ("_conformance.scenario_format", 7.09),
    ("_conformance.scenario", 7.10),
    ("_conformance.answer_view", 7.105),
    ("_conformance.late_behaviours", 7.107),
    ("_conformance.behaviours", 7.11),
    ("_conformance.port", 7.125),
    ("_conformance.oracle", 7.13),
    ("_conformance.validation_pins", 7.134),
    ("_conformance.validation_edges", 7.135),
    ("_conformance.union_edges", 7.137),
    ("_conformance.pool_edges", 7.1375),
    ("_conformance.families", 7.138),
    ("_conformance.generate", 7.14),
    ("_conformance.compare", 7.146),
    ("_conformance.failure_view", 7.147),
    ("_conformance.case_timeline", 7.148),
    ("_conformance.runner", 7.15),
    ("_conformance.fuzz_edges", 7.151),
    ("_conformance.fuzz_faults", 7.1512),
    ("_conformance.fuzz_stages", 7.1513),
    ("_conformance.fuzz_requests", 7.1515),
    ("_conformance.fuzz", 7.152),
    ("_conformance.cli", 7.16),
    ("_conformance", 7.19),
    ("_apps.docstrings", 7.27),
    ("_apps.approval_log", 7.271),
    ("_apps.approval", 7.272),
    ("_apps.typed_schema", 7.28),
    ("_apps.typed_structure", 7.29),
    ("_apps.typed", 7.30),
    ("_apps.boundary", 7.305),
    ("_apps.conversation", 7.307),
    ("_apps.turn_model", 7.308),
    ("_apps.turn_events", 7.3085),
    ("_apps.turn_observe", 7.309),
    ("_apps.turn", 7.31),
    ("_apps.sigint", 7.32),
    ("_apps.terminal", 7.325),
    ("_apps.agent", 7.33),
    ("_apps", 7.39),
    ("providers._strict", 7.60),
    ("providers._common", 7.61),
    ("providers._chat", 7.615),
    ("providers._responses", 7.616),
    ("providers.openai", 7.62),
    ("providers.anthropic", 7.63),
    ("providers", 7.69),
    ("testing", 7.45),
    ("lowlevel", 7.5),
    ("agent", 7.505),
    ("log", 7.51),
    ("timeline", 7.52),
    ("turn", 7.53),
    ("schema", 7.54),
    ("_mcp_stderr", 7.79),
    ("mcp", 7.8),  # the optional MCP bridge (extra ``mcp``)
    ("", 8.0),  # trio_harness/__init__.py
    ("__main__", 8.2),
]
RANK = dict(ORDER)

#: Modules allowed to import trio: the Trio machinery, plus ``trio.Event`` as a field type.
TRIO_ALLOWED = {
    "_log.journal",  # a durable log's awaitable sync and close
    "_runtime.abort",
    "_runtime.body",
    "_runtime.pipeline",
    "_runtime.execution",
    "_runtime.hooks",
    "_pool.driver",
    "_pool.steps",
    "_conformance.scenario",
    "_timeline.trace",  # a step trace reads Trio's clock
    "_apps.typed",  # a plain-def typed tool runs in trio.to_thread
    "_apps.boundary",
    "_apps.conversation",
    "_apps.turn",
    "_apps.turn_observe",  # a body start is stamped with Trio's clock
    "_apps.sigint",
    "_apps.terminal",  # stdin read in a worker thread, awaited on a trio.Event
    "_apps.agent",
    "mcp",  # an MCP server's stderr is read by a Trio task
    "providers._common",
    "_testing.rules",  # a body cut short by trio.Cancelled
    "_testing.monitor",  # PoolMonitor reads Trio's clock and watches the driver task
    "_testing.scenarios",  # whole pool scenarios played on a MockClock
    "__main__",
}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path) -> list[tuple[str, list[str], int]]:
    """(imported module relative to the package, names taken, line) for every import in ``path``."""
    name = module_name(path, root)
    is_package = path.name == "__init__.py"
    package_parts = name.split(".") if is_package else name.split(".")[:-1]
    if name == "":
        package_parts = []
    found: list[tuple[str, list[str], int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            if node.level:
                base = package_parts[: len(package_parts) - (node.level - 1)]
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            elif node.module and (
                node.module == "trio_harness" or node.module.startswith("trio_harness.")
            ):
                target = node.module.removeprefix("trio_harness").removeprefix(".")
            else:
                found.append(("!" + (node.module or ""), names, node.lineno))
                continue
            if not node.module:
                # ``from . import lowlevel``: the names are modules.
                for alias in names:
                    found.append((".".join([*base, alias]), [], node.lineno))
                continue
            found.append((target, names, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "trio_harness" or alias.name.startswith("trio_harness."):
                    found.append(
                        (alias.name.removeprefix("trio_harness").removeprefix("."), [], node.lineno)
                    )
                else:
                    found.append(("!" + alias.name, [], node.lineno))
    return found


def graph(root: Path) -> dict[str, set[str]]:
    """Module → the package modules it imports (external imports left out)."""
    edges: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        source = module_name(path, root)
        edges[source] = {
            target for target, _, _ in imports_of(path, root) if not target.startswith("!")
        }
    return edges


def strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iteratively; components of more than one module (or a self-loop)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: set[str] = set()
                    while True:
                        item = stack.pop()
                        on_stack.discard(item)
                        component.add(item)
                        if item == node:
                            break
                    if len(component) > 1 or node in edges.get(node, ()):
                        found.append(component)
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer() -> None:
    assert {module_name(path, PACKAGE) for path in MODULES} == set(RANK)


def test_the_import_graph_has_no_cycle() -> None:
    assert strongly_connected(graph(PACKAGE)) == []


def test_the_cycle_finder_finds_cycles() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert strongly_connected({"a": {"a"}}) == [{"a"}]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("path", MODULES, ids=lambda path: module_name(path, PACKAGE) or "init")
def test_imports_point_down_and_through_interfaces(path: Path) -> None:
    source = module_name(path, PACKAGE)
    inside = path.parent != PACKAGE
    source_package = source.split(".")[0] if inside else None
    problems: list[str] = []
    for target, names, line in imports_of(path, PACKAGE):
        if target.startswith("!"):
            external = target[1:].split(".")[0]
            if external == "trio" and source not in TRIO_ALLOWED:
                problems.append(f"line {line}: imports trio")
            if source == "_pool.machine" and external not in sys.stdlib_module_names:
                problems.append(f"line {line}: the state machine imports {target[1:]}")
            continue
        if target not in RANK:
            problems.append(f"line {line}: unknown module {target!r}")
            continue
        if RANK[target] >= RANK[source]:
            problems.append(f"line {line}: {target or 'trio_harness'} is not below {source}")
        target_package = target.split(".")[0] if "." in target else None
        if target_package is not None and target_package != source_package:
            problems.append(f"line {line}: {target} is inside another package (use its interface)")
        private = [name for name in names if name.startswith("_") and not name.startswith("__")]
        if private:
            problems.append(f"line {line}: private names {private} imported from {target}")
    assert problems == []


def test_the_layering_test_catches_violations(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "_pool").mkdir(parents=True)
    (package / "_pool" / "__init__.py").write_text("")
    (package / "_pool" / "machine.py").write_text(
        "import trio\nfrom .driver import Driver\nfrom .._runtime.abort import _relay\n"
    )
    imports = imports_of(package / "_pool" / "machine.py", package)
    assert imports == [
        ("!trio", [], 1),
        ("_pool.driver", ["Driver"], 2),
        ("_runtime.abort", ["_relay"], 3),
    ]
    assert RANK["_pool.driver"] >= RANK["_pool.machine"]  # an upward import is caught


def public_classes() -> list[type]:
    found: dict[str, type] = {}
    for module in (trio_harness, trio_harness.lowlevel):
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value):
                found[f"{module.__name__}.{name}"] = value
    return list(found.values())


@pytest.mark.parametrize("cls", public_classes(), ids=lambda cls: cls.__name__)
def test_type_hints_resolve_on_every_public_class(cls: type) -> None:
    typing.get_type_hints(cls)
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue  # attrs writes ``__init__`` in its own namespace
        function = member.fget if isinstance(member, property) else member
        if isinstance(function, classmethod | staticmethod):
            function = function.__func__
        if inspect.isfunction(function):
            typing.get_type_hints(function)


def _map_block() -> str:
    text = (PACKAGE.parent.parent / "docs" / "explanation.md").read_text(encoding="utf-8")
    start = text.index("```text\nsrc/trio_harness/")
    return text[start : text.index("```", start + 3)]


def test_the_docs_map_names_every_room() -> None:
    """Every folder of the package, and every module file, is named in the docs' map."""
    block = _map_block()
    missing = []
    for path in MODULES:
        relative = path.relative_to(PACKAGE)
        if len(relative.parts) > 1 and f"{relative.parts[0]}/" not in block:
            missing.append(f"{relative.parts[0]}/")
        if path.name != "__init__.py" and path.name not in block:
            missing.append(str(relative))
    assert sorted(set(missing)) == []
