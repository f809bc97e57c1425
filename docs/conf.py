"""Sphinx configuration: the Markdown pages (MyST) and an API reference from the docstrings.

Build: ``pip install -e '.[docs]'`` then ``sphinx-build -W -b html docs docs/_build/html``.
"""

from __future__ import annotations

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
html_static_path = ["_static"]
html_theme = "alabaster"
html_title = f"trio_harness {release}"

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True
