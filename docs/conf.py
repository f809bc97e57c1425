"""Sphinx configuration: the Markdown pages (MyST), the furo theme, and an API reference from the
docstrings, organised by concept (``api*.md``).

Build: ``pip install -e '.[docs]'`` then ``sphinx-build -W -b html docs docs/_build/html``.
"""

from __future__ import annotations

import re

import trio_harness

project = "trio_harness"
author = "trio_harness contributors"
copyright = "trio_harness contributors"
release = trio_harness.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

html_theme = "furo"
html_title = f"trio_harness {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navigation_with_keys": True,
    "top_of_page_buttons": [],
}

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# The API pages list every name explicitly (autoclass, autofunction, autodata), grouped by
# concept; nothing is documented by walking a module, so the private layout never shows.
autodoc_member_order = "bysource"
autoclass_content = "class"
# Types appear once: in the signature of functions, and as the type of each field of a class.
# A class's fields are its docstring's ``Attributes:`` section, rendered by napoleon as one
# ``attribute`` entry each (typed from the class annotations); autodoc adds no second copy (no
# ``:undoc-members:``) and no third ("Parameters" of the generated ``__init__``).
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
python_use_unqualified_type_names = True
# Long signatures get one parameter per line instead of a wrapped wall of text.
python_maximum_signature_line_length = 80
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = False
napoleon_attr_annotations = True
napoleon_use_rtype = False


def _defining_comment(name: str, obj: object) -> list[str]:
    """The ``#:`` comment above ``name`` in the private module that defines ``obj``.

    A constant re-exported by a namespace carries no docstring of its own, and autodoc reads
    ``#:`` comments only in the module it documents; the comment is written once, where the
    constant is defined.
    """
    import sys

    from sphinx.pycode import ModuleAnalyzer

    short = name.rpartition(".")[2]
    for module_name, module in sorted(sys.modules.items()):
        if not module_name.startswith("trio_harness.") or getattr(module, short, None) is not obj:
            continue
        try:
            docs = ModuleAnalyzer.for_module(module_name).find_attr_docs()
        except Exception:
            continue
        comment = docs.get(("", short))
        if comment:
            return list(comment)
    return []


def _fill_data_docs(app, what, name, obj, options, lines):  # type: ignore[no-untyped-def]
    # A constant's own ``__doc__`` is its type's (``dict``, ``int``, ``UnionType``): never show it.
    if what == "data":
        lines[:] = _defining_comment(name, obj)


NAMESPACES = (
    "trio_harness",
    "trio_harness.log",
    "trio_harness.timeline",
    "trio_harness.turn",
    "trio_harness.schema",
    "trio_harness.lowlevel",
    "trio_harness.testing",
    "trio_harness.providers",
    "trio_harness.providers.openai",
    "trio_harness.providers.anthropic",
    "trio_harness.mcp",
)


def _source_order(app):  # type: ignore[no-untyped-def]
    """Let ``autodoc_member_order = "bysource"`` see the private module that defines a class.

    A public class reports its namespace as ``__module__``; autodoc orders its members by the
    source of that module, which does not define them, and falls back to alphabetical order.
    The definition order of each exported class is copied into its namespace's analyzer.
    """
    import importlib
    import inspect
    import sys

    from sphinx.pycode import ModuleAnalyzer

    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        public = ModuleAnalyzer.for_module(namespace)
        public.analyze()
        for name in module.__all__:
            cls = getattr(module, name)
            if not inspect.isclass(cls):
                continue
            for private_name, private in sorted(sys.modules.items()):
                if not private_name.startswith("trio_harness.") or private_name in NAMESPACES:
                    continue
                if vars(private).get(cls.__name__) is not cls:
                    continue
                analyzer = ModuleAnalyzer.for_module(private_name)
                if analyzer.find_tags().get(cls.__name__, ("",))[0] != "class":
                    continue
                prefix = cls.__name__ + "."
                for tag, order in analyzer.tagorder.items():
                    if tag.startswith(prefix):
                        public.tagorder[tag] = order
                break


def _attribute_types_inline(app, what, name, obj, options, lines):  # type: ignore[no-untyped-def]
    """Napoleon writes an attribute's type as a ``Type:`` field under its description; make it the
    directive's ``:type:`` option, shown once, on the attribute's own line (``name: str``)."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        out.append(line)
        index += 1
        if not line.startswith(".. attribute:: "):
            continue
        directive_at = len(out)
        while index < len(lines) and (lines[index].startswith("   ") or not lines[index].strip()):
            if lines[index].startswith("   :type: ") and (
                index + 1 == len(lines) or not lines[index + 1].startswith("    ")
            ):
                out.insert(
                    directive_at, re.sub(r"\b(?:collections\.abc|typing)\.", "", lines[index])
                )
            else:
                out.append(lines[index])
            index += 1
    lines[:] = out


def _public_modules(app):  # type: ignore[no-untyped-def]
    """Document every name under the namespace it is exported from, and only there.

    ``trio_harness.providers`` re-exports from ``providers._common`` without publishing; its
    classes would otherwise get a second, private inventory entry (autodoc's ``:canonical:``).
    """
    import importlib
    import inspect

    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        for name in module.__all__:
            value = getattr(module, name)
            if not (inspect.isclass(value) or inspect.isfunction(value)):
                continue
            parts = value.__module__.split(".")
            if parts[0] == "trio_harness" and any(part.startswith("_") for part in parts):
                value.__module__ = namespace


def _factory_defaults(app, what, name, obj, options, signature, return_annotation):  # type: ignore[no-untyped-def]
    """An attrs field with a factory default shows ``= NOTHING`` in the generated ``__init__``;
    show ``= ...`` (a default exists, computed per instance)."""
    if signature is not None:
        signature = signature.replace(" = NOTHING", " = ...")
    return signature, return_annotation


def setup(app):  # type: ignore[no-untyped-def]
    app.connect("autodoc-process-signature", _factory_defaults)
    app.connect("builder-inited", _public_modules)
    app.connect("builder-inited", _source_order)
    app.connect("autodoc-process-docstring", _fill_data_docs)
    app.connect("autodoc-process-docstring", _attribute_types_inline, priority=600)
