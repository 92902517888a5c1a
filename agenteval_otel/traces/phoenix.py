"""``PhoenixSource``: the traces an Arize Phoenix server holds, read from its REST API.

Two endpoints, page by page: ``GET /v1/projects/{project}/traces`` gives the ids of the traces
that started in the time window (newest first, with Phoenix's own trace filter expression), and
``GET /v1/projects/{project}/spans/otlpv1`` the spans of a page of those traces, as OTLP/JSON
spans, read by our OTLP/JSON codec. A trace is read whole once its id is known (its spans are
asked for by trace id, outside the window), so memory holds one page of traces at a time.

``PhoenixClient`` does the HTTP over the same swappable ``Transport`` as ``JaegerClient``; the
API key (``PHOENIX_API_KEY``) goes in ``Authorization: Bearer ...``, as Phoenix's own client
sends it, and never into a message.

>>> from agenteval_otel.traces import HttpRequest, HttpResponse, MockTransport
>>> def phoenix(request: HttpRequest) -> HttpResponse:
...     if "/traces?" in request.url:
...         return HttpResponse(200, b'{"data": [{"trace_id": "5b8efff798038103d269b633813fc60c"}], '
...                                  b'"next_cursor": null}')
...     span = {"trace_id": "5b8efff798038103d269b633813fc60c", "span_id": "eee19b7ec3c1b174",
...             "name": "invoke_agent weather", "start_time_unix_nano": 1, "end_time_unix_nano": 2}
...     return HttpResponse(200, json.dumps({"data": [span], "next_cursor": None}).encode())
>>> client = PhoenixClient("http://phoenix:6006", api_key="", transport=MockTransport(phoenix))
>>> [[record.name for record in spans] for spans in client.traces("weather")]
[['invoke_agent weather']]
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson

from agenteval_otel.errors import ConfigError, TraceReadError, mask_url, mask_url_in, redact_secrets
from agenteval_otel.traces.jaeger_client import (
    DEFAULT_MAX_BODY_BYTES,
    HttpRequest,
    HttpResponse,
    Transport,
    client_transport,
)
from agenteval_otel.traces.otlp_json import record_from_span
from agenteval_otel.traces.sources import PathLike, TraceSource
from agenteval_otel.trajectory.assemble import iter_trajectories
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["API_KEY_ENV", "PhoenixClient", "PhoenixSource"]

API_KEY_ENV = "PHOENIX_API_KEY"
"""The environment variable the API key is read from when none is given."""

_MAX_PAGE = 1000
"""The most items Phoenix returns in one page."""


class PhoenixClient:
    """Reads traces from a Phoenix server's REST API (``/v1/projects/{project}/...``).

    Args:
        base_url: the server, e.g. ``http://localhost:6006``.
        api_key: sent as ``Authorization: Bearer ...``; ``None`` reads ``PHOENIX_API_KEY``, and
            an empty key sends none.
        timeout: the one deadline (seconds) of each request of the default ``UrllibTransport``.
        max_body_bytes: the largest response body read.
        spans_per_page: the spans asked for per request (Phoenix answers 1000 at most).
        transport: replaces that transport (e.g. a ``MockTransport`` in tests).

    Failures (an unreachable server, an unknown project, a refused key, a rejected filter, an
    answer that is not Phoenix's) raise ``TraceReadError`` naming the URL, without credentials.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 10.0,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        spans_per_page: int = _MAX_PAGE,
        transport: Transport | None = None,
    ) -> None:
        parsed = urllib.parse.urlparse(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"base_url must be an http(s) URL, got {mask_url(base_url)!r}")
        self.transport = client_transport(transport, timeout, max_body_bytes)
        if not 1 <= spans_per_page <= _MAX_PAGE:
            raise ValueError(f"spans_per_page must be from 1 to {_MAX_PAGE}, got {spans_per_page}")
        self.base_url = base_url.rstrip("/")
        self.spans_per_page = spans_per_page
        self._api_key = os.environ.get(API_KEY_ENV, "") if api_key is None else api_key
        self._key_source = f"the API key in {API_KEY_ENV}" if api_key is None else "the API key given"
        self.max_body_bytes = max_body_bytes

    def trace_ids(
        self,
        project: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        filter: str | None = None,
        limit: int | None = None,
        per_page: int = 100,
    ) -> Iterator[list[str]]:
        """The ids of the traces of ``project`` (a name or an id) that started between ``start``
        (inclusive) and ``end`` (exclusive) and match ``filter`` (a Phoenix trace filter
        expression, e.g. ``"error_count > 0"``), newest first, a page at a time; at most
        ``limit`` of them, ``per_page`` a page."""
        params: list[tuple[str, str]] = [("sort", "start_time"), ("order", "desc")]
        if start is not None:
            params.append(("start_time", _iso(start)))
        if end is not None:
            params.append(("end_time", _iso(end)))
        if filter:
            params.append(("filter", filter))
        left = limit
        cursor: str | None = None
        while left is None or left > 0:
            size = min(per_page, _MAX_PAGE, left if left is not None else _MAX_PAGE)
            page, cursor = self._page(project, "traces", [*params, ("limit", str(size))], cursor)
            found = [_text_field(item, "trace_id", self._shown(project, "traces")) for item in page]
            found = found[:left] if left is not None else found
            if found:
                yield found
            if left is not None:
                left -= len(found)
            if cursor is None or not found:
                return

    def spans(self, project: str, trace_ids: Sequence[str]) -> list[SpanRecord]:
        """Every span of the traces ``trace_ids`` of ``project``, whatever their start times."""
        if not trace_ids:
            return []
        params = [*(("trace_id", trace_id) for trace_id in trace_ids), ("limit", str(self.spans_per_page))]
        records: list[SpanRecord] = []
        cursor: str | None = None
        while True:
            page, cursor = self._page(project, "spans/otlpv1", params, cursor)
            shown = self._shown(project, "spans/otlpv1")
            for index, span in enumerate(page):
                try:
                    records.append(record_from_span(span))
                except (ValueError, TypeError, AttributeError) as exc:
                    raise TraceReadError(self._clean(f"{shown}: data[{index}]: {exc}")) from None
            if cursor is None or not page:
                return records

    def traces(
        self,
        project: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        filter: str | None = None,
        limit: int | None = None,
        per_page: int = 100,
    ) -> Iterator[list[SpanRecord]]:
        """The spans of each page of traces that :meth:`trace_ids` finds (same arguments)."""
        for trace_ids in self.trace_ids(project, start=start, end=end, filter=filter, limit=limit, per_page=per_page):
            yield self.spans(project, trace_ids)

    def _shown(self, project: str, what: str) -> str:
        return mask_url(f"{self.base_url}/v1/projects/{_quoted(project)}/{what}")

    def _clean(self, text: str) -> str:
        return redact_secrets(text, [self._api_key])

    def _page(
        self, project: str, what: str, params: Sequence[tuple[str, str]], cursor: str | None
    ) -> tuple[list[Any], str | None]:
        """One page: its items and the cursor of the next page (``None`` after the last)."""
        query = [*params, ("cursor", cursor)] if cursor else list(params)
        url = f"{self.base_url}/v1/projects/{_quoted(project)}/{what}?{urllib.parse.urlencode(query)}"
        shown = self._shown(project, what)
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        try:
            response = self.transport.handle_request(HttpRequest("GET", url, headers))
        except TraceReadError as exc:  # a broken reply the transport named: without the credentials
            raise TraceReadError(self._clean(mask_url_in(str(exc), url).replace(mask_url(url), shown))) from None
        except OSError as exc:
            reason = mask_url_in(str(exc), url)
            raise TraceReadError(self._clean(f"{shown}: cannot reach Phoenix ({reason})")) from exc
        if not 200 <= response.status < 300:
            raise TraceReadError(self._clean(self._refusal(response, project, shown, dict(params).get("filter"))))
        if len(response.body) > self.max_body_bytes:
            raise TraceReadError(
                f"{shown}: the response body is over the limit of {self.max_body_bytes} bytes (max_body_bytes)")
        try:
            doc = orjson.loads(response.body)
        except orjson.JSONDecodeError as exc:
            if response.body.lstrip()[:1] == b"<":  # a web page: Phoenix's UI, or not Phoenix at all
                raise TraceReadError(f"{shown}: the server answered a web page, not JSON; expected {_SERVER}") from None
            raise TraceReadError(self._clean(f"{shown}: invalid JSON ({exc}); expected {_EXPECTED}")) from None
        items = doc.get("data") if isinstance(doc, Mapping) else None
        following = doc.get("next_cursor") if isinstance(doc, Mapping) else None
        if not isinstance(items, list) or not isinstance(following, (str, type(None))):
            raise TraceReadError(f"{shown}: not a Phoenix answer; expected {_EXPECTED}")
        return items, following or None

    def _refusal(self, response: HttpResponse, project: str, shown: str, filter: str | None) -> str:
        """What an error status means, in one line."""
        detail = _detail(response)
        status = f"HTTP {response.status}"
        if response.status == 401:
            if not self._api_key:
                return (f"{shown}: {status}: Phoenix wants an API key and none was given "
                        f"(set {API_KEY_ENV})")
            return f"{shown}: {status}: Phoenix refused {self._key_source} (wrong, expired or revoked)"
        if response.status == 403:
            return f"{shown}: {status}: {self._key_source} may not read project {project!r} ({detail})"
        if response.status == 404 and detail.lower() != "not found":
            return f"{shown}: Phoenix has no project {project!r} ({status}: {detail})"
        if response.status == 404:
            return f"{shown}: {status}: no such endpoint; expected {_SERVER}"
        if response.status in (400, 422) and filter:
            return f"{shown}: {status}: Phoenix rejected the filter {filter!r}: {detail}"
        return f"{shown}: {status}: {detail}"


