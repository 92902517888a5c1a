"""``agenteval run`` (the library's ``evaluate``: run an agent over an eval set, trace and score
every turn) and ``agenteval eval`` (``evaluate_traces``: score traces recorded earlier)."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval_otel.cli._args import add_export_options, non_negative_int, positive_float, positive_int
from agenteval_otel.cli._exits import EXIT_FAILED, EXIT_OK
from agenteval_otel.cli._history import add_history_options, baseline_sink, record_history
from agenteval_otel.cli._inputs import add_readers_option, convention_readers, criteria_config, load_eval_set
from agenteval_otel.cli._sources import add_source_options, source_id, trace_source
from agenteval_otel.errors import ConfigError, mask_url

if TYPE_CHECKING:
    from agenteval_otel.criteria import EvalConfig
    from agenteval_otel.evalsets import EvalSet
    from agenteval_otel.evaluation import LiveRunner
    from agenteval_otel.reports import ReportFile, WorkRead
    from agenteval_otel.results import EvalCaseResult, EvalReport, EvaluationSink
    from agenteval_otel.traces import TraceSource
    from agenteval_otel.trajectory.conventions import Reader

__all__ = ["add_commands"]

EXPORT_TIMEOUT_S = 10.0

_log = logging.getLogger("agenteval_otel.cli")


def run(args: argparse.Namespace) -> int:
    """Run an agent over an eval set, trace every turn, and score the cases."""
    from agenteval_otel.evalsets import EvalSet
    from agenteval_otel.evaluation import LiveRunner, load_agent, run_sync
    from agenteval_otel.tracing import configure, span_destinations

    eval_set = EvalSet.load(args.evalset)
    runner = LiveRunner(load_agent(args.agent), criteria_config(args, eval_set), concurrency=args.concurrency,
                        timeout_s=args.timeout, criterion_timeout_s=args.timeout, num_runs=args.runs,
                        tags=args.tags or (), run_id=args.run_id)
    total = _selected_or_error(runner, eval_set, args)
    files = _report_files(args, eval_set)
    baseline = [sink] if (sink := baseline_sink(args, eval_set.eval_set_id)) else []
    with (_result_export(args, eval_set.eval_set_id) as exports,
          _recording(eval_set.eval_set_id, runner.config, args, "run", total, [*baseline, *files]) as (done, sinks)):
        handle = configure(service_name="agenteval")
        destinations, problem = span_destinations(handle.exporters)  # a down endpoint is warned about once
        try:
            report = run_sync(runner.aevaluate(eval_set, done=done, sinks=[*sinks, *exports]), "aevaluate")
        finally:
            handle.shutdown(timeout=1 if problem else 10)
    if not args.quiet:
        print(f"traces: {destinations}")
    record_history(args, report, "run")
    return _finish(report, args, files)


def evaluate_traces(args: argparse.Namespace) -> int:
    """Score an eval set against traces recorded earlier, or every invocation in them with
    criteria that need no eval set."""
    from agenteval_otel.evaluation import aevaluate_traces, default_judge, run_sync

    eval_set = load_eval_set(args.evalset)
    config = criteria_config(args, eval_set)
    source = trace_source(args)
    readers = convention_readers(args)
    files = _report_files(args, eval_set)
    run_id = eval_set.eval_set_id if eval_set is not None else source_id(args)
    # invocations matched to no case are scored too when the config has reference-free criteria
    total = len(eval_set.eval_cases) if eval_set is not None and not config.reference_free() else None
    if args.engine != "ray" and (args.address or args.partitions):
        raise ConfigError(f"{'--address' if args.address else '--partitions'} goes with --engine ray")
    baseline = [sink] if (sink := baseline_sink(args, run_id)) else []
    if args.engine == "ray":
        return _evaluate_on_ray(args, eval_set, config, source, run_id, total, [*baseline, *files], readers)
    judge = default_judge()
    status = (lambda: f"judge calls in flight: {judge.in_flight}/{judge.settings.concurrency}") if judge else None
    with (_result_export(args, run_id) as exports,
          _recording(run_id, config, args, "eval", total, [*baseline, *files], work=source.progress, status=status)
          as (done, sinks)):
        report = run_sync(aevaluate_traces(eval_set, source, config, done=done, sinks=[*sinks, *exports],
                                           runs="all" if args.all_runs else "latest", source_id=run_id,
                                           criterion_timeout_s=args.timeout, concurrency=args.concurrency,
                                           judge=judge, readers=readers,
                                           keep_trajectories=True if args.keep_trajectories else None),
                          "aevaluate_traces")
    record_history(args, report, "eval", run_id)
    return _finish(report, args, files)


def _evaluate_on_ray(args: argparse.Namespace, eval_set: EvalSet | None, config: EvalConfig, source: TraceSource,
                     run_id: str, total: int | None, sinks: Sequence[EvaluationSink],
                     readers: Sequence[Reader] | None) -> int:
    """``agenteval eval --engine ray``: the job's run files in the run file's ``.ray`` folder;
    ``sinks``: the baseline's and the report files."""
    from agenteval_otel.evaluation import evaluate_traces_on_ray
    from agenteval_otel.reports import ReportFile, progress_sink
    from agenteval_otel.results import default_run_file

    run_dir = Path(args.run_file or default_run_file(run_id, "eval")).with_suffix(".ray")
    with (_result_export(args, run_id) as exports,
          progress_sink("eval", total, 0, quiet=args.quiet) as progress):
        try:
            report = evaluate_traces_on_ray(
                eval_set, source, config, address=args.address, partitions=args.partitions, run_dir=run_dir,
                sinks=[progress, *sinks, *exports], resume=args.resume, criterion_timeout_s=args.timeout,
                runs="all" if args.all_runs else "latest", source_id=run_id, readers=readers,
                keep_trajectories=True if args.keep_trajectories else None,
                criteria_modules=args.criteria_module or ())
        except RuntimeError as exc:  # a task that failed stopped the job: one line, and how to resume
            print(f"agenteval: error: {exc}".replace("resume=True (--resume)", "--resume"), file=sys.stderr)
            return EXIT_FAILED
    record_history(args, report, "eval", run_id)
    return _finish(report, args, [file for file in sinks if isinstance(file, ReportFile)])


