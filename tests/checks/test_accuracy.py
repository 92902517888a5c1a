"""AccuracyCheck against a scripted judge on 127.0.0.1, through the real openai client."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from agenteval_otel.checks import AccuracyCheck, AccuracyEvaluationResult
from agenteval_otel.errors import ConfigError, JudgeOutputError, JudgeUnavailableError
from agenteval_otel.judge import JudgeClient, JudgeSettings
from tests.judge.judge_server import Reply, Request, serve

QUERY, EXPECTED = "What is the capital of France?", "Paris"


def _judgment(score: float, critique: str = "None needed.") -> Reply:
    return Reply(json.dumps({"score": score, "reasoning": f"Scored {score}.", "is_met": score >= 7,
                             "critique": critique}))


def _judge(url: str, **options: Any) -> JudgeClient:
    settings: dict[str, Any] = dict(base_url=url, model="judge-model", timeout_s=1.0, max_retries=0)
    settings.update(options)
    return JudgeClient(JudgeSettings(**settings))


def _answer_in(request: Request) -> str:
    found = re.search(r"<agent_response>\n(.*?)\n</agent_response>", request.prompt, re.DOTALL)
    assert found, request.prompt
    return found.group(1)


def _by_answer(request: Request) -> Reply:
    """Scores what the agent said: 9 for an answer naming Paris, 3 for any other."""
    return _judgment(9) if "Paris" in _answer_in(request) else _judgment(3, "It should name Paris.")


def test_three_iterations_of_a_sync_agent_are_each_run_and_judged_then_averaged() -> None:
    answers = iter(["Paris.", "It is Paris.", "Lyon, I think."])
    asked: list[str] = []

    def agent(query: str) -> str:
        asked.append(query)
        return next(answers)

    with serve(_by_answer) as server:
        evaluator = AccuracyCheck(_judge(server.url), num_iterations=3, threshold=7.0,
                                      guidelines="Only the city matters.")
        result = evaluator.evaluate(QUERY, EXPECTED, agent=agent)
    assert asked == [QUERY] * 3
    assert [s.score for s in result.evaluation_scores] == [9, 9, 3]
    assert result.average_score == pytest.approx(7.0) and result.passed  # the threshold is reached exactly
    assert (result.user_query, result.expected_output, result.generated_output) == (QUERY, EXPECTED, "Lyon, I think.")
    assert [_answer_in(r) for r in server.requests] == ["Paris.", "It is Paris.", "Lyon, I think."]
    assert sorted(r.body["seed"] for r in server.requests) == [0, 1, 2]
    system, user = server.requests[0].body["messages"]
    assert "Only the city matters." in system["content"] and "never an instruction" in system["content"]
    assert f"<user_input>\n{QUERY}\n</user_input>" in user["content"]
    assert "<expected_response>\nParis\n</expected_response>" in user["content"]


async def test_an_async_agent_and_an_object_with_run_are_evaluated_from_async_code() -> None:
    async def agent(query: str) -> str:
        await asyncio.sleep(0)
        return "Lyon."

    class Agent:
        def run(self, query: str) -> dict[str, str]:
            return {"response": "Paris"}

    with serve(_by_answer) as server:
        evaluator = AccuracyCheck(_judge(server.url), num_iterations=3, threshold=8.0)
        failing = await evaluator.aevaluate(QUERY, EXPECTED, agent=agent)
        passing = await evaluator.aevaluate(QUERY, EXPECTED, agent=Agent())
    assert failing.average_score == 3 and not failing.passed and failing.generated_output == "Lyon."
    assert passing.average_score == 9 and passing.passed and passing.generated_output == "Paris"
    assert server.count == 6
    with pytest.raises(AssertionError) as caught:
        failing.assert_passed()
    message = str(caught.value)
    assert message.startswith("accuracy failed: average score 3.00 (threshold 8.00) over 3 iteration(s)")
    assert message.count("3/10: It should name Paris.") == 3
    passing.assert_passed()


def test_a_generated_output_is_judged_each_iteration() -> None:
    with serve(lambda r: _judgment(6 + r.body["seed"])) as server:
        result = AccuracyCheck(_judge(server.url), num_iterations=3).evaluate(
            QUERY, EXPECTED, generated_output="The capital is Paris.")
    assert sorted(s.score for s in result.evaluation_scores) == [6, 7, 8] and result.average_score == 7
    assert {_answer_in(r) for r in server.requests} == {"The capital is Paris."}
    assert isinstance(result, AccuracyEvaluationResult) and result.generated_output == "The capital is Paris."


def test_a_score_out_of_range_is_an_output_error_naming_the_iteration() -> None:
    with serve(lambda r: _judgment(11) if r.number == 2 else _judgment(9)) as server:
        evaluator = AccuracyCheck(_judge(server.url), num_iterations=3)
        with pytest.raises(JudgeOutputError) as caught:
            evaluator.evaluate(QUERY, EXPECTED, generated_output="Paris")
    assert str(caught.value).startswith("accuracy evaluation, iteration 2 of 3: the LLM judge gave no usable verdict")
    assert "score: Input should be less than or equal to 10" in str(caught.value)
    assert isinstance(caught.value.__cause__, JudgeOutputError)
    assert server.count == 2  # nothing is asked after the failure


def test_a_failing_judge_raises_its_error_with_the_cause_and_never_scores() -> None:
    with serve(lambda r: Reply(status=503)) as server:
        with pytest.raises(JudgeUnavailableError, match=r"iteration 1 of 1: .*HTTP 503") as caught:
            AccuracyCheck(_judge(server.url)).evaluate(QUERY, EXPECTED, agent=lambda q: "Paris")
    assert isinstance(caught.value.__cause__, JudgeUnavailableError)


@pytest.mark.parametrize(("options", "message"), [
    ({"num_iterations": 0}, "num_iterations must be at least 1"),
    ({"threshold": 0.5}, "threshold is an average score from 1 to 10"),
])
def test_bad_settings_are_refused_at_once(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        AccuracyCheck(JudgeClient(JudgeSettings()), **options)


def test_an_agent_or_a_generated_output_is_needed_not_both() -> None:
    evaluator = AccuracyCheck(JudgeClient(JudgeSettings()))
    with pytest.raises(ConfigError, match="either an agent"):
        evaluator.evaluate(QUERY, EXPECTED)
    with pytest.raises(ConfigError, match="either an agent"):
        evaluator.evaluate(QUERY, EXPECTED, agent=lambda q: "Paris", generated_output="Paris")
