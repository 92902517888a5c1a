"""OTLP/JSON log files: read whole or line by line; bad ones named precisely."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces.files import is_logs_file, read_logs
from agenteval_otel.traces.otlp_logs import iter_log_records, read_otlp_logs

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus" / "openai_v2_events"


def _request(*records: dict) -> dict:
    return {"resourceLogs": [{"scopeLogs": [{"logRecords": list(records)}]}]}


RECORD = {"traceId": "5B8EFFF798038103D269B633813FC60C", "spanId": "eee19b7ec3c1b174", "timeUnixNano": "7",
          "body": {"stringValue": "hello"}, "attributes": [{"key": "event.name", "value": {"stringValue": "x"}}]}


def test_real_log_files_from_an_instrumentation() -> None:
    path = CORPUS / "run1_sequential_two_tools.logs.json"
    records = read_otlp_logs(path)
    assert is_logs_file(path) and not is_logs_file(CORPUS / "run1_sequential_two_tools.otlp.json")
    assert {r.name for r in records} >= {"gen_ai.user.message", "gen_ai.choice"}
    assert all(r.trace_id and r.span_id for r in records)


def test_one_request_per_line_and_lists_of_requests(tmp_path: Path) -> None:
    lines = tmp_path / "logs.jsonl"
    lines.write_text(json.dumps(_request(RECORD)) + "\n\n" + json.dumps(_request(RECORD, RECORD)) + "\n")
    listed = tmp_path / "logs.json"
    listed.write_text(json.dumps([_request(RECORD), _request()]))
    assert len(read_logs([lines])) == 3 and len(read_otlp_logs(listed)) == 1
    record = read_otlp_logs(listed)[0]
    assert (record.trace_id, record.span_id, record.body, record.name, record.time_ns) == (
        "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174", "hello", "x", 7)


@pytest.mark.promise(13)
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "the file is empty"),
        ('{"resourceLogs": []}\n{"resourceLogs": [\n', "line 2: invalid JSON"),
        ('{"resourceSpans": []}', "expected an object with resourceLogs"),
        (json.dumps(_request({**RECORD, "spanId": "not-an-id!"})), "logRecords[0]"),
        (json.dumps({"resourceLogs": [{"scopeLogs": "x"}]}), "resourceLogs[0].scopeLogs: expected a list"),
    ],
)
def test_bad_files_are_named_with_what_is_wrong(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(TraceReadError, match="bad.json") as raised:
        read_otlp_logs(path)
    assert expected in str(raised.value)


def test_the_walk_hands_bad_records_to_its_hook_and_reads_the_others() -> None:
    request = _request(RECORD, {**RECORD, "spanId": "not-an-id!"}, "not a record", RECORD)
    errors: list[ValueError] = []
    assert len(list(iter_log_records(request, on_bad_record=errors.append))) == 2
    assert [str(e).split(":")[0] for e in errors] == [
        "resourceLogs[0].scopeLogs[0].logRecords[1].spanId", "resourceLogs[0].scopeLogs[0].logRecords[2]"]
    with pytest.raises(ValueError, match=r"logRecords\[1\]\.spanId"):
        list(iter_log_records(request))


def test_a_resource_or_scope_without_records_holds_none() -> None:
    assert list(iter_log_records({"resourceLogs": [{"resource": {}}, {"scopeLogs": [{"scope": {}}]}]})) == []