def _report_files(args: argparse.Namespace, eval_set: EvalSet | None) -> list[ReportFile]:
    """The report files asked for (``--report``, ``--junit``, ``--html``, ``--csv``), as sinks,
    listing as much of a large run as ``--report-full-cases`` and ``--report-full-failures`` say."""
    from agenteval_otel.reports import ReportFile, ReportFormat, ReportLimits

    asked: tuple[tuple[ReportFormat, str | None], ...] = (
        ("json", args.report), ("junit", args.junit), ("html", args.html), ("csv", args.csv))
    given = {"full_cases": args.report_full_cases, "full_failures": args.report_full_failures}
    limits = ReportLimits(**{name: value for name, value in given.items() if value is not None})
    tags = {case.eval_id: case.tags for case in eval_set.eval_cases if case.tags} if eval_set is not None else {}
    return [ReportFile(path, kind, limits=limits, tags=tags) for kind, path in asked if path]


def _finish(report: EvalReport, args: argparse.Namespace, files: Sequence[ReportFile]) -> int:
    """Print the console report (unless ``--quiet``), the report files written and those that
    could not be; exit 0 if every case passed and every report file was written, else 1."""
    from rich.console import Console

    from agenteval_otel.reports import baseline_table, print_report

    console = Console()
    if not args.quiet:
        print_report(report, console, show_failures=args.show_failures,
                     report_files=[str(file.path) for file in files if file.written is not None])
        if report.baseline is not None:
            console.print(baseline_table(report.baseline))
            for note in report.baseline.notes:
                console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
        for file in files:
            if file.written is not None:
                console.print(f"wrote {file.written}", highlight=False)
    unwritten = [file for file in files if file.written is None]
    for file in unwritten:
        print(f"agenteval: error: {file.path}: the {file.format} report could not be written "
              f"({file.error or 'the run ended before it'})", file=sys.stderr)
    return EXIT_OK if report.passed and not unwritten else EXIT_FAILED


