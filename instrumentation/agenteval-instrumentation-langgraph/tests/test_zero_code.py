"""Instrumenting LangGraph without touching the graph's code: ``opentelemetry-instrument python
app.py`` (the distro's configuration, exporting OTLP/HTTP to our receiver on 127.0.0.1) and
``configure(instrument=[...])``; either way the trajectory is read back from the exported spans."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from agenteval_instrumentation_langgraph import LangGraphInstrumentor
from sample_graphs import router_graph

from agenteval_otel.traces import read_trajectories
from agenteval_otel.traces.receiver import OtlpReceiver
from agenteval_otel.tracing import configure
from agenteval_otel.trajectory import build_trajectories
from agenteval_otel.trajectory.spans import SpanRecord

APP = '''
import sys

sys.path.insert(0, sys.argv[1])
from sample_graphs import router_graph

state = router_graph().invoke({"question": "Weather today?", "answer": "", "log": []},
                              {"configurable": {"thread_id": "thread-9"}})
print(state["answer"])
'''


def test_opentelemetry_instrument_traces_an_unchanged_graph(tmp_path: Path) -> None:
    received: list[SpanRecord] = []
    lock = threading.Lock()

    def keep(records: list[SpanRecord]) -> None:
        with lock:
            received.extend(records)

    app = tmp_path / "app.py"
    app.write_text(APP)
    with OtlpReceiver(keep, http_port=0) as receiver:
        environment = {
            **os.environ,
            "OTEL_SERVICE_NAME": "router-app",
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{receiver.http_port}/v1/traces",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_LOGS_EXPORTER": "none",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
        }
        command = [str(Path(sys.executable).with_name("opentelemetry-instrument")), sys.executable, str(app),
                   str(Path(__file__).parent)]
        done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "It is sunny."
    (trajectory,) = build_trajectories(received)
    assert (trajectory.agent_name, trajectory.conversation_id) == ("router", "thread-9")
    assert trajectory.node_order() == ["classify", "weather"]
    assert trajectory.branches() == [("is_weather", "weather")]
    assert trajectory.final_response == "It is sunny."


def test_configure_instruments_langgraph_by_name(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    handle = configure("router-app", traces_file=traces, set_global=False, instrument=["langgraph"])
    try:
        assert [type(i) for i in handle.instrumentors] == [LangGraphInstrumentor]
        router_graph().invoke({"question": "Hi there", "answer": "", "log": []})
    finally:
        handle.shutdown(timeout=5)
        LangGraphInstrumentor().uninstrument()
    (trajectory,) = read_trajectories([traces]).trajectories
    assert trajectory.node_order() == ["classify", "smalltalk"]
    assert trajectory.branches() == [("is_weather", "smalltalk")]
