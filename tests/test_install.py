"""The installed package behaves the same wherever Python starts.

With a flat layout and setuptools' default editable finder, starting Python in a folder that has
a sibling directory named ``trio_harness`` (say, the parent of a clone with that name) imported
that directory as an empty namespace package. The ``src/`` layout makes an editable install put
``src`` itself on ``sys.path``, so the real package wins over any such directory.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import trio_harness

PROBE = (
    "import trio_harness; print(trio_harness.__file__); print(trio_harness.define_tool.__name__)"
)


def test_a_sibling_directory_named_like_the_package_does_not_shadow_it(tmp_path: Path) -> None:
    (tmp_path / "trio_harness" / "tests").mkdir(parents=True)  # a clone's folder, no __init__
    completed = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    location, name = completed.stdout.split()
    assert Path(location) == Path(trio_harness.__file__)
    assert name == "define_tool"


def test_the_package_is_a_regular_package_with_type_information() -> None:
    package = Path(trio_harness.__file__).parent
    assert (package / "__init__.py").is_file()
    assert (package / "py.typed").is_file()
