"""Generate real MLflow 3 traces, exported over OTLP, with ground truth.

A travel-booking agent written in plain Python, traced the way MLflow's documentation sets up a
custom agent: the agent function is ``@mlflow.trace(span_type=SpanType.AGENT)``, each tool
``@mlflow.trace(span_type=SpanType.TOOL)``, and the model calls go through the ``openai`` client
(its ``base_url`` the scripted OpenAI-compatible server, ``../scripted_openai.py``, scenario
``travel``, on 127.0.0.1) traced by ``mlflow.openai.autolog()``. Run2's model calls are streamed
(``stream=True``), the others are not.

Export: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (with ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=
http/protobuf``) points MLflow at a small OTLP/HTTP receiver started here on 127.0.0.1; MLflow
then sends its spans there instead of to a tracking server (no tracking server is used). The
receiver keeps every request body as MLflow sent it and writes it as OTLP/JSON
(``corpus_kit.otlp_json``), one request per line.

The ground truth is recorded by this program: every call the tool functions really receive
(``corpus_kit.ToolLog``), the call ids and order of the model's ``tool_calls``, and the text of
the model's last reply. Nothing is read back from the trace. A failed tool is reported to the
model as the tool message ``Error: <message>``. The two-turn run keeps one message list and
gives both turns one session id (``mlflow.update_current_trace(session_id=...)``).

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import TRAVEL_TOOLS, ToolLog, in_asked_order, otlp_json, turn_truth  # noqa: E402
from scripted_openai import TRAVEL_RUNS, serve  # noqa: E402

PRODUCER = f"mlflow-tracing=={version('mlflow-tracing')} + openai=={version('openai')} (OTLP export)"
RECORD = ToolLog()
SYSTEM = "You are a travel agent. Use the tools to search and book flights."
STREAMED = {"run2_parallel"}


class Receiver:
    """An OTLP/HTTP (protobuf) trace receiver on 127.0.0.1 that keeps the requests it is sent."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                with receiver._lock:
                    receiver.requests.append(request)
                data = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @contextmanager
    def running(self) -> Iterator[str]:
        """Serve for the block; yields the traces endpoint."""
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        finally:
            self.server.shutdown()
            self.server.server_close()

    def write(self, path: Path) -> None:
        """Write the requests kept so far, one OTLP/JSON document per line, and forget them."""
        with self._lock:
            requests, self.requests = self.requests, []
        path.write_text("".join(json.dumps(otlp_json(r), separators=(",", ":")) + "\n"
                                for r in requests))


def main() -> None:
    receiver = Receiver()
    with receiver.running() as endpoint, serve("travel") as base_url:
        os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = endpoint
        os.environ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/protobuf"
        os.environ["OTEL_SERVICE_NAME"] = "corpus-mlflow-travel"
        # without a tracking URI, mlflow-tracing probes for a default one and fails importing its
        # file store (sqlparse is not among its dependencies): name a local file store, never written
        os.environ["MLFLOW_TRACKING_URI"] = (Path(tempfile.mkdtemp()) / "mlruns").as_uri()

        import mlflow
        import openai
        from mlflow.entities import SpanType
        from mlflow.tracing.provider import provider

        mlflow.openai.autolog()
        client = openai.OpenAI(base_url=base_url, api_key="not-needed")

        @mlflow.trace(span_type=SpanType.TOOL)
        def search_flights(route: dict[str, str], dates: list[str]) -> list[dict[str, Any]]:
            """Search the flights of a route on some dates."""
            return RECORD.search_flights(route, dates)

        @mlflow.trace(span_type=SpanType.TOOL)
        def list_airports() -> list[dict[str, Any]]:
            """List the airports the agency serves."""
            return RECORD.list_airports()

        @mlflow.trace(span_type=SpanType.TOOL)
        def book(flight_id: str) -> str:
            """Book a flight by its id; returns the confirmation."""
            return RECORD.book(flight_id)

        tools = {"search_flights": search_flights, "list_airports": list_airports, "book": book}

        def complete(messages: list[dict[str, Any]], stream: bool) -> tuple[str | None, list[dict[str, Any]]]:
            """One model call: the reply's text and tool calls (assembled from the chunks when streamed)."""
            if not stream:
                message = client.chat.completions.create(
                    model="gpt-4o-mini", messages=messages, tools=TRAVEL_TOOLS).choices[0].message
                return message.content, [c.model_dump() for c in message.tool_calls or []]
            text, calls = "", {}
            for chunk in client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TRAVEL_TOOLS,
                                                        stream=True, stream_options={"include_usage": True}):
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    for delta in choice.delta.tool_calls or []:
                        call = calls.setdefault(delta.index, {"id": delta.id, "type": "function",
                                                              "function": {"name": "", "arguments": ""}})
                        call["function"]["name"] += delta.function.name or ""
                        call["function"]["arguments"] += delta.function.arguments or ""
            return text or None, [calls[i] for i in sorted(calls)]

        def travel_agent(question: str, messages: list[dict[str, Any]], session: str | None,
                         stream: bool) -> tuple[str | None, list[tuple[str, dict[str, Any], str]]]:
            if session is not None:
                mlflow.update_current_trace(session_id=session)
            messages.append({"role": "user", "content": question})
            asked: list[tuple[str, dict[str, Any], str]] = []
            for _ in range(9):
                text, calls = complete(messages, stream)
                messages.append({"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})})
                if not calls:
                    return text, asked
                for call in calls:
                    args = json.loads(call["function"]["arguments"] or "{}")
                    asked.append((call["function"]["name"], args, call["id"]))
                    try:
                        result = tools[call["function"]["name"]](**args)
                        content = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
                    except Exception as error:  # the tool failed: the model is told, and carries on
                        content = f"Error: {error}"
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
            raise RuntimeError(f"no answer to {question!r} after 9 model calls")

        run: dict[str, Any] = {}  # the run under way: its message list, session, streaming, turns

        @mlflow.trace(name="travel_agent", span_type=SpanType.AGENT)
        def agent(question: str) -> str | None:
            answer, asked = travel_agent(question, run["messages"], run["session"], run["stream"])
            run["turns"].append(turn_truth(question, in_asked_order(RECORD.take(), asked), answer))
            return answer

        for name, prompts in TRAVEL_RUNS.items():
            run.update(messages=[{"role": "system", "content": SYSTEM}], turns=[], stream=name in STREAMED,
                       session=f"corpus-{name}" if len(prompts) > 1 else None)
            for prompt in prompts:
                agent(prompt)
            provider.get().force_flush()
            receiver.write(HERE / f"{name}.otlp.json")
            turns = run["turns"]
            doc: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            doc = {**doc, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
            print(name, json.dumps(doc, ensure_ascii=False)[:300])

if __name__ == "__main__":
    main()
