"""Publishing names: public classes and functions report the namespace a user imports them from.

Every public name is defined in a private module (``trio_harness._log.journal.DurableSession``)
and re-exported by one public namespace (``trio_harness.log``). :func:`publish`, called at the
end of each namespace, sets ``__module__`` to that namespace (as trio's
``fixup_module_metadata`` and httpx do), so reprs, tracebacks, pickles and the API docs show the
path users write, and moving a file inside the package never shows.

A class's string annotations (``from __future__ import annotations``) are resolved in their
defining module first and stored resolved: ``typing.get_type_hints`` looks names up in the
module ``__module__`` names, which would not know the private module's imports.

Private foundation module (layer 0): standard library only.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import sys
import typing
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_attributes", "publish"]

_PACKAGE = "trio_harness."


def _is_private(module_name: str) -> bool:
    """A module of the package with a private part: ``trio_harness._log.journal`` or
    ``trio_harness.providers._chat``."""
    if not module_name.startswith(_PACKAGE):
        return False
    return any(part.startswith("_") for part in module_name.removeprefix(_PACKAGE).split("."))


def _resolve_annotations(cls: type) -> None:
    own = inspect.get_annotations(cls)
    if not own or not any(isinstance(value, str) for value in own.values()):
        return
    module = sys.modules.get(cls.__module__)
    namespace = dict(vars(module)) if module is not None else {}
    try:
        hints = typing.get_type_hints(cls, globalns=namespace, include_extras=True)
    except Exception:
        return
    resolved = {name: hints.get(name, value) for name, value in own.items()}
    with contextlib.suppress(AttributeError, TypeError):
        cls.__annotations__ = resolved


def publish(module_name: str, namespace: Mapping[str, Any], names: Iterable[str]) -> None:
    """Make every class and function of ``names`` report ``module_name`` as its module.

    Only objects defined inside the package's private modules are changed (a name re-exported
    from another public namespace, or from the standard library, keeps its module).
    """
    for name in names:
        value = namespace.get(name)
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        if not _is_private(getattr(value, "__module__", "")):
            continue
        if inspect.isclass(value):
            _resolve_annotations(value)
        try:
            value.__module__ = module_name
        except (AttributeError, TypeError):  # pragma: no cover - a builtin-like type
            continue


def lazy_attributes(
    module_name: str, namespace: MutableMapping[str, Any], table: Mapping[str, str]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) that imports a name's private home on first use.

    ``table`` maps each lazy name to the module that defines it, relative to the package
    (``"._apps"``), or to ``""`` for a submodule of the namespace's package that is itself the
    attribute (``th.log``). On first access the module is imported, the value is published under
    ``module_name`` (as :func:`publish` does for eager names) and stored in ``namespace``, so
    later lookups never come back here. ``from trio_harness import tool`` works the same way.

    In a private package (``trio_harness._validation``) the values are not published: they keep
    their defining module until a public namespace re-exports them.
    """
    package = module_name.split(".", 1)[0]
    public = not _is_private(module_name)

    def __getattr__(name: str) -> Any:
        home = table.get(name)
        if home is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        if home == "":
            value = importlib.import_module(f"{module_name}.{name}")
        else:
            value = getattr(importlib.import_module(home, package), name)
            if public:
                publish(module_name, {name: value}, (name,))
        namespace[name] = value
        return value

    return __getattr__
