"""Generate real DSPy traces (OpenInference instrumentation) with ground truth.

A ``dspy.ReAct`` agent over ``dspy.LM("openai/gpt-4o-mini", api_base=...)`` talks to the scripted
OpenAI-compatible server (``../scripted_openai.py``) on 127.0.0.1, which answers DSPy's ChatAdapter
text fields (ReAct picks one tool per step by text, not through the API's tool calls);
``DSPyInstrumentor`` traces it as a user would set it up, into an OpenTelemetry SDK
``TracerProvider`` whose ``SimpleSpanProcessor`` hands the spans to an exporter that encodes them
with the SDK's own OTLP encoder and writes OTLP/JSON.

The ground truth is recorded by this program: every call the tool functions really receive (their
arguments, result or raised error) and the answer the program returns. Nothing is read back from
the trace. DSPy has no tool call ids. The multi-turn run passes the first turn back as a
``dspy.History`` input (DSPy's conversation history) under one OpenInference session id.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

# no `from __future__ import annotations`: DSPy reads the signature class annotations at run time
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

# keep litellm/DSPy from fetching the model price map over the network: use the bundled copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import OtlpJsonCollector, ToolLog, turn_truth  # noqa: E402
from scripted_openai import serve  # noqa: E402

PRODUCER = (f"openinference-instrumentation-dspy=={version('openinference-instrumentation-dspy')}"
            f" + dspy=={version('dspy')} + litellm=={version('litellm')}")


RECORD = ToolLog()


def get_weather(city: str) -> dict:
    """Get the current weather for a city, e.g. "Paris"."""
    return RECORD.get_weather(city)


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit."""
    return RECORD.celsius_to_fahrenheit(celsius)


def main() -> None:
    import dspy
    from openinference.instrumentation import using_session
    from openinference.instrumentation.dspy import DSPyInstrumentor

    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-dspy-weather"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))
    DSPyInstrumentor().instrument(tracer_provider=provider)
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)

    class WeatherQuestion(dspy.Signature):
        """Answer questions about the weather, using the tools."""

        question: str = dspy.InputField()
        history: dspy.History = dspy.InputField()
        answer: str = dspy.OutputField()

    runs = [("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
            ("run2_parallel", ["What's the weather in London and Tokyo?"]),
            ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
            ("run4_failing_tool", ["What's the weather in Atlantis?"])]
    with serve() as base_url:
        lm = dspy.LM("openai/gpt-4o-mini", api_base=base_url, api_key="not-needed", cache=False)
        dspy.configure(lm=lm)
        for name, prompts in runs:
            agent = dspy.ReAct(WeatherQuestion, tools=[dspy.Tool(get_weather), dspy.Tool(celsius_to_fahrenheit)],
                               max_iters=5)
            collector.take()
            turns = []
            history = dspy.History(messages=[])
            with using_session(f"corpus-{name}"):
                for prompt in prompts:
                    prediction = agent(question=prompt, history=history)
                    turns.append(turn_truth(prompt, RECORD.take(), prediction.answer))  # one tool per step: in order
                    history = dspy.History(messages=[*history.messages,
                                                     {"question": prompt, "answer": prediction.answer}])
            collector.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:400])
    provider.shutdown()


if __name__ == "__main__":
    main()
