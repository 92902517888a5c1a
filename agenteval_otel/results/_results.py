"""The results of an evaluation run: per criterion, per invocation, per case, and the report.

A case is *errored* when it or one of its criteria has an ``error`` (a criterion that raised, a
judge that failed), *passed* when every criterion passed, and *failed* otherwise.
"""

from __future__ import annotations

import json
import math
import statistics
import uuid
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Union, overload

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler
from pydantic_core import core_schema

from agenteval_otel.errors import AgentEvalError
from agenteval_otel.judge.usage import JudgeUsage
from agenteval_otel.loading import read_json, validate_file_data
from agenteval_otel.results._paired import BaselineComparison
from agenteval_otel.trajectory.messages import ToolCall
from agenteval_otel.trajectory.steps import TrajectoryStep

if TYPE_CHECKING:
    from agenteval_otel.evalsets import Invocation
    from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = [
    "CaseResults",
    "ResultCodec",
    "CriterionResult",
    "EvidenceRow",
    "CriterionStats",
    "EvalCaseResult",
    "EvalReport",
    "EvalSummary",
    "InvocationResult",
    "JudgeUsage",
    "ReadCoverage",
    "Semantics",
    "SummaryTally",
]


Semantics = Literal["agenteval", "adk"]
"""Whose rules a criterion follows: ours, or Google ADK's (a criterion named in ADK's vocabulary
scores exactly as ADK does)."""


