from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agenteval_otel.errors import EvalSetLoadError, JudgeOutputError, QuerySetLoadError
from agenteval_otel.experiments._queries import Query, QuerySet, expand, normalised_query
from agenteval_otel.judge import JudgeClient, JudgeSettings
from tests.judge.judge_server import Reply, Request, serve


def _write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_query_set_loads_content_ground_truth_under_its_names_and_metadata(tmp_path: Path) -> None:
    file = _write(tmp_path / "q.jsonl",
                  '{"content": "Can I book for June?"}',
                  "",
                  '{"content": "Weather in Paris?", "expected": "sunny", "metadata": {"topic": "weather"}}',
                  '{"content": "Weather in Oslo?", "ground_truth": {"city": "Oslo"}}',
                  '{"content": "Weather in Rome?", "expected_output": "warm"}')
    queries = QuerySet.load(file)
    assert [q.content for q in queries] == ["Can I book for June?", "Weather in Paris?", "Weather in Oslo?",
                                            "Weather in Rome?"]
    assert [q.ground_truth for q in queries] == [None, "sunny", {"city": "Oslo"}, "warm"]
    assert queries[1].metadata == {"topic": "weather"}
    assert queries.source == file


def test_save_then_load_gives_the_same_queries(tmp_path: Path) -> None:
    queries = QuerySet([Query(content="Hé, où?", ground_truth=["a"], metadata={"k": 1}), Query(content="Hi")])
    file = queries.save(tmp_path / "out" / "q.jsonl")
    assert file.read_text(encoding="utf-8").splitlines()[1] == '{"content": "Hi"}'
    assert QuerySet.load(file).queries == queries.queries


@pytest.mark.parametrize(("lines", "expected"), [
    (['{"content": "a"}', '{"content": "b"'], r"line 2, column \d+: invalid JSON .*expected a query"),
    (['{"content": "a"}', '"just text"'], r"line 2: expected a query .* got a string"),
    (['{"text": "a"}'], r"line 1: content: Field required.*text: unknown field.*a query holds content"),
    (['{"content": 3}'], r"line 1: content: Input should be a valid string"),
    (['{"content": "  "}'], r"line 1: content: expected the query's text, got a blank string"),
    (['', ' '], r"holds no query"),
])
def test_a_bad_query_set_names_the_file_the_line_and_what_was_expected(
        tmp_path: Path, lines: list[str], expected: str) -> None:
    file = _write(tmp_path / "q.jsonl", *lines)
    with pytest.raises(QuerySetLoadError) as caught:
        QuerySet.load(file)
    assert str(caught.value).startswith(str(file))
    assert re.search(expected, str(caught.value)), str(caught.value)
    assert isinstance(caught.value, EvalSetLoadError)


def test_a_missing_query_set_is_named(tmp_path: Path) -> None:
    with pytest.raises(QuerySetLoadError, match="absent.jsonl: no such file"):
        QuerySet.load(tmp_path / "absent.jsonl")


def test_duplicates_are_compared_normalised() -> None:
    assert normalised_query("  Weather in PARIS?! ") == normalised_query("weather in paris") == "weather in paris"
    assert normalised_query("ﬁle") == "file"


def _judge(url: str) -> JudgeClient:
    return JudgeClient(JudgeSettings(base_url=url, model="writer", timeout_s=1.0, backoff_s=0.01,
                                     max_backoff_s=0.05))


def test_expand_adds_n_new_queries_without_duplicates_asking_again_when_short(tmp_path: Path) -> None:
    given = QuerySet([Query(content="Weather in Paris?", ground_truth="sunny"), Query(content="Weather in Oslo?")])
    answers = [
        # a duplicate of a given query, a duplicate within the answer, two new ones
        ["weather in paris", "Weather in Rome?", "WEATHER IN ROME", "Is it windy in Lisbon?"],
        ["Is it windy in Lisbon", "Will it snow in Bern tomorrow?", "Rain in Dublin?"],
    ]

    def script(request: Request) -> Reply:
        return Reply(json.dumps({"queries": answers[request.number - 1]}))

    with serve(script) as server:
        expanded = expand(given, 3, judge=_judge(server.url))
    assert [q.content for q in expanded] == ["Weather in Paris?", "Weather in Oslo?", "Weather in Rome?",
                                             "Is it windy in Lisbon?", "Will it snow in Bern tomorrow?"]
    assert expanded[0].ground_truth == "sunny"
    assert all(q.metadata == {"synthetic": True} for q in expanded.queries[2:])
    first, second = (r.prompt for r in server.requests)
    assert "Write 3 new queries" in first and '"Weather in Oslo?"' in first
    assert "Write 1 new queries" in second and "<already_written>" in second
    assert [r.body["seed"] for r in server.requests] == [0, 1]
    saved = expanded.save(tmp_path / "expanded.jsonl")
    assert len(QuerySet.load(saved)) == 5


def test_expand_returns_what_it_found_when_the_judge_only_repeats(caplog: pytest.LogCaptureFixture) -> None:
    given = QuerySet([Query(content="Weather in Paris?")])
    with serve(lambda r: Reply(json.dumps({"queries": ["Weather in Paris?", "Rain in Dublin?"]}))) as server:
        expanded = expand(given, 2, judge=_judge(server.url))
    assert [q.content for q in expanded] == ["Weather in Paris?", "Rain in Dublin?"]
    assert server.count == 5
    assert "wrote 1 new queries of the 2 asked for" in caplog.text


def test_expand_raises_when_the_judge_answers_no_queries() -> None:
    with serve(lambda r: Reply("I cannot help with that.")) as server, pytest.raises(JudgeOutputError):
        expand(QuerySet([Query(content="Weather in Paris?")]), 2, judge=_judge(server.url))
