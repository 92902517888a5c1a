"""``OtlpJsonLogFileExporter``: SDK log records appended to a file as OTLP/JSON lines.

The logs counterpart of ``OtlpJsonFileExporter``: each export writes one OTLP/JSON
``ExportLogsServiceRequest`` (``resourceLogs`` → ``scopeLogs`` → ``logRecords``) on one line, with
the same value encoding, which ``agenteval_otel.traces`` reads back (``read_logs``, and trace files
given with their log files). Log records go to their own file beside the spans' one:
:func:`logs_file_for` names it.

>>> logs_file_for("runs/agenteval-traces.jsonl").as_posix()
'runs/agenteval-traces.logs.jsonl'
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult

from agenteval_otel.tracing.file_export import _LineFile, encode_any_value, encode_attributes

__all__ = ["OtlpJsonLogFileExporter", "logs_file_for"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

LOGS_SUFFIX = ".logs.jsonl"


def logs_file_for(traces_file: str | os.PathLike[str]) -> Path:
    """The log file beside a traces file: ``x.jsonl`` / ``x.json`` / ``x`` → ``x.logs.jsonl``."""
    path = Path(traces_file)
    stem = path.name[: -len(path.suffix)] if path.suffix in (".jsonl", ".json") else path.name
    return path.with_name(stem + LOGS_SUFFIX)


def _log_record(item: ReadableLogRecord) -> dict[str, Any]:
    """One OTLP/JSON ``LogRecord``."""
    record = item.log_record
    encoded: dict[str, Any] = {}
    if record.timestamp:
        encoded["timeUnixNano"] = str(record.timestamp)
    if record.observed_timestamp:
        encoded["observedTimeUnixNano"] = str(record.observed_timestamp)
    if record.severity_number is not None:
        encoded["severityNumber"] = record.severity_number.value
    if record.severity_text:
        encoded["severityText"] = record.severity_text
    if record.event_name:
        encoded["eventName"] = record.event_name
    if record.body is not None:
        encoded["body"] = encode_any_value(record.body)
    if record.attributes:
        encoded["attributes"] = encode_attributes(record.attributes)
    if record.trace_id:
        encoded["traceId"] = format(record.trace_id, "032x")
    if record.span_id:
        encoded["spanId"] = format(record.span_id, "016x")
    if record.trace_flags is not None:
        encoded["flags"] = int(record.trace_flags)
    return encoded


def _request_line(records: Sequence[ReadableLogRecord]) -> bytes:
    """One ``ExportLogsServiceRequest`` holding ``records``, grouped by resource and scope."""
    groups: dict[int, tuple[Any, dict[tuple[str | None, str | None], list[dict[str, Any]]]]] = {}
    for item in records:
        resource = item.resource
        group = groups.setdefault(id(resource), (resource, {}))
        scope = item.instrumentation_scope
        key = (scope.name, scope.version) if scope is not None else (None, None)
        group[1].setdefault(key, []).append(_log_record(item))
    resource_logs = []
    for resource, scopes in groups.values():
        scope_logs = []
        for (name, version), encoded in scopes.items():
            scope_fields = {k: v for k, v in (("name", name), ("version", version)) if v}
            scope_logs.append({"scope": scope_fields, "logRecords": encoded})
        attributes = encode_attributes(resource.attributes) if resource is not None else []
        resource_logs.append({"resource": {"attributes": attributes}, "scopeLogs": scope_logs})
    return orjson.dumps({"resourceLogs": resource_logs}, option=orjson.OPT_APPEND_NEWLINE, default=str)


class OtlpJsonLogFileExporter(LogRecordExporter):
    """An SDK ``LogRecordExporter`` appending one OTLP/JSON logs request per export, one per line.

    Thread-safe; each export is flushed; ``export`` never raises (a failure is logged and returns
    ``FAILURE``); ``shutdown`` closes the file and may be called more than once. The file is
    opened for appending when the exporter is created, so a bad path fails there with ``OSError``.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file = _LineFile(self.path, "OtlpJsonLogFileExporter")

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        """Append ``batch`` as one line; ``FAILURE`` (logged) if it cannot be written."""
        try:
            if not batch:
                return LogRecordExportResult.SUCCESS
            if self._file.append(_request_line(batch)):
                return LogRecordExportResult.SUCCESS
            logger.debug("OtlpJsonLogFileExporter(%s): export after shutdown dropped", self.path)
            return LogRecordExportResult.FAILURE
        except Exception:
            logger.exception("OtlpJsonLogFileExporter(%s): failed to write %d record(s)", self.path, len(batch))
            return LogRecordExportResult.FAILURE

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Every export is already flushed: whether the file is still open."""
        return self._file.flush()

    def shutdown(self) -> None:
        """Close the file; later exports fail. Idempotent."""
        self._file.close()
