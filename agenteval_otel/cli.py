"""The ``agenteval`` command.

Exit codes: 0 = all passed, 1 = some case failed or errored, 2 = bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from agenteval_otel.errors import AgentEvalError

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2

Command = Callable[[argparse.Namespace], int]


def _cmd_show(args: argparse.Namespace) -> int:
    """Print the cases of an eval set as a table."""
    from rich.console import Console

    from agenteval_otel.evaluation.models import EvalSet
    from agenteval_otel.reports.console import eval_set_table

    eval_set = EvalSet.load(args.evalset)
    Console().print(eval_set_table(eval_set))
    return EXIT_OK


def _cmd_trajectory(args: argparse.Namespace) -> int:
    """Print the trajectories read from trace files, as JSON or as tables."""
    from rich.console import Console

    from agenteval_otel.traces.files import read_trajectories
    from agenteval_otel.trajectory.render import trajectories_json, trajectories_table

    found = read_trajectories(args.files, group=args.group)
    if args.format == "json":
        print(trajectories_json(found.trajectories))
    else:
        Console().print(trajectories_table(found.trajectories))
    for path, skipped in found.skipped.items():
        lines = ", ".join(str(item.line) for item in skipped)
        message = f"skipped {len(skipped)} unreadable line(s): {lines}"
        print(f"agenteval: warning: {path}: {message}", file=sys.stderr)
    return EXIT_OK


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agenteval",
        description="Trace AI agents with OpenTelemetry and evaluate their trajectories.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    show = sub.add_parser("show", help="print the cases of an eval set as a table")
    show.add_argument("evalset", help="an .evalset.json file (ours or Google ADK's)")
    show.set_defaults(handler=_cmd_show)

    trajectory = sub.add_parser(
        "trajectory",
        help="print the trajectories in trace files (OTLP/JSON, OTLP protobuf, Jaeger JSON)",
    )
    trajectory.add_argument("files", nargs="+", metavar="FILE", help="a trace file")
    trajectory.add_argument("--format", choices=("json", "table"), default="table", help="output format")
    trajectory.add_argument(
        "--group",
        choices=("trace", "invocation", "conversation"),
        default="invocation",
        help="one trajectory per trace, per agent invocation (default) or per conversation",
    )
    trajectory.set_defaults(handler=_cmd_trajectory)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    handler: Command = args.handler
    try:
        return handler(args)
    except AgentEvalError as exc:
        print(f"agenteval: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
