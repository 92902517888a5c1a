"""What every corpus generator shares: the SDK spans kept and written as OTLP/JSON through the
SDK's own OTLP encoder, and the tools of the scripted agents (the weather agent's two, the travel
agent's three), which record the ground truth (the calls as the Python functions received them,
their results or errors) outside the trace. ``TRAVEL_TOOLS`` declares the travel tools to a
Chat Completions request, for generators that call the model themselves.

Generators import it from their parent folder, beside ``scripted_openai.py``; it needs only
``opentelemetry-sdk``, ``opentelemetry-exporter-otlp-proto-common`` and ``protobuf``.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from scripted_openai import AIRPORTS, WEATHER, booking, flights

_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def hex_ids(node: Any) -> Any:
    """OTLP/JSON writes trace and span ids as lower-case hex, not protobuf JSON's base64."""
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) and v else hex_ids(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [hex_ids(v) for v in node]
    return node


def otlp_json(message: Any) -> dict[str, Any]:
    """An OTLP protobuf request (spans or logs) as OTLP/JSON."""
    return hex_ids(MessageToDict(message, use_integers_for_enums=True))


def write_trace(path: Path, spans: Sequence[ReadableSpan]) -> None:
    """One request per trace (in order of first span end): a JSON document for one trace, JSON
    lines for several."""
    by_trace: dict[int, list[ReadableSpan]] = {}
    for span in spans:
        by_trace.setdefault(span.context.trace_id, []).append(span)
    requests = [otlp_json(encode_spans(group)) for group in by_trace.values()]
    if len(requests) == 1:
        path.write_text(json.dumps(requests[0], indent=1) + "\n")
    else:
        path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests))


class OtlpJsonCollector(SpanExporter):
    """Keeps the spans the span processor hands over until :meth:`take` or :meth:`write`."""

    def __init__(self) -> None:
        self._spans: list[ReadableSpan] = []
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            self._spans.extend(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def __len__(self) -> int:
        """How many spans are kept (for producers that end their spans on a thread of their own)."""
        with self._lock:
            return len(self._spans)

    def take(self) -> list[ReadableSpan]:
        """The spans kept so far, forgotten here."""
        with self._lock:
            spans, self._spans = self._spans, []
        return spans

    def write(self, path: Path) -> None:
        """Write the spans kept so far (see :func:`write_trace`) and forget them."""
        write_trace(path, self.take())


def weather(city: str) -> dict[str, Any]:
    """What ``get_weather`` returns; a city the script does not know fails."""
    if city not in WEATHER:
        raise ValueError(f"unknown city: {city}")
    return {"city": city, "temp_c": WEATHER[city]}


def _function(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": list(properties)}}}


TRAVEL_TOOLS = [
    _function("search_flights", "Search the flights of a route on some dates.", {
        "route": {"type": "object", "description": "Where from and where to, by city.",
                  "properties": {"from": {"type": "string"}, "to": {"type": "string"}}, "required": ["from", "to"]},
        "dates": {"type": "array", "items": {"type": "string"}, "description": "Dates, YYYY-MM-DD."}}),
    _function("list_airports", "List the airports the agency serves.", {}),
    _function("book", "Book a flight by its id; returns the confirmation.", {"flight_id": {"type": "string"}}),
]
"""The travel agent's tools as Chat Completions ``tools``."""


class ToolLog:
    """The tools' real calls, recorded as they happen: the ground truth."""

    def __init__(self) -> None:
        self._calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def record(self, name: str, args: dict[str, Any], body: Callable[[], Any]) -> Any:
        """Run ``body`` as the call ``name(**args)`` and record its result or its error."""
        entry: dict[str, Any] = {"tool_name": name, "args": dict(args)}
        try:
            entry["result"] = body()
            return entry["result"]
        except Exception as error:
            entry["error"] = f"{type(error).__name__}: {error}"
            raise
        finally:
            with self._lock:
                self._calls.append(entry)

    def get_weather(self, city: str) -> dict[str, Any]:
        return self.record("get_weather", {"city": city}, lambda: weather(city))

    def celsius_to_fahrenheit(self, celsius: float) -> float:
        return self.record("celsius_to_fahrenheit", {"celsius": celsius},
                           lambda: round(celsius * 9 / 5 + 32, 1))

    def search_flights(self, route: dict[str, Any], dates: list[str]) -> list[dict[str, Any]]:
        return self.record("search_flights", {"route": route, "dates": dates}, lambda: flights(route, dates))

    def list_airports(self) -> list[dict[str, Any]]:
        return self.record("list_airports", {}, lambda: [dict(a) for a in AIRPORTS])

    def book(self, flight_id: str) -> str:
        return self.record("book", {"flight_id": flight_id}, lambda: booking(flight_id))

    def take(self) -> list[dict[str, Any]]:
        """The calls recorded so far, forgotten here."""
        with self._lock:
            calls, self._calls = self._calls, []
        return calls


def in_asked_order(
    executed: list[dict[str, Any]], asked: Iterable[tuple[str, dict[str, Any], Any]]
) -> list[dict[str, Any]]:
    """The calls the tools recorded (``ToolLog.take()``; parallel ones in any order), put in the
    order the model asked for them (``(name, args, call_id)``), each with its call id; any call
    not asked for (there should be none) comes last."""
    executed = list(executed)
    detail: list[dict[str, Any]] = []
    for name, args, call_id in asked:
        match = next((c for c in executed if c["tool_name"] == name and c["args"] == args), None)
        if match is not None:
            executed.remove(match)
            detail.append({"tool_name": name, "args": match["args"], "tool_call_id": call_id,
                           **{k: match[k] for k in ("result", "error") if k in match}})
    return detail + executed


def turn_truth(prompt: str, calls: Sequence[dict[str, Any]], final_response: Any) -> dict[str, Any]:
    """One turn's ground truth in the corpus format."""
    return {"user_prompt": prompt,
            "expected_tool_trajectory": [{"tool_name": c["tool_name"], "args": c["args"]} for c in calls],
            "tool_calls_detail": [dict(c) for c in calls],
            "final_response": final_response}
