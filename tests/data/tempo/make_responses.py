"""Writes the Tempo HTTP API responses of this folder from one recorded run of the weather agent.

    python tests/data/tempo/make_responses.py            # the responses, from weather_run.otlp.jsonl
    python tests/data/tempo/make_responses.py --record   # run the agent again first

``weather_run.otlp.jsonl`` is ``examples/weather_agent.py`` run over
``examples/weather_agent.evalset.json``, its spans written by ``OtlpJsonFileExporter`` (OTLP/JSON,
one export request per line). Each of its traces becomes the two bodies Tempo answers for it, as
Tempo's query frontend marshals them with gogo/protobuf's ``jsonpb.Marshaler{}`` (see README.md):

- ``v1/<trace id>.json``: ``GET /api/traces/<id>``, a ``tempopb.Trace`` whose ``resourceSpans``
  is renamed ``batches`` (``tempopb.MarshalToJSONV1``);
- ``v2/<trace id>.json``: ``GET /api/v2/traces/<id>``, a ``tempopb.TraceByIDResponse``
  (``{"trace": ..., "metrics": ...}``);

and ``search.json`` is the ``tempopb.SearchResponse`` of ``GET /api/search?q={}``: every trace,
newest first. What ``jsonpb`` does, and this script with it: field names in lowerCamelCase in the
order of the Go structs; ids (``bytes``) in standard base64; 64-bit integers as decimal strings;
enums by name; fields holding their zero value left out (except inside an ``AnyValue``, a oneof);
no white space; ``<``, ``>`` and ``&`` escaped as ``encoding/json`` does.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RUN = HERE / "weather_run.otlp.jsonl"
KINDS = ("SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT",
         "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER")
STATUS_CODES = ("STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR")


def record() -> None:
    """Run the weather agent over its eval set, its spans to ``weather_run.otlp.jsonl``."""
    root = HERE.parents[2]
    sys.path.insert(0, str(root))
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agenteval_otel import EvalConfig, EvalSet, evaluate
    from agenteval_otel.evaluation import load_agent
    from agenteval_otel.tracing import OtlpJsonFileExporter

    RUN.unlink(missing_ok=True)
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(RUN)))
    examples = root / "examples"
    evaluate(EvalSet.load(examples / "weather_agent.evalset.json"),
             load_agent(f"{examples / 'weather_agent.py'}:weather_agent"),
             EvalConfig.load(examples / "weather_agent.config.json"), tracer_provider=provider).assert_passed()
    provider.shutdown()


# --- jsonpb, as gogo/protobuf writes the tempopb messages -----------------------------------------


def _id(hex_id: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def _double(value: float) -> Any:
    if value != value or value in (float("inf"), float("-inf")):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    return int(value) if value == int(value) and abs(value) < 1e21 else value


def _any_value(value: dict[str, Any]) -> dict[str, Any]:
    """An AnyValue: its one set field, even when it holds a zero value."""
    ((tag, item),) = value.items()
    if tag == "intValue":
        return {tag: str(int(item))}
    if tag == "doubleValue":
        return {tag: _double(float(item))}
    if tag == "arrayValue":
        return {tag: _values([_any_value(v) for v in item.get("values", [])])}
    if tag == "kvlistValue":
        return {tag: _values(_attributes(item.get("values")))}
    return {tag: item}  # stringValue, boolValue, bytesValue (already base64)


def _values(values: list[Any]) -> dict[str, Any]:
    return {"values": values} if values else {}


def _attributes(items: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [{"key": item["key"], **({"value": _any_value(item["value"])} if item.get("value") else {})}
            for item in items or []]


def _set(**fields: Any) -> dict[str, Any]:
    """The fields that hold something other than their zero value, in the order given."""
    return {name: value for name, value in fields.items() if value not in (None, "", 0, [], "0")}


def _span(span: dict[str, Any]) -> dict[str, Any]:
    status = span.get("status") or {}
    code = int(status.get("code") or 0)
    return _set(
        traceId=_id(span["traceId"]),
        spanId=_id(span["spanId"]),
        traceState=span.get("traceState"),
        parentSpanId=_id(span["parentSpanId"]) if span.get("parentSpanId") else None,
        flags=int(span.get("flags") or 0),
        name=span.get("name"),
        kind=KINDS[int(span.get("kind") or 0)] if span.get("kind") else None,
        startTimeUnixNano=str(int(span["startTimeUnixNano"])),
        endTimeUnixNano=str(int(span["endTimeUnixNano"])),
        attributes=_attributes(span.get("attributes")),
        droppedAttributesCount=int(span.get("droppedAttributesCount") or 0),
        events=[_set(timeUnixNano=str(int(e["timeUnixNano"])), name=e.get("name"),
                     attributes=_attributes(e.get("attributes")),
                     droppedAttributesCount=int(e.get("droppedAttributesCount") or 0))
                for e in span.get("events") or []],
        droppedEventsCount=int(span.get("droppedEventsCount") or 0),
        links=[_set(traceId=_id(link["traceId"]), spanId=_id(link["spanId"]), traceState=link.get("traceState"),
                    attributes=_attributes(link.get("attributes")),
                    droppedAttributesCount=int(link.get("droppedAttributesCount") or 0),
                    flags=int(link.get("flags") or 0))
               for link in span.get("links") or []],
        droppedLinksCount=int(span.get("droppedLinksCount") or 0),
    ) | {"status": _set(message=status.get("message"), code=STATUS_CODES[code] if code else None)}


def _marshal(message: dict[str, Any]) -> str:
    """Compact JSON as Go's ``encoding/json`` writes it inside ``jsonpb``: UTF-8 kept, ``<``,
    ``>``, ``&``, U+2028 and U+2029 escaped (they only occur inside strings)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


