"""Experiments: a simulation run graded, record by record, by a grader or by eval criteria.

**With a grader** (a :class:`~agenteval_otel.experiments.graders.Grader`, or a grader directory,
see :func:`~agenteval_otel.experiments.graders.load_grader_dir`), the template's ``entry`` holds:

================  ===========================================================================
``content``       the exchange as text, ``USER: <query>\\nASSISTANT: <response>`` (a conversation
                  history for ``{{ entry.content }}``)
``query``         the query's content
``response``      the agent's final response (``None`` when it gave none)
``ground_truth``  the query set's ground truth (``None`` when it has none)
``metadata``      the query's metadata (a dict)
``tool_calls``    the tools called, each ``{"name", "args", "call_id", "result"}``
``query_index``   the query's position in the query set
================  ===========================================================================

Each metric the grader returns passes when its score reaches its threshold (``thresholds``
per metric, else ``threshold``, 0.5 by default: graders score from 0 to 1).

**With eval criteria** (an :class:`~agenteval_otel.evaluation.EvalConfig`), each record's
trajectory is scored by the :class:`~agenteval_otel.evaluation._scoring.Scorer`. Reference-free
criteria (policies such as ``final_response_present``, ``max_tool_calls``; judge criteria) always
apply; reference-based ones (``response_match``, ``trajectory_match``, ...) apply to records
with a ground truth, read as the expected invocation: a string is the expected response (a
query set's ground truth is the expected output); an object may hold ``response``,
``tool_calls`` (``[{"name", "args"}]``) and ``node_order``; any other value is the expected
response as JSON. A criterion that compares tool calls (``trajectory_match``,
``tool_trajectory_avg_score``, ``tool_name_match``) or node visits (``node_order``) needs them in
the ground truth: a ground truth without them (a string, say) is a ``ConfigError`` before anything
is graded, never a silent score of 0 against "no call expected". ``{"tool_calls": []}`` expects
no call.

Failures are data: a record whose agent run failed is not graded and is errored; a grader
that fails (judge unreachable, reply unreadable, template error) or a criterion that errors
sets the record's ``error``, and every other record is still graded.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agenteval_otel.criteria import EvalConfig, canonical_criterion_name
from agenteval_otel.errors import ConfigError, ExperimentLoadError
from agenteval_otel.evalsets import EvalCase, Invocation, MessageContent, ToolCall
from agenteval_otel.evaluation import Scorer, run_sync
from agenteval_otel.experiments._progress import ProgressFile
from agenteval_otel.experiments._results import ExperimentRecord, ExperimentResult, is_summary_line
from agenteval_otel.experiments._simulation import SimulationRecord
from agenteval_otel.experiments.graders import Grader, load_grader_dir
from agenteval_otel.judge import JudgeClient, JudgeSettings
from agenteval_otel.trajectory import Trajectory

__all__ = ["DEFAULT_GRADER_THRESHOLD", "arun_experiment", "check_ground_truths", "expected_invocation", "grader_entry",
           "grading_concurrency", "run_experiment"]

DEFAULT_GRADER_THRESHOLD = 0.5
DEFAULT_CONCURRENCY = 4
"""Records graded at once at the least; by default as many as the judge's concurrency limit."""


def grading_concurrency(judge: JudgeClient | None) -> int:
    """Records an experiment grades at once by default: the ``judge``'s concurrency limit (the
    one the environment configures when ``None``), at least ``DEFAULT_CONCURRENCY``."""
    settings = judge.settings if judge is not None else JudgeSettings.from_env()
    return max(DEFAULT_CONCURRENCY, settings.concurrency)


def grader_entry(record: SimulationRecord) -> dict[str, Any]:
    """What a grader's template sees as ``entry`` for ``record`` (see the module docstring)."""
    return {
        "content": f"USER: {record.query}\nASSISTANT: {record.response or ''}",
        "query": record.query,
        "response": record.response,
        "ground_truth": record.ground_truth,
        "metadata": record.metadata,
        "tool_calls": [call.model_dump(mode="json", exclude_none=True) for call in record.tool_calls],
        "query_index": record.query_index,
    }


def expected_invocation(record: SimulationRecord) -> Invocation | None:
    """The expected invocation read from ``record``'s ground truth (see the module docstring);
    ``None`` without one."""
    truth = record.ground_truth
    if truth is None:
        return None
    user = MessageContent(role="user", content=record.query)
    if isinstance(truth, Mapping) and truth and set(truth) <= {"response", "tool_calls", "node_order"}:
        response = truth.get("response")
        try:
            return Invocation(
                user_content=user,
                expected_final_response=(MessageContent(role="assistant", content=str(response))
                                         if response is not None else None),
                expected_tool_trajectory=[ToolCall.model_validate(call) for call in truth.get("tool_calls") or []],
                expected_node_order=[str(node) for node in truth.get("node_order") or []])
        except (ValueError, TypeError) as exc:
            raise ValueError(f"ground_truth.tool_calls: expected [{{\"name\": ..., \"args\": {{...}}}}]: {exc}") \
                from None
    text = truth if isinstance(truth, str) else json.dumps(truth, ensure_ascii=False)
    return Invocation(user_content=user, expected_final_response=MessageContent(role="assistant", content=text))


