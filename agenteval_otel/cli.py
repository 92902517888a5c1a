"""The ``agenteval`` command.

Exit codes: 0 = all passed, 1 = some case failed or errored (or the output's reader went away,
as with ``agenteval ... | head``), 2 = bad input. ``experiment run``: 1 when some record failed or
errored; ``experiment compare``: 1 when some metric is significantly lower in B than in A.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agenteval_otel.errors import AgentEvalError, ConfigError
from agenteval_otel.evaluation import run_sync

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXPORT_TIMEOUT_S = 10.0

Command = Callable[[argparse.Namespace], int]

_log = logging.getLogger("agenteval_otel.cli")


def _cmd_show(args: argparse.Namespace) -> int:
    """Print the cases of an eval set as a table."""
    from rich.console import Console

    from agenteval_otel.evalsets import EvalSet
    from agenteval_otel.reports import eval_set_table

    eval_set = EvalSet.load(args.evalset)
    Console().print(eval_set_table(eval_set))
    return EXIT_OK


def _cmd_trajectory(args: argparse.Namespace) -> int:
    """Print the trajectories read from trace files, as JSON or as tables."""
    from rich.console import Console

    from agenteval_otel.reports import iter_trajectories_json, trajectories_table
    from agenteval_otel.traces.files import read_trajectories

    if args.explain:
        return _explain(args)
    found = read_trajectories(args.files, group=args.group, logs=args.logs or ())  # skipped lines are logged
    if args.format == "json":
        sys.stdout.writelines(iter_trajectories_json(found.trajectories))
        sys.stdout.write("\n")
    else:
        Console().print(trajectories_table(found.trajectories))
    return EXIT_OK


def _explain(args: argparse.Namespace) -> int:
    """Print, trace by trace, which reader read each span and what it read."""
    from agenteval_otel.traces.files import spans_with_logs
    from agenteval_otel.trajectory.explain import explain

    _, spans = spans_with_logs(args.files, args.logs or ())
    traces: dict[str, list[Any]] = {}
    for record in spans:
        traces.setdefault(record.trace_id, []).append(record)
    for trace_id, records in traces.items():
        print(f"trace {trace_id}")
        for explanation in explain(records):
            print("  " + explanation.line())
    return EXIT_OK


def _inputs(args: argparse.Namespace) -> tuple[Any, Any]:
    """The eval set (``None`` when none is named) and the config named on the command line
    (without one, the default criteria for the eval set: Google ADK's for an ADK file), after
    importing the ``--criteria-module``s the config may name."""
    from agenteval_otel.criteria import EvalConfig, load_criteria_module
    from agenteval_otel.evalsets import EvalSet

    for module in args.criteria_module or ():
        load_criteria_module(module)
    eval_set = EvalSet.load(args.evalset) if args.evalset is not None else None
    if args.config:
        return eval_set, EvalConfig.load(args.config)
    if eval_set is None:
        raise ConfigError("without an eval set, give the criteria to score every invocation with: "
                          "--config FILE (policies such as max_tool_calls, forbidden_tools, no_tool_errors)")
    return eval_set, EvalConfig.default_for(eval_set)


def _report_files(args: argparse.Namespace) -> list[Any]:
    """The report files asked for (``--report``, ``--junit``, ``--html``), as sinks."""
    from agenteval_otel.reports import ReportFile, ReportFormat

    asked: tuple[tuple[ReportFormat, str | None], ...] = (
        ("json", args.report), ("junit", args.junit), ("html", args.html))
    return [ReportFile(path, kind) for kind, path in asked if path]


def _finish(report: Any, args: argparse.Namespace, files: Sequence[Any]) -> int:
    """Print the console report (unless ``--quiet``) and the report files written; exit 0 if
    every case passed, else 1."""
    from rich.console import Console

    from agenteval_otel.reports import print_report

    console = Console()
    if not args.quiet:
        print_report(report, console)
        for file in files:
            if file.written is not None:
                console.print(f"wrote {file.written}", highlight=False)
    return EXIT_OK if report.passed else EXIT_FAILED


@contextmanager
def _recording(
    run_id: str, config: Any, args: argparse.Namespace, kind: str, total: int | None, files: Sequence[Any]
) -> Iterator[tuple[dict[str, Any], list[Any]]]:
    """The results already in the run file of ``run_id`` (the eval set's id; with ``--resume``)
    and the sinks of the run: the run file, the progress bar (of ``total`` results, ``None``
    when not known) and the report ``files``."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from agenteval_otel.results import CallbackSink, RunFile, default_run_file

    path = args.run_file or default_run_file(run_id, kind)
    console = Console(stderr=True)
    with RunFile(path, run_id, config) as run_file:
        done = run_file.open(resume=args.resume)
        if done and not args.quiet:
            console.print(f"resuming {path}: {len(done)} case(s) already scored", highlight=False)
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console, transient=True,
                            disable=args.quiet or not console.is_terminal)
        task = progress.add_task(kind, total=total, completed=len(done))
        with progress:
            yield done, [run_file, CallbackSink(lambda _: progress.advance(task)), *files]


@contextmanager
def _result_export(args: argparse.Namespace, eval_set_id: str) -> Iterator[list[Any]]:
    """With ``--export-results TARGET``: a sink writing the verdicts into the judged traces at
    TARGET (an OTLP URL or a file), shut down (flushed) when the block ends."""
    if not args.export_results:
        yield []
        return
    from agenteval_otel.results import TraceExport

    shown = _without_credentials(args.export_results)
    try:
        export = TraceExport.to_target(args.export_results, eval_set_id=eval_set_id)
    except OSError as exc:
        raise ConfigError(f"--export-results {shown}: cannot write there ({exc.strerror or exc}); "
                          "expected an OTLP URL (http://, https://, grpc://) or a writable file path") from None
    try:
        yield [export]
    finally:
        if not export.shutdown(timeout=EXPORT_TIMEOUT_S):
            _log.warning("not every verdict could be exported to %s within %g s", shown, EXPORT_TIMEOUT_S)


def _selected_or_error(evaluator: Any, eval_set: Any, args: argparse.Namespace) -> int:
    """How many cases the run has; ``ConfigError`` listing the tags there are when ``--tags``
    matches none."""
    total = len(evaluator.selected(eval_set))
    if args.tags and total == 0:
        known = sorted({tag for case in eval_set.eval_cases for tag in case.tags})
        there = (f"the tags in {args.evalset} are: {', '.join(known)}" if known
                 else f"no case in {args.evalset} has tags")
        raise ConfigError(f"--tags {' '.join(args.tags)}: no case has one of these tags; {there}")
    return total


def _otlp_endpoint() -> str | None:
    """The OTLP endpoint the environment names for traces, if any."""
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return endpoint.strip() if endpoint and endpoint.strip() else None


def _unreachable(endpoint: str) -> str | None:
    """Why no connection to ``endpoint`` opens within a second; ``None`` when one does."""
    url = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    grpc = "grpc" in (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                      or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "").lower()
    try:
        port = url.port or (443 if url.scheme == "https" else 4317 if grpc else 4318)
        with socket.create_connection((url.hostname or "localhost", port), timeout=1.0):
            return None
    except (OSError, ValueError) as exc:
        return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _without_credentials(endpoint: str) -> str:
    """``endpoint`` with any ``user:password@`` masked, to be shown."""
    url = urlsplit(endpoint)
    if url.username is None and url.password is None:
        return endpoint
    return url._replace(netloc="***@" + url.netloc.rpartition("@")[2]).geturl()


def _span_destinations(handle: Any) -> tuple[str, str | None]:
    """Where the run's spans go (for the ``traces:`` line), and why they may not get there."""
    from agenteval_otel.tracing import OtlpJsonFileExporter

    places: list[str] = []
    problem = None
    for exporter in handle.exporters:
        endpoint = _otlp_endpoint()
        if isinstance(exporter, OtlpJsonFileExporter) or endpoint is None:
            places.append(str(getattr(exporter, "path", type(exporter).__name__)))
            continue
        shown = _without_credentials(endpoint)
        reason = _unreachable(endpoint)
        places.append(f"OTLP {shown}" + (f" (unreachable: {reason})" if reason else ""))
        if reason:
            problem = f"the OTLP endpoint {shown} is unreachable ({reason}): this run's spans will be lost"
    return (", ".join(places) or "not exported (OTEL_TRACES_EXPORTER=none)"), problem


def _cmd_run(args: argparse.Namespace) -> int:
    """Run an agent over an eval set, trace every turn, and score the cases."""
    from agenteval_otel.evaluation import LiveRunner, load_agent
    from agenteval_otel.tracing import configure

    eval_set, config = _inputs(args)
    evaluator = LiveRunner(load_agent(args.agent), config, concurrency=args.concurrency,
                          timeout_s=args.timeout, num_runs=args.runs, tags=args.tags or ())
    total = _selected_or_error(evaluator, eval_set, args)
    files = _report_files(args)
    with (_result_export(args, eval_set.eval_set_id) as exports,
          _recording(eval_set.eval_set_id, evaluator.config, args, "run", total, files) as (done, sinks)):
        handle = configure(service_name="agenteval")
        destinations, problem = _span_destinations(handle)
        if problem:
            _log.warning("%s", problem)
        try:
            report = run_sync(evaluator.aevaluate(eval_set, done=done, sinks=[*sinks, *exports]), "aevaluate")
        finally:
            handle.shutdown(timeout=1 if problem else 10)
    if not args.quiet:
        print(f"traces: {destinations}")
    return _finish(report, args, files)


def _cmd_simulate(args: argparse.Namespace) -> int:
    """Run an agent over a query set (after expanding it, with ``--expand``), one record per query."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from agenteval_otel.experiments import QuerySet, asimulate, expand, load_runner
    from agenteval_otel.judge import JudgeClient, JudgeSettings
    from agenteval_otel.tracing import configure

    for name, value in (("--concurrency", args.concurrency), ("--expand", args.expand)):
        if value is not None and value < (1 if name == "--concurrency" else 0):
            raise ConfigError(f"{name} {value}: expected a whole number of at least "
                              f"{1 if name == '--concurrency' else 0}")
    if args.timeout is not None and args.timeout <= 0:
        raise ConfigError(f"--timeout {args.timeout:g}: expected a positive number of seconds")
    queries = QuerySet.load(args.queries)
    agent = load_runner(args.agent, strict=args.strict_requirements)
    console = Console(stderr=True)
    if args.expand:
        judge = JudgeClient(JudgeSettings.from_env(**({"model": args.judge_model} if args.judge_model else {})))
        before = len(queries)
        queries = expand(queries, args.expand, judge=judge)
        source = Path(args.queries)
        saved = queries.save(args.expanded or source.with_name(source.name.split(".")[0] + ".expanded.jsonl"))
        if not args.quiet:
            console.print(f"added {len(queries) - before} of {args.expand} new queries: wrote {saved}",
                          highlight=False)
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=console, transient=True,
                        disable=args.quiet or not console.is_terminal)
    task = progress.add_task("simulate", total=len(queries))
    handle = configure(service_name="agenteval")
    try:
        with progress:
            records = run_sync(asimulate(
                agent, queries, out=args.out, concurrency=args.concurrency, resume=not args.restart,
                timeout_s=args.timeout, on_record=lambda _: progress.advance(task)), "asimulate")
    finally:
        handle.shutdown(timeout=10)
    failed = sum(record.failed for record in records)
    if not args.quiet:
        print(f"simulated {len(records)} queries, {failed} failed: wrote {args.out}")
    return EXIT_FAILED if failed else EXIT_OK


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _lookback(text: str) -> timedelta:
    """``30m``, ``1h``, ``2d`` as a duration."""
    number, unit = text[:-1], text[-1:].lower()
    try:
        if unit in _UNITS and float(number) > 0:
            return timedelta(seconds=float(number) * _UNITS[unit])
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"expected a duration such as 30m, 1h or 2d, got {text!r}")


def _traces_id(args: argparse.Namespace) -> str:
    """What a report without an eval set is named: the trace file's name (without its
    extensions), ``jaeger-SERVICE``, or ``traces`` for several files."""
    if args.jaeger:
        return f"jaeger-{args.service}"
    if args.traces and len(args.traces) == 1:
        return Path(args.traces[0]).name.split(".")[0] or "traces"
    return "traces"


def _cmd_eval(args: argparse.Namespace) -> int:
    """Score an eval set against traces recorded earlier, or every invocation in them with
    criteria that need no eval set."""
    from agenteval_otel.evaluation import aevaluate_traces

    eval_set, config = _inputs(args)
    if args.jaeger:
        from agenteval_otel.traces.jaeger_client import JaegerClient

        if not args.service:
            raise ConfigError("--jaeger needs --service NAME")
        try:
            client = JaegerClient(args.jaeger)
        except ValueError as exc:  # its message shows the URL with credentials masked
            raise ConfigError(f"--jaeger: {exc}") from None
        source: Any = client.find_traces(args.service, lookback=args.lookback, limit=args.limit)
    elif args.traces:
        source = args.traces
    else:
        raise ConfigError(
            "give trace files with --traces FILE... or a Jaeger query with --jaeger URL --service NAME")
    files = _report_files(args)
    run_id = eval_set.eval_set_id if eval_set is not None else _traces_id(args)
    # invocations matched to no case are scored too when the config has reference-free criteria
    total = len(eval_set.eval_cases) if eval_set is not None and not config.reference_free() else None
    with (_result_export(args, run_id) as exports,
          _recording(run_id, config, args, "eval", total, files) as (done, sinks)):
        report = run_sync(aevaluate_traces(eval_set, source, config, done=done, sinks=[*sinks, *exports],
                                           runs="all" if args.all_runs else "latest",
                                           logs=args.logs or (), source_id=run_id,
                                           keep_trajectories=True if args.keep_trajectories else None),
                          "aevaluate_traces")
    return _finish(report, args, files)


def _cmd_serve(args: argparse.Namespace) -> int:
    """Receive OTLP, score every invocation as its trace completes, export the verdicts; until
    interrupted (SIGINT or SIGTERM), then stop within ``--shutdown-timeout``."""
    import signal
    import threading

    from agenteval_otel.criteria import EvalConfig, load_criteria_module
    from agenteval_otel.evalsets import EvalSet
    from agenteval_otel.evaluation import EvaluationWorker

    for module in args.criteria_module or ():
        load_criteria_module(module)
    eval_set = EvalSet.load(args.evalset) if args.evalset else None
    config = EvalConfig.load(args.config) if args.config else EvalConfig.default_for(eval_set) \
        if eval_set is not None else None
    if config is None:
        raise ConfigError("give the criteria to score with: --config FILE (e.g. policies, see "
                          "examples/production_policies.json)")
    if eval_set is None and not config.reference_free():
        raise ConfigError(f"{args.config}: no criterion here scores without a reference, and no --evalset "
                          "was given; add reference-free criteria (policies, judge criteria) or an eval set")
    token = args.token or os.environ.get("AGENTEVAL_SERVE_TOKEN") or None
    target = args.export_results or _otlp_endpoint()
    if target is None:
        raise ConfigError("say where the verdicts go: --export-results TARGET (an OTLP URL such as "
                          "http://localhost:4318, or a file), or set OTEL_EXPORTER_OTLP_ENDPOINT")
    try:
        worker = EvaluationWorker(
            config, eval_set=eval_set, export_target=target, host=args.host,
            http_port=args.port, grpc_port=args.grpc_port, token=token,
            evaluator_options={"sample_rate": args.sample_rate},
        ).start()
    except ImportError as exc:  # the serve extra is missing
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"cannot listen on {args.host}: {exc.strerror or exc}") from None
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    grpc = f", OTLP/gRPC on {args.host}:{worker.receiver.grpc_port}" if args.grpc_port is not None else ""
    print(f"agenteval serve: OTLP/HTTP on http://{args.host}:{worker.receiver.http_port}{grpc}; "
          f"verdicts to {_without_credentials(target)}",
          flush=True)
    stop.wait()
    done = worker.stop(timeout=args.shutdown_timeout)
    print(f"agenteval serve: stopped; {worker.evaluator.counters}", flush=True)
    return EXIT_OK if done else EXIT_FAILED


def _cmd_experiment_run(args: argparse.Namespace) -> int:
    """Grade a simulation run with a grader directory or eval criteria; write the experiment."""
    from rich.console import Console

    from agenteval_otel.criteria import EvalConfig, load_criteria_module
    from agenteval_otel.experiments import SimulationRecord, arun_experiment, experiment_table
    from agenteval_otel.experiments.graders import load_grader_dir

    for module in args.criteria_module or ():
        load_criteria_module(module)
    config = EvalConfig.load(args.config) if args.config else None
    grader = load_grader_dir(args.grader) if args.grader else None
    records = SimulationRecord.load_jsonl(args.run)
    if not records:
        raise ConfigError(f"{args.run}: no simulation record in it (expected one JSON object per query, "
                          "as written by 'agenteval simulate')")
    if args.concurrency < 1:
        raise ConfigError(f"--concurrency: expected at least 1, got {args.concurrency}")
    result = run_sync(arun_experiment(records, grader=grader, config=config, concurrency=args.concurrency,
                                      threshold=args.threshold, source=str(args.run)), "arun_experiment")
    if args.grader:
        result.graded_by = f"grader {args.grader}"
    try:
        result.write_jsonl(args.out)
    except OSError as exc:
        raise ConfigError(f"--out {args.out}: cannot write there ({exc.strerror or exc})") from None
    if not args.quiet:
        console = Console()
        console.print(experiment_table(result))
        console.print(f"wrote {args.out}", highlight=False)
    return EXIT_OK if result.passed else EXIT_FAILED


def _cmd_experiment_compare(args: argparse.Namespace) -> int:
    """Compare experiment B with experiment A; exit 1 when a metric is significantly lower in B."""
    from rich.console import Console

    from agenteval_otel.experiments import ExperimentResult, compare, comparison_table

    if args.resamples < 1:
        raise ConfigError(f"--resamples: expected at least 1, got {args.resamples}")
    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha: expected a level between 0 and 1, got {args.alpha}")
    a, b = ExperimentResult.load_jsonl(args.a), ExperimentResult.load_jsonl(args.b)
    a.source, b.source = str(args.a), str(args.b)
    comparison = compare(a, b, resamples=args.resamples, seed=args.seed, alpha=args.alpha)
    if args.report:
        try:
            Path(args.report).write_text(comparison.model_dump_json(indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--report {args.report}: cannot write there ({exc.strerror or exc})") from None
    if not args.quiet:
        console = Console()
        console.print(comparison_table(comparison))
        if args.report:
            console.print(f"wrote {args.report}", highlight=False)
    return EXIT_FAILED if comparison.regressions else EXIT_OK


def _experiment_parser(sub: Any) -> None:
    experiment = sub.add_parser("experiment", help="grade a simulation run; compare two experiments")
    commands = experiment.add_subparsers(dest="experiment_command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="grade a simulation run (RUN.jsonl) with a grader or eval criteria")
    run.add_argument("run", metavar="RUN.jsonl", help="a simulation run, as written by 'agenteval simulate'")
    how = run.add_mutually_exclusive_group(required=True)
    how.add_argument("--grader", metavar="DIR",
                     help="a grader directory: template.j2, model_config.json and optionally parser.py")
    how.add_argument("--config", metavar="FILE",
                     help="eval criteria (EvalConfig JSON); reference-based ones use each query's ground truth")
    run.add_argument("--criteria-module", action="append", metavar="MODULE_OR_FILE",
                     help="import a module or .py file whose @criterion functions the config names")
    run.add_argument("--out", required=True, metavar="EXP.jsonl",
                     help="where the experiment goes: one graded record per line, then a summary line")
    run.add_argument("--concurrency", type=int, default=4, metavar="N", help="records graded at once (4)")
    run.add_argument("--threshold", type=float, default=0.5, metavar="T",
                     help="with --grader: the score a metric must reach to pass (0.5)")
    run.add_argument("--quiet", action="store_true", help="print nothing but errors")
    run.set_defaults(handler=_cmd_experiment_run)
    compared = commands.add_parser("compare", help="compare experiment B with experiment A, metric by metric")
    compared.add_argument("a", metavar="A.jsonl", help="the baseline experiment")
    compared.add_argument("b", metavar="B.jsonl", help="the experiment compared with it")
    compared.add_argument("--report", metavar="FILE", help="write the comparison as JSON")
    compared.add_argument("--resamples", type=int, default=2000, metavar="N",
                          help="bootstrap resamples for the confidence interval (2000)")
    compared.add_argument("--seed", type=int, default=0, help="the bootstrap's random seed (0)")
    compared.add_argument("--alpha", type=float, default=0.05,
                          help="significance level of the paired test (0.05); a metric significantly lower "
                               "in B exits 1")
    compared.add_argument("--quiet", action="store_true", help="print nothing but errors")
    compared.set_defaults(handler=_cmd_experiment_compare)


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
    trajectory.add_argument("--logs", nargs="+", metavar="FILE",
                            help="OTLP/JSON log files whose records carry the spans' content "
                                 "(log files given as FILE are recognised too)")
    trajectory.add_argument("--explain", action="store_true",
                            help="show, per span, which convention reader read it and what it read")
    trajectory.set_defaults(handler=_cmd_trajectory)

    run = sub.add_parser("run", help="run an agent over an eval set and score it")
    run.add_argument("evalset", help="an .evalset.json file (ours or Google ADK's)")
    run.add_argument("--agent", required=True, metavar="MODULE:ATTR",
                     help="the agent: 'package.module:attr' or 'path/to/file.py:attr'")
    _common_options(run)
    run.add_argument("--concurrency", type=int, default=4, metavar="N", help="cases run at once (4)")
    run.add_argument("--runs", type=int, default=1, metavar="N",
                     help="run every case N times and report pass@k / pass^k (1)")
    run.add_argument("--timeout", type=float, default=300.0, metavar="S",
                     help="seconds a case may take before it is errored (300)")
    run.add_argument("--tags", nargs="+", metavar="TAG", help="only the cases with one of these tags")
    run.set_defaults(handler=_cmd_run)

    simulate = sub.add_parser("simulate", help="run an agent over a query set (JSONL), one record per query")
    simulate.add_argument("queries", metavar="QUERIES.jsonl", help='a query set: one {"content": ...} a line')
    simulate.add_argument("--agent", required=True, metavar="MODULE:ATTR|SPEC.yaml",
                          help="the agent: 'package.module:attr', 'path/to/file.py:attr' or a YAML spec "
                               "(module, className, requirementsPath)")
    simulate.add_argument("--out", required=True, metavar="RUN.jsonl",
                          help="where records are appended as queries finish; an interrupted run resumes")
    simulate.add_argument("--restart", action="store_true", help="start RUN.jsonl over instead of resuming it")
    simulate.add_argument("--concurrency", type=int, default=4, metavar="N", help="queries run at once (4)")
    simulate.add_argument("--timeout", type=float, default=300.0, metavar="S",
                          help="seconds a query may take before it is recorded as timed out (300)")
    simulate.add_argument("--expand", type=int, metavar="N",
                          help="first add N new queries written by the judge model in the style of the given ones")
    simulate.add_argument("--judge-model", metavar="MODEL",
                          help="with --expand: the model (default: AGENTEVAL_JUDGE_MODEL or the judge's default)")
    simulate.add_argument("--expanded", metavar="FILE",
                          help="with --expand: where the expanded query set is saved "
                               "(default: QUERIES.expanded.jsonl beside QUERIES)")
    simulate.add_argument("--strict-requirements", action="store_true",
                          help="stop when a YAML spec's requirements are not met (default: a warning)")
    simulate.add_argument("--quiet", action="store_true", help="print nothing but errors")
    simulate.set_defaults(handler=_cmd_simulate)

    offline = sub.add_parser("eval", help="score an eval set, or every invocation with policies, "
                                          "against recorded traces")
    offline.add_argument("evalset", nargs="?",
                         help="an .evalset.json file (ours or Google ADK's); without one, every "
                              "invocation is scored with the reference-free criteria of --config")
    offline.add_argument("--traces", nargs="+", metavar="FILE",
                         help="trace files: OTLP/JSON (lines), OTLP protobuf or Jaeger JSON")
    offline.add_argument("--logs", nargs="+", metavar="FILE",
                         help="OTLP/JSON log files whose records carry the spans' content")
    offline.add_argument("--jaeger", metavar="URL", help="a Jaeger query service, e.g. http://localhost:16686")
    offline.add_argument("--service", metavar="NAME", help="with --jaeger: the service to read")
    offline.add_argument("--lookback", type=_lookback, default="1h",
                         help="with --jaeger: how far back, e.g. 30m, 1h, 2d (1h)")
    offline.add_argument("--limit", type=int, default=1000, help="with --jaeger: at most this many traces")
    offline.add_argument("--all-runs", action="store_true",
                         help="score every recorded run of a case as repeated runs (pass@k, pass^k); "
                              "default: the latest run of each case, older ones set aside")
    offline.add_argument("--keep-trajectories", action="store_true",
                         help="hold every case's actual trajectory in memory until the end (default: "
                              "only the first failed or errored cases'; report files get them all)")
    _common_options(offline)
    offline.set_defaults(handler=_cmd_eval)

    serve = sub.add_parser("serve", help="an evaluation worker: receive OTLP, score invocations, export verdicts")
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, default=4319, help="OTLP/HTTP port (4319; 0 picks a free one)")
    serve.add_argument("--grpc-port", type=int, default=None, metavar="PORT",
                       help="also receive OTLP/gRPC on this port (e.g. 4320)")
    serve.add_argument("--config", metavar="FILE", help="the criteria: policies and other reference-free "
                                                        "criteria, and reference-based ones for --evalset cases")
    serve.add_argument("--evalset", metavar="FILE", help="cases whose invocations (matched by conversation "
                                                         "id or input) reference-based criteria score")
    serve.add_argument("--criteria-module", action="append", metavar="MODULE_OR_FILE",
                       help="import a module or .py file whose @criterion functions the config names")
    serve.add_argument("--export-results", metavar="TARGET",
                       help="where verdicts go: an OTLP URL (http://, https://, grpc://) or a file "
                            "(default: the OTLP endpoint of the OTEL_EXPORTER_OTLP_* variables)")
    serve.add_argument("--token", help="require 'Authorization: Bearer TOKEN' (or AGENTEVAL_SERVE_TOKEN)")
    serve.add_argument("--sample-rate", type=float, default=1.0, metavar="R",
                       help="the share of traces scored, decided by trace id (1.0)")
    serve.add_argument("--shutdown-timeout", type=float, default=10.0, metavar="S",
                       help="seconds to finish scoring and exporting when stopped (10)")
    serve.set_defaults(handler=_cmd_serve)
    _experiment_parser(sub)
    return parser


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
    parser.add_argument("--resume", action="store_true",
                        help="keep the results of an interrupted run (its run file) and run only "
                             "the cases left")
    parser.add_argument("--run-file", metavar="FILE",
                        help="where results are appended as cases finish "
                             "(default: .agenteval/<eval set id>.<command>.jsonl)")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    parser.add_argument("--export-results", metavar="TARGET",
                        help="write the verdicts into the judged traces: evaluation spans under each "
                             "invocation's root span and gen_ai.evaluation.result log records, sent to "
                             "an OTLP endpoint (http(s)://HOST:PORT over http/protobuf, grpc://HOST:PORT "
                             "or OTEL_EXPORTER_OTLP_PROTOCOL=grpc over gRPC) or appended to a file as "
                             "OTLP/JSON lines (log records to FILE's .logs.jsonl sibling)")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR if getattr(args, "quiet", False) else logging.WARNING,
                        format="agenteval: %(levelname)s: %(message)s")
    handler: Command = args.handler
    try:
        code = handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except AgentEvalError as exc:
        print(f"agenteval: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # the reader went away (``agenteval ... | head``): stop quietly,
        devnull = os.open(os.devnull, os.O_WRONLY)  # with 1 as rich's console does
        os.dup2(devnull, sys.stdout.fileno())  # so the flush at exit does not fail again
        return EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
