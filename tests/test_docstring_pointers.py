"""Every Sphinx cross-reference in a module's docstrings names something that exists.

A moved module leaves ``:mod:`` and ``:func:`` targets behind that a reader follows to nothing.
Each target is resolved the way a reader would: relative to the module's package (``.walker``),
in the module's own namespace, as an importable dotted name, or as a public ``trio_harness`` name;
an unqualified ``:meth:`` is resolved against the classes of its module.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import pytest

import trio_harness

#: The rooms whose docstrings this test pins (packages include all their modules).
ROOMS = (
    "trio_harness._validation",
    "trio_harness._runtime",
    "trio_harness._values",
    "trio_harness._errors",
)

_ROLE = re.compile(r":(mod|func|class|data|meth|attr|exc|obj):`~?([^`<>]+)`")


def _modules() -> list[str]:
    names: list[str] = []
    for room in ROOMS:
        module = importlib.import_module(room)
        names.append(room)
        if hasattr(module, "__path__"):
            names.extend(f"{room}.{info.name}" for info in pkgutil.iter_modules(module.__path__))
    return names


def _docstrings(module: ModuleType) -> list[str]:
    tree = ast.parse(inspect.getsource(module))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text:
                found.append(text)
    # ``#:`` comments document constants for Sphinx, too.
    found.extend(
        line.split("#:", 1)[1] for line in inspect.getsource(module).splitlines() if "#:" in line
    )
    return found


def _lookup(dotted: str) -> bool:
    """Whether ``dotted`` is an importable module or an attribute path below one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if not hasattr(target, part):
                return False
            target = getattr(target, part)
        return True
    return False


def _resolves(module: ModuleType, role: str, target: str) -> bool:
    target = target.strip().removesuffix("()")
    if target.startswith("."):
        package = module.__name__ if hasattr(module, "__path__") else module.__package__
        return _lookup(f"{package}{target}")
    head = target.split(".")[0]
    if head in vars(module):
        value: object = module
        for part in target.split("."):
            if not hasattr(value, part):
                return False
            value = getattr(value, part)
        return True
    if role == "meth" and "." not in target:
        classes = [item for item in vars(module).values() if inspect.isclass(item)]
        return any(hasattr(cls, target) for cls in classes)
    if role == "mod":
        return _lookup(target)
    return _lookup(target) or hasattr(trio_harness, target) or hasattr(builtins, head)


@pytest.mark.parametrize("name", _modules())
def test_every_cross_reference_in_a_docstring_resolves(name: str) -> None:
    module = importlib.import_module(name)
    broken = [
        f":{role}:`{target}`"
        for text in _docstrings(module)
        for role, target in _ROLE.findall(text)
        if not _resolves(module, role, target)
    ]
    assert not broken, f"{name}: {broken}"
