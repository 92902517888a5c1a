"""Eval-set files: our format round-trips, Google ADK's files load as they are, bad input is
named precisely."""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel import EvalCase, EvalConfig, EvalSet, EvalSetBuilder, ToolCall
from agenteval_otel.criteria._config import MatchType
from agenteval_otel.errors import ConfigError, EvalSetLoadError
from agenteval_otel.evalsets._adk import snake_keys
from agenteval_otel.loading import MAX_JSON_DEPTH

OWN_EVALSETS = Path(__file__).resolve().parent / "data" / "evalsets"

# file -> (cases, turns per case, expected tool calls in all), from shared/data/evalsets/README.md
ADK_EVAL_SETS: dict[str, tuple[int, list[int], int]] = {
    "adk-python__conversation_scenario__conversation_scenario.test.json": (1, [0], 0),
    "adk-python__ecommerce_customer_service_agent__order_query.test.json": (1, [4], 7),
    "adk-python__elicitation_agent__elicitation_flow.test.json": (1, [2], 2),
    "adk-python__hello_world_agent__roll_die.test.json": (1, [3], 1),
    "adk-python__home_automation_agent__simple_test.test.json": (1, [1], 1),
    "adk-python__home_automation_agent__simple_test2.test.json": (1, [1], 1),
    "adk-python__home_automation_agent__test_files__dependent_tool_calls.test.json": (1, [2], 2),
    "adk-python__home_automation_agent__test_files__memorizing_past_events__eval_data.test.json": (1, [2], 1),
    "adk-python__home_automation_agent__test_files__simple_multi_turn_conversation.test.json": (1, [2], 2),
    "adk-python__home_automation_agent__test_files__simple_test.test.json": (1, [2], 1),
    "adk-python__home_automation_agent__test_files__simple_test2.test.json": (1, [1], 1),
    "adk-python__trip_planner_agent__test_files__trip_inquiry_sub_agent.test.json": (1, [1], 0),
    "adk-python__trip_planner_agent__trip_inquiry.test.json": (1, [2], 1),
    "adk-samples__RAG__eval__data__conversation.test.json": (1, [22], 20),
    "adk-samples__academic-research__eval__data__seminal.test.json": (1, [1], 0),
    "adk-samples__brand-search-optimization__eval__data__eval_data1.evalset.json": (1, [6], 10),
    "adk-samples__customer-service__eval__eval_data__full_conversation.test.json": (1, [10], 6),
    "adk-samples__customer-service__eval__eval_data__simple.test.json": (1, [2], 1),
    "adk-samples__data-science__eval__eval_data__simple.test.json": (1, [2], 1),
    "adk-samples__financial-advisor__eval__data__seminal.test.json": (1, [1], 0),
    "adk-samples__llm-auditor__eval__data__blueberries.test.json": (1, [1], 0),
    "adk-samples__llm-auditor__eval__data__ice_cream_sandwich.test.json": (1, [1], 0),
    "adk-samples__marketing-agency__eval__data__seminal.test.json": (1, [1], 0),
    "adk-samples__personalized-shopping__eval__eval_data__simple.test.json": (1, [1], 0),
    "adk-samples__personalized-shopping__tests__tools__tools.test.json": (1, [1], 1),
    "adk-samples__travel-concierge__eval__data__inspire.test.json": (1, [3], 5),
    "adk-samples__travel-concierge__eval__data__intrip.test.json": (1, [4], 12),
    "adk-samples__travel-concierge__eval__data__pretrip.test.json": (1, [2], 6),
}
SESSION_DUMPS = [
    "adk-python__context_update_test__successful_test.session.json",
    "adk-python__flow_complex_spark__sample.session.json",
    "adk-python__trip_planner_agent__initial.session.json",
]
TEST_CONFIGS = {
    "adk-python__ecommerce_customer_service_agent__test_config.json":
        {"tool_trajectory_avg_score": 0.7, "response_match_score": 0.5},
    "adk-python__hello_world_agent__test_config.json":
        {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5},
    "adk-python__home_automation_agent__test_config.json": {"tool_trajectory_avg_score": 1.0},
    "adk-python__home_automation_agent__test_files__memorizing_past_events__test_config.json":
        {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5},
    "adk-python__home_automation_agent__test_files__test_config.json": {"tool_trajectory_avg_score": 1.0},
    "adk-python__trip_planner_agent__test_config.json": {"response_match_score": 0.5},
    "adk-python__trip_planner_agent__test_files__test_config.json": {"response_match_score": 0.5},
}


