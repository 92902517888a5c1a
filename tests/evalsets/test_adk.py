"""Google ADK eval-set files: values of the wrong type are errors naming the file and the JSON
path, never silently read as something else."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel import EvalSet
from agenteval_otel.errors import EvalSetLoadError


def _current() -> dict[str, Any]:
    return {"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{
        "invocation_id": "i1",
        "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        "final_response": {"role": "model", "parts": [{"text": "Sunny."}]},
        "intermediate_data": {
            "tool_uses": [{"id": "t1", "name": "get_weather", "args": {"city": "Paris"}}],
            "tool_responses": [{"id": "t1", "name": "get_weather", "response": {"sky": "sun"}}],
            "intermediate_responses": [["helper", [{"text": "Looking it up."}]]],
        },
    }]}]}


def _events() -> dict[str, Any]:
    data = _current()
    data["eval_cases"][0]["conversation"][0]["intermediate_data"] = {"invocation_events": [
        {"author": "agent", "content": {"role": "model", "parts": [
            {"function_call": {"id": "t1", "name": "get_weather", "args": {"city": "Paris"}}}]}}]}
    return data


def _legacy() -> list[dict[str, Any]]:
    return [{"query": "Weather in Paris?", "reference": "Sunny.",
             "expected_tool_use": [{"tool_name": "get_weather", "tool_input": {"city": "Paris"}}],
             "expected_intermediate_agent_responses": [{"author": "helper", "text": "Looking."}]}]


def _set(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    data = copy.deepcopy(data)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


TURN = ("eval_cases", 0, "conversation", 0)
DEFECTS: list[tuple[Callable[[], Any], tuple[Any, ...], Any, str]] = [
    (_current, (*TURN, "intermediate_data", "tool_uses"), "notalist",
     "eval_cases[0].conversation[0].intermediate_data.tool_uses: expected a list"),
    (_current, (*TURN, "intermediate_data", "tool_uses", 0), "get_weather",
     "eval_cases[0].conversation[0].intermediate_data.tool_uses[0]: expected an object"),
    (_current, (*TURN, "intermediate_data", "tool_uses", 0, "name"), 7,
     "eval_cases[0].conversation[0].intermediate_data.tool_uses[0].name: expected a string"),
    (_current, (*TURN, "intermediate_data", "tool_uses", 0, "args"), ["Paris"],
     "eval_cases[0].conversation[0].intermediate_data.tool_uses[0].args: expected an object"),
    (_current, (*TURN, "intermediate_data", "tool_responses"), "none",
     "eval_cases[0].conversation[0].intermediate_data.tool_responses: expected a list"),
    (_current, (*TURN, "intermediate_data", "intermediate_responses"), "hm",
     "eval_cases[0].conversation[0].intermediate_data.intermediate_responses: expected a list"),
    (_current, (*TURN, "intermediate_data", "intermediate_responses", 0, 1), "Looking it up.",
     "eval_cases[0].conversation[0].intermediate_data.intermediate_responses[0][1]: expected a list"),
    (_current, (*TURN, "intermediate_data"), ["x"],
     "eval_cases[0].conversation[0].intermediate_data: expected an object"),
    (_current, (*TURN, "user_content", "parts", 0, "text"), 42,
     "eval_cases[0].conversation[0].user_content.parts[0].text: expected a string"),
    (_current, (*TURN, "user_content", "parts"), "Weather in Paris?",
     "eval_cases[0].conversation[0].user_content.parts: expected a list"),
    (_current, (*TURN, "user_content", "parts", 0), "Weather in Paris?",
     "eval_cases[0].conversation[0].user_content.parts[0]: expected an object"),
    (_current, (*TURN, "final_response", "parts", 0, "text"), 42,
     "eval_cases[0].conversation[0].final_response.parts[0].text: expected a string"),
    (_events, (*TURN, "intermediate_data", "invocation_events"), "notalist",
     "eval_cases[0].conversation[0].intermediate_data.invocation_events: expected a list"),
    (_events, (*TURN, "intermediate_data", "invocation_events", 0), "event",
     "eval_cases[0].conversation[0].intermediate_data.invocation_events[0]: expected an object"),
    (_events, (*TURN, "intermediate_data", "invocation_events", 0, "content", "parts"), "p",
     "eval_cases[0].conversation[0].intermediate_data.invocation_events[0].content.parts: expected a list"),
    (_events, (*TURN, "intermediate_data", "invocation_events", 0, "content", "parts", 0, "function_call"),
     "get_weather",
     "invocation_events[0].content.parts[0].function_call: expected an object"),
    (_legacy, (0, "expected_tool_use"), "notalist", "[0].expected_tool_use: expected a list"),
    (_legacy, (0, "expected_tool_use", 0, "tool_name"), ["get_weather"],
     "[0].expected_tool_use[0].tool_name: expected a string"),
    (_legacy, (0, "query"), 42, "[0].query: expected a string"),
    (_legacy, (0, "reference"), {"text": "Sunny."}, "[0].reference: expected a string"),
    (_legacy, (0, "expected_intermediate_agent_responses", 0, "text"), 42,
     "[0].expected_intermediate_agent_responses[0].text: expected a string"),
]


@pytest.mark.promise(13)
@pytest.mark.parametrize(("form", "where", "value", "message"), DEFECTS,
                         ids=[f"{d[0].__name__}-{'.'.join(map(str, d[1][-2:]))}" for d in DEFECTS])
def test_a_value_of_the_wrong_type_names_the_file_and_the_json_path(
    tmp_path: Path, form: Callable[[], Any], where: tuple[Any, ...], value: Any, message: str
) -> None:
    path = tmp_path / "wrong.test.json"
    path.write_text(json.dumps(_set(form(), where, value)))
    with pytest.raises(EvalSetLoadError) as err:
        EvalSet.load(path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


@pytest.mark.parametrize("form", [_current, _events, _legacy])
def test_the_well_typed_forms_load(tmp_path: Path, form: Callable[[], Any]) -> None:
    path = tmp_path / "right.test.json"
    path.write_text(json.dumps(form()))
    turn = EvalSet.load(path).eval_cases[0].conversation[0]
    assert turn.user_content.get_text() == "Weather in Paris?"
    assert [(call.name, call.args) for call in turn.expected_tool_trajectory] == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("form", [_current, _events])
def test_a_call_without_args_stays_apart_from_empty_args_and_scores_as_adk(tmp_path: Path,
                                                                            form: Callable[[], Any]) -> None:
    """ADK compares an expected call's ``None`` args with the actual call's ``{}``: no match."""
    import asyncio

    from agenteval_otel import EvalConfig
    from agenteval_otel.evaluation._scoring import Scorer
    from agenteval_otel.trajectory import Trajectory, TrajectoryStep

    data = form()
    turn = data["eval_cases"][0]["conversation"][0]
    now = {"id": "t2", "name": "now", "args": {}}
    if form is _events:
        parts = turn["intermediate_data"]["invocation_events"][0]["content"]["parts"]
        parts[0]["function_call"].pop("args")
        parts.append({"function_call": now})
    else:
        turn["intermediate_data"]["tool_uses"][0].pop("args")
        turn["intermediate_data"]["tool_uses"].append(now)
    path = tmp_path / "no_args.test.json"
    path.write_text(json.dumps(data))
    eval_set = EvalSet.load(path)
    expected = eval_set.eval_cases[0].conversation[0].expected_tool_trajectory
    assert ["args" in call.model_fields_set for call in expected] == [False, True]

    config = EvalConfig(criteria={"tool_trajectory_avg_score": 1.0})
    actual = Trajectory(steps=[TrajectoryStep.tool("get_weather", {}), TrajectoryStep.tool("now", {})])
    result = asyncio.run(Scorer(config).score_case(eval_set.eval_cases[0], [actual]))
    (verdict,) = result.criterion_results
    assert verdict.score == 0.0
    assert "arguments: expected none, got {} (None is not {} for Google ADK)" in verdict.reason
