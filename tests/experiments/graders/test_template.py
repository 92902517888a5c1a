"""Grader templates render over the entry's data only, in a sandbox, and fail with clear errors."""

from __future__ import annotations

import threading
import time
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


@pytest.mark.promise(16)
@pytest.mark.parametrize(("source", "exceeded"), [
    ("{{ 'a' * 3000000000 }}", "the result of '\\*' would hold 3,000,000,000 characters"),
    ("{% set x = 'a' * 3000000 %}{{ x ~ x }}", "the result of '~' would hold 6,000,000"),
    ("{{ [[0] * 4000000] * 4000000 }}", "the result of '\\*' would hold 16,000,004,000,000"),
    ("{{ 'a' | center(3000000000) }}", "the center filter's result would hold 3,000,000,000"),
    ("{{ range(100000) | join('x' * 1000000) }}", "the join filter's result would hold"),
    ("{{ '%999999999s' % 'a' }}", "the result of '%' \\(a width of 999999999\\) would hold 999,999,999"),
    ("{{ 9 ** 99999999 }}", "the result of '\\*\\*' would be a number of more than 100,000 bits"),
])
def test_a_template_that_builds_a_huge_value_is_refused_before_building_it(source: str, exceeded: str) -> None:
    template = InputTemplate(source, name="grader.j2")  # loading folds no constant of that size
    with pytest.raises(GraderError, match=f"grader template grader.j2, line 1: {exceeded}"):
        template.render({})


@pytest.mark.promise(16)
def test_the_rendered_input_is_bounded_in_size() -> None:
    template = InputTemplate("{% for i in range(50) %}{{ entry.content }}{% endfor %}", name="grader.j2",
                             max_size=1000)
    assert len(template.render({"content": "x" * 20})) == 1000
    with pytest.raises(GraderError, match="grader.j2: the rendered input would hold 1,0[0-9]{2} characters or "
                                          "items, more than the limit of 1,000"):
        template.render({"content": "x" * 21})


@pytest.mark.promise(16, 17)
def test_a_template_that_runs_past_its_time_limit_is_stopped_with_a_clear_error() -> None:
    loops = "{% set c = entry.content %}{% for i in c %}{% for j in c %}{% for k in c %}{% endfor %}{% endfor %}" \
            "{% endfor %}"  # no sandbox hook inside: the render thread is interrupted
    for source in (loops, "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"):
        started = time.monotonic()
        with pytest.raises(GraderError, match="grader template grader.j2(, line 1)?: rendering took longer than "
                                              "0.3 s, the time limit"):
            InputTemplate(source, name="grader.j2", timeout_s=0.3).render({"content": "a" * 3000})
        assert time.monotonic() - started < 2
    deadline = time.monotonic() + 2
    while any(t.name == "agenteval-grader-template" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not [t for t in threading.enumerate() if t.name == "agenteval-grader-template"]


def test_bounded_templates_still_render_ordinary_data() -> None:
    template = InputTemplate("{{ entry.c | truncate(9) }}|{{ entry.m | tojson }}|{{ range(3) | list }}|"
                             "{{ range(5) | length }}|{{ 'ab' * 2 }}|{{ 2 ** 10 }}|{{ entry.c[:2] ~ '!' }}|"
                             "{{ entry | attr('c') | length }}")
    assert template.render({"c": "a" * 30, "m": {"x": [1]}}) == 'aaaaaa...|{"x": [1]}|[0, 1, 2]|5|abab|1024|aa!|30'