@contextmanager
def _recording(
    run_id: str, config: EvalConfig, args: argparse.Namespace, kind: str, total: int | None,
    files: Sequence[EvaluationSink], *, work: WorkRead | None = None, status: Callable[[], str] | None = None,
) -> Iterator[tuple[dict[str, EvalCaseResult], list[EvaluationSink]]]:
    """The results already in the run file of ``run_id`` (the eval set's id; with ``--resume``)
    and the sinks of the run: the run file, the progress (of ``total`` results, ``None`` when
    not known; ``work``: the input read so far; ``status``: more to show) and the report
    ``files``."""
    from rich.console import Console

    from agenteval_otel.reports import progress_sink
    from agenteval_otel.results import RunFile, default_run_file

    path = args.run_file or default_run_file(run_id, kind)
    with RunFile(path, run_id, config) as run_file:
        done = run_file.open(resume=args.resume)
        if done and not args.quiet:
            Console(stderr=True).print(f"resuming {path}: {len(done)} case(s) already scored", highlight=False)
        with progress_sink(kind, total, len(done), quiet=args.quiet, work=work, status=status) as progress:
            yield done, [run_file, progress, *files]


@contextmanager
def _result_export(args: argparse.Namespace, eval_set_id: str) -> Iterator[list[EvaluationSink]]:
    """With ``--export-results TARGET`` (repeatable): a sink per target writing the verdicts there
    (``export_sink``: an OTLP URL or a file, as ``--as`` says; ``phoenix+http://...``,
    ``mlflow+http://...``) for the evaluation run ``--run-id`` (default: ``eval_set_id``), shut
    down (flushed) within one deadline when the block ends."""
    if not args.export_results:
        if args.export_as:
            raise ConfigError(f"--as {args.export_as} goes with --export-results TARGET")
        yield []
        return
    from agenteval_otel.results import export_sink

    options: dict[str, Any] = {"eval_set_id": eval_set_id, "run_id": args.run_id or eval_set_id}
    with ExitStack() as stack:
        deadline = time.monotonic() + EXPORT_TIMEOUT_S
        exports: list[EvaluationSink] = []
        for target in args.export_results:
            shown = mask_url(target)
            try:
                export = export_sink(target, write=args.export_as or "events", **options)
            except OSError as exc:
                raise ConfigError(f"--export-results {shown}: cannot write there ({exc.strerror or exc}); expected "
                                  "an OTLP URL (http://, https://, grpc://), phoenix+http://HOST:PORT, "
                                  "mlflow+http://HOST:PORT or a writable file path") from None
            except ConfigError as exc:
                raise ConfigError(f"--export-results {exc}") from None
            exports.append(export)
            stack.callback(_shut_down, export, shown, deadline)
        yield exports


def _shut_down(export: EvaluationSink, shown: str, deadline: float) -> None:
    """Shut ``export`` down by ``deadline``; warn when not every verdict reached its target."""
    if not export.shutdown(timeout=max(0.0, deadline - time.monotonic())):
        _log.warning("not every verdict reached %s within %g s (see the warnings before)", shown, EXPORT_TIMEOUT_S)


def _selected_or_error(runner: LiveRunner, eval_set: EvalSet, args: argparse.Namespace) -> int:
    """How many cases the run has; ``ConfigError`` listing the tags there are when ``--tags``
    matches none."""
    total = len(runner.selected(eval_set))
    if args.tags and total == 0:
        known = sorted({tag for case in eval_set.eval_cases for tag in case.tags})
        there = (f"the tags in {args.evalset} are: {', '.join(known)}" if known
                 else f"no case in {args.evalset} has tags")
        raise ConfigError(f"--tags {' '.join(args.tags)}: no case has one of these tags; {there}")
    return total


