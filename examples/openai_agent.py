"""An agent written against the bare ``openai`` client, looping over the model's tool calls, traced
by agenteval-instrumentation-openai alone: no decorator on the model call or the tool, yet its
trace yields the tool trajectory (the calls the model asked for, the results sent back).

Needs ``pip install -e . -e instrumentation/agenteval-instrumentation-openai``. With no API key,
against the local scripted model of ``openai_server.py``:

    python examples/openai_server.py &                 # prints its base URL
    OPENAI_BASE_URL=<that URL> OPENAI_API_KEY=local python examples/openai_agent.py "What is the weather in Paris?"

Against the OpenAI API: ``OPENAI_API_KEY=sk-... python examples/openai_agent.py`` (model
``OPENAI_MODEL``, default ``gpt-4o-mini``). The spans go to ``agenteval-traces.jsonl`` (or to
``OTEL_EXPORTER_OTLP_ENDPOINT``); score them with ``agenteval eval
examples/openai_agent.evalset.json --traces agenteval-traces.jsonl --config
examples/openai_agent.config.json``, or run and score live with ``agenteval run
examples/openai_agent.evalset.json --agent examples/openai_agent.py:weather_agent --config
examples/openai_agent.config.json``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import openai
from agenteval_instrumentation_openai import OpenAIInstrumentor

from agenteval_otel import agent, configure

WEATHER = {"Paris": "sunny, 21 °C", "Tokyo": "rainy, 17 °C", "London": "cloudy, 14 °C"}
TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Today's weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}]
MAX_TURNS = 5

OpenAIInstrumentor().instrument(capture_content=True)  # the model calls, with their messages


def get_weather(city: str) -> str:
    """Today's weather (canned data)."""
    return WEATHER.get(city, "unknown")


@agent(name="openai-weather-agent")
def weather_agent(question: str) -> str:
    """Ask the model; run the tools it calls and send their results back until it answers."""
    client = openai.OpenAI(max_retries=1, timeout=30)
    model = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")
    messages: list[Any] = [
        {"role": "system", "content": "Answer weather questions with the get_weather tool, in one sentence."},
        {"role": "user", "content": question},
    ]
    for _ in range(MAX_TURNS):
        message = client.chat.completions.create(model=model, messages=messages, tools=TOOLS).choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content or ""
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments or "{}")
            result = get_weather(**arguments) if call.function.name == "get_weather" else "unknown tool"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return "I could not answer in time."


if __name__ == "__main__":
    handle = configure("openai-weather-agent")
    print(weather_agent(" ".join(sys.argv[1:]) or "What is the weather in Paris?"))
    handle.shutdown()