_EXPECTED = "a JSON object with 'data' (a list) and 'next_cursor'"
_SERVER = "a Phoenix server whose REST API has /v1/projects/{project}/traces and .../spans/otlpv1"


def _quoted(project: str) -> str:
    return urllib.parse.quote(project, safe="")


def _iso(moment: datetime) -> str:
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).isoformat()


def _text_field(item: Any, key: str, shown: str) -> str:
    value = item.get(key) if isinstance(item, Mapping) else None
    if not isinstance(value, str) or not value:
        raise TraceReadError(f"{shown}: expected objects with a '{key}', got {_shortened(repr(item))}")
    return value


def _detail(response: HttpResponse) -> str:
    """Phoenix's ``detail`` (FastAPI's error body), else the body's text, else the reason."""
    try:
        doc = orjson.loads(response.body)
    except orjson.JSONDecodeError:
        doc = None
    detail = doc.get("detail") if isinstance(doc, Mapping) else None
    if detail is None:
        detail = response.body.decode("utf-8", "replace").strip() or response.reason
    text = detail if isinstance(detail, str) else json.dumps(detail)
    return _shortened(" ".join(text.split()))


def _shortened(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class PhoenixSource(TraceSource):
    """The traces of a Phoenix ``project`` (its name or id), read when :meth:`trajectories` is.

    Args:
        client: the ``PhoenixClient`` of the server.
        project: the project's name or id.
        filter: a Phoenix trace filter expression (``"error_count > 0"``), as in its UI.
        start: read traces that started at or after this moment ...
        end: ... and before this one (default: no bound).
        since: with no ``start``: how far back from now to read.
        limit: at most this many traces, newest first (``None``: all).
        traces_per_page: traces read per page (the spans of one page are held at once).

    :attr:`progress` counts the traces read (Phoenix does not say how many there are). Phoenix
    returns spans, not log records, so the source takes no log files.
    """

    def __init__(
        self,
        client: PhoenixClient,
        project: str,
        *,
        filter: str | None = None,
        start: datetime | None = None,
        end: datetime | None = None,
        since: timedelta | None = None,
        limit: int | None = 1000,
        traces_per_page: int = 50,
    ) -> None:
        if not project or any(char in project for char in "/?#"):
            raise ValueError(f"project must be a name or id without '/', '?' or '#', got {project!r}")
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        if not 1 <= traces_per_page <= _MAX_PAGE:
            raise ValueError(f"traces_per_page must be from 1 to {_MAX_PAGE}, got {traces_per_page}")
        self.client, self.project, self.filter = client, project, filter
        self.start, self.end, self.since = start, end, since
        self.limit, self.traces_per_page = limit, traces_per_page

    def trajectories(self, readers: Sequence[Reader] | None = None) -> Iterator[Trajectory]:
        """Each invocation in the traces found, trace by trace (see :meth:`TraceSource.trajectories`)."""
        start = self.start
        if start is None and self.since is not None:
            start = datetime.now(timezone.utc) - self.since
        pages = self.client.traces(self.project, start=start, end=self.end, filter=self.filter, limit=self.limit,
                                   per_page=self.traces_per_page)
        for spans in pages:
            by_trace: dict[str, list[SpanRecord]] = {}
            for record in spans:
                by_trace.setdefault(record.trace_id, []).append(record)
            for trace in by_trace.values():
                yield from iter_trajectories(trace, group="invocation", readers=readers)
                self.progress.done += 1

    def with_logs(self, logs: Sequence[PathLike]) -> TraceSource:
        """``ConfigError``: Phoenix's REST API gives spans only, and the source takes no log files."""
        raise ConfigError(f"logs=: {self!r} reads spans from Phoenix's REST API, which returns no log records, "
                          "and takes no log files; to join log records, read the spans yourself "
                          "(PhoenixClient.traces) and give SpanSource(spans, logs)")

    def __repr__(self) -> str:
        return f"PhoenixSource({mask_url(self.client.base_url)!r}, project={self.project!r})"

