"""The one lazy path form (``_validation/paths.py``) shared by the assertion, the DSL and the walkers."""

from __future__ import annotations

from trio_harness._validation.paths import (
    Path,
    child_path,
    diagnostic_path,
    is_empty_path,
    property_path,
    render_path,
    root_label,
)


def test_the_three_separators_render_as_keys_indices_and_raw_suffixes() -> None:
    path: Path = ("value", "a", ".")
    path = (path, 3, "[")
    path = (path, ".properties.b", "")
    assert render_path(path) == "value.a[3].properties.b"
    assert root_label(path) == "value"


def test_a_key_below_the_empty_root_is_bare_and_the_empty_root_reads_arguments() -> None:
    assert diagnostic_path("") == "arguments"
    assert child_path("", "a") == ("", "a", "")
    assert property_path("", "a") == "a"
    assert property_path(child_path("", ""), "b") == "b"
    assert is_empty_path(child_path("", ""))
    assert not is_empty_path(child_path("", "a"))
    assert diagnostic_path(child_path("", "")) == "arguments"


def test_a_plain_string_is_a_path_and_renders_as_its_lazy_twin() -> None:
    lazy = child_path(child_path("value", "a"), "b")
    assert property_path("value.a", "b") == property_path(child_path("value", "a"), "b")
    assert render_path(lazy) == "value.a.b" == property_path("value.a", "b")
    assert diagnostic_path("value") == "value"
