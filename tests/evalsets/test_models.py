"""The eval-set models and their convenience API (spec page 001, MODELS.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from agenteval_otel import EvalCase, EvalSet, ToolCall
from agenteval_otel.evalsets import ConversationScenario, Invocation, MessageContent, SessionInput
from agenteval_otel.trajectory import StepType, TrajectoryStep


class TestMessageContent:
    def test_user_and_assistant_constructors(self) -> None:
        assert MessageContent.user("Hello!").role == "user"
        assert MessageContent.assistant("Hi!").role == "assistant"
        assert MessageContent.user("Hello!").get_text() == "Hello!"

    def test_text_parts_are_joined_with_newline(self) -> None:
        message = MessageContent(
            role="assistant",
            content=[{"type": "text", "text": "one"}, {"text": "two"}, {"function_call": {}}],
        )
        assert message.get_text() == "one\ntwo"

    def test_adk_model_role_reads_as_assistant(self) -> None:
        assert MessageContent(role="model", content="x").role == "assistant"

    def test_content_of_wrong_type_is_rejected(self) -> None:
        with pytest.raises(ValidationError):
            MessageContent(role="user", content=42)  # type: ignore[arg-type]


class TestToolCall:
    def test_defaults(self) -> None:
        call = ToolCall(name="get_weather")
        assert call.args == {} and call.call_id is None and call.result is None

    def test_names_must_match(self) -> None:
        assert not ToolCall(name="a").matches(ToolCall(name="b"))

    def test_empty_expected_args_match_any(self) -> None:
        assert ToolCall(name="t").matches(ToolCall(name="t", args={"x": 1}), check_args=True)

    def test_args_compare_after_json_normalisation(self) -> None:
        expected = ToolCall(name="t", args={"n": 1, "city": "Tokyo"})
        assert expected.matches(ToolCall(name="t", args={"city": "Tokyo", "n": 1.0}))
        assert not expected.matches(ToolCall(name="t", args={"city": "Tokyo", "n": "1"}))
        assert not expected.matches(ToolCall(name="t", args={"city": "Tokyo"}))

    def test_check_args_off_ignores_arguments(self) -> None:
        expected = ToolCall(name="t", args={"n": 1})
        assert expected.matches(ToolCall(name="t", args={"n": 2}), check_args=False)

    def test_call_id_only_when_asked(self) -> None:
        expected = ToolCall(name="t", call_id="a")
        assert expected.matches(ToolCall(name="t", call_id="b"))
        assert not expected.matches(ToolCall(name="t", call_id="b"), check_call_id=True)
        assert expected.matches(ToolCall(name="t", call_id="a"), check_call_id=True)

    def test_json_string_args_are_parsed(self) -> None:
        assert ToolCall(name="t", args='{"city": "Paris"}').args == {"city": "Paris"}  # type: ignore[arg-type]


class TestInvocationAndSession:
    def test_plain_strings_become_messages_and_tool_calls(self) -> None:
        inv = Invocation(
            user_content="hi",  # type: ignore[arg-type]
            expected_final_response="hello",  # type: ignore[arg-type]
            expected_tool_trajectory=["lookup"],  # type: ignore[list-item]
        )
        assert inv.user_content == MessageContent.user("hi")
        assert inv.expected_final_response == MessageContent.assistant("hello")
        assert inv.expected_tool_trajectory == [ToolCall(name="lookup")]
        assert inv.invocation_id  # generated

    def test_unknown_field_is_an_error(self) -> None:
        with pytest.raises(ValidationError, match="extra"):
            Invocation(user_content="hi", expected_tools=[])  # type: ignore[call-arg,arg-type]

    def test_session_input_accepts_adk_names(self) -> None:
        session = SessionInput.model_validate({"app_name": "a", "user_id": "u", "state": {"k": 1}})
        assert session.initial_state == {"k": 1}
        assert (session.app_name, session.user_id) == ("a", "u")

    def test_session_input_fields(self) -> None:
        session = SessionInput(thread_id="t1", config={"temperature": 0}, initial_state={"x": 1})
        assert session.thread_id == "t1" and session.config == {"temperature": 0}


class TestEvalCase:
    def test_single_turn(self) -> None:
        case = EvalCase.single_turn(
            eval_id="london_weather",
            user_query="Weather in London?",
            expected_response="It is sunny in London.",
            expected_tools=[ToolCall(name="get_weather", args={"location": "London"})],
            expected_node_order=["MAIN", "TOOL", "MAIN"],
            name="London weather check",
            description="Verifies the weather tool is called for London queries",
        )
        assert case.eval_id == "london_weather"
        assert case.expected_response == "It is sunny in London."
        assert case.expected_tools == [ToolCall(name="get_weather", args={"location": "London"})]
        assert case.expected_node_order == ["MAIN", "TOOL", "MAIN"]
        assert case.invocations is case.conversation and len(case.invocations) == 1
        assert case.description.startswith("Verifies")

    def test_multi_turn_puts_tools_on_last_turn(self) -> None:
        case = EvalCase.multi_turn(
            eval_id="multi_weather",
            conversation=[("Weather in London?", "Sunny."), ("And in Tokyo?", "Rainy.")],
            expected_tools=[ToolCall(name="get_weather")],
        )
        assert [inv.expected_tool_trajectory for inv in case.conversation] == [
            [], [ToolCall(name="get_weather")]
        ]
        assert case.expected_response == "Rainy."
        assert [inv.user_content.get_text() for inv in case.conversation] == [
            "Weather in London?", "And in Tokyo?"
        ]

    def test_views_concatenate_turns(self) -> None:
        case = EvalCase(
            eval_id="c",
            conversation=[
                Invocation(user_content=MessageContent.user("a"),
                           expected_tool_trajectory=[ToolCall(name="x")],
                           expected_node_order=["n1"]),
                Invocation(user_content=MessageContent.user("b"),
                           expected_tool_trajectory=[ToolCall(name="y")],
                           expected_node_order=["n2"]),
            ],
        )
        assert [c.name for c in case.expected_tools] == ["x", "y"]
        assert case.expected_node_order == ["n1", "n2"]
        assert case.expected_response is None

    def test_needs_conversation_or_scenario(self) -> None:
        with pytest.raises(ValidationError, match="conversation"):
            EvalCase(eval_id="empty")
        scenario = ConversationScenario(starting_prompt="Hello", conversation_plan="Ask things")
        assert EvalCase(eval_id="sim", conversation_scenario=scenario).conversation == []

    def test_generated_ids_are_unique(self) -> None:
        a = EvalCase.single_turn("q")
        b = EvalCase.single_turn("q")
        assert a.eval_id != b.eval_id


class TestEvalSet:
    def test_duplicate_eval_id_names_the_case(self) -> None:
        case = EvalCase.single_turn("q", eval_id="same")
        with pytest.raises(ValidationError, match=r"eval_cases\[1\].eval_id: duplicate eval_id 'same'"):
            EvalSet(eval_set_id="s", eval_cases=[case, case.model_copy()])

    def test_spec_example(self) -> None:
        eval_set = EvalSet(
            eval_set_id="agent_tests_v1",
            name="Agent Integration Tests",
            description="Full suite of agent integration tests",
            eval_cases=[EvalCase.single_turn("q", eval_id="one")],
            metadata={"version": "1.0", "author": "team"},
        )
        assert eval_set.get_case("one").eval_id == "one"
        with pytest.raises(KeyError):
            eval_set.get_case("two")


    def test_a_file_without_ids_gives_the_same_ids_on_every_load(self, tmp_path: Path) -> None:
        turn = {"user_content": "Weather in Paris?", "expected_final_response": "Sunny."}
        other = {"user_content": "Weather in Tokyo?"}
        path = tmp_path / "weather.evalset.json"
        path.write_text(json.dumps({"eval_cases": [{"conversation": [turn]}, {"conversation": [other]},
                                                   {"conversation": [turn]}, {"eval_id": "kept", "conversation": [other]}]}))
        first, second = EvalSet.load(path), EvalSet.load(path)
        assert first.eval_set_id == second.eval_set_id == "weather"
        ids = [case.eval_id for case in first.eval_cases]
        assert ids == [case.eval_id for case in second.eval_cases]
        assert ids[0].startswith("case-") and ids[2] == f"{ids[0]}-2" and ids[1] != ids[0] and ids[3] == "kept"
        path.write_text(json.dumps({"eval_set_id": "given", "eval_cases": [{"conversation": [other]}]}))
        assert EvalSet.load(path).eval_set_id == "given"
        assert EvalSet.load(path).eval_cases[0].eval_id == ids[1]  # a case's id follows its content


class TestTrajectoryStep:
    def test_factories(self) -> None:
        node = TrajectoryStep.node("agent_node", timestamp=1234567890.0)
        tool = TrajectoryStep.tool("get_weather", args={"city": "Tokyo"}, timestamp=1.0,
                                   call_id="c1", result={"temp": 22})
        message = TrajectoryStep.message("assistant", "Sunny.")
        conditional = TrajectoryStep.conditional("route", "tools", value=True)
        assert (node.step_type, node.name, node.timestamp) == (StepType.NODE, "agent_node", 1234567890.0)
        assert (tool.step_type, tool.args, tool.call_id, tool.result) == (
            StepType.TOOL, {"city": "Tokyo"}, "c1", {"temp": 22})
        assert (message.step_type, message.name, message.result) == (StepType.MESSAGE, "assistant", "Sunny.")
        assert (conditional.step_type, conditional.args, conditional.result) == (
            StepType.CONDITIONAL, {"value": True}, "tools")

    def test_step_type_reads_upper_case(self) -> None:
        assert StepType("NODE") is StepType.NODE
        assert TrajectoryStep(step_type="TOOL", name="t").step_type is StepType.TOOL  # type: ignore[arg-type]

    def test_round_trip(self) -> None:
        step = TrajectoryStep.conditional("fan", ["a", "b"])
        assert TrajectoryStep.model_validate_json(step.model_dump_json()) == step
