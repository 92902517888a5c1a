"""Decoding export requests as the receiver gets them: bad items are rejected alone, a bad
envelope is an error naming where."""

from __future__ import annotations

import orjson
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from agenteval_otel.traces.otlp_export import decode_logs_export, decode_trace_export

TRACE_ID = "5b8efff798038103d269b633813fc60c"
SPAN_ID = "eee19b7ec3c1b174"


def test_json_log_records_with_bad_ids_are_rejected_alone() -> None:
    body = orjson.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"traceId": TRACE_ID, "spanId": SPAN_ID, "eventName": "gen_ai.choice",
         "body": {"stringValue": "Sunny"}},
        {"traceId": "not-hex", "spanId": SPAN_ID}]}]}]})
    batch = decode_logs_export(body, "json")
    assert [(r.trace_id, r.event_name, r.body) for r in batch.items] == [(TRACE_ID, "gen_ai.choice", "Sunny")]
    assert batch.rejected == 1
    assert batch.error_message.startswith("rejected 1: resourceLogs[0].scopeLogs[0].logRecords[1].traceId")


def test_protobuf_log_records_keep_their_span_and_reject_wrong_length_ids() -> None:
    request = ExportLogsServiceRequest()
    records = request.resource_logs.add().scope_logs.add().log_records
    kept = records.add(trace_id=bytes.fromhex(TRACE_ID), span_id=bytes.fromhex(SPAN_ID), event_name="e",
                       time_unix_nano=7)
    kept.body.kvlist_value.values.add(key="content", value={"string_value": "Hi"})
    records.add(trace_id=b"\x01\x02", span_id=bytes.fromhex(SPAN_ID))
    batch = decode_logs_export(request.SerializeToString(), "proto")
    assert [(r.trace_id, r.span_id, r.body, r.time_ns) for r in batch.items] == [
        (TRACE_ID, SPAN_ID, {"content": "Hi"}, 7)]
    assert batch.rejected == 1 and "16-byte id" in batch.error_message


def test_many_rejections_keep_a_short_message() -> None:
    spans = [{"traceId": TRACE_ID, "spanId": "", "name": str(i)} for i in range(10)]
    batch = decode_trace_export(orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}), "json")
    assert batch.rejected == 10 and batch.error_message.endswith("(and 7 more)")


@pytest.mark.parametrize(("body", "expected"), [
    (b'{"resourceLogs": 3}', "resourceLogs: expected a list"),
    (b'{"resourceLogs": [{"scopeLogs": [{"logRecords": {}}]}]}', "resourceLogs[0].scopeLogs[0].logRecords"),
    (b"nope", "invalid JSON"),
])
def test_a_bad_envelope_is_an_error_naming_where(body: bytes, expected: str) -> None:
    with pytest.raises(ValueError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        decode_logs_export(body, "json")


def test_an_empty_body_is_an_empty_request() -> None:
    assert decode_trace_export(b"", "json").items == [] and decode_trace_export(b"", "proto").items == []