class EvidenceRow(BaseModel):
    """One row of a criterion's evidence: an expected item beside the actual one it was matched
    with, as the criterion decided (``match``, ``mismatch``: same item, other arguments;
    ``missing``: expected, not done; ``unexpected``: done, not expected; ``listed``: side by
    side, not judged). Reports show these rows as they are; they never match items again."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Literal["match", "mismatch", "missing", "unexpected", "listed"]
    expected: str | None = None
    actual: str | None = None
    note: str = ""


class CriterionResult(BaseModel):
    """The score of one criterion on one invocation or case.

    ``reason`` says why it scored so; ``evidence`` holds the rows the criterion aligned (reports
    render them); ``details`` any other facts the criterion returned; ``semantics`` whose rules
    scored it (``"agenteval"``, or ``"adk"`` for a criterion named in Google ADK's vocabulary,
    which scores exactly as ADK does). A criterion that could not
    score has ``error`` (with ``error_type`` and ``traceback`` when it raised), score 0 and
    ``passed`` false.
    """

    model_config = ConfigDict(extra="forbid")

    criterion: str
    score: float = Field(ge=0.0, le=1.0)
    passed: bool
    threshold: float
    reason: str = ""
    details: dict[str, Any] = Field(default_factory=dict)
    evidence: list[EvidenceRow] = Field(default_factory=list)
    semantics: Semantics = "agenteval"
    error: str | None = None
    error_type: str | None = None
    traceback: str | None = None
    judge_usage: JudgeUsage | None = None

    @property
    def shortfall(self) -> str:
        """``trajectory_match scored 0.50 < threshold 0.80``: how a failed result fell short."""
        return f"{self.criterion} scored {self.score:.2f} < threshold {self.threshold:.2f}"

    @property
    def judge_error(self) -> bool:
        """Whether it errored because the LLM judge did not give a verdict."""
        return self.error is not None and (self.error_type or "").startswith("Judge")

    @property
    def explanation(self) -> str:
        """The reason, else the error."""
        return self.reason or self.error or ""

    def with_json_details(self) -> CriterionResult:
        """This result when its ``details`` are JSON data (objects with string keys, arrays,
        strings, finite numbers, booleans, null; at most 100 levels deep), else the criterion
        errored, naming the first value that is not, so every report and the run file can
        still write it.

        >>> class Thing: ...
        >>> CriterionResult(criterion="mine", score=1.0, passed=True, threshold=0.5,
        ...                 details={"n": [1, 2], "obj": Thing()}).with_json_details().error
        "criterion 'mine': details['obj'] is not JSON-serialisable (Thing)"
        """
        problem = _not_json(self.details, "details")
        if problem is None:
            return self
        return CriterionResult.failure(self.criterion, self.threshold, f"criterion {self.criterion!r}: {problem}",
                                       error_type="TypeError", semantics=self.semantics).model_copy(
            update={"judge_usage": self.judge_usage})

    @classmethod
    def failure(
        cls,
        criterion: str,
        threshold: float,
        error: str,
        *,
        error_type: str | None = None,
        traceback: str | None = None,
        semantics: Semantics = "agenteval",
    ) -> CriterionResult:
        """A criterion that could not be scored: ``error`` set, score 0, not passed."""
        return cls(criterion=criterion, score=0.0, passed=False, threshold=threshold, error=error,
                   error_type=error_type, traceback=traceback, semantics=semantics)


_MAX_JSON_DEPTH = 100


def _not_json(value: Any, where: str) -> str | None:
    """What in ``value`` (named ``where``) is not JSON data, first in document order; ``None`` if
    nothing is."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and not _encodable(item):
                return f"{path} is not JSON-serialisable (str with a lone surrogate)"
            continue
        if item is None or isinstance(item, (bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{path} is not JSON-serialisable (float {item})"
            continue
        if depth >= _MAX_JSON_DEPTH and isinstance(item, (dict, list, tuple)):
            return f"{path} is nested more than {_MAX_JSON_DEPTH} levels deep"
        if isinstance(item, dict):
            children = []
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"{path} has a key that is not a string ({type(key).__name__})"
                children.append((child, f"{path}[{key!r}]", depth + 1))
            stack.extend(reversed(children))
        elif isinstance(item, (list, tuple)):
            stack.extend((child, f"{path}[{index}]", depth + 1) for index, child in reversed(list(enumerate(item))))
        else:
            return f"{path} is not JSON-serialisable ({type(item).__name__})"
    return None


def _encodable(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (it holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class InvocationResult(BaseModel):
    """What happened in one conversation turn and how each criterion scored it."""

    model_config = ConfigDict(extra="forbid")

    invocation_id: str
    user_input: str | None = None
    expected_response: str | None = None
    actual_response: str | None = None
    expected_tool_calls: list[ToolCall] = Field(default_factory=list)
    actual_tool_calls: list[ToolCall] = Field(default_factory=list)
    expected_node_order: list[str] = Field(default_factory=list)
    actual_node_order: list[str] = Field(default_factory=list)
    criterion_results: list[CriterionResult] = Field(default_factory=list)
    trace_ids: list[str] = Field(default_factory=list)
    trace_id: str | None = None
    """The trace of the turn's root span (the span a verdict on this turn belongs to)."""
    span_id: str | None = None
    """The turn's root span."""

    @classmethod
    def of_turn(
        cls,
        invocation_id: str,
        actual: Trajectory,
        expected: Invocation | None,
        criterion_results: Iterable[CriterionResult | None],
        *,
        user_input: str | None,
    ) -> InvocationResult:
        """One scored turn: what ``actual`` did (response, tool calls, node order, trace and root
        span) beside what ``expected`` asked for (nothing, with no expected turn), and the
        ``criterion_results`` of the criteria that applied (``None`` where one did not is left
        out). ``user_input``: the user's message as reported (the expected turn's, or the
        actual one's).

        >>> from agenteval_otel.trajectory import Trajectory
        >>> turn = InvocationResult.of_turn("t1", Trajectory(trace_id="7e57", final_response="Hi"), None, [None],
        ...                                 user_input="Hello")
        >>> turn.user_input, turn.actual_response, turn.trace_id, turn.criterion_results
        ('Hello', 'Hi', '7e57', [])
        """
        return cls(
            invocation_id=invocation_id,
            user_input=user_input,
            expected_response=(expected.expected_final_response.get_text()
                               if expected is not None and expected.expected_final_response else None),
            actual_response=actual.final_response,
            expected_tool_calls=list(expected.expected_tool_trajectory) if expected is not None else [],
            actual_tool_calls=actual.tool_calls(),
            expected_node_order=list(expected.expected_node_order) if expected is not None else [],
            actual_node_order=actual.node_order(),
            criterion_results=[r for r in criterion_results if r is not None],
            trace_ids=list(actual.trace_ids),
            trace_id=actual.trace_id,
            span_id=actual.span_id,
        )

    def result(self, criterion: str) -> CriterionResult | None:
        """This turn's result of ``criterion``, if it was scored."""
        return next((r for r in self.criterion_results if r.criterion == criterion), None)


class EvalCaseResult(BaseModel):
    """The result of one eval case."""

    model_config = ConfigDict(extra="forbid")

    eval_id: str
    name: str | None = None
    passed: bool
    criterion_results: list[CriterionResult] = Field(default_factory=list)
    error: str | None = None
    """Why the case could not be run or matched (for an agent that raised: type, message and
    the frame that raised)."""
    error_type: str | None = None
    traceback: str | None = None
    """The traceback of the agent's exception, innermost frames, redacted like every text."""
    duration_seconds: float = 0.0
    actual_trajectory: list[TrajectoryStep] = Field(default_factory=list)
    actual_response: str | None = None
    trace_ids: list[str] = Field(default_factory=list)
    trace_id: str | None = None
    """The trace of the first turn's root span (each turn's own is on its ``InvocationResult``)."""
    span_id: str | None = None
    """The first turn's root span."""
    invocation_results: list[InvocationResult] = Field(default_factory=list)
    metrics: dict[str, float] = Field(default_factory=dict)
    run_results: list[EvalCaseResult] = Field(default_factory=list)
    """With repeated runs (``num_runs > 1``, or every recorded run scored offline): each run's
    own result."""
    set_aside_runs: int = 0
    """Offline: older runs of this case found in the traces and not scored (the latest was)."""

    @property
    def label(self) -> str:
        """How reports name it: the case's name, else its id; an invocation scored with no
        case (its id is its root span's ``trace_id:span_id``) by that id and its agent's name.

        >>> EvalCaseResult(eval_id="4bf9:00f0", trace_id="4bf9", name="weather-agent", passed=True).label
        '4bf9:00f0 (weather-agent)'
        """
        if self.name and self.trace_id and self.eval_id.startswith(f"{self.trace_id}:"):
            return f"{self.eval_id} ({self.name})"
        return self.name or self.eval_id

    @property
    def errored(self) -> bool:
        """Whether the case or one of its criteria could not be scored."""
        return self.error is not None or any(r.error for r in self.criterion_results)

    @property
    def status(self) -> str:
        """``passed``, ``failed`` or ``errored``."""
        if self.errored:
            return "errored"
        return "passed" if self.passed else "failed"

    @property
    def score(self) -> float | None:
        """Mean score of the criteria that were scored; ``None`` if none was."""
        scores = [r.score for r in self.criterion_results if r.error is None]
        return statistics.fmean(scores) if scores else None

    def problems(self) -> list[str]:
        """One line per failed or errored criterion, and the case error if any."""
        lines = [f"{self.eval_id}: error: {self.error}"] if self.error else []
        for r in self.criterion_results:
            if r.error:
                lines.append(f"{self.eval_id}: {r.criterion} errored: {r.error}")
            elif not r.passed:
                reason = f": {r.reason}" if r.reason else ""
                lines.append(f"{self.eval_id}: {r.shortfall}{reason}")
        return lines


class CriterionStats(BaseModel):
    """How one criterion scored across the cases of a run."""

    model_config = ConfigDict(extra="forbid")

    count: int
    passed: int
    errors: int = 0
    mean: float
    min: float
    max: float
    pass_rate: float
    semantics: Semantics = "agenteval"

    @classmethod
    def from_results(cls, results: Sequence[CriterionResult]) -> CriterionStats:
        """Stats over the results of one criterion; errored results count but are not scored."""
        scores = [r.score for r in results if r.error is None]
        passed = sum(1 for r in results if r.passed and r.error is None)
        return cls(
            count=len(results),
            passed=passed,
            errors=sum(1 for r in results if r.error is not None),
            mean=statistics.fmean(scores) if scores else 0.0,
            min=min(scores, default=0.0),
            max=max(scores, default=0.0),
            pass_rate=passed / len(results) if results else 0.0,
            semantics=results[0].semantics if results else "agenteval",
        )


class ReadCoverage(BaseModel):
    """Offline: how much of the traces the convention readers understood. ``spans`` = the sum
    of ``read`` (by convention) + the sum of ``fallback`` (spans only a fallback read, from
    their name) + ``unread``; ``warnings``: trajectories per warning kind
    (``tool_calls_not_read``, ``final_answer_not_read``)."""

    model_config = ConfigDict(extra="forbid")

    traces: int = 0
    spans: int = 0
    read: dict[str, int] = Field(default_factory=dict)
    fallback: dict[str, int] = Field(default_factory=dict)
    unread: int = 0
    trajectories: int = 0
    warnings: dict[str, int] = Field(default_factory=dict)


class EvalSummary(BaseModel):
    """Counts and scores of a run: total = passed + failed + errored."""

    model_config = ConfigDict(extra="forbid")

    total_cases: int
    passed_cases: int
    failed_cases: int
    error_cases: int = 0
    pass_rate: float
    avg_score: float
    criterion_stats: dict[str, CriterionStats] = Field(default_factory=dict)
    set_aside_runs: int = 0
    """Offline: older runs found in the traces and not scored, over all cases."""
    other_eval_set_runs: int = 0
    """Offline: runs found in the traces that were made for another eval set, not matched."""
    judge_usage: dict[str, JudgeUsage] = Field(default_factory=dict)
    """Per LLM-judged criterion: judge calls, cache hits, retries, failures, tokens and time."""
    judge_errors: int = 0
    """Criterion results (per case) the LLM judge did not score: not configured, unreachable,
    timed out, or its answer unusable."""
    read_coverage: ReadCoverage | None = None
    """Offline, from spans: the spans read, read by a fallback, unread, and the warnings;
    ``None`` when the run read no spans (trajectories given, or assembled elsewhere)."""

    @property
    def judge_total(self) -> JudgeUsage | None:
        """The judge's work over every criterion; ``None`` when no judge was asked."""
        return JudgeUsage.total(self.judge_usage.values())

    @classmethod
    def from_results(cls, results: Sequence[EvalCaseResult]) -> EvalSummary:
        """Summarise case results."""
        tally = SummaryTally()
        for position, result in enumerate(results):
            tally.add(result, position)
        return tally.summary()


@dataclass
class _CriterionTally:
    first: tuple[int, int]
    """Where the criterion first appeared: (case position, place among the case's criteria)."""
    semantics: Semantics
    count: int = 0
    passed: int = 0
    errors: int = 0
    scores: array[float] = field(default_factory=lambda: array("d"))
    judge_errors: int = 0
    judged: int = 0
    """How many results carried judge usage; ``judge_sums`` holds their sums, field by field."""
    judge_sums: dict[str, float] = field(default_factory=dict)

    def count_judge(self, result: CriterionResult, sign: int) -> None:
        self.judge_errors += sign * result.judge_error
        usage = result.judge_usage
        if usage is None:
            return
        self.judged += sign
        for name, value in usage:
            self.judge_sums[name] = self.judge_sums.get(name, 0) + sign * value

    def judge_usage(self) -> JudgeUsage | None:
        return JudgeUsage.model_validate(self.judge_sums) if self.judged else None

    def stats(self) -> CriterionStats:
        return CriterionStats(
            count=self.count, passed=self.passed, errors=self.errors,
            mean=statistics.fmean(self.scores) if self.scores else 0.0,
            min=min(self.scores, default=0.0), max=max(self.scores, default=0.0),
            pass_rate=self.passed / self.count if self.count else 0.0, semantics=self.semantics)


class SummaryTally:
    """The summary of a run kept as case results arrive, in a few counters and arrays of scores
    (no result is held); a result can be taken back (``remove``) when a newer one replaces it.
    ``add`` takes each case's position in the report, which orders the criteria as
    :meth:`EvalSummary.from_results` does."""

    def __init__(self) -> None:
        self.statuses: Counter[str] = Counter()
        self.case_scores: array[float] = array("d")
        self.set_aside_runs = 0
        self._criteria: dict[str, _CriterionTally] = {}

    def add(self, result: EvalCaseResult, position: int) -> None:
        """Count ``result``, the case at ``position`` in the report."""
        self.statuses[result.status] += 1
        self.set_aside_runs += result.set_aside_runs
        if (score := result.score) is not None:
            self.case_scores.append(score)
        for place, r in enumerate(result.criterion_results):
            tally = self._criteria.get(r.criterion)
            if tally is None:
                tally = self._criteria[r.criterion] = _CriterionTally((position, place), r.semantics)
            elif (position, place) < tally.first:
                tally.first, tally.semantics = (position, place), r.semantics
            tally.count += 1
            tally.count_judge(r, 1)
            if r.error is None:
                tally.scores.append(r.score)
                tally.passed += r.passed
            else:
                tally.errors += 1

    def remove(self, result: EvalCaseResult) -> None:
        """Take back ``result``, counted earlier with :meth:`add`."""
        self.statuses[result.status] -= 1
        self.set_aside_runs -= result.set_aside_runs
        if (score := result.score) is not None:
            self.case_scores.remove(score)
        for r in result.criterion_results:
            tally = self._criteria[r.criterion]
            tally.count -= 1
            tally.count_judge(r, -1)
            if r.error is None:
                tally.scores.remove(r.score)
                tally.passed -= r.passed
            else:
                tally.errors -= 1
            if tally.count == 0:
                del self._criteria[r.criterion]

    def merge(self, other: SummaryTally, position: Callable[[int], int]) -> None:
        """Count the results ``other`` counted too; ``position`` maps a case position of
        ``other``'s to this tally's (the merged report's)."""
        self.statuses.update(other.statuses)
        self.case_scores.extend(other.case_scores)
        self.set_aside_runs += other.set_aside_runs
        for name, theirs in other._criteria.items():
            first = (position(theirs.first[0]), theirs.first[1])
            mine = self._criteria.get(name)
            if mine is None:
                mine = self._criteria[name] = _CriterionTally(first, theirs.semantics)
            elif first < mine.first:
                mine.first, mine.semantics = first, theirs.semantics
            mine.count += theirs.count
            mine.passed += theirs.passed
            mine.errors += theirs.errors
            mine.scores.extend(theirs.scores)
            mine.judge_errors += theirs.judge_errors
            mine.judged += theirs.judged
            for field_name, value in theirs.judge_sums.items():
                mine.judge_sums[field_name] = mine.judge_sums.get(field_name, 0) + value

    def summary(self) -> EvalSummary:
        """The summary of the results counted."""
        total = sum(self.statuses.values())
        passed = self.statuses["passed"]
        ordered = sorted(self._criteria.items(), key=lambda item: item[1].first)
        return EvalSummary(
            total_cases=total,
            passed_cases=passed,
            failed_cases=self.statuses["failed"],
            error_cases=self.statuses["errored"],
            pass_rate=passed / total if total else 0.0,
            avg_score=statistics.fmean(self.case_scores) if self.case_scores else 0.0,
            criterion_stats={name: tally.stats() for name, tally in ordered},
            set_aside_runs=self.set_aside_runs,
            judge_usage={name: usage for name, tally in ordered if (usage := tally.judge_usage()) is not None},
            judge_errors=sum(tally.judge_errors for _, tally in ordered),
        )


# --- case results held compactly ----------------------------------------------------------------
# A long offline run keeps one small entry per case instead of every case's models. A result can
# be held as it is, or *slim* and compressed: its actual trajectory (the steps, with their
# metadata) left out, everything else (criteria, evidence, turns, metrics, trace ids) kept, as
# JSON compressed against the first result encoded (cases of one eval set look alike, so a result
# costs a few hundred bytes). ``CaseResults`` is the sequence a report holds; reading an item
# decodes a compressed entry into a new ``EvalCaseResult`` each time, so change a result before it
# is added, not after.

_WITHOUT_TRAJECTORIES: Any = {"actual_trajectory": True, "run_results": {"__all__": {"actual_trajectory"}}}
_LEVEL = 3
_MEMORY_LEVEL = 6


def slim(result: EvalCaseResult) -> EvalCaseResult:
    """``result`` without its actual trajectory (nor its runs' trajectories)."""
    if not result.actual_trajectory and not any(run.actual_trajectory for run in result.run_results):
        return result
    return result.model_copy(update={
        "actual_trajectory": [],
        "run_results": [run.model_copy(update={"actual_trajectory": []}) for run in result.run_results],
    })


class ResultCodec:
    """Encodes slim results as compressed JSON, against the first result it encodes.

    The compressor is primed with that dictionary once and copied for each result; its window
    is just large enough for the dictionary and a result like it (setting up a full 32 KB
    window and hashing the dictionary anew cost more than compressing a result).
    """

    def __init__(self) -> None:
        self._dictionary: bytes | None = None
        self._primed: zlib._Compress | None = None

    def encode(self, result: EvalCaseResult) -> bytes:
        """``result`` slim, as compressed JSON."""
        text = result.model_dump_json(exclude=_WITHOUT_TRAJECTORIES).encode()
        if self._primed is None:
            self.__setstate__(text)
        assert self._primed is not None
        packer = self._primed.copy()
        return packer.compress(text) + packer.flush()

    def decode(self, data: bytes) -> EvalCaseResult:
        """The slim result ``data`` holds."""
        unpacker = zlib.decompressobj(zdict=self._dictionary or b"")
        return EvalCaseResult.model_validate_json(unpacker.decompress(data) + unpacker.flush())

    def __getstate__(self) -> bytes | None:
        """Pickled (sent to another process) as its dictionary; the compressor is primed again
        there when it first encodes."""
        return self._dictionary

    def __setstate__(self, dictionary: bytes | None) -> None:
        self._dictionary = dictionary
        self._primed = None
        if dictionary is not None:
            window_bits = min(15, max(9, (2 * len(dictionary)).bit_length()))
            self._primed = zlib.compressobj(_LEVEL, zlib.DEFLATED, window_bits, _MEMORY_LEVEL, zdict=dictionary)


HeldResult = Union["EvalCaseResult", bytes]


class CaseResults(Sequence["EvalCaseResult"]):
    """Case results in order, each held as it is or slim and compressed (see above).

    >>> from agenteval_otel.trajectory.steps import TrajectoryStep
    >>> results = CaseResults()
    >>> results.append(EvalCaseResult(eval_id="a", passed=True,
    ...                               actual_trajectory=[TrajectoryStep.tool("f", {})]), compact=True)
    >>> [(r.eval_id, r.passed, r.actual_trajectory) for r in results]
    [('a', True, [])]
    """

    def __init__(self, results: Iterable[EvalCaseResult] = (), codec: ResultCodec | None = None) -> None:
        self.codec = codec or ResultCodec()
        self._ids: list[str] = []
        self._entries: list[HeldResult] = []
        self._codecs: list[ResultCodec] | None = None
        """The codec of each entry, once an entry encoded by another codec than ``codec`` came."""
        for result in results:
            self.append(result)

    def append(self, result: EvalCaseResult, *, compact: bool = False) -> None:
        """Add ``result``, slim and compressed with ``compact``, else as it is."""
        self.append_entry(result.eval_id, self.codec.encode(result) if compact else result)

    def append_entry(self, eval_id: str, entry: HeldResult, codec: ResultCodec | None = None) -> None:
        """Add a result already encoded with ``codec`` (default: this sequence's), or held as it is."""
        if codec is not None and codec is not self.codec and self._codecs is None:
            self._codecs = [self.codec] * len(self._entries)
        if self._codecs is not None:
            self._codecs.append(codec or self.codec)
        self._ids.append(eval_id)
        self._entries.append(entry)

    @property
    def eval_ids(self) -> Sequence[str]:
        """The cases' ids, in order, without decoding anything."""
        return self._ids

    def _item(self, index: int) -> EvalCaseResult:
        entry = self._entries[index]
        if not isinstance(entry, bytes):
            return entry
        return (self.codec if self._codecs is None else self._codecs[index]).decode(entry)

    @overload
    def __getitem__(self, index: int) -> EvalCaseResult: ...

    @overload
    def __getitem__(self, index: slice) -> list[EvalCaseResult]: ...

    def __getitem__(self, index: int | slice) -> EvalCaseResult | list[EvalCaseResult]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(len(self._entries))[index]]
        return self._item(range(len(self._entries))[index])

    def __iter__(self) -> Iterator[EvalCaseResult]:
        return (self._item(i) for i in range(len(self._entries)))

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)) or len(other) != len(self):
            return NotImplemented if not isinstance(other, Sequence) else False
        return all(mine == theirs for mine, theirs in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CaseResults({len(self)} case(s))"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        listed = core_schema.list_schema(handler.generate_schema(EvalCaseResult))
        return core_schema.json_or_python_schema(
            json_schema=listed,
            python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), listed]),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda value: list(value), return_schema=listed),
        )


