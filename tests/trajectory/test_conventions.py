"""The convention readers, one producer at a time, on spans shaped as each specification says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval_otel.trajectory.conventions import SpanRole, read_span
from agenteval_otel.trajectory.conventions.langgraph import branch_taken
from agenteval_otel.trajectory.conventions.values import text_from
from agenteval_otel.trajectory.messages import decode_arguments
from agenteval_otel.trajectory.spans import SpanEvent

# --- our own spans ------------------------------------------------------------------------------


def test_our_tool_span(make_span) -> None:
    reading = read_span(
        make_span(
            "execute_tool get_weather",
            {
                "agenteval.step.type": "tool",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.call.arguments": '{"city": "Paris"}',
                "gen_ai.tool.call.result": '{"temp_c": 18.0}',
            },
        )
    )
    assert (reading.role, reading.name, reading.convention) == (SpanRole.TOOL, "get_weather", "agenteval")
    assert (reading.args, reading.result, reading.call_id) == ({"city": "Paris"}, {"temp_c": 18.0}, "c1")


def test_our_conditional_with_a_fan_out(make_span) -> None:
    reading = read_span(
        make_span(
            "conditional route",
            {
                "agenteval.step.type": "conditional",
                "agenteval.conditional.name": "route",
                "agenteval.conditional.value": '{"intent": "weather"}',
                "agenteval.conditional.branch": '["fetch_current", "fetch_forecast"]',
            },
        )
    )
    assert reading.role is SpanRole.CONDITIONAL
    assert reading.branch == ["fetch_current", "fetch_forecast"]
    assert reading.value == {"intent": "weather"}


def test_our_agent_node_and_message(make_span) -> None:
    agent = read_span(
        make_span(
            "invoke_agent weather",
            {
                "agenteval.step.type": "agent",
                "gen_ai.agent.name": "weather",
                "gen_ai.conversation.id": "conv-1",
                "agenteval.agent.input": "Weather in Paris?",
                "agenteval.agent.output": "Sunny.",
            },
        )
    )
    node = read_span(
        make_span("invoke_node plan", {"agenteval.step.type": "node", "gen_ai.node.name": "plan"})
    )
    message = read_span(
        make_span(
            "chat gpt-4o",
            {
                "agenteval.step.type": "message",
                "agenteval.message.role": "assistant",
                "agenteval.message.content": "Hi",
            },
        )
    )
    assert (agent.role, agent.input, agent.output, agent.output_is_final) == (
        SpanRole.AGENT,
        "Weather in Paris?",
        "Sunny.",
        True,
    )
    assert agent.conversation_id == "conv-1"
    assert (node.role, node.name) == (SpanRole.NODE, "plan")
    assert message.role is SpanRole.MODEL and message.output_messages[0].text == "Hi"


def test_evaluation_spans_are_never_read(make_span) -> None:
    reading = read_span(
        make_span(
            "evaluate trajectory", {"agenteval.evaluation": True, "gen_ai.operation.name": "execute_tool"}
        )
    )
    assert reading.role is SpanRole.IGNORED


# --- GenAI semantic conventions -----------------------------------------------------------------


def test_genai_chat_reads_messages_tool_calls_and_usage(make_span) -> None:
    reading = read_span(
        make_span(
            "chat gpt-4o",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 12,
                "gen_ai.usage.output_tokens": 3,
                "gen_ai.input.messages": json.dumps(
                    [
                        {"role": "user", "parts": [{"type": "text", "content": "Weather?"}]},
                        {
                            "role": "tool",
                            "parts": [{"type": "tool_call_response", "id": "c0", "response": "42"}],
                        },
                    ]
                ),
                "gen_ai.output.messages": json.dumps(
                    [
                        {
                            "role": "assistant",
                            "parts": [
                                {
                                    "type": "tool_call",
                                    "id": "c1",
                                    "name": "get_weather",
                                    "arguments": '{"city": "Oslo"}',
                                }
                            ],
                            "finish_reason": "tool_call",
                        }
                    ]
                ),
            },
        )
    )
    assert reading.role is SpanRole.MODEL and reading.name == "gpt-4o"
    (call,) = reading.requested_tool_calls
    assert (call.name, call.args, call.call_id) == ("get_weather", {"city": "Oslo"}, "c1")
    assert reading.input_messages[1].tool_responses[0].response == 42
    assert (reading.usage.input_tokens, reading.usage.output_tokens) == (12, 3)


def test_genai_messages_may_come_on_the_operation_details_event(make_span) -> None:
    event = SpanEvent(
        "gen_ai.client.inference.operation.details",
        1,
        {
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "Done."}]}]
            )
        },
    )
    reading = read_span(make_span("chat m", {"gen_ai.operation.name": "chat"}, events=(event,)))
    assert reading.output_messages[0].text == "Done."


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [('{"celsius": 18.0}', {"celsius": 18.0}), ({"celsius": 18.0}, {"celsius": 18.0}), (None, None)],
)
def test_genai_tool_arguments_as_json_or_map(make_span, arguments, expected) -> None:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "c2f",
        "gen_ai.tool.call.result": 64.4,
    }
    if arguments is not None:
        attributes["gen_ai.tool.call.arguments"] = arguments
    reading = read_span(make_span("execute_tool c2f", attributes))
    assert (reading.args, reading.result) == (expected, 64.4)


def test_genai_tool_name_falls_back_to_the_span_name(make_span) -> None:
    reading = read_span(
        make_span("execute_tool summarize_findings", {"gen_ai.operation.name": "execute_tool"})
    )
    assert (reading.role, reading.name) == (SpanRole.TOOL, "summarize_findings")


def test_adk_merged_tool_span_is_a_phantom(make_span) -> None:
    reading = read_span(
        make_span(
            "execute_tool (merged)",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "(merged tools)"},
        )
    )
    assert reading.role is SpanRole.IGNORED


def test_agent_transfer_is_a_handoff_not_a_tool(make_span) -> None:
    reading = read_span(
        make_span(
            "execute_tool transfer_to_agent",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "transfer_to_agent"},
        )
    )
    assert reading.role is SpanRole.HANDOFF


def test_genai_workflow_and_pydantic_final_result(make_span) -> None:
    workflow = read_span(
        make_span(
            "invoke_workflow w", {"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "w"}
        )
    )
    agent = read_span(
        make_span(
            "invoke_agent a",
            {
                "gen_ai.operation.name": "invoke_agent",
                "final_result": '{"answer": 1}',
                "pydantic_ai.all_messages": '[{"role": "user", "parts": [{"type": "text", "content": "Q"}]}]',
            },
        )
    )
    assert (workflow.role, workflow.name) == (SpanRole.AGENT, "w")
    assert (agent.input, agent.output, agent.output_is_final) == ("Q", '{"answer": 1}', True)


# --- OpenInference ------------------------------------------------------------------------------


def test_openinference_llm_flattened_messages(make_span) -> None:
    prefix = "llm.output_messages.0.message"
    reading = read_span(
        make_span(
            "ChatCompletion",
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o",
                "llm.token_count.prompt": 90,
                "llm.token_count.completion": 12,
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.contents.0.message_content.type": "text",
                "llm.input_messages.0.message.contents.0.message_content.text": "London and Tokyo?",
                "llm.input_messages.1.message.role": "tool",
                "llm.input_messages.1.message.tool_call_id": "c0",
                "llm.input_messages.1.message.content": '{"ok": true}',
                f"{prefix}.role": "assistant",
                f"{prefix}.tool_calls.0.tool_call.id": "c1",
                f"{prefix}.tool_calls.0.tool_call.function.name": "get_weather",
                f"{prefix}.tool_calls.0.tool_call.function.arguments": '{"city": "London"}',
                f"{prefix}.tool_calls.1.tool_call.id": "c2",
                f"{prefix}.tool_calls.1.tool_call.function.name": "get_weather",
                f"{prefix}.tool_calls.1.tool_call.function.arguments": '{"city": "Tokyo"}',
                "llm.tools.0.tool.json_schema": json.dumps(
                    {
                        "type": "function",
                        "function": {"name": "get_weather", "parameters": {"properties": {"city": {}}}},
                    }
                ),
            },
        )
    )
    assert reading.role is SpanRole.MODEL
    assert reading.input_messages[0].text == "London and Tokyo?"
    assert reading.input_messages[1].tool_responses[0].response == {"ok": True}
    assert [(c.call_id, c.args) for c in reading.requested_tool_calls] == [
        ("c1", {"city": "London"}),
        ("c2", {"city": "Tokyo"}),
    ]
    assert reading.tool_definitions[0].single_parameter == "city"
    assert reading.usage.total_tokens == 102


def test_openinference_tool_with_a_bare_string_input(make_span) -> None:
    reading = read_span(
        make_span(
            "get_weather",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "get_weather",
                "input.value": "Paris",
                "output.value": json.dumps(
                    {
                        "type": "tool",
                        "data": {"content": '{"temp_c": 18}', "tool_call_id": "call_W1", "status": "success"},
                    }
                ),
            },
        )
    )
    assert (reading.args, reading.raw_args) == (None, "Paris")
    assert (reading.result, reading.call_id) == ({"temp_c": 18}, "call_W1")


def test_openinference_handoff_span_is_not_a_tool(make_span) -> None:
    reading = read_span(make_span("handoff to Billing Agent", {"openinference.span.kind": "TOOL"}))
    assert reading.role is SpanRole.HANDOFF


def test_openinference_chain_is_an_agent_only_at_the_root(make_span) -> None:
    root = make_span("graph", {"openinference.span.kind": "CHAIN", "input.value": "hi"})
    inner = make_span("RunnableSequence", {"openinference.span.kind": "CHAIN"}, parent=root)
    assert read_span(root).role is SpanRole.AGENT
    assert read_span(inner).role is SpanRole.IGNORED


# --- OpenLLMetry --------------------------------------------------------------------------------


def test_openllmetry_legacy_flattened_completion_with_tool_calls(make_span) -> None:
    reading = read_span(
        make_span(
            "openai.chat",
            {
                "llm.request.type": "chat",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": "Weather in Rome?",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.finish_reason": "tool_calls",
                "gen_ai.completion.0.tool_calls.0.id": "call_1",
                "gen_ai.completion.0.tool_calls.0.name": "get_weather",
                "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Rome"}',
                "gen_ai.usage.prompt_tokens": 20,
                "gen_ai.usage.completion_tokens": 5,
                "llm.request.functions.0.name": "get_weather",
                "llm.request.functions.0.parameters": '{"properties": {"city": {"type": "string"}}}',
            },
        )
    )
    assert reading.role is SpanRole.MODEL and reading.convention == "openllmetry"
    assert reading.input_messages[0].text == "Weather in Rome?"
    assert [(c.name, c.args, c.call_id) for c in reading.requested_tool_calls] == [
        ("get_weather", {"city": "Rome"}, "call_1")
    ]
    assert reading.usage.input_tokens == 20
    assert reading.tool_definitions[0].parameters == ("city",)


def test_openllmetry_decorated_tool_and_workflow(make_span) -> None:
    tool = read_span(
        make_span(
            "get_weather.tool",
            {
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "get_weather",
                "traceloop.entity.input": '{"args": [], "kwargs": {"city": "Rome"}}',
                "traceloop.entity.output": '{"temp_c": 21}',
            },
        )
    )
    workflow = read_span(
        make_span(
            "trip.workflow",
            {
                "traceloop.span.kind": "workflow",
                "traceloop.entity.name": "trip",
                "traceloop.entity.input": '{"args": ["Plan a trip to Rome"], "kwargs": {}}',
                "traceloop.entity.output": '"Rome it is."',
                "traceloop.association.properties.session_id": "s-9",
            },
        )
    )
    assert (tool.role, tool.name, tool.args, tool.result) == (
        SpanRole.TOOL,
        "get_weather",
        {"city": "Rome"},
        {"temp_c": 21},
    )
    assert (workflow.role, workflow.input, workflow.output) == (
        SpanRole.AGENT,
        "Plan a trip to Rome",
        "Rome it is.",
    )
    assert workflow.conversation_id == "s-9"


def test_openllmetry_newer_tool_span_fills_arguments_from_the_entity_input(make_span) -> None:
    reading = read_span(
        make_span(
            "get_weather.tool",
            {
                "traceloop.span.kind": "tool",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "traceloop.entity.input": '{"input_str": "{\'city\': \'Rome\'}", "inputs": {"city": "Rome"}}',
            },
        )
    )
    assert (reading.convention, reading.args) == ("genai", {"city": "Rome"})


def test_openllmetry_handoff(make_span) -> None:
    reading = read_span(make_span("Triage → Billing.handoff", {"traceloop.span.kind": "handoff"}))
    assert reading.role is SpanRole.HANDOFF


def _recording(shared_data: Path) -> list[dict]:
    folder = shared_data / "traces" / "openllmetry-recording"
    (path,) = folder.glob("*.json")
    return json.loads(path.read_text())["spans"]


def test_openllmetry_recording_reads_agents_workflows_and_model_calls(shared_data: Path, make_span) -> None:
    spans = _recording(shared_data)
    readings = [read_span(make_span(s["name"], s["attributes"])) for s in spans]
    expected = {"agent": SpanRole.AGENT, "workflow": SpanRole.AGENT, "unknown": SpanRole.MODEL}
    assert [r.role for r in readings] == [expected[s["span_kind"]] for s in spans]
    agents = {r.name for s, r in zip(spans, readings, strict=True) if s["span_kind"] == "agent"}
    assert agents == {"Main Chat Agent", "Recipe Editor Agent"}
    assert {r.convention for r in readings} == {"openllmetry"}


# --- Google ADK's older keys --------------------------------------------------------------------


def test_adk_legacy_tool_and_llm_spans(make_span) -> None:
    tool = read_span(
        make_span(
            "execute_tool get_weather",
            {
                "gen_ai.system": "gcp.vertex.agent",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "adk-1",
                "gcp.vertex.agent.tool_call_args": '{"city": "Paris"}',
                "gcp.vertex.agent.tool_response": '{"temp_c": 18}',
                "gcp.vertex.agent.llm_request": "{}",
            },
        )
    )
    request = {
        "model": "gemini",
        "config": {
            "tools": [
                {
                    "function_declarations": [
                        {"name": "get_weather", "parameters": {"properties": {"city": {}}}}
                    ]
                }
            ]
        },
        "contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
    }
    response = {
        "content": {
            "role": "model",
            "parts": [{"function_call": {"id": "adk-1", "name": "get_weather", "args": {"city": "Paris"}}}],
        },
        "usage_metadata": {"prompt_token_count": 30, "candidates_token_count": 4},
    }
    llm = read_span(
        make_span(
            "call_llm",
            {
                "gen_ai.system": "gcp.vertex.agent",
                "gcp.vertex.agent.session_id": "session-1",
                "gcp.vertex.agent.llm_request": json.dumps(request),
                "gcp.vertex.agent.llm_response": json.dumps(response),
            },
        )
    )
    assert (tool.role, tool.convention, tool.args, tool.result, tool.call_id) == (
        SpanRole.TOOL,
        "genai",
        {"city": "Paris"},
        {"temp_c": 18},
        "adk-1",
    )
    assert llm.role is SpanRole.MODEL and llm.convention == "adk"
    assert llm.input_messages[0].text == "Weather in Paris?"
    assert llm.requested_tool_calls[0].args == {"city": "Paris"}
    assert llm.usage.input_tokens == 30 and llm.conversation_id == "session-1"
    assert llm.tool_definitions[0].single_parameter == "city"


def test_adk_legacy_merged_tool_span(make_span) -> None:
    reading = read_span(
        make_span(
            "execute_tool (merged)",
            {"gcp.vertex.agent.tool_call_args": "N/A", "gen_ai.tool.name": "(merged tools)"},
        )
    )
    assert reading.role is SpanRole.IGNORED


# --- LangGraph ----------------------------------------------------------------------------------


def test_langgraph_node_and_router_through_openllmetry(make_span) -> None:
    metadata = {"langgraph_node": "agent", "langgraph_step": 2}
    node = read_span(
        make_span(
            "agent.task",
            {
                "traceloop.span.kind": "task",
                "traceloop.entity.name": "agent",
                "traceloop.entity.input": json.dumps({"inputs": {}, "metadata": metadata}),
            },
        )
    )
    router = read_span(
        make_span(
            "should_continue.task",
            {
                "traceloop.span.kind": "task",
                "traceloop.entity.name": "should_continue",
                "traceloop.entity.input": json.dumps({"inputs": {}, "metadata": metadata}),
                "traceloop.entity.output": json.dumps({"outputs": "tools", "kwargs": {}}),
            },
        )
    )
    assert (node.role, node.name, node.metadata) == (SpanRole.NODE, "agent", (("langgraph_step", 2),))
    assert (router.role, router.name, router.branch, router.source_node) == (
        SpanRole.CONDITIONAL,
        "should_continue",
        "tools",
        "agent",
    )


def test_a_langgraph_run_is_the_invocation_wherever_it_sits(make_span) -> None:
    server = make_span("POST /chat", {"http.request.method": "POST"})
    graph = make_span(
        "weather_graph",
        {
            "openinference.span.kind": "CHAIN",
            "metadata": '{"ls_integration": "langgraph"}',
            "input.value": "Hi",
        },
        parent=server,
    )
    reading = read_span(graph)
    assert (reading.role, reading.name, reading.input) == (SpanRole.AGENT, "weather_graph", "Hi")


def test_langgraph_parts_inside_a_node_are_read_by_their_own_convention(make_span) -> None:
    reading = read_span(
        make_span(
            "get_weather",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "get_weather",
                "metadata": '{"langgraph_node": "tools"}',
            },
        )
    )
    assert reading.role is SpanRole.TOOL


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("tools", "tools"),
        ('["a", "b"]', ["a", "b"]),
        ('[{"node": "a", "arg": {}}]', ["a"]),
        ("[\"Send(node='a', arg={})\"]", ["a"]),
        ("__end__", "__end__"),
        ('{"messages": []}', None),
        ("line one\nline two", None),
        ("x" * 300, None),
    ],
)
def test_what_counts_as_a_branch(output, expected) -> None:
    assert branch_taken(output) == expected


# --- names and values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "role", "read_name"),
    [
        ("execute_tool lookup", SpanRole.TOOL, "lookup"),
        ("invoke_agent triage", SpanRole.AGENT, "triage"),
        ("agent_run [root_agent]", SpanRole.AGENT, "root_agent"),
        ("chat gpt-4o", SpanRole.MODEL, "gpt-4o"),
        ("call_llm", SpanRole.MODEL, "call_llm"),
        ("invoke_node plan", SpanRole.NODE, "plan"),
        ("search.tool", SpanRole.TOOL, "search"),
        ("handoff to Billing", SpanRole.HANDOFF, "Billing"),
        ("execute_tool (merged)", SpanRole.IGNORED, "execute_tool (merged)"),
    ],
)
def test_span_name_fallbacks(make_span, name, role, read_name) -> None:
    reading = read_span(make_span(name))
    assert (reading.role, reading.name) == (role, read_name)


def test_a_span_nobody_recognises(make_span) -> None:
    assert read_span(make_span("GET /health", {"http.method": "GET"})) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"a": 1}', ({"a": 1}, None)),
        ({"a": 1}, ({"a": 1}, None)),
        ("7", (None, 7)),
        (7.5, (None, 7.5)),
        ("Paris", (None, "Paris")),
        ("", (None, None)),
    ],
)
def test_arguments_arrive_as_json_strings_maps_or_bare_values(value, expected) -> None:
    assert decode_arguments(value) == expected


def test_text_is_found_in_langchain_states_and_request_envelopes() -> None:
    state = {
        "messages": [{"type": "human", "data": {"content": "Q"}}, {"type": "ai", "data": {"content": "A"}}]
    }
    assert text_from(json.dumps(state), "user") == "Q"
    assert text_from(json.dumps(state), "assistant") == "A"
    assert text_from('{"prompt": "Q2", "stream": false}', "user") == "Q2"
    assert text_from('{"final_answer": "A2", "reports": []}', "assistant") == "A2"
    assert text_from('["A", []]', "assistant") is None


def test_python_repr_arguments_are_read_as_literals_never_run() -> None:
    from agenteval_otel.trajectory.messages import decode_arguments

    assert decode_arguments("{'city': 'Paris', 'days': 2}") == ({"city": "Paris", "days": 2}, None)
    assert decode_arguments("{'x': __import__('os').getcwd()}") == (None, "{'x': __import__('os').getcwd()}")
    assert decode_arguments("Paris") == (None, "Paris")


def test_a_final_answer_printed_with_its_role_loses_the_prefix(make_span) -> None:
    from agenteval_otel.trajectory import build_trajectories

    agent = make_span("AgentWorkflow.run", {"openinference.span.kind": "AGENT",
                                            "output.value": "assistant: It is sunny."})
    assert build_trajectories([agent])[0].final_response == "It is sunny."
    kept = make_span("AgentWorkflow.run", {"openinference.span.kind": "AGENT", "output.value": "Note: sunny."})
    assert build_trajectories([kept])[0].final_response == "Note: sunny."


def test_a_model_call_wrapped_by_a_framework_span_is_one_step(make_span) -> None:
    from agenteval_otel.trajectory import StepType, build_trajectories

    llm = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini"}
    agent = make_span("Agent.run", {"openinference.span.kind": "AGENT", "output.value": "Sunny."})
    prepare = make_span("LLM._prepare_chat", llm, parent=agent)
    wrapper = make_span("LLM.astream_chat", llm, parent=agent)
    inner = make_span("LLM.astream_chat", {**llm, "llm.output_messages.0.message.role": "assistant",
                                           "llm.output_messages.0.message.content": "Sunny.",
                                           "llm.token_count.prompt": 5}, parent=wrapper)
    steps = build_trajectories([agent, prepare, wrapper, inner])[0].steps
    assert [(s.step_type, s.span_id) for s in steps] == [(StepType.MESSAGE, inner.span_id)]
