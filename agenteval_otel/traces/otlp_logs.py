"""OTLP/JSON log files: the log records that carry GenAI content beside the spans.

The format is the OTLP/JSON encoding of ``ExportLogsServiceRequest`` (``resourceLogs`` →
``scopeLogs`` → ``logRecords``), one request per file or one per line (the OpenTelemetry
Collector's file exporter writes logs that way beside traces). Records are read whole (log files
are small next to trace files) and joined to their spans with
``agenteval_otel.trajectory.logs.attach_logs``. ``iter_log_records`` is the one walk of the
envelope, for these files and for the OTLP receiver.

>>> request = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{
...     "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
...     "eventName": "gen_ai.user.message", "body": {"kvlistValue": {"values": [
...         {"key": "content", "value": {"stringValue": "Hi"}}]}}}]}]}]}
>>> [(r.event_name, r.body) for r in log_records_from_request(request)]
[('gen_ai.user.message', {'content': 'Hi'})]
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces._json_shapes import item_at, list_at
from agenteval_otel.traces.otlp_json import _get, _id, _int64, decode_any_value, decode_attributes
from agenteval_otel.traces.trace_file import OnBadItem
from agenteval_otel.trajectory.logs import LogRecord

__all__ = ["is_logs_request", "iter_log_records", "log_records_from_request", "read_otlp_logs"]

EXPECTED = "OTLP/JSON logs (an ExportLogsServiceRequest with resourceLogs, or one per line)"


def is_logs_request(doc: Any) -> bool:
    """Whether ``doc`` is an OTLP/JSON logs request (``resourceLogs``)."""
    return isinstance(doc, Mapping) and _get(doc, "resourceLogs", "resource_logs") is not None


def _record(item: Any, path: str) -> LogRecord:
    if not isinstance(item, Mapping):
        raise ValueError(f"{path}: expected a log record object")
    body = item.get("body")
    time = _get(item, "timeUnixNano", "time_unix_nano") or _get(item, "observedTimeUnixNano", "observed_time_unix_nano")
    return LogRecord(
        trace_id=_id(_get(item, "traceId", "trace_id"), f"{path}.traceId", trace=True),
        span_id=_id(_get(item, "spanId", "span_id"), f"{path}.spanId", trace=False),
        event_name=str(_get(item, "eventName", "event_name") or ""),
        body=None if body is None else decode_any_value(body, f"{path}.body"),
        attributes=decode_attributes(item.get("attributes"), f"{path}.attributes"),
        time_ns=_int64(time, f"{path}.timeUnixNano"),
    )


def iter_log_records(
    doc: Mapping[str, Any], *, path: str = "", on_bad_record: OnBadItem | None = None
) -> Iterator[LogRecord]:
    """The log records of one OTLP/JSON ``ExportLogsServiceRequest``, in order: the one walk of
    its envelope, ``resourceLogs`` → ``scopeLogs`` → ``logRecords``. ``path`` prefixes the JSON
    paths in errors.

    A record that cannot be read raises ``ValueError`` naming its JSON path, or, given
    ``on_bad_record``, is handed to it as that error and left out. An envelope that cannot be read
    (a list or object of the wrong type) always raises ``ValueError`` naming where.
    """
    prefix = f"{path}." if path else ""
    groups = list_at(_get(doc, "resourceLogs", "resource_logs"), f"{prefix}resourceLogs")
    for r, group in enumerate(groups):
        r_path = f"{prefix}resourceLogs[{r}]"
        scopes = list_at(_get(item_at(group, r_path), "scopeLogs", "scope_logs"), f"{r_path}.scopeLogs")
        for s, scoped in enumerate(scopes):
            s_path = f"{r_path}.scopeLogs[{s}]"
            items = list_at(_get(item_at(scoped, s_path), "logRecords", "log_records"), f"{s_path}.logRecords")
            for i, item in enumerate(items):
                try:
                    record = _record(item, f"{s_path}.logRecords[{i}]")
                except ValueError as error:
                    if on_bad_record is None:
                        raise
                    on_bad_record(error)
                    continue
                yield record


def log_records_from_request(doc: Any, path: str = "") -> list[LogRecord]:
    """The log records of one OTLP/JSON logs request (or of a JSON list of them); ``ValueError``
    naming the JSON path of a malformed field (or when ``doc`` is no logs request)."""
    if isinstance(doc, list):
        return [record for i, item in enumerate(doc) for record in log_records_from_request(item, f"{path}[{i}]")]
    if not is_logs_request(doc):
        raise ValueError(f"{path or 'document'}: expected an object with resourceLogs")
    return list(iter_log_records(doc, path=path))


def read_otlp_logs(path: str | os.PathLike[str]) -> list[LogRecord]:
    """Every log record of an OTLP/JSON logs file (one request, or one per line).

    Raises ``TraceReadError`` naming the file, the line and the JSON path of what is wrong.
    """
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise TraceReadError(f"{file}: cannot read ({exc.strerror or exc}); expected {EXPECTED}") from exc
    if not data.strip():
        raise TraceReadError(f"{file}: the file is empty; expected {EXPECTED}")
    documents: list[tuple[int | None, Any]]
    try:
        documents = [(None, orjson.loads(data))]
    except orjson.JSONDecodeError:
        documents = []
        for line_number, line in enumerate(data.splitlines(), start=1):
            if line.strip():
                try:
                    documents.append((line_number, orjson.loads(line)))
                except orjson.JSONDecodeError as exc:
                    raise TraceReadError(
                        f"{file}: line {line_number}: invalid JSON ({exc}); expected {EXPECTED}") from None
    records: list[LogRecord] = []
    for number, doc in documents:
        where = f"{file}: line {number}" if number is not None else str(file)
        try:
            records += log_records_from_request(doc)
        except (ValueError, TypeError) as exc:
            raise TraceReadError(f"{where}: {exc}; expected {EXPECTED}") from None
    return records