def add_commands(commands: Any) -> None:
    """``run`` and ``eval``."""
    live = commands.add_parser("run", help="run an agent over an eval set and score it")
    live.add_argument("evalset", help="an .evalset.json file (ours or Google ADK's)")
    live.add_argument("--agent", required=True, metavar="MODULE:ATTR",
                      help="the agent: 'package.module:attr' or 'path/to/file.py:attr'")
    _common_options(live)
    live.add_argument("--concurrency", type=positive_int, default=4, metavar="N", help="cases run at once (4)")
    live.add_argument("--runs", type=positive_int, default=1, metavar="N",
                      help="run every case N times and report pass@k / pass^k (1)")
    live.add_argument("--timeout", type=positive_float, default=300.0, metavar="S",
                      help="seconds a case's agent, and then each of its criteria, may take before "
                           "it is errored (300)")
    live.add_argument("--tags", nargs="+", metavar="TAG", help="only the cases with one of these tags")
    live.set_defaults(handler=run)

    offline = commands.add_parser("eval", help="score an eval set, or every invocation with policies, "
                                               "against recorded traces")
    offline.add_argument("evalset", nargs="?",
                         help="an .evalset.json file (ours or Google ADK's); without one, every "
                              "invocation is scored with the reference-free criteria of --config")
    add_source_options(offline)
    add_readers_option(offline)
    offline.add_argument("--all-runs", action="store_true",
                         help="score every recorded run of a case as repeated runs (pass@k, pass^k); "
                              "default: the latest run of each case, older ones set aside")
    offline.add_argument("--timeout", type=positive_float, default=300.0, metavar="S",
                         help="seconds each criterion may take on an invocation before it is errored (300)")
    offline.add_argument("--concurrency", type=positive_int, metavar="N",
                         help="cases (or invocations) scored at once (default: twice the judge's "
                              "concurrency limit, AGENTEVAL_JUDGE_CONCURRENCY, and at least 16)")
    offline.add_argument("--engine", choices=("local", "ray"), default="local",
                         help="where to score: this process (local), or a Ray cluster's tasks (ray: the "
                              "'ray' extra; run files in the run file's .ray folder, resumed with --resume)")
    offline.add_argument("--address", metavar="ADDRESS",
                         help="with --engine ray: the cluster, ray://HOST:10001 or auto (default: "
                              "RAY_ADDRESS, else a local cluster for the run)")
    offline.add_argument("--partitions", type=positive_int, metavar="N",
                         help="with --engine ray: how many scoring tasks (default: twice the cluster's CPUs)")
    offline.add_argument("--keep-trajectories", action="store_true",
                         help="hold every case's actual trajectory in memory until the end (default: "
                              "only the first failed or errored cases'; report files get them all)")
    _common_options(offline)
    offline.set_defaults(handler=evaluate_traces)


def _failures_shown(value: str) -> int | None:
    """``--show-failures``: a count, or ``all`` (``None``)."""
    return None if value == "all" else non_negative_int(value)


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="criteria: our EvalConfig JSON or Google ADK's test_config.json "
                             "(default: trajectory_match 0.8 + response_match 0.7; without an eval "
                             "set, required: criteria that need no reference, such as policies)")
    parser.add_argument("--criteria-module", action="append", metavar="MODULE_OR_FILE",
                        help="import a module or .py file whose @criterion functions the config "
                             "names (repeatable); installed agenteval.criteria entry points load "
                             "by themselves")
    parser.add_argument("--report", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--junit", metavar="FILE", help="write the report as JUnit XML")
    parser.add_argument("--html", metavar="FILE", help="write the report as a self-contained HTML page")
    parser.add_argument("--csv", metavar="FILE", help="write the report as CSV, one row per case and criterion")
    parser.add_argument("--report-full-cases", type=non_negative_int, metavar="N",
                        help="above N cases the JSON and HTML reports keep the statistics and plots and "
                             "list only the first failures in full (500)")
    parser.add_argument("--report-full-failures", type=non_negative_int, metavar="N",
                        help="above --report-full-cases: how many failed or errored cases are "
                             "listed in full; the others are counted (20)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the results of an interrupted run (its run file) and run only "
                             "the cases left")
    parser.add_argument("--run-file", metavar="FILE",
                        help="where results are appended as cases finish "
                             "(default: .agenteval/<eval set id>.<command>.jsonl)")
    parser.add_argument("--show-failures", type=_failures_shown, default=20, metavar="N|all",
                        help="how many failed or errored cases the console shows in full; the rest "
                             "are counted in one line naming the report files (20)")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    add_history_options(parser, baseline=True)
    add_export_options(parser, "where the verdicts go (repeatable, one sink per TARGET): an OTLP endpoint "
                               "(http(s)://HOST:PORT over http/protobuf, grpc://HOST:PORT or "
                               "OTEL_EXPORTER_OTLP_PROTOCOL=grpc over gRPC) or a file (OTLP/JSON lines, log "
                               "records to FILE's .logs.jsonl sibling), see --as for what is written; "
                               "phoenix+http://HOST:PORT for Phoenix span annotations on the judged root spans "
                               "($PHOENIX_API_KEY), mlflow+http://HOST:PORT for MLflow feedback assessments "
                               "($MLFLOW_TRACKING_TOKEN); exported again, a verdict is updated, not added",
                       repeatable=True)
