"""Where ``agenteval eval`` reads its traces: the options naming a source, and the one
``TraceSource`` they make (trace files, or a query of a trace backend)."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from agenteval_otel.cli._args import duration, positive_int
from agenteval_otel.errors import ConfigError

if TYPE_CHECKING:
    from agenteval_otel.traces import TraceSource

__all__ = ["add_source_options", "source_id", "trace_source"]

_BACKENDS = ("jaeger", "tempo", "phoenix", "clickhouse")
"""The options that each name a trace backend to query (one at most, and not with --traces)."""


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """The options naming where the traces are: files, or one backend with its query."""
    group = parser.add_argument_group("where the traces are (trace files, or one backend to query)")
    group.add_argument("--traces", nargs="+", metavar="FILE",
                       help="trace files: OTLP/JSON (lines), OTLP protobuf or Jaeger JSON")
    group.add_argument("--logs", nargs="+", metavar="FILE",
                       help="OTLP/JSON log files whose records carry the spans' content")
    group.add_argument("--jaeger", metavar="URL", help="a Jaeger query service, e.g. http://localhost:16686")
    group.add_argument("--tempo", metavar="URL",
                       help="a Grafana Tempo, e.g. http://localhost:3200 (token from TEMPO_AUTH_TOKEN, "
                            "tenant from TEMPO_TENANT, or user:password@ in the URL)")
    group.add_argument("--query", metavar="TRACEQL",
                       help="with --tempo: the TraceQL query finding the traces ({}: all)")
    group.add_argument("--phoenix", metavar="URL",
                       help="an Arize Phoenix server, e.g. http://localhost:6006 (its API key: $PHOENIX_API_KEY)")
    group.add_argument("--project", metavar="NAME", help="with --phoenix: the project to read (its name or id)")
    group.add_argument("--filter", metavar="EXPR",
                       help="with --phoenix: a Phoenix trace filter expression, e.g. 'error_count > 0'")
    group.add_argument("--clickhouse", metavar="URL",
                       help="a ClickHouse server holding the Collector's clickhouse exporter tables, e.g. "
                            "http://localhost:8123/otel (user and password in the URL or in CLICKHOUSE_USER "
                            "and CLICKHOUSE_PASSWORD)")
    group.add_argument("--table", default="otel_traces", metavar="NAME",
                       help="with --clickhouse: the exporter's traces table (otel_traces)")
    group.add_argument("--where", metavar="SQL",
                       help="with --clickhouse: an SQL condition on the table's columns selecting the traces, "
                            "e.g. \"SpanAttributes['gen_ai.agent.name'] = 'weather'\" (run as given: "
                            "trusted input only)")
    group.add_argument("--service", metavar="NAME",
                       help="with --jaeger: the service to read; with --clickhouse: only traces with a span "
                            "of it")
    group.add_argument("--since", "--lookback", dest="since", type=duration, default="1h", metavar="AGE",
                       help="with a backend: how far back to read, e.g. 30m, 24h, 2d (1h)")
    group.add_argument("--limit", type=positive_int, default=1000, metavar="N",
                       help="with a backend: at most this many traces (1000)")


def trace_source(args: argparse.Namespace) -> TraceSource:
    """The source the arguments name: trace files (with their log files), or one backend's query."""
    asked = [f"--{name}" for name in _BACKENDS if getattr(args, name, None)]
    if args.traces:
        asked.insert(0, "--traces")
    if len(asked) > 1:
        raise ConfigError(f"give one place to read traces from, not {' and '.join(asked)}")
    if not asked:
        raise ConfigError("give trace files with --traces FILE... or a backend to query "
                          "(--jaeger URL --service NAME, --tempo URL, --phoenix URL --project NAME, or "
                          "--clickhouse URL)")
    if args.query is not None and not args.tempo:
        raise ConfigError("--query goes with --tempo: it is the TraceQL query Tempo searches with")
    strays = [f"--{name}" for name in ("project", "filter") if getattr(args, name, None) and not args.phoenix]
    if strays:
        raise ConfigError(f"{' and '.join(strays)} go{'es' if len(strays) == 1 else ''} with --phoenix URL")
    if args.logs and not args.traces:
        raise ConfigError(f"--logs goes with --traces: {asked[0]} reads spans, not log records")
    if args.where and not args.clickhouse:
        raise ConfigError(f"--where goes with --clickhouse: it is an SQL condition, and {asked[0]} reads no SQL")
    if args.traces:
        from agenteval_otel.traces import TraceFileSource

        return TraceFileSource(args.traces, args.logs or ())
    if args.tempo:
        return _tempo(args)
    if args.phoenix:
        return _phoenix(args)
    return _clickhouse(args) if args.clickhouse else _jaeger(args)