# what a reference-based criterion compares, where it is in a ground-truth object
_EXPECTED_PARTS = {"trajectory_match": "tool_calls", "tool_trajectory_avg_score": "tool_calls",
                   "tool_name_match": "tool_calls", "node_order": "node_order"}


def check_ground_truths(records: Sequence[SimulationRecord], config: EvalConfig, *, source: str | None = None) -> None:
    """``ConfigError`` naming the first record (and how many others) whose ground truth lacks
    what a criterion of ``config`` compares (see the module docstring)."""
    needed = {name: part for name in config.enabled()
              if (part := _EXPECTED_PARTS.get(canonical_criterion_name(name))) is not None}
    if not needed:
        return
    lacking = [(record, name, part) for record in records if not record.failed and record.ground_truth is not None
               for name, part in needed.items()
               if not (isinstance(record.ground_truth, Mapping) and part in record.ground_truth)]
    if not lacking:
        return
    record, name, part = lacking[0]
    truth = record.ground_truth
    kind = ("a string (the expected response)" if isinstance(truth, str) else f"an object without {part!r}"
            if isinstance(truth, Mapping) else f"{json.dumps(truth)[:40]} (read as the expected response)")
    shape = ('{"response": ..., "tool_calls": [{"name": ..., "args": {...}}]}' if part == "tool_calls"
             else '{"response": ..., "node_order": ["node", ...]}')
    others = len({id(r) for r, _, _ in lacking}) - 1
    raise ConfigError(
        f"{source or 'the run'}: query {record.query_index} ({record.query!r}){f' and {others} other(s)' if others else ''}: "
        f"{name} compares the expected {part.replace('_', ' ')}, but the ground truth is {kind}; give it as {shape}, "
        f"or leave {name} out of the config")


def _base(record: SimulationRecord) -> dict[str, Any]:
    return {"query_index": record.query_index, "query": record.query, "ground_truth": record.ground_truth,
            "metadata": record.metadata, "response": record.response, "trace_id": record.trace_id,
            "duration_seconds": record.duration_seconds}


def _agent_failed(record: SimulationRecord) -> ExperimentRecord:
    kind = record.error_type or "error"
    return ExperimentRecord(**_base(record), error=f"the agent's run failed, not graded: {kind}: {record.error}",
                            error_type=record.error_type or "AgentError")


class _GraderGrading:
    """Grades records with a grader."""

    def __init__(self, grader: Grader, threshold: float, thresholds: Mapping[str, float]) -> None:
        self.grader, self.threshold, self.thresholds = grader, threshold, dict(thresholds)

    async def __call__(self, record: SimulationRecord) -> ExperimentRecord:
        result = await self.grader.agrade(grader_entry(record))
        if not result.ok:
            return ExperimentRecord(**_base(record), reply=result.reply, error=f"grader: {result.error}",
                                    error_type=result.error_type)
        passed = {name: score >= self.thresholds.get(name, self.threshold) for name, score in result.scores.items()}
        return ExperimentRecord(**_base(record), scores=result.scores, metric_passed=passed, reply=result.reply,
                                passed=all(passed.values()))


class _CriteriaGrading:
    """Scores records' trajectories with eval criteria."""

    def __init__(self, scorer: Scorer) -> None:
        self.scorer = scorer

    async def __call__(self, record: SimulationRecord) -> ExperimentRecord:
        try:
            expected = expected_invocation(record)
        except ValueError as exc:
            return ExperimentRecord(**_base(record), error=str(exc), error_type="ConfigError")
        trajectory = Trajectory(steps=list(record.trajectory), trace_id=record.trace_id,
                                trace_ids=[record.trace_id] if record.trace_id else [],
                                user_input=record.query, final_response=record.response)
        case = EvalCase(eval_id=f"query-{record.query_index}", conversation=[expected]) \
            if expected is not None else None
        scored = await self.scorer.score_invocation(trajectory, case=case, eval_id=f"query-{record.query_index}")
        results = scored.criterion_results
        errors = [r for r in results if r.error]
        scores = {r.criterion: r.score for r in results if not r.error}
        return ExperimentRecord(
            **_base(record), scores=scores, metric_passed={r.criterion: r.passed for r in results if not r.error},
            reasons={r.criterion: r.reason for r in results if r.reason and not r.error},
            passed=bool(results) and all(r.passed for r in results),
            error="; ".join(f"{r.criterion}: {r.error}" for r in errors) if errors else None,
            error_type=errors[0].error_type if errors else None)


