"""``agenteval simulate`` (``experiments.asimulate``), ``agenteval experiment run``
(``experiments.arun_experiment``) and ``agenteval experiment compare`` (``experiments.compare``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agenteval_otel.cli._args import (
    non_negative_int,
    number,
    positive_float,
    positive_int,
    significance,
    whole_number,
)
from agenteval_otel.cli._exits import EXIT_FAILED, EXIT_OK
from agenteval_otel.cli._history import add_history_options, record_history
from agenteval_otel.cli._inputs import load_criteria_modules
from agenteval_otel.errors import ConfigError

__all__ = ["add_commands"]


def simulate(args: argparse.Namespace) -> int:
    """Run an agent over a query set (after expanding it, with ``--expand``), one record per query."""
    from rich.console import Console

    from agenteval_otel.evaluation import run_sync
    from agenteval_otel.experiments import QuerySet, asimulate, expand, load_runner
    from agenteval_otel.judge import JudgeClient, JudgeSettings
    from agenteval_otel.loading import is_yaml
    from agenteval_otel.reports import progress_sink
    from agenteval_otel.tracing import configure

    queries = QuerySet.load(args.queries)
    agent = load_runner(args.agent, strict=args.strict_requirements)
    if args.expand:
        judge = JudgeClient(JudgeSettings.from_env(**({"model": args.judge_model} if args.judge_model else {})))
        before = len(queries)
        queries = expand(queries, args.expand, judge=judge)
        source = Path(args.queries)
        suffix = source.suffix if is_yaml(source) else ".jsonl"  # the format of the queries given
        saved = queries.save(args.expanded or source.with_name(source.name.split(".")[0] + ".expanded" + suffix))
        if not args.quiet:
            Console(stderr=True).print(f"added {len(queries) - before} of {args.expand} new queries: wrote {saved}",
                                       highlight=False)
    handle = configure(service_name="agenteval")
    try:
        with progress_sink("simulate", len(queries), quiet=args.quiet) as progress:
            records = run_sync(asimulate(
                agent, queries, out=args.out, concurrency=args.concurrency, resume=not args.restart,
                timeout_s=args.timeout, on_record=progress.submit), "asimulate")
    finally:
        handle.shutdown(timeout=10)
    failed = sum(record.failed for record in records)
    if not args.quiet:
        print(f"simulated {len(records)} queries, {failed} failed: wrote {args.out}")
    return EXIT_FAILED if failed else EXIT_OK


def run_experiment(args: argparse.Namespace) -> int:
    """Grade a simulation run with a grader directory or eval criteria; write the experiment."""
    from rich.console import Console

    from agenteval_otel.criteria import EvalConfig
    from agenteval_otel.evaluation import run_sync
    from agenteval_otel.experiments import SimulationRecord, arun_experiment
    from agenteval_otel.experiments.graders import load_grader_dir
    from agenteval_otel.reports import experiment_table

    load_criteria_modules(args)
    config = EvalConfig.load(args.config) if args.config else None
    grader = load_grader_dir(args.grader, trust_code=args.trust_grader_code) if args.grader else None
    records = SimulationRecord.load_jsonl(args.run)
    if not records:
        raise ConfigError(f"{args.run}: no simulation record in it (expected one JSON object per query, "
                          "as written by 'agenteval simulate')")
    try:
        result = run_sync(arun_experiment(
            records, grader=grader, config=config, concurrency=args.concurrency, threshold=args.threshold,
            source=str(args.run), out=args.out, resume=args.resume),
            "arun_experiment")
    except OSError as exc:
        if exc.filename is None or Path(exc.filename).name != Path(args.out).name:
            raise
        raise ConfigError(f"--out {args.out}: cannot write there ({exc.strerror or exc})") from None
    record_history(args, result.eval_summary(), "experiment", str(args.run))
    if not args.quiet:
        console = Console()
        console.print(experiment_table(result))
        console.print(f"wrote {args.out}", highlight=False)
    return EXIT_OK if result.passed else EXIT_FAILED


def compare_experiments(args: argparse.Namespace) -> int:
    """Compare experiment B with experiment A; exit 1 when a metric is significantly lower in B."""
    from rich.console import Console

    from agenteval_otel.experiments import ExperimentResult, compare
    from agenteval_otel.reports import comparison_table

    a, b = ExperimentResult.load_jsonl(args.a), ExperimentResult.load_jsonl(args.b)
    a.source, b.source = str(args.a), str(args.b)
    comparison = compare(a, b, resamples=args.resamples, seed=args.seed, alpha=args.alpha)
    if args.report:
        try:
            Path(args.report).write_text(comparison.model_dump_json(indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--report {args.report}: cannot write there ({exc.strerror or exc})") from None
    if args.html:
        from agenteval_otel.reports import comparison_html

        try:
            Path(args.html).write_text(comparison_html(comparison), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--html {args.html}: cannot write there ({exc.strerror or exc})") from None
    if not args.quiet:
        console = Console()
        console.print(comparison_table(comparison))
        for note in comparison.notes:
            console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
        for written in (args.report, args.html):
            if written:
                console.print(f"wrote {written}", highlight=False)
    return EXIT_FAILED if comparison.regressions else EXIT_OK


def add_commands(commands: Any) -> None:
    """``simulate`` and ``experiment run|compare``."""
    sim = commands.add_parser("simulate", help="run an agent over a query set (JSONL), one record per query")
    sim.add_argument("queries", metavar="QUERIES.jsonl", help='a query set: one {"content": ...} a line')
    sim.add_argument("--agent", required=True, metavar="MODULE:ATTR|SPEC.yaml",
                     help="the agent: 'package.module:attr', 'path/to/file.py:attr' or a YAML spec "
                          "(module, className, requirementsPath)")
    sim.add_argument("--out", required=True, metavar="RUN.jsonl",
                     help="where records are appended as queries finish; an interrupted run resumes")
    sim.add_argument("--restart", action="store_true", help="start RUN.jsonl over instead of resuming it")
    sim.add_argument("--concurrency", type=positive_int, default=4, metavar="N", help="queries run at once (4)")
    sim.add_argument("--timeout", type=positive_float, default=300.0, metavar="S",
                     help="seconds a query may take before it is recorded as timed out (300)")
    sim.add_argument("--expand", type=non_negative_int, metavar="N",
                     help="first add N new queries written by the judge model in the style of the given ones")
    sim.add_argument("--judge-model", metavar="MODEL",
                     help="with --expand: the model (default: AGENTEVAL_JUDGE_MODEL or the judge's default)")
    sim.add_argument("--expanded", metavar="FILE",
                     help="with --expand: where the expanded query set is saved "
                          "(default: QUERIES.expanded.jsonl beside QUERIES, .yaml for YAML queries)")
    sim.add_argument("--strict-requirements", action="store_true",
                     help="stop when a YAML spec's requirements are not met (default: a warning)")
    sim.add_argument("--quiet", action="store_true", help="print nothing but errors")
    sim.set_defaults(handler=simulate)

    experiment = commands.add_parser("experiment", help="grade a simulation run; compare two experiments")
    actions = experiment.add_subparsers(dest="experiment_command", required=True, metavar="COMMAND",
                                        parser_class=type(experiment))
    graded = actions.add_parser("run", help="grade a simulation run (RUN.jsonl) with a grader or eval criteria")
    graded.add_argument("run", metavar="RUN.jsonl", help="a simulation run, as written by 'agenteval simulate'")
    how = graded.add_mutually_exclusive_group(required=True)
    how.add_argument("--grader", metavar="DIR",
                     help="a grader directory: template.j2, model_config.json and optionally parser.py")
    how.add_argument("--config", metavar="FILE",
                     help="eval criteria (EvalConfig JSON); reference-based ones use each query's ground truth")
    graded.add_argument("--criteria-module", action="append", metavar="MODULE_OR_FILE",
                        help="import a module or .py file whose @criterion functions the config names")
    graded.add_argument("--trust-grader-code", action="store_true",
                        help="with --grader: import the directory's parser.py (Python code, run as you); "
                             "without it a grader directory holding one is refused")
    graded.add_argument("--out", required=True, metavar="EXP.jsonl",
                        help="where the experiment goes: one graded record per line, appended as each is "
                             "graded, then a summary line")
    graded.add_argument("--resume", action="store_true",
                        help="keep the records already in EXP.jsonl (an interrupted experiment) and grade the "
                             "rest only")
    graded.add_argument("--concurrency", type=positive_int, metavar="N",
                        help="records graded at once (default: the judge's concurrency limit, "
                             "AGENTEVAL_JUDGE_CONCURRENCY, and at least 4)")
    graded.add_argument("--threshold", type=number, default=0.5, metavar="T",
                        help="with --grader: the score a metric must reach to pass (0.5)")
    graded.add_argument("--quiet", action="store_true", help="print nothing but errors")
    add_history_options(graded)
    graded.set_defaults(handler=run_experiment)
    compared = actions.add_parser("compare", help="compare experiment B with experiment A, metric by metric")
    compared.add_argument("a", metavar="A.jsonl", help="the baseline experiment")
    compared.add_argument("b", metavar="B.jsonl", help="the experiment compared with it")
    compared.add_argument("--report", metavar="FILE", help="write the comparison as JSON")
    compared.add_argument("--html", metavar="FILE",
                          help="write the comparison as an HTML page with a forest plot of the deltas")
    compared.add_argument("--resamples", type=positive_int, default=2000, metavar="N",
                          help="bootstrap resamples for the confidence interval (2000)")
    compared.add_argument("--seed", type=whole_number, default=0, help="the bootstrap's random seed (0)")
    compared.add_argument("--alpha", type=significance, default=0.05,
                          help="significance level of the paired test (0.05); a metric significantly lower "
                               "in B exits 1")
    compared.add_argument("--quiet", action="store_true", help="print nothing but errors")
    compared.set_defaults(handler=compare_experiments)
