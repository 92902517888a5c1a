"""EvalSetBuilder, exactly as spec page 002 shows it."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from agenteval_otel import EvalSet, EvalSetBuilder, ToolCall


def test_single_turn_case() -> None:
    eval_set = (
        EvalSetBuilder("customer-support")
        .add_case(query="How do I reset my password?", expected="visit the account settings page",
                  case_id="reset_password")
        .build()
    )
    assert eval_set.name == "customer-support"
    uuid.UUID(eval_set.eval_set_id)  # a generated UUID
    case = eval_set.eval_cases[0]
    assert case.eval_id == "reset_password"
    assert case.conversation[0].user_content.get_text() == "How do I reset my password?"
    assert case.expected_response == "visit the account settings page"


def test_expected_tools_as_names_or_tool_calls() -> None:
    eval_set = (
        EvalSetBuilder("weather-agent")
        .add_case(query="Weather in London?", expected="The weather in London is sunny.",
                  expected_tools=["get_weather"])
        .add_case(query="Weather in Tokyo?", expected="Raining in Tokyo.",
                  expected_tools=[ToolCall(name="get_weather", args={"location": "Tokyo"})])
        .build()
    )
    london, tokyo = eval_set.eval_cases
    assert london.expected_tools == [ToolCall(name="get_weather")]
    assert tokyo.expected_tools == [ToolCall(name="get_weather", args={"location": "Tokyo"})]
    assert london.eval_id != tokyo.eval_id


def test_expected_node_order() -> None:
    eval_set = (
        EvalSetBuilder("graph")
        .add_case(query="Search and summarise the latest AI news", expected="Here is a summary...",
                  expected_tools=["search_web"], expected_node_order=["MAIN", "TOOL", "MAIN"])
        .build()
    )
    assert eval_set.eval_cases[0].expected_node_order == ["MAIN", "TOOL", "MAIN"]


def test_add_tool_test() -> None:
    eval_set = (
        EvalSetBuilder("t")
        .add_tool_test(query="What is the weather in Berlin?", tool_name="get_weather",
                       tool_args={"location": "Berlin"}, expected_response="Berlin",
                       case_id="berlin_weather")
        .add_tool_test(query="Weather?", tool_name="get_weather")
        .build()
    )
    berlin, default = eval_set.eval_cases
    assert berlin.eval_id == "berlin_weather"
    assert berlin.expected_tools == [ToolCall(name="get_weather", args={"location": "Berlin"})]
    assert berlin.expected_response == "Berlin"
    assert default.expected_response == "Result from get_weather"


def test_add_multi_turn() -> None:
    eval_set = (
        EvalSetBuilder("m")
        .add_multi_turn(
            conversation=[
                ("Hello", "Hi! How can I help?"),
                ("What can you do?", "I can check weather, search the web, and more."),
                ("Check weather in Paris", "It is 18°C in Paris."),
            ],
            expected_tools=["get_weather"],
            case_id="multi_turn_weather",
        )
        .build()
    )
    case = eval_set.eval_cases[0]
    assert case.eval_id == "multi_turn_weather"
    assert len(case.invocations) == 3
    assert case.conversation[-1].expected_tool_trajectory == [ToolCall(name="get_weather")]
    assert case.expected_response == "It is 18°C in Paris."


def test_quick() -> None:
    eval_set = EvalSetBuilder.quick(("Hello", "Hi!"), ("What is 2+2?", "4"), ("Capital of France?", "Paris"))
    assert [c.expected_response for c in eval_set.eval_cases] == ["Hi!", "4", "Paris"]
    with pytest.raises(ValueError, match="pair 0"):
        EvalSetBuilder.quick(("only one",))  # type: ignore[arg-type]


def test_from_conversations() -> None:
    conversations = [{"user": "Hello", "assistant": "Hi!"}, {"user": "Bye", "assistant": "Goodbye!"}]
    eval_set = EvalSetBuilder.from_conversations(conversations, name="smoke-tests")
    assert eval_set.name == "smoke-tests"
    assert [c.conversation[0].user_content.get_text() for c in eval_set.eval_cases] == ["Hello", "Bye"]
    multi = EvalSetBuilder.from_conversations([[{"user": "a", "assistant": "b"},
                                                {"user": "c", "assistant": "d"}]])
    assert len(multi.eval_cases[0].conversation) == 2
    with pytest.raises(ValueError, match=r"conversations\[0\]"):
        EvalSetBuilder.from_conversations([{"assistant": "no user"}])


def test_save_load_and_modify(tmp_path: Path) -> None:
    path = tmp_path / "evals" / "weather.json"
    saved = EvalSetBuilder("weather-tests").add_case(query="Weather in Oslo?", expected="Oslo").save(path)
    assert EvalSet.from_file(path) == saved
    builder = EvalSetBuilder.from_file(path)
    builder.add_case(query="Weather in Seoul?", expected="Seoul")
    eval_set = builder.build()
    assert eval_set.eval_set_id == saved.eval_set_id
    assert [c.expected_response for c in eval_set.eval_cases] == ["Oslo", "Seoul"]
    saved.to_file(tmp_path / "copy.evalset.json")
    assert EvalSet.load(tmp_path / "copy.evalset.json") == saved


def test_duplicate_case_id_is_refused() -> None:
    builder = EvalSetBuilder("d").add_case(query="a", case_id="x")
    with pytest.raises(ValueError, match="duplicate case id 'x'"):
        builder.add_case(query="b", case_id="x")


def test_build_returns_independent_copies() -> None:
    builder = EvalSetBuilder("c").add_case(query="a", case_id="x")
    first = builder.build()
    first.eval_cases[0].tags.append("changed")
    assert builder.build().eval_cases[0].tags == []


def test_cases_without_an_id_are_numbered_by_position() -> None:
    eval_set = (EvalSetBuilder("n").add_case(query="a").add_case(query="b", case_id="case_003")
                .add_case(query="c").add_tool_test(query="d", tool_name="t")
                .add_multi_turn([("e", "f"), ("g", "h")]).build())
    assert [c.eval_id for c in eval_set.eval_cases] == [
        "case_001", "case_003", "case_004", "case_005", "case_006"]
    again = EvalSetBuilder.quick(("a", "b"), ("c", "d"))
    assert [c.eval_id for c in again.eval_cases] == ["case_001", "case_002"]
    assert [c.eval_id for c in EvalSetBuilder.quick(("a", "b"), ("c", "d")).eval_cases] == ["case_001", "case_002"]


def test_added_cases_continue_the_numbering_of_a_loaded_set(tmp_path: Path) -> None:
    path = EvalSetBuilder("f").add_case(query="a").add_case(query="b").save(tmp_path / "f.json")
    builder = EvalSetBuilder.from_file(tmp_path / "f.json").add_case(query="c")
    assert [c.eval_id for c in builder.build().eval_cases] == ["case_001", "case_002", "case_003"]
    assert path.eval_cases[0].eval_id == "case_001"


def test_from_conversations_takes_the_pairs_add_multi_turn_takes() -> None:
    eval_set = EvalSetBuilder.from_conversations([
        [("Hello", "Hi!"), ("Weather in Paris?", "Sunny.")],
        [("Bye", "Goodbye!")],
        [{"user": "a", "assistant": "b", "id": "mixed"}, ("c", "d")],
    ])
    first, second, mixed = eval_set.eval_cases
    assert [(i.user_content.get_text(), i.expected_final_response.get_text() if i.expected_final_response
             else None) for i in first.conversation] == [("Hello", "Hi!"), ("Weather in Paris?", "Sunny.")]
    assert (second.eval_id, second.expected_response) == ("case_002", "Goodbye!")
    assert mixed.eval_id == "mixed" and len(mixed.conversation) == 2
    with pytest.raises(ValueError, match=r"conversations\[0\]\[1\]: expected a dict .* or a \(user, expected reply\) pair"):
        EvalSetBuilder.from_conversations([[("a", "b"), ("only one",)]])
