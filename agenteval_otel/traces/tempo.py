"""``TempoSource``: the traces a TraceQL query finds in Grafana Tempo, read over its HTTP API.

``TempoClient`` searches (``GET /api/search?q=...&start=...&end=...&limit=...``, times in epoch
seconds) and reads each trace found by its id: ``GET /api/v2/traces/{id}`` (Tempo 2.6 and later,
``{"trace": {"resourceSpans": [...]}}``, with ``"status": "PARTIAL"`` when Tempo cut the trace at
its size limit), or, when that route answers 404 (Tempo before 2.6), ``GET /api/traces/{id}``
(``{"batches": [...]}``). Tempo writes traces as protobuf JSON (base64 ids, 64-bit integers as
strings, enums by name), which the one OTLP/JSON walk reads. The HTTP goes through a
``Transport``: ``UrllibTransport`` (one deadline per request, a body size limit) by default.

Credentials: ``token`` (default: the ``TEMPO_AUTH_TOKEN`` environment variable) goes as
``Authorization: Bearer``; a user and password in the URL (Grafana Cloud: the stack's user id and
an access token) as basic auth; ``tenant`` (default: ``TEMPO_TENANT``) as ``X-Scope-OrgID``.
No message shows a credential.

>>> from agenteval_otel.traces import HttpResponse, MockTransport
>>> def tempo(request: HttpRequest) -> HttpResponse:
...     if "/api/search" in request.url:
...         return HttpResponse(200, b'{"traces": [{"traceID": "2be38093ead7a083"}], "metrics": {}}')
...     span = {"traceId": "AAAAAAAAAAAr44CT6teggw==", "spanId": "fBx8HHwcfBw=", "name": "invoke_agent"}
...     return HttpResponse(200, orjson.dumps({"trace": {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}}))
>>> client = TempoClient("http://tempo:3200", transport=MockTransport(tempo))
>>> [[record.name for record in client.get_trace(trace_id)] for trace_id in client.search()]
[['invoke_agent']]
"""

from __future__ import annotations

import base64
import logging
import math
import os
import time
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson

