"""Grader templates render over the entry's data only, in a sandbox, and fail with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval_otel.errors import GraderError
from agenteval_otel.experiments.graders import InputTemplate


def test_keys_items_slices_and_filters_render() -> None:
    template = InputTemplate("Q: {{ entry.content }}\nFirst: {{ entry.turns[0] }} {{ entry['content'][:3] }}\n"
                             "{{ entry.meta | tojson }}")
    entry = {"content": "Is it sunny?", "turns": ["hi", "bye"], "meta": {"city": "Paris"}}
    assert template.render(entry) == 'Q: Is it sunny?\nFirst: hi Is \n{"city": "Paris"}'


def test_a_key_named_like_a_dict_method_reads_the_data() -> None:
    assert InputTemplate("{{ entry.items }}/{{ entry.keys }}").render({"items": "3 rooms", "keys": "2"}) == "3 rooms/2"


@pytest.mark.promise(16)
@pytest.mark.parametrize(
    ("source", "reached_for"),
    [
        ("Hello\n{{ entry.__class__ }}", "access to attribute '__class__' of 'dict' object is unsafe"),
        ("{{ entry.content.__class__.__mro__ }}", "access to attribute '__class__' of 'str' object is unsafe"),
        ("{{ entry.items() }}", "'dict object' has no attribute 'items'"),
        ("{{ entry.content.upper() }}", "'str object' has no attribute 'upper'"),
        ("{{ '{0.__class__}'.format(entry) }}", "'str object' has no attribute 'format'"),
        ("{{ cycler.__init__.__globals__ }}", "access to attribute '__init__'"),
    ],
)
def test_reaching_outside_the_data_fails_cleanly_naming_the_template_line_and_attribute(
        source: str, reached_for: str) -> None:
    with pytest.raises(GraderError) as caught:
        InputTemplate(source, name="grader.j2").render({"content": "x"})
    line = source[:source.index("{{")].count("\n") + 1
    assert str(caught.value).startswith(f"grader template grader.j2, line {line}: ")
    assert reached_for in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_missing_key_fails_instead_of_rendering_empty() -> None:
    with pytest.raises(GraderError, match=r"grader.j2, line 3: 'dict object' has no attribute 'missing'"):
        InputTemplate("a\nb\n{{ entry.missing }}", name="grader.j2").render({"content": "x"})


def test_a_syntax_error_is_refused_when_the_template_is_read(tmp_path: Path) -> None:
    path = tmp_path / "grader.j2"
    path.write_text("Rate:\n{% for x in %}\n")
    with pytest.raises(GraderError, match=rf"grader template {path}, line 2: Expected an expression"):
        InputTemplate.from_file(path)
    with pytest.raises(GraderError, match="cannot be read"):
        InputTemplate.from_file(tmp_path / "absent.j2")


@pytest.mark.promise(16)
def test_other_errors_in_a_template_name_their_type_and_huge_ranges_are_refused() -> None:
    with pytest.raises(GraderError, match="line 1: ZeroDivisionError"):
        InputTemplate("{{ 1 / 0 }}").render({})
    with pytest.raises(GraderError, match="MAX_RANGE"):
        InputTemplate("{{ range(10**9) | list | length }}").render({})
    with pytest.raises(GraderError, match="the entry must be a dict"):
        InputTemplate("{{ entry }}").render(["not", "a", "dict"])  # type: ignore[arg-type]
