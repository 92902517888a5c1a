"""The parser of every command, and the one place errors become exit codes."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence

from agenteval_otel import __version__
from agenteval_otel.cli import _experiments, _history, _inspect, _scoring, _serve, _view
from agenteval_otel.cli._args import OneLineErrorParser
from agenteval_otel.cli._exits import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, Command
from agenteval_otel.errors import AgentEvalError

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "build_parser", "main"]


def build_parser() -> OneLineErrorParser:
    """``agenteval`` and its commands (each family adds its own)."""
    parser = OneLineErrorParser(prog="agenteval",
                                description="Trace AI agents with OpenTelemetry and evaluate their trajectories.")
    parser.add_argument("--version", action="version", version=f"agenteval {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     parser_class=OneLineErrorParser)
    for family in (_inspect, _scoring, _serve, _experiments, _history, _view):
        family.add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as done:  # --help, --version, or a bad argument (one line said why)
            return done.code if isinstance(done.code, int) else EXIT_BAD_INPUT
        logging.basicConfig(level=logging.ERROR if getattr(args, "quiet", False) else logging.WARNING,
                            format="agenteval: %(levelname)s: %(message)s")
        handler: Command = args.handler
        code = handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except AgentEvalError as exc:
        print(f"agenteval: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("agenteval: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (``agenteval ... | head``): stop quietly,
        devnull = os.open(os.devnull, os.O_WRONLY)  # with 1 as rich's console does
        os.dup2(devnull, sys.stdout.fileno())  # so the flush at exit does not fail again
        return EXIT_FAILED