# --- Google ADK's forms, in our own small files ---------------------------------------------------


def test_own_current_adk_form() -> None:
    eval_set = EvalSet.load(OWN_EVALSETS / "adk_current.test.json")
    (case,) = eval_set.eval_cases
    assert (eval_set.eval_set_id, case.eval_id, len(case.conversation)) == ("home-lights", "kitchen_lamp", 2)
    first, second = case.conversation
    assert first.user_content.role == "user"
    assert first.user_content.get_text() == "Turn off the lamp in the Kitchen."
    assert first.expected_final_response is not None
    assert first.expected_final_response.role == "assistant"
    assert first.expected_final_response.get_text() == "The kitchen lamp is off."
    assert first.expected_tool_trajectory == [
        ToolCall(name="set_device", args={"room": "Kitchen", "device": "lamp", "status": "OFF"},
                 call_id="call-1")]
    assert [c.name for c in second.expected_tool_trajectory] == ["get_device"]


def test_own_legacy_list_form() -> None:
    (case,) = EvalSet.load(OWN_EVALSETS / "adk_legacy.test.json").eval_cases
    first, second = case.conversation
    assert first.user_content.get_text() == "Plan a trip to Lisbon." and first.expected_tool_trajectory == []
    assert second.expected_tool_trajectory == [
        ToolCall(name="transfer_to_agent", args={"agent_name": "trip_planner"})]
    assert second.expected_final_response is not None
    assert second.expected_final_response.get_text() == "Let me hand you to the trip planner."


def test_own_conversation_scenario_case() -> None:
    scenario = EvalSet.load(OWN_EVALSETS / "adk_scenario.test.json").eval_cases[0].conversation_scenario
    assert scenario is not None
    assert (scenario.starting_prompt, scenario.conversation_plan) == (
        "Hi there", "Ask the agent for the weather in Oslo")


def test_own_session_dump_is_refused() -> None:
    path = OWN_EVALSETS / "adk_session.json"
    with pytest.raises(EvalSetLoadError, match="session dump.*not an eval set") as err:
        EvalSet.load(path)
    assert str(path) in str(err.value)


def test_own_adk_test_config_loads_and_is_refused_as_an_eval_set() -> None:
    config = EvalConfig.load(OWN_EVALSETS / "test_config.json")
    assert {k: c.threshold for k, c in config.criteria.items()} == {  # ADK's names keep ADK's rules
        "tool_trajectory_avg_score": 1.0, "response_match_score": 0.6}
    with pytest.raises(EvalSetLoadError, match=r"this is a config \(criteria\), not an eval set.*EvalConfig.load"):
        EvalSet.load(OWN_EVALSETS / "test_config.json")


def test_own_camel_case_below_top_level(tmp_path: Path) -> None:
    data = json.loads((OWN_EVALSETS / "adk_current.test.json").read_text())
    camel = {**data, "eval_cases": _camel_keys(data["eval_cases"])}
    assert "userContent" in json.dumps(camel)
    path = tmp_path / "camel.test.json"
    path.write_text(json.dumps(camel))
    assert EvalSet.load(path) == EvalSet.load(OWN_EVALSETS / "adk_current.test.json")


# --- Google ADK's real files ---------------------------------------------------------------------


def test_every_shared_file_is_covered(shared_data: Path) -> None:
    on_disk = {p.name for p in (shared_data / "evalsets").glob("*.json")}
    assert on_disk == set(ADK_EVAL_SETS) | set(SESSION_DUMPS) | set(TEST_CONFIGS)


