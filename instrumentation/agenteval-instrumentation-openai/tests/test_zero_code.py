"""Instrumenting without touching the client code: ``opentelemetry-instrument python app.py`` (the
distro's configuration, exporting OTLP to a receiver on 127.0.0.1) and ``configure(instrument=...)``;
either way the trajectory is read back from the exported spans."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from agenteval_instrumentation_openai import OpenAIInstrumentor

from agenteval_otel.traces import read_trajectories
from agenteval_otel.traces.receiver import OtlpReceiver
from agenteval_otel.tracing import agent, configure
from agenteval_otel.trajectory import build_trajectories
from agenteval_otel.trajectory.spans import SpanRecord

APP = '''
import json

import openai
from agenteval_otel import agent

TOOLS = [{"type": "function", "function": {"name": "get_weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


@agent(name="weather-app")
def ask(question):
    client = openai.OpenAI(max_retries=0, timeout=5)
    messages = [{"role": "user", "content": question}]
    while True:
        message = client.chat.completions.create(model="local", messages=messages, tools=TOOLS).choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny"})


print(ask("What is the weather in Paris?"))
'''


@pytest.fixture
def receiver() -> Iterator[tuple[OtlpReceiver, list[SpanRecord]]]:
    """Our OTLP/HTTP receiver on 127.0.0.1, and the spans it got."""
    received: list[SpanRecord] = []
    lock = threading.Lock()

    def keep(records: list[SpanRecord]) -> None:
        with lock:
            received.extend(records)

    with OtlpReceiver(keep, http_port=0) as running:
        yield running, received


def test_opentelemetry_instrument_traces_an_unchanged_app(
    tmp_path: Path, server: Any, receiver: tuple[OtlpReceiver, list[SpanRecord]]
) -> None:
    running, records = receiver
    app = tmp_path / "app.py"
    app.write_text(APP)
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(Path.cwd())) if p),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "local",
        "OTEL_SERVICE_NAME": "weather-app",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{running.http_port}/v1/traces",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
    }
    command = [str(Path(sys.executable).with_name("opentelemetry-instrument")), sys.executable, str(app)]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The weather in Paris is sunny."
    assert {r.name for r in records} == {"invoke_agent weather-app", "chat local"}
    (trajectory,) = build_trajectories(records)
    assert [(c.name, c.args, c.result) for c in trajectory.tool_calls()] == [("get_weather", {"city": "Paris"}, "sunny")]
    assert trajectory.final_response == "The weather in Paris is sunny."


def test_configure_instruments_openai_by_name(tmp_path: Path, client: openai.OpenAI, policy: None, tools) -> None:
    traces = tmp_path / "traces.jsonl"
    handle = configure("weather-app", traces_file=traces, set_global=False, capture_content=True,
                       instrument=["openai"])
    try:
        assert [type(i) for i in handle.instrumentors] == [OpenAIInstrumentor]

        @agent(name="weather-app")
        def ask(question: str) -> str | None:
            messages: list[Any] = [{"role": "user", "content": question}]
            while True:
                message = client.chat.completions.create(model="local", messages=messages,
                                                         tools=tools["chat"]).choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    return message.content
                for call in message.tool_calls:
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": "windy"})

        assert ask("Weather in Oslo?") == "The weather in Oslo is windy."
    finally:
        handle.shutdown(timeout=5)
        OpenAIInstrumentor().uninstrument()
    (trajectory,) = read_trajectories([traces]).trajectories
    assert [(c.name, c.args, c.result) for c in trajectory.tool_calls()] == [("get_weather", {"city": "Oslo"}, "windy")]