class EvalReport(BaseModel):
    """The complete report of an evaluation run."""

    model_config = ConfigDict(extra="forbid")

    report_id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    eval_set_id: str
    eval_set_name: str | None = None
    results: Union[CaseResults, list[EvalCaseResult]] = Field(default_factory=list, union_mode="left_to_right")
    """The case results in eval-set order (a long offline run holds them as :class:`CaseResults`)."""
    summary: EvalSummary
    config_used: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    duration_seconds: float = 0.0
    omitted: dict[str, int] | None = None
    """In a report file of a large run: the cases counted and not listed in ``results``, by
    status (``passed``, ``failed``, ``errored``); ``None`` when every case is listed."""
    distributions: dict[str, Any] | None = None
    """With ``omitted``: the run's score, tag, latency and token distributions."""
    baseline: BaselineComparison | None = None
    """With ``--baseline``: this run against an earlier one of the history (left out of the
    JSON text when there is none)."""

    @classmethod
    def from_results(
        cls,
        eval_set_id: str,
        results: Sequence[EvalCaseResult],
        *,
        eval_set_name: str | None = None,
        config_used: dict[str, Any] | None = None,
        duration_seconds: float = 0.0,
        summary: EvalSummary | None = None,
    ) -> EvalReport:
        """A report with its summary computed from ``results`` (unless given)."""
        return cls(
            eval_set_id=eval_set_id,
            eval_set_name=eval_set_name,
            results=results if isinstance(results, CaseResults) else list(results),
            summary=summary if summary is not None else EvalSummary.from_results(results),
            config_used=dict(config_used or {}),
            duration_seconds=duration_seconds,
        )

    @property
    def passed(self) -> bool:
        """Whether every case passed (and there was at least one)."""
        return self.summary.total_cases > 0 and self.summary.passed_cases == self.summary.total_cases

    def failure_message(self, limit: int | None = None) -> str:
        """A readable account of every failed or errored case (of the first ``limit`` of them);
        empty when all passed."""
        if self.passed:
            return ""
        label = f"eval set {self.eval_set_name or self.eval_set_id}"
        s = self.summary
        if s.total_cases == 0:
            return f"{label}: no eval case was run"
        failing = (case for case in self.results if case.status != "passed")
        problems = [line for case in islice(failing, limit) for line in case.problems()]
        head = (
            f"{label}: {s.passed_cases}/{s.total_cases} cases passed "
            f"({s.failed_cases} failed, {s.error_cases} errored)"
        )
        return "\n".join([head, *(f"  {line}" for line in problems)])

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` naming each failing case, criterion, score and reason."""
        __tracebackhide__ = True  # pytest shows the caller's line, not this one
        if not self.passed:
            raise AssertionError(self.failure_message())

    def save(self, path: str | Path, result_data: Callable[[EvalCaseResult], Any] | None = None) -> Path:
        """Write the report as indented JSON, one case result at a time. ``result_data`` turns a
        result into the JSON data written for it (default: its ``model_dump``)."""
        file = Path(path)
        file.parent.mkdir(parents=True, exist_ok=True)
        with file.open("w", encoding="utf-8") as out:
            out.writelines(self.json_chunks(result_data))
        return file

    def json_chunks(self, result_data: Callable[[EvalCaseResult], Any] | None = None) -> Iterator[str]:
        """The report's JSON text, as ``json.dumps(indent=2)`` writes it, in pieces: one per
        case result, so a report of any size is written without holding its whole text."""
        data_of = result_data or (lambda result: result.model_dump(mode="json"))
        head = self.model_dump(mode="json", exclude={"results"})
        yield "{"
        names = [name for name in type(self).model_fields if name != "baseline" or self.baseline is not None]
        for number, name in enumerate(names):
            yield ("," if number else "") + f"\n  {json.dumps(name)}: "
            if name != "results":
                yield _indented(head[name], "  ")
            elif not self.results:
                yield "[]"
            else:
                for index, result in enumerate(self.results):
                    yield ("[\n    " if index == 0 else ",\n    ") + _indented(data_of(result), "    ")
                yield "\n  ]"
        yield "\n}\n"

    @classmethod
    def load(cls, path: str | Path) -> EvalReport:
        """Read a report written by :meth:`save`."""
        file = Path(path)
        return validate_file_data(cls, read_json(file, AgentEvalError), file, AgentEvalError)


def _indented(data: Any, indent: str) -> str:
    """``data`` as indented JSON, its lines after the first indented by ``indent`` more."""
    return json.dumps(data, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)
