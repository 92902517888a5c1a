"""``agenteval serve`` (the library's ``EvaluationWorker``): receive OTLP behind the Collector,
score every invocation as its trace completes, export the verdicts."""

from __future__ import annotations

import argparse
import os
from typing import Any

from agenteval_otel.cli._args import (
    add_export_options,
    byte_size,
    fraction,
    non_negative_float,
    port,
    positive_float,
)
from agenteval_otel.cli._exits import EXIT_FAILED, EXIT_OK
from agenteval_otel.cli._history import add_history_options, record_history
from agenteval_otel.cli._inputs import criteria_config, load_eval_set
from agenteval_otel.errors import ConfigError, mask_url

__all__ = ["add_commands"]


def serve(args: argparse.Namespace) -> int:
    """Serve until interrupted (SIGINT or SIGTERM), then stop within ``--shutdown-timeout``."""
    import signal
    import sqlite3
    import threading

    from agenteval_otel.criteria import require_reference_free
    from agenteval_otel.evaluation import EvaluationWorker, Spool, default_memory_budget
    from agenteval_otel.results import SummarySink
    from agenteval_otel.traces.receiver import DEFAULT_MAX_BODY_BYTES
    from agenteval_otel.tracing import otlp_traces_endpoint

    eval_set = load_eval_set(args.evalset)
    config = criteria_config(args, eval_set)
    if eval_set is None:
        require_reference_free(config, where=f"{args.config}: ")
    token = args.token or os.environ.get("AGENTEVAL_SERVE_TOKEN") or None
    target = args.export_results or otlp_traces_endpoint()
    if target is None:
        raise ConfigError("say where the verdicts go: --export-results TARGET (an OTLP URL such as "
                          "http://localhost:4318, or a file), or set OTEL_EXPORTER_OTLP_ENDPOINT")
    # 1/4 for the spans held, 1/8 for request bodies in flight, the rest for decoding and the process
    memory = args.max_memory or default_memory_budget()
    spool = None
    if not args.no_spool:
        try:
            spool = Spool(args.spool, max_bytes=memory)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"--spool {args.spool}: cannot open the spool there ({exc}); "
                              "give another directory, or --no-spool") from None
    session = SummarySink()
    try:
        worker = EvaluationWorker(
            config, eval_set=eval_set, export_target=target, export_as=args.export_as or "events",
            run_id=args.run_id, host=args.host,
            http_port=args.port, grpc_port=args.grpc_port, token=token, spool=spool,
            evaluator_options={"sample_rate": args.sample_rate, "settle_s": args.settle,
                               "trace_ttl_s": args.trace_ttl, "max_pending_bytes": memory // 4},
            receiver_options={"max_in_flight_bytes": max(DEFAULT_MAX_BODY_BYTES, memory // 8)},
            more_sinks=[session],
        ).start()
    except ImportError as exc:  # the serve extra is missing
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"cannot listen on {args.host}: {exc.strerror or exc}") from None
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    grpc = f", OTLP/gRPC on {args.host}:{worker.receiver.grpc_port}" if args.grpc_port is not None else ""
    kept = (f"acknowledged traces spooled in {spool.directory}" + (
        f" ({worker.replayed} replayed)" if worker.replayed else "") if spool is not None else
        "no spool: traces acknowledged and not yet scored are lost if the worker is killed")
    print(f"agenteval serve: OTLP/HTTP on http://{args.host}:{worker.receiver.http_port}{grpc}; "
          f"verdicts to {mask_url(target)}; {kept}", flush=True)
    stop.wait()
    done = worker.stop(timeout=args.shutdown_timeout)
    health = worker.health
    verdicts = health.get("verdicts", {})
    left = health.get("spool", {}).get("pending_traces", 0)
    print(f"agenteval serve: stopped; {worker.evaluator.counters}; verdict records exported="
          f"{verdicts.get('exported', 0)}, failed={verdicts.get('failed', 0)}, dropped={verdicts.get('dropped', 0)}"
          + (f"; {left} trace(s) left in the spool for the next start" if left else ""), flush=True)
    record_history(args, session.summary(), "serve", "serve" + (f":{eval_set.eval_set_id}" if eval_set else ""))
    return EXIT_OK if done else EXIT_FAILED


def add_commands(commands: Any) -> None:
    """``serve``."""
    worker = commands.add_parser(
        "serve", help="an evaluation worker: receive OTLP, score invocations, export verdicts")
    worker.add_argument("--host", default="127.0.0.1", help="the address to listen on (127.0.0.1)")
    worker.add_argument("--port", type=port, default=4319, help="OTLP/HTTP port (4319; 0 picks a free one)")
    worker.add_argument("--grpc-port", type=port, default=None, metavar="PORT",
                        help="also receive OTLP/gRPC on this port (e.g. 4320)")
    worker.add_argument("--config", metavar="FILE", help="the criteria: policies and other reference-free "
                                                         "criteria, and reference-based ones for --evalset cases")
    worker.add_argument("--evalset", metavar="FILE", help="cases whose invocations (matched by conversation "
                                                          "id or input) reference-based criteria score")
    worker.add_argument("--criteria-module", action="append", metavar="MODULE_OR_FILE",
                        help="import a module or .py file whose @criterion functions the config names")
    add_export_options(worker, "where verdicts go: an OTLP URL (http://, https://, grpc://) or a file "
                               "(default: the OTLP endpoint of the OTEL_EXPORTER_OTLP_* variables)")
    worker.add_argument("--token", help="require 'Authorization: Bearer TOKEN' (or AGENTEVAL_SERVE_TOKEN)")
    worker.add_argument("--sample-rate", type=fraction, default=1.0, metavar="R",
                        help="the share of traces scored, decided by trace id (1.0)")
    worker.add_argument("--shutdown-timeout", type=positive_float, default=10.0, metavar="S",
                        help="seconds to finish scoring and exporting when stopped (10)")
    worker.add_argument("--spool", default=".agenteval/spool", metavar="DIR",
                        help="keep acknowledged traces on disk here until their verdicts are exported; "
                             "a restarted worker scores what is left (.agenteval/spool)")
    worker.add_argument("--no-spool", action="store_true",
                        help="keep acknowledged traces in memory only (lost if the worker is killed)")
    worker.add_argument("--settle", type=non_negative_float, default=2.0, metavar="S",
                        help="score a trace once its root has arrived and it has been quiet this long (2)")
    worker.add_argument("--trace-ttl", type=positive_float, default=300.0, metavar="S",
                        help="score a trace whose root never arrives after this long (300)")
    worker.add_argument("--max-memory", type=byte_size, default=None, metavar="SIZE",
                        help="bytes of received spans held at most, e.g. 512MiB; past it senders are "
                             "told to retry (default: an eighth of the machine's memory, 256MiB to 2GiB)")
    add_history_options(worker)
    worker.set_defaults(handler=serve)