@pytest.mark.parametrize("name", sorted(ADK_EVAL_SETS))
def test_adk_eval_set_loads_with_right_counts(shared_data: Path, name: str) -> None:
    cases, turns, tools = ADK_EVAL_SETS[name]
    eval_set = EvalSet.load(shared_data / "evalsets" / name)
    assert len(eval_set.eval_cases) == cases
    assert [len(c.conversation) for c in eval_set.eval_cases] == turns
    assert sum(len(c.expected_tools) for c in eval_set.eval_cases) == tools
    for case in eval_set.eval_cases:
        for inv in case.conversation:
            assert inv.user_content.role == "user"
            assert inv.user_content.get_text()


@pytest.mark.parametrize("name", SESSION_DUMPS)
def test_session_dumps_are_refused(shared_data: Path, name: str) -> None:
    with pytest.raises(EvalSetLoadError, match="session dump.*not an eval set") as err:
        EvalSet.load(shared_data / "evalsets" / name)
    assert name in str(err.value)


@pytest.mark.parametrize("name", sorted(TEST_CONFIGS))
def test_adk_test_config_loads_into_eval_config(shared_data: Path, name: str) -> None:
    config = EvalConfig.load(shared_data / "evalsets" / name)
    assert {k: c.threshold for k, c in config.criteria.items()} == TEST_CONFIGS[name]
    if "tool_trajectory_avg_score" in config.criteria:  # ADK's EXACT match, arguments compared
        trajectory = config.criteria["tool_trajectory_avg_score"]
        assert trajectory.match_type is MatchType.EXACT and trajectory.params == {}


def test_current_adk_form_details(shared_data: Path) -> None:
    eval_set = EvalSet.load(
        shared_data / "evalsets" / "adk-python__home_automation_agent__simple_test.test.json")
    inv = eval_set.eval_cases[0].conversation[0]
    assert inv.user_content.get_text() == "Turn off device_2 in the Bedroom."
    assert inv.expected_final_response is not None
    assert inv.expected_final_response.role == "assistant"
    assert inv.expected_final_response.get_text() == "I have set the device_2 status to off."
    assert inv.expected_tool_trajectory[0].name == "set_device_info"
    assert inv.expected_tool_trajectory[0].args == {
        "location": "Bedroom", "device_id": "device_2", "status": "OFF"}


def test_legacy_list_form_details(shared_data: Path) -> None:
    eval_set = EvalSet.load(
        shared_data / "evalsets" / "adk-python__trip_planner_agent__trip_inquiry.test.json")
    second = eval_set.eval_cases[0].conversation[1]
    assert second.expected_tool_trajectory == [
        ToolCall(name="transfer_to_agent", args={"agent_name": "indentify_agent"})]
    assert second.user_content.get_text().startswith("I want to travel from San Francisco")


def test_conversation_scenario_case(shared_data: Path) -> None:
    eval_set = EvalSet.load(
        shared_data / "evalsets" / "adk-python__conversation_scenario__conversation_scenario.test.json")
    scenario = eval_set.eval_cases[0].conversation_scenario
    assert scenario is not None
    assert (scenario.starting_prompt, scenario.conversation_plan) == (
        "Hello", "Ask the agent to do something")


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word.title() for word in rest)