from agenteval_otel.errors import ConfigError, TraceReadError, mask_url, redact_secrets
from agenteval_otel.traces._json_shapes import json_type
from agenteval_otel.traces._jsonfile import MALFORMED, malformed_reason
from agenteval_otel.traces.jaeger_client import (
    DEFAULT_MAX_BODY_BYTES,
    HttpRequest,
    Transport,
    _reason,
    _shortened,
    client_transport,
)
from agenteval_otel.traces.otlp_json import iter_records
from agenteval_otel.traces.sources import PathLike, TraceSource
from agenteval_otel.trajectory.assemble import iter_trajectories
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["TOKEN_ENV", "TENANT_ENV", "TempoClient", "TempoSource"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

TOKEN_ENV = "TEMPO_AUTH_TOKEN"
"""The environment variable a ``TempoClient`` takes its bearer token from when given none."""
TENANT_ENV = "TEMPO_TENANT"
"""The environment variable a ``TempoClient`` takes its tenant (``X-Scope-OrgID``) from."""

_HEX = frozenset("0123456789abcdefABCDEF")
_V2_FIELDS = ("trace", "metrics", "status", "message")
"""The fields of ``tempopb.TraceByIDResponse``, the body of ``/api/v2/traces/{id}``."""
_NOT_FOUND: Any = object()
"""What ``TempoClient._get`` returns for a 404 it was told to expect."""


class TempoClient:
    """Reads traces from Grafana Tempo's HTTP API: :meth:`search` with TraceQL, :meth:`get_trace` by id.

    Args:
        base_url: Tempo's address (query frontend, or Tempo itself), e.g. ``http://tempo:3200``;
            a user and password in it are sent as basic auth, not in the URL.
        token: sent as ``Authorization: Bearer``; default ``TEMPO_AUTH_TOKEN`` from the
            environment (unless the URL holds credentials).
        tenant: sent as ``X-Scope-OrgID`` (multi-tenant Tempo); default ``TEMPO_TENANT``.
        timeout: the one deadline, in seconds, of each request of the default ``UrllibTransport``.
        max_body_bytes: the largest response body read.
        transport: replaces that transport (e.g. a ``MockTransport`` in tests).

    Failures (unreachable, a reply that is not HTTP, cut short, too large or too slow, an HTTP
    error, a body that is not what Tempo answers) raise ``TraceReadError`` naming the URL, with
    no credential in it; bad arguments raise ``ValueError`` at once.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        tenant: str | None = None,
        timeout: float = 10.0,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        transport: Transport | None = None,
    ) -> None:
        try:
            parts = urllib.parse.urlsplit(base_url)
            user, password, _ = parts.username, parts.password, parts.port
        except ValueError:
            parts, user, password = None, None, None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL such as http://tempo:3200, got {mask_url(base_url)!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"base_url is Tempo's address, without a query, got {mask_url(base_url)!r}")
        self.transport = client_transport(transport, timeout, max_body_bytes)
        if token is not None and user is not None:
            raise ValueError("give a token or a user and password in base_url, not both")
        if user is None and token is None:
            token = os.environ.get(TOKEN_ENV)
        self._headers, self._secrets = _headers(user, password, token,
                                                tenant if tenant is not None else os.environ.get(TENANT_ENV))
        host = parts.netloc.rpartition("@")[2]
        self.base_url = urllib.parse.urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))
        self.timeout = timeout
        self.max_body_bytes = max_body_bytes
        self._v1_only = False

    def __repr__(self) -> str:
        return f"TempoClient({self.base_url!r})"

    def search(
        self,
        query: str = "{}",
        *,
        start: datetime | int | None = None,
        end: datetime | int | None = None,
        since: timedelta | None = None,
        limit: int = 20,
    ) -> list[str]:
        """The ids (32 lower-case hex digits) of the traces the TraceQL ``query`` finds, newest
        first as Tempo gives them, at most ``limit``: between ``start`` and ``end`` (datetimes
        or epoch seconds), or over the last ``since`` when no ``start`` is given; with neither,
        Tempo searches only its recent data."""
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query: expected a TraceQL query such as '{ resource.service.name = \"x\" }'")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit: expected a whole number of at least 1, got {limit!r}")
        params = {"q": query}
        now = time.time()
        if start is None and since is not None:
            start = max(0, math.floor(now - since.total_seconds()))
        if start is not None:
            params["start"] = str(_seconds(start, math.floor))
            params["end"] = str(_seconds(end, math.ceil) if end is not None else math.ceil(now))
        elif end is not None:
            raise ValueError("end: give start (or since) with it")
        params["limit"] = str(limit)
        url = self._url("/api/search", params)
        doc = self._get(url)
        traces = doc.get("traces") if isinstance(doc, Mapping) else None
        if not isinstance(doc, Mapping) or not isinstance(traces, (list, type(None))) or (
                traces is None and "metrics" not in doc):  # jsonpb leaves out an empty list
            raise self._error(url, f"not a Tempo search response ({json_type(doc)}); "
                                   "expected an object with 'traces' and 'metrics'")
        found: list[str] = []
        for index, item in enumerate(traces or ()):
            trace_id = item.get("traceID") if isinstance(item, Mapping) else None
            if not isinstance(trace_id, str) or not trace_id or len(trace_id) > 32 or not _HEX.issuperset(trace_id):
                raise self._error(url, f"traces[{index}].traceID: expected a hex trace id, "
                                       f"got {_shortened(repr(trace_id), 80)}")
            normalized = trace_id.lower().zfill(32)  # Tempo trims leading zeros
            if normalized not in found:
                found.append(normalized)
        return found[:limit]

    def get_trace(self, trace_id: str) -> list[SpanRecord]:
        """The spans of one trace (``/api/v2/traces/{id}``, or ``/api/traces/{id}`` from a Tempo
        without API v2); a trace Tempo holds no spans of gives none. A trace Tempo returns cut
        at its size limit (``PARTIAL``) is returned as it is, with a warning."""
        if not isinstance(trace_id, str) or not trace_id or len(trace_id) > 32 or not _HEX.issuperset(trace_id):
            raise ValueError(f"not a trace id: {trace_id!r}")
        trace_id = trace_id.lower().zfill(32)
        if not self._v1_only:
            url = self._url(f"/api/v2/traces/{trace_id}", {})
            doc = self._get(url, missing_ok=True)
            if doc is not _NOT_FOUND:
                return self._v2_records(url, trace_id, doc)
        url = self._url(f"/api/traces/{trace_id}", {})
        doc = self._get(url, missing_ok=True)
        if doc is _NOT_FOUND:
            raise self._error(url, f"Tempo has no trace {trace_id} (HTTP 404 Not Found"
                                   f"{'' if self._v1_only else ', from /api/v2/traces too'})")
        self._v1_only = True  # a Tempo without API v2: ask API v1 from now on
        if isinstance(doc, Mapping) and not doc:  # jsonpb writes an empty trace as {}
            return []
        if not isinstance(doc, Mapping) or doc.get("batches") is None:
            raise self._error(url, f"not a Tempo trace ({json_type(doc)}); expected an object with 'batches'")
        return self._records(url, doc, "")

    def _v2_records(self, url: str, trace_id: str, doc: Any) -> list[SpanRecord]:
        if not isinstance(doc, Mapping) or (doc and not any(field in doc for field in _V2_FIELDS)):
            raise self._error(url, f"not a Tempo trace ({json_type(doc)}); "
                                   "expected an object with 'trace' (and 'metrics', 'status')")
        trace = doc.get("trace") or {}
        if not isinstance(trace, Mapping):
            raise self._error(url, f"trace: expected an object, got {json_type(trace)}")
        if doc.get("status") in ("PARTIAL", 1):
            logger.warning(self._clean(f"{mask_url(url)}: Tempo returned part of trace {trace_id} "
                                       f"({_shortened(str(doc.get('message') or 'no reason given'))}); "
                                       "it is scored on the spans returned"))
        return self._records(url, trace, "trace")

    def _records(self, url: str, doc: Mapping[str, Any], path: str) -> list[SpanRecord]:
        try:
            return list(iter_records(doc, path=path))
        except MALFORMED as exc:
            raise self._error(url, malformed_reason(exc)) from None

    def _url(self, path: str, params: Mapping[str, str]) -> str:
        return self.base_url + path + ("?" + urllib.parse.urlencode(params) if params else "")

    def _get(self, url: str, *, missing_ok: bool = False) -> Any:
        """The JSON of Tempo's 2xx answer to ``GET url`` (``_NOT_FOUND`` for a 404 when ``missing_ok``)."""
        try:
            response = self.transport.handle_request(HttpRequest("GET", url, dict(self._headers)))
        except TraceReadError as exc:  # a broken reply the transport named
            raise TraceReadError(self._clean(str(exc))) from None
        except OSError as exc:
            raise self._error(url, f"cannot reach Tempo ({exc})") from None
        if response.status == 404 and missing_ok:
            return _NOT_FOUND
        if not 200 <= response.status < 300:
            detail = response.body[:2048].decode("utf-8", "replace").strip().splitlines()
            said = f": {_shortened(detail[0].strip(), 200)}" if detail else ""
            raise self._error(url, f"Tempo answered HTTP {response.status} {_reason(response)}{said}")
        if len(response.body) > self.max_body_bytes:
            raise self._error(url, f"the response body is over the limit of {self.max_body_bytes} bytes "
                                   "(max_body_bytes)")
        try:
            return orjson.loads(response.body)
        except orjson.JSONDecodeError as exc:
            if "depth limit" in exc.msg:
                raise self._error(url, malformed_reason(exc)) from None
            raise self._error(url, f"Tempo's answer is not JSON ({exc})") from None

    def _clean(self, text: str) -> str:
        return redact_secrets(text, self._secrets)

    def _error(self, url: str, problem: str) -> TraceReadError:
        return TraceReadError(self._clean(f"{mask_url(url)}: {problem}"))


def _headers(user: str | None, password: str | None, token: str | None,
             tenant: str | None) -> tuple[dict[str, str], list[str | None]]:
    """The request headers that carry the credentials and the tenant, and the secrets no
    message may show."""
    headers = {"Accept": "application/json"}
    secrets: list[str | None] = [token, password]
    for name, value in (("token", token), ("tenant", tenant)):
        if value and any(char in value.strip() for char in "\r\n\0"):
            raise ValueError(f"{name}: expected one line (a header value)")
    if user is not None:
        user, password = urllib.parse.unquote(user), urllib.parse.unquote(password or "")
        basic = base64.b64encode(f"{user}:{password}".encode()).decode()
        secrets += [password, basic] if password else [user, basic]
        headers["Authorization"] = f"Basic {basic}"
    elif token and token.strip():
        headers["Authorization"] = f"Bearer {token.strip()}"
    if tenant and tenant.strip():
        headers["X-Scope-OrgID"] = tenant.strip()
    return headers, secrets


def _seconds(moment: datetime | int, rounding: Any) -> int:
    if isinstance(moment, datetime):
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return int(rounding(moment.timestamp()))
    return int(moment)


class TempoSource(TraceSource):
    """The traces the TraceQL ``query`` finds in the Tempo behind ``client``, read when
    :meth:`trajectories` is: searched between ``start`` and ``end``, or over the last
    ``since``, at most ``limit`` traces, then each read by its id (:attr:`progress` counts
    them). Tempo's API returns spans, not log records, so a Tempo query takes no log files.

    >>> TempoSource(TempoClient("http://tempo:3200"), '{ resource.service.name = "weather" }')
    TempoSource('http://tempo:3200', query='{ resource.service.name = "weather" }')
    """

    def __init__(
        self,
        client: TempoClient,
        query: str = "{}",
        *,
        start: datetime | int | None = None,
        end: datetime | int | None = None,
        since: timedelta | None = None,
        limit: int = 20,
    ) -> None:
        self.client = client
        self.query, self.start, self.end, self.since, self.limit = query, start, end, since, limit

    def trace_ids(self) -> list[str]:
        """The ids of the traces the query finds (``TraceReadError`` naming the URL when it fails)."""
        return self.client.search(self.query, start=self.start, end=self.end, since=self.since, limit=self.limit)

    def trajectories(self, readers: Sequence[Reader] | None = None) -> Iterator[Trajectory]:
        """Each invocation in the traces found (see :meth:`TraceSource.trajectories`)."""
        trace_ids = self.trace_ids()
        progress = self.progress
        progress.unit, progress.total, progress.done = "traces", len(trace_ids), 0
        yield from iter_trajectories(self._spans(trace_ids), group="invocation", readers=readers)

    def _spans(self, trace_ids: Sequence[str]) -> Iterator[SpanRecord]:
        for trace_id in trace_ids:
            spans = self.client.get_trace(trace_id)
            self.progress.done += 1
            yield from spans

    def with_logs(self, logs: Sequence[PathLike]) -> TraceSource:
        """``ConfigError``: a Tempo query gives spans only, and takes no log files."""
        raise ConfigError(f"logs=: {self!r} reads spans from Tempo's API, which returns no log records, and takes "
                          "no log files; to join log records, read the spans yourself and give SpanSource(spans, logs)")

    def __repr__(self) -> str:
        return f"TempoSource({self.client.base_url!r}, query={self.query!r})"
