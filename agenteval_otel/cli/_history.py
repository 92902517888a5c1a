"""``agenteval history`` (the runs recorded), and the history options of ``run``, ``eval``,
``serve`` and ``experiment run``: ``--history PATH``, ``--no-history``, ``--history-keep N`` and,
on ``run`` and ``eval``, ``--baseline last|RUN_ID``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from agenteval_otel.cli._args import positive_int
from agenteval_otel.cli._exits import EXIT_OK

if TYPE_CHECKING:
    from agenteval_otel.results import BaselineSink, EvalReport, EvalSummary, HistoryStore

__all__ = ["add_commands", "add_history_options", "baseline_sink", "record_history"]


def add_history_options(parser: argparse.ArgumentParser, *, baseline: bool = False) -> None:
    """``--history PATH``, ``--no-history``, ``--history-keep N`` (and ``--baseline``)."""
    parser.add_argument("--history", metavar="PATH",
                        help="the run history this run is recorded in, a SQLite file (.agenteval/history.db)")
    parser.add_argument("--no-history", action="store_true", help="do not record this run in the history")
    parser.add_argument("--history-keep", type=positive_int, metavar="N",
                        help="runs the history keeps, the oldest removed first "
                             "(default: AGENTEVAL_HISTORY_KEEP, else 200)")
    if baseline:
        parser.add_argument("--baseline", metavar="last|RUN_ID",
                            help="compare with an earlier run of the history: 'last' (the latest of this eval "
                                 "set or source) or a run id (agenteval history lists them); the per-criterion "
                                 "deltas and changed verdicts are printed and written to the reports")


def _store(args: argparse.Namespace) -> HistoryStore:
    from agenteval_otel.results import DEFAULT_HISTORY, HistoryStore

    return HistoryStore(args.history or DEFAULT_HISTORY, keep=getattr(args, "history_keep", None))


def baseline_sink(args: argparse.Namespace, source: str) -> BaselineSink | None:
    """With ``--baseline``: the sink comparing the run with it, read before the run starts (a
    missing baseline is a ``HistoryError``, exit 2)."""
    if not getattr(args, "baseline", None):
        return None
    from agenteval_otel.results import BaselineSink

    return BaselineSink.resolve(_store(args), args.baseline, source)


def record_history(args: argparse.Namespace, report_or_summary: EvalReport | EvalSummary, command: str,
                   source: str | None = None) -> None:
    """Record the run in the history unless ``--no-history``; a store that cannot take it is
    one warning on stderr, never a failed run."""
    if args.no_history:
        return
    from agenteval_otel.errors import HistoryError

    try:
        _store(args).record(report_or_summary, command=command, source=source)
    except HistoryError as exc:
        print(f"agenteval: warning: the run was not recorded in the history: {exc}", file=sys.stderr)


def history(args: argparse.Namespace) -> int:
    """List the runs recorded, newest first."""
    store = _store(args)
    runs = store.runs(args.limit)
    if args.json:
        print(json.dumps([_plain(asdict(run)) for run in runs], indent=2))
        return EXIT_OK
    from rich.console import Console

    from agenteval_otel.reports import history_table

    Console().print(history_table(runs, title=f"run history: {store.path} ({len(runs)} shown)"))
    return EXIT_OK


def _plain(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value.isoformat() if hasattr(value, "isoformat") else value for key, value in data.items()}


def add_commands(commands: Any) -> None:
    """``history``."""
    listed = commands.add_parser("history", help="list the runs recorded in the run history")
    listed.add_argument("--history", metavar="PATH", help="the run history, a SQLite file (.agenteval/history.db)")
    listed.add_argument("--limit", type=positive_int, default=20, metavar="N", help="the newest N runs (20)")
    listed.add_argument("--json", action="store_true", help="print the runs as JSON")
    listed.set_defaults(handler=history)