# --- the run's traces, grouped as Tempo returns them ----------------------------------------------


def _requests() -> Iterator[dict[str, Any]]:
    with RUN.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def traces() -> dict[str, list[dict[str, Any]]]:
    """Each trace's ``resourceSpans``: its spans grouped by resource, then scope, in file order."""
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    for request in _requests():
        for resource_spans in request["resourceSpans"]:
            resource_key = json.dumps(resource_spans.get("resource"), sort_keys=True)
            for scope_spans in resource_spans["scopeSpans"]:
                scope_key = json.dumps(scope_spans.get("scope"), sort_keys=True)
                for span in scope_spans["spans"]:
                    by_resource = groups.setdefault(span["traceId"], {})
                    group = by_resource.setdefault(resource_key, {"resource": resource_spans.get("resource"),
                                                                  "scopes": {}})
                    scoped = group["scopes"].setdefault(scope_key, {"scope": scope_spans.get("scope"), "spans": []})
                    scoped["spans"].append(span)
    found: dict[str, list[dict[str, Any]]] = {}
    for trace_id, by_resource in groups.items():
        found[trace_id] = [
            _set(resource=_set(attributes=_attributes((group["resource"] or {}).get("attributes"))),
                 scopeSpans=[_set(scope=_set(name=s["scope"].get("name"), version=s["scope"].get("version")),
                                  spans=[_span(span) for span in s["spans"]])
                             for s in group["scopes"].values()])
            for group in by_resource.values()]
    return found


def _spans(resource_spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [span for group in resource_spans for scoped in group["scopeSpans"] for span in scoped["spans"]]


def search_response(all_traces: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The ``SearchResponse`` of ``{}`` over every trace: newest first, three spans per span set."""
    found = []
    for trace_id, resource_spans in all_traces.items():
        spans = _spans(resource_spans)
        start = min(int(s["startTimeUnixNano"]) for s in spans)
        end = max(int(s["endTimeUnixNano"]) for s in spans)
        root = next(s for s in spans if "parentSpanId" not in s)
        service = next(a["value"]["stringValue"] for a in resource_spans[0]["resource"]["attributes"]
                       if a["key"] == "service.name")
        errors = sum(1 for s in spans if s["status"].get("code") == "STATUS_CODE_ERROR")
        span_set = {"spans": [_set(spanID=base64.b64decode(s["spanId"]).hex(), name=s["name"],
                                   startTimeUnixNano=s["startTimeUnixNano"],
                                   durationNanos=str(int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])))
                              for s in spans[:3]], "matched": len(spans)}
        found.append(_set(traceID=trace_id.lstrip("0"), rootServiceName=service, rootTraceName=root["name"],
                          startTimeUnixNano=str(start), durationMs=(end - start) // 1_000_000,
                          spanSet=span_set, spanSets=[span_set],
                          serviceStats={service: _set(spanCount=len(spans), errorCount=errors)}))
    found.sort(key=lambda t: int(t["startTimeUnixNano"]), reverse=True)
    return {"traces": found, "metrics": {"inspectedTraces": len(found), "inspectedBytes": "48213",
                                         "completedJobs": 1, "totalJobs": 1}}


def main() -> None:
    if "--record" in sys.argv[1:] or not RUN.exists():
        record()
    all_traces = traces()
    for version in ("v1", "v2"):
        (HERE / version).mkdir(exist_ok=True)
        for old in (HERE / version).glob("*.json"):
            old.unlink()
    for trace_id, resource_spans in all_traces.items():
        trace = {"resourceSpans": resource_spans}
        v1 = _marshal(trace).replace('"resourceSpans":', '"batches":', 1)
        (HERE / "v1" / f"{trace_id}.json").write_text(v1, encoding="utf-8")
        v2 = _marshal({"trace": trace, "metrics": {"inspectedBytes": str(len(v1.encode()))}})
        (HERE / "v2" / f"{trace_id}.json").write_text(v2, encoding="utf-8")
    (HERE / "search.json").write_text(_marshal(search_response(all_traces)), encoding="utf-8")


if __name__ == "__main__":
    main()