def _camel_keys(value: Any, opaque: frozenset[str] = frozenset({"args", "state"})) -> Any:
    if isinstance(value, dict):
        return {_camel(k): (v if k in opaque else _camel_keys(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel_keys(v) for v in value]
    return value


def test_camel_case_below_top_level(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "evalsets" / "adk-python__home_automation_agent__test_files__dependent_tool_calls.test.json"
    data = json.loads(source.read_text())
    camel = {**data, "eval_cases": _camel_keys(data["eval_cases"])}
    assert "userContent" in json.dumps(camel)
    path = tmp_path / "camel.test.json"
    path.write_text(json.dumps(camel))
    assert EvalSet.load(path) == EvalSet.load(source)


def test_snake_keys_leaves_arguments_alone() -> None:
    data = {"toolUses": [{"name": "t", "args": {"deviceId": 1}}]}
    assert snake_keys(data) == {"tool_uses": [{"name": "t", "args": {"deviceId": 1}}]}


def test_snake_keys_returns_what_has_nothing_to_rename() -> None:
    data = {"eval_cases": [{"eval_id": "c", "conversation": [{"user_content": "q"}]}], "metadata": {"aB": 1}}
    assert snake_keys(data) is data
    renamed = snake_keys({"a": 1, "evalCases": [], "b": [2]})
    assert list(renamed.items()) == [("a", 1), ("eval_cases", []), ("b", [2])]


def test_invocation_events_form(tmp_path: Path) -> None:
    """ADK 2.x writes tool calls as function_call parts of invocation events."""
    data = {
        "eval_set_id": "s",
        "eval_cases": [{
            "eval_id": "c",
            "conversation": [{
                "invocation_id": "i1",
                "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                "final_response": {"role": "model", "parts": [{"text": "Sunny, 18°C."}]},
                "intermediate_data": {"invocation_events": [
                    {"author": "weather_agent", "content": {"role": "model", "parts": [
                        {"function_call": {"id": "call-1", "name": "get_weather",
                                           "args": {"city": "Paris"}}}]}},
                    {"author": "weather_agent", "content": {"role": "user", "parts": [
                        {"function_response": {"id": "call-1", "name": "get_weather",
                                               "response": {"temp": 18}}}]}},
                    {"author": "weather_agent", "content": {"role": "model", "parts": [
                        {"text": "Let me convert that."}]}},
                ]},
            }],
            "session_input": {"app_name": "weather", "user_id": "u1", "state": {"unit": "C"}},
        }],
    }
    path = tmp_path / "events.test.json"
    path.write_text(json.dumps(data))
    case = EvalSet.load(path).eval_cases[0]
    inv = case.conversation[0]
    assert inv.expected_tool_trajectory == [
        ToolCall(name="get_weather", args={"city": "Paris"}, call_id="call-1", result={"temp": 18})]
    assert [m.get_text() for m in inv.expected_intermediate_responses] == ["Let me convert that."]
    assert case.expected_response == "Sunny, 18°C."
    assert case.session_input is not None and case.session_input.initial_state == {"unit": "C"}


def test_our_format_round_trips(tmp_path: Path) -> None:
    original = (
        EvalSetBuilder("rt", description="round trip")
        .add_case(query="q1", expected="a1", expected_tools=[ToolCall(name="t", args={"x": [1, 2]})],
                  expected_node_order=["n"], tags=["x"], metadata={"k": {"nested": True}})
        .add_multi_turn([("u1", "r1"), ("u2", "r2")], expected_tools=["t2"])
        .build()
    )
    path = original.save(tmp_path / "rt.evalset.json")
    assert EvalSet.load(path) == original
    # loading what we wrote and writing it again gives the same bytes
    EvalSet.load(path).save(tmp_path / "again.evalset.json")
    assert (tmp_path / "again.evalset.json").read_text() == path.read_text()


def _bench_shaped(cases: int) -> EvalSet:
    """Single-turn cases of five calls of one tool, as bench/evaluate.py writes them."""
    return EvalSet(eval_set_id="lean", eval_cases=[EvalCase.single_turn(
        f"What is the weather in City{i}?", f"It is sunny in City{i}.",
        [ToolCall(name="get_weather", args={"city": f"City{i}", "round": r}) for r in range(5)],
        eval_id=f"case-{i}") for i in range(cases)])


def test_loaded_cases_are_held_lean(tmp_path: Path) -> None:
    """Loading holds each case in few bytes: one raw case at a time is alive beside the models,
    and the models share their field-name sets and repeated names and values."""
    cases = 600
    path = _bench_shaped(cases).save(tmp_path / "lean.evalset.json")
    EvalSet.load(path)  # imports and caches warmed up
    tracemalloc.start()
    try:
        eval_set = EvalSet.load(path)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(eval_set.eval_cases) == cases
    assert held / cases < 6_000 and peak / cases < 8_000, (held / cases, peak / cases)


def test_sharing_in_loaded_cases_is_never_observable(tmp_path: Path) -> None:
    path = _bench_shaped(3).save(tmp_path / "lean.evalset.json")
    first, second, _ = EvalSet.load(path).eval_cases
    call, other = first.expected_tools[0], second.expected_tools[0]
    assert other.model_fields_set == {"name", "args", "call_id", "result"}
    call.name = "renamed"
    call.args["city"] = "Elsewhere"
    first.conversation[0].user_content.role = "system"
    copied = second.model_copy(update={"tags": ["x"]})
    assert (other.name, other.args, second.conversation[0].user_content.role) == (
        "get_weather", {"city": "City1", "round": 0}, "user")
    assert first.expected_tools[1].args == {"city": "City0", "round": 1}
    assert copied.tags == ["x"] and second.tags == [] and second.model_fields_set == copied.model_fields_set
    assert other.model_dump(exclude_unset=True) == {"name": "get_weather", "args": {"city": "City1", "round": 0},
                                                    "call_id": None, "result": None}


def test_errors_of_the_set_and_of_several_cases_are_named_together(tmp_path: Path) -> None:
    good = {"eval_id": "ok", "conversation": [{"user_content": "q"}]}
    data = {"eval_set_id": "s", "name": 5, "eval_cases": [good, "x", {**good, "eval_id": 3}, {"eval_id": "e"}],
            "extra": 1}
    path = _write(tmp_path, json.dumps(data))
    with pytest.raises(EvalSetLoadError) as err:
        EvalSet.load(path)
    assert str(err.value) == (
        f"{path}: name: Input should be a valid string (got 5); eval_cases[1]: Input should be a valid "
        "dictionary or instance of EvalCase (got 'x'); eval_cases[2].eval_id: Input should be a valid string "
        "(got 3); eval_cases[3]: eval case 'e' needs a 'conversation' (at least one invocation) or a "
        "'conversation_scenario'; extra: unknown field")


def test_example_eval_set_loads() -> None:
    from tests.conftest import REPO_ROOT

    eval_set = EvalSet.load(REPO_ROOT / "examples" / "weather_agent.evalset.json")
    assert len(eval_set.eval_cases) == 4


# --- bad input ---------------------------------------------------------------------------

def _write(tmp_path: Path, text: str, name: str = "bad.evalset.json") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.promise(13)
def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.evalset.json"
    with pytest.raises(EvalSetLoadError, match=re.escape(f"{missing}: no such file")):
        EvalSet.load(missing)


@pytest.mark.promise(13)
def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(EvalSetLoadError, match="the file is empty"):
        EvalSet.load(_write(tmp_path, "  \n"))


@pytest.mark.promise(13)
def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path, '{\n  "eval_set_id": "x",\n  "eval_cases": [\n    {"eval_id": }\n  ]\n}')
    with pytest.raises(EvalSetLoadError) as err:
        EvalSet.load(path)
    assert str(err.value) == (f"{path}: line 4, column 17: invalid JSON (Expecting value)\n"
                              '        {"eval_id": }\n'
                              + " " * 20 + "^")


def test_invalid_json_on_a_long_line_shows_the_text_around_the_column(tmp_path: Path) -> None:
    cases = ", ".join(f'{{"eval_id": "c{i}", "conversation": []}}' for i in range(40))
    path = _write(tmp_path, f'{{"eval_set_id": "s", "eval_cases": [{cases},, ]}}')
    with pytest.raises(EvalSetLoadError) as err:
        EvalSet.load(path)
    head, snippet, caret = str(err.value).splitlines()
    assert head.startswith(f"{path}: line 1, column ") and "invalid JSON" in head
    assert snippet.startswith("    ...") and len(snippet) <= 4 + 3 + 72 + 3
    assert snippet[caret.index("^")] == ","  # the caret points at the second comma
    assert snippet[caret.index("^") - 1] == ","


@pytest.mark.promise(13)
def test_wrong_type_names_json_path(tmp_path: Path) -> None:
    cases = [{"eval_id": f"c{i}", "conversation": [{"user_content": {"role": "user", "content": "q"}}]}
             for i in range(4)]
    cases[3]["conversation"][0]["user_content"] = ["not", "a", "message"]
    path = _write(tmp_path, json.dumps({"eval_set_id": "s", "eval_cases": cases}))
    with pytest.raises(EvalSetLoadError) as err:
        EvalSet.load(path)
    message = str(err.value)
    assert message.startswith(str(path))
    assert "eval_cases[3].conversation[0].user_content" in message
    assert "valid dictionary" in message


@pytest.mark.promise(13)
def test_missing_field_names_json_path(tmp_path: Path) -> None:
    data = {"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{}]}]}
    with pytest.raises(EvalSetLoadError, match=r"eval_cases\[0\]\.conversation\[0\]\.user_content: Field required"):
        EvalSet.load(_write(tmp_path, json.dumps(data)))


@pytest.mark.promise(13)
def test_unknown_field_is_named(tmp_path: Path) -> None:
    data = {"eval_set_id": "s", "eval_cases": [
        {"eval_id": "c", "conversation": [{"user_content": "q", "expected_tool": []}]}]}
    with pytest.raises(EvalSetLoadError, match=r"eval_cases\[0\]\.conversation\[0\]\.expected_tool: unknown field"):
        EvalSet.load(_write(tmp_path, json.dumps(data)))


def test_duplicate_eval_id(tmp_path: Path) -> None:
    case = {"eval_id": "same", "conversation": [{"user_content": "q"}]}
    path = _write(tmp_path, json.dumps({"eval_set_id": "s", "eval_cases": [case, case]}))
    with pytest.raises(EvalSetLoadError, match=r"eval_cases\[1\]\.eval_id: duplicate eval_id 'same'"):
        EvalSet.load(path)


@pytest.mark.promise(13)
def test_not_an_eval_set(tmp_path: Path) -> None:
    with pytest.raises(EvalSetLoadError, match="eval_cases: field missing"):
        EvalSet.load(_write(tmp_path, '{"cases": []}'))
    with pytest.raises(EvalSetLoadError, match="got str"):
        EvalSet.load(_write(tmp_path, '"just a string"'))
    with pytest.raises(EvalSetLoadError, match=r"\[1\]: expected an object"):
        EvalSet.load(_write(tmp_path, '[{"query": "q"}, 3]'))
    with pytest.raises(EvalSetLoadError, match="empty list"):
        EvalSet.load(_write(tmp_path, "[]"))


def test_criteria_file_given_as_eval_set(shared_data: Path) -> None:
    with pytest.raises(EvalSetLoadError, match="this is a config .*, not an eval set.*--config"):
        EvalSet.load(shared_data / "evalsets" / "adk-python__hello_world_agent__test_config.json")


def test_validator_messages_carry_no_pydantic_prefix(tmp_path: Path) -> None:
    case = {"eval_id": "same", "conversation": [{"user_content": "q"}]}
    path = _write(tmp_path, json.dumps({"eval_set_id": "s", "eval_cases": [case, case]}))
    with pytest.raises(EvalSetLoadError) as err:
        EvalSet.load(path)
    assert str(err.value).startswith(f"{path}: (top level): eval_cases[1].eval_id: duplicate eval_id 'same'")
    assert "Value error" not in str(err.value)


def test_load_error_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        EvalSet.load(tmp_path / "missing.json")


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.promise(13)
@pytest.mark.parametrize("depth", [600, 5000])
def test_deeply_nested_json_names_the_file_and_the_depth_limit(tmp_path: Path, depth: int) -> None:
    eval_set = _write(tmp_path, '{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "tags": %s, '
                                '"conversation": [{"user_content": "hi"}]}]}' % _nested(depth))
    with pytest.raises(EvalSetLoadError, match=rf"^{re.escape(str(eval_set))}: .*nested more than {MAX_JSON_DEPTH}"):
        EvalSet.load(eval_set)
    config = tmp_path / "deep.config.json"
    config.write_text('{"criteria": {"response_match": {"params": {"x": %s}}}}' % _nested(depth))
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(config))}: .*nested more than {MAX_JSON_DEPTH}"):
        EvalConfig.load(config)


def test_json_nested_up_to_the_limit_loads(tmp_path: Path) -> None:
    obj = '{"a": ' * (MAX_JSON_DEPTH - 10) + "1" + "}" * (MAX_JSON_DEPTH - 10)
    path = _write(tmp_path, '{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{"user_content": '
                            '"hi", "expected_tool_trajectory": [{"name": "x", "args": %s}]}]}]}' % obj)
    assert EvalSet.load(path).eval_cases[0].expected_tools[0].name == "x"