def source_id(args: argparse.Namespace) -> str:
    """What a report without an eval set is named: the trace file's name (without its
    extensions), ``jaeger-SERVICE``, ``tempo``, ``phoenix-PROJECT``, ``clickhouse-TABLE``, or
    ``traces`` for several files."""
    if args.jaeger:
        return f"jaeger-{args.service}"
    if args.tempo:
        return "tempo"
    if args.phoenix:
        return f"phoenix-{args.project}"
    if args.clickhouse:
        return f"clickhouse-{args.table}"
    if args.traces and len(args.traces) == 1:
        return Path(args.traces[0]).name.split(".")[0] or "traces"
    return "traces"


_Client = TypeVar("_Client")


def _client(make: Callable[[str], _Client], option: str, url: str) -> _Client:
    """A backend's client for ``url``; what it refuses is a ``ConfigError`` naming ``option``
    (its message shows the URL with credentials masked)."""
    try:
        return make(url)
    except ValueError as exc:
        raise ConfigError(f"{option}: {exc}") from None


def _jaeger(args: argparse.Namespace) -> TraceSource:
    if not args.service:
        raise ConfigError("--jaeger needs --service NAME")
    from agenteval_otel.traces import JaegerClient, JaegerSource

    client = _client(JaegerClient, "--jaeger", args.jaeger)
    return JaegerSource(client, args.service, lookback=args.since, limit=args.limit)


def _tempo(args: argparse.Namespace) -> TraceSource:
    if args.service:
        raise ConfigError("--service goes with --jaeger or --clickhouse; with --tempo, say which traces in --query, "
                          "e.g. '{ resource.service.name = \"NAME\" }'")
    query = "{}" if args.query is None else args.query
    if not query.strip():
        raise ConfigError("--query: expected a TraceQL query such as '{ resource.service.name = \"NAME\" }', got ''")
    from agenteval_otel.traces import TempoClient, TempoSource

    client = _client(TempoClient, "--tempo", args.tempo)
    return TempoSource(client, query, since=args.since, limit=args.limit)


def _phoenix(args: argparse.Namespace) -> TraceSource:
    if not args.project:
        raise ConfigError("--phoenix needs --project NAME (a project's name or id)")
    from agenteval_otel.traces import PhoenixClient, PhoenixSource

    client = _client(PhoenixClient, "--phoenix", args.phoenix)
    try:
        return PhoenixSource(client, args.project, filter=args.filter, since=args.since, limit=args.limit)
    except ValueError as exc:
        raise ConfigError(f"--project {args.project}: {exc}") from None


_CLICKHOUSE_ARGUMENTS = {"client": "--clickhouse", "table": "--table", "where": "--where"}
"""The options of ``ClickHouseSource``'s arguments, for its messages about them."""


def _clickhouse(args: argparse.Namespace) -> TraceSource:
    from agenteval_otel.traces import ClickHouseSource

    # the driver logs a warning for each failed request; the one error line says it all
    logging.getLogger("clickhouse_connect").setLevel(logging.ERROR)
    try:
        return ClickHouseSource(args.clickhouse, args.table, service=args.service, where=args.where,
                                lookback=args.since, limit=args.limit)
    except ConfigError:
        raise
    except ValueError as exc:  # "argument: what was expected", the URL shown with credentials masked
        argument, _, problem = str(exc).partition(": ")
        raise ConfigError(f"{_CLICKHOUSE_ARGUMENTS.get(argument, '--clickhouse')}: {problem or exc}") from None
