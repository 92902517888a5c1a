"""``agenteval show``, ``agenteval trajectory`` and ``agenteval schema``: look at eval sets and
traces without scoring, and write the JSON Schemas of the files the product reads."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from agenteval_otel.cli._exits import EXIT_OK
from agenteval_otel.cli._inputs import add_readers_option, convention_readers

__all__ = ["add_commands"]


def show(args: argparse.Namespace) -> int:
    """Print the cases of an eval set as a table."""
    from rich.console import Console

    from agenteval_otel.evalsets import EvalSet
    from agenteval_otel.reports import eval_set_table

    Console().print(eval_set_table(EvalSet.load(args.evalset)))
    return EXIT_OK


def trajectory(args: argparse.Namespace) -> int:
    """Print the trajectories read from trace files, as JSON or as tables, or (``--explain``)
    which reader read each span, ending each trace with its coverage and warnings."""
    from agenteval_otel.traces.files import read_trajectories, spans_with_logs

    readers = convention_readers(args)
    if args.explain:
        from agenteval_otel.trajectory.explain import explain_traces

        _, spans = spans_with_logs(args.files, args.logs or ())
        for trace_id, explanations, coverage in explain_traces(spans, readers, split=args.group != "trace"):
            print(f"trace {trace_id}")
            for explanation in explanations:
                print("  " + explanation.line())
            for line in coverage.lines():
                print("  " + line)
        return EXIT_OK
    from rich.console import Console

    from agenteval_otel.reports import iter_trajectories_json, trajectories_table

    found = read_trajectories(args.files, group=args.group, logs=args.logs or (),
                               readers=readers)  # skipped lines are logged
    if args.format == "json":
        sys.stdout.writelines(iter_trajectories_json(found.trajectories))
        sys.stdout.write("\n")
    else:
        Console().print(trajectories_table(found.trajectories))
    return EXIT_OK


SCHEMA_TITLES = {"evalset": "agenteval-otel eval set", "config": "agenteval-otel eval config",
                 "queryset": "agenteval-otel query set"}


def schema(args: argparse.Namespace) -> int:
    """Write the JSON Schema of an eval set, a config or a query set, to stdout or ``--output``."""
    import json

    from agenteval_otel.criteria import EvalConfig
    from agenteval_otel.evalsets import EvalSet
    from agenteval_otel.experiments import QuerySet
    from agenteval_otel.loading import json_schema, write_json

    schemas: dict[str, Callable[[], dict[str, Any]]] = {
        "evalset": EvalSet.model_json_schema, "config": EvalConfig.model_json_schema,
        "queryset": QuerySet.model_json_schema}
    document = json_schema(schemas[args.kind](), args.kind, SCHEMA_TITLES[args.kind])
    if args.output:
        write_json(args.output, document)
    else:
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK


def add_commands(commands: Any) -> None:
    """``show``, ``trajectory`` and ``schema``."""
    shown = commands.add_parser("show", help="print the cases of an eval set as a table")
    shown.add_argument("evalset", help="an .evalset.json or .evalset.yaml file (ours or Google ADK's)")
    shown.set_defaults(handler=show)

    read = commands.add_parser(
        "trajectory", help="print the trajectories in trace files (OTLP/JSON, OTLP protobuf, Jaeger JSON)")
    read.add_argument("files", nargs="+", metavar="FILE", help="a trace file")
    read.add_argument("--format", choices=("json", "table"), default="table", help="output format")
    read.add_argument("--group", choices=("trace", "invocation", "conversation"), default="invocation",
                      help="one trajectory per trace, per agent invocation (default) or per conversation")
    read.add_argument("--logs", nargs="+", metavar="FILE",
                      help="OTLP/JSON log files whose records carry the spans' content "
                           "(log files given as FILE are recognised too)")
    read.add_argument("--explain", action="store_true",
                      help="show, per span, which convention reader read it and what it read, then per trace "
                           "how many spans were read, read by a fallback or unread, and warnings")
    add_readers_option(read)
    read.set_defaults(handler=trajectory)

    schemas = commands.add_parser(
        "schema", help="write the JSON Schema of eval sets, configs or query sets (for editors and checks)")
    schemas.add_argument("kind", choices=tuple(SCHEMA_TITLES), help="which file's schema")
    schemas.add_argument("--output", "-o", metavar="FILE",
                         help="write it to FILE (e.g. evalset.schema.json, the name files written by "
                              "agenteval reference) instead of stdout")
    schemas.set_defaults(handler=schema)