async def arun_experiment(
    records: Iterable[SimulationRecord],
    *,
    grader: Grader | str | Path | None = None,
    config: EvalConfig | None = None,
    judge: JudgeClient | None = None,
    concurrency: int | None = None,
    threshold: float = DEFAULT_GRADER_THRESHOLD,
    thresholds: Mapping[str, float] | None = None,
    source: str | None = None,
    trust_code: bool = False,
    out: str | Path | None = None,
    resume: bool = False,
) -> ExperimentResult:
    """Grade every record of a simulation run with ``grader`` (a grader or a grader directory)
    or with the criteria of ``config`` (exactly one), at most ``concurrency`` records at once
    (default: :func:`grading_concurrency`, which keeps the judge's concurrency limit full).

    ``judge``: the client the grader or the judge criteria call (``None``: the one the
    environment configures). ``source`` names the run in the result. ``trust_code``: a grader
    directory's ``parser.py`` may be imported (without it, such a directory is refused).

    ``out``: the experiment's file. Each record is appended to it as one line as soon as it is
    graded, so an interrupted experiment keeps what it graded; at the end the file is rewritten
    in query order with its summary line. With ``resume``, the records already in ``out`` are
    kept and their queries not graded again (whatever their status); a record of a query not in
    ``records`` raises :class:`ExperimentLoadError`. See the module docstring.
    """
    if (grader is None) == (config is None):
        raise ConfigError("grade an experiment with either a grader or eval criteria (a config), not both or neither")
    if concurrency is None:
        concurrency = grading_concurrency(judge)
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    records = list(records)
    grade: _GraderGrading | _CriteriaGrading
    if grader is not None:
        loaded = grader if isinstance(grader, Grader) else load_grader_dir(grader, judge=judge, trust_code=trust_code)
        described = f"grader {loaded.source}" if loaded.source else "grader"
        grade = _GraderGrading(loaded, threshold, thresholds or {})
    else:
        assert config is not None
        described = f"criteria {', '.join(config.enabled())}"
        check_ground_truths(records, config, source=source)
        grade = _CriteriaGrading(Scorer(config, judge=judge, concurrency=concurrency))
    gate = asyncio.Semaphore(concurrency)
    file = ProgressFile(out, ExperimentRecord, ignore=is_summary_line) if out is not None else None
    done = _open_experiment_file(file, records, resume=resume) if file is not None else []
    finished = {record.key for record in done}

    async def graded(record: SimulationRecord) -> ExperimentRecord:
        if record.failed:
            result = _agent_failed(record)
        else:
            async with gate:
                result = await grade(record)
        if file is not None:
            file.write(result)
        return result

    try:
        results: Sequence[ExperimentRecord] = await asyncio.gather(
            *(graded(record) for record in records if (record.query_index, record.query) not in finished))
    finally:
        if file is not None:
            file.close()
    experiment = ExperimentResult(records=sorted([*done, *results], key=lambda r: r.query_index), source=source,
                                  graded_by=described)
    if out is not None:
        experiment.write_jsonl(out)
    return experiment


def _open_experiment_file(file: ProgressFile[ExperimentRecord], records: Sequence[SimulationRecord], *,
                          resume: bool) -> list[ExperimentRecord]:
    """Start writing an experiment's file; with ``resume``, first the records already there,
    each of a query of ``records``."""
    known = {(record.query_index, record.query) for record in records}

    def check(number: int, graded: ExperimentRecord) -> None:
        if graded.key not in known:
            raise ExperimentLoadError(
                f"{file.path}: line {number}: query {graded.query_index} ({graded.query!r}) is not in the run "
                "graded; expected an experiment of the same run (or start over without resume)")

    return file.open(resume=resume, check=check)


def run_experiment(
    records: Iterable[SimulationRecord],
    *,
    grader: Grader | str | Path | None = None,
    config: EvalConfig | None = None,
    judge: JudgeClient | None = None,
    concurrency: int | None = None,
    threshold: float = DEFAULT_GRADER_THRESHOLD,
    thresholds: Mapping[str, float] | None = None,
    source: str | None = None,
    trust_code: bool = False,
    out: str | Path | None = None,
    resume: bool = False,
) -> ExperimentResult:
    """:func:`arun_experiment` from synchronous code (``await arun_experiment`` in an event loop)."""
    return run_sync(arun_experiment(records, grader=grader, config=config, judge=judge, concurrency=concurrency,
                                    threshold=threshold, thresholds=thresholds, source=source,
                                    trust_code=trust_code, out=out, resume=resume),
                    "arun_experiment")
