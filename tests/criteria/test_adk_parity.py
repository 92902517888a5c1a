"""Google ADK's names score exactly as google-adk 2.13 does: every number and verdict of
``tests/data/adk_parity/adk_parity.json`` (written by ADK's own evaluators, see ``generate.py``
there) is reproduced by ``tool_trajectory_avg_score`` and ``response_match_score``."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel import EvalConfig, EvalSet
from agenteval_otel.evalsets._models import EvalCase, Invocation
from agenteval_otel.evaluation._scoring import Scorer
from agenteval_otel.trajectory import Trajectory
from agenteval_otel.trajectory.steps import TrajectoryStep

TABLE = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "adk_parity" / "adk_parity.json").read_text(encoding="utf-8"))
THRESHOLDS: list[float] = TABLE["thresholds"]


def _trajectory(calls: list[dict[str, Any]], response: str | None = None) -> Trajectory:
    """Actual calls as a trace gives them: a recorded call always has its arguments (``{}`` for none)."""
    return Trajectory(steps=[TrajectoryStep.tool(c["name"], c.get("args")) for c in calls], final_response=response)


def _case_results(configs: list[EvalConfig], case: EvalCase,
                  turns: list[Trajectory]) -> list[dict[str, tuple[float, bool]]]:
    """Each config's case-level (score, passed) per criterion, scored as a run scores them."""
    async def score_all() -> list[Any]:
        return [await Scorer(config).score_case(case, turns) for config in configs]

    results = []
    for result in asyncio.run(score_all()):
        assert all(r.error is None for r in result.criterion_results), result.criterion_results
        results.append({r.criterion: (r.score, r.passed) for r in result.criterion_results})
    return results


def test_the_table_covers_what_it_promises() -> None:
    assert TABLE["google_adk"] == "2.13.0"
    assert len(TABLE["responses"]) >= 40 and len(TABLE["trajectories"]) >= 25
    assert THRESHOLDS == [1.0, 0.8, 0.7, 0.5]


@pytest.mark.parametrize("row", TABLE["responses"], ids=[r["id"] for r in TABLE["responses"]])
def test_response_match_score_equals_adk(row: dict[str, Any]) -> None:
    case = EvalCase(conversation=[Invocation(user_content="q", expected_final_response=row["reference"])])
    configs = [EvalConfig(criteria={"response_match_score": threshold}) for threshold in THRESHOLDS]
    results = _case_results(configs, case, [_trajectory([], row["candidate"])])
    for threshold, result in zip(THRESHOLDS, results):
        score, passed = result["response_match_score"]
        assert score == pytest.approx(row["adk_score"], abs=1e-6)
        assert passed is row["adk_passed"][str(threshold)], threshold


@pytest.mark.parametrize("row", TABLE["trajectories"], ids=[r["id"] for r in TABLE["trajectories"]])
@pytest.mark.parametrize("match_type", ["EXACT", "IN_ORDER", "ANY_ORDER"])
def test_tool_trajectory_avg_score_equals_adk(row: dict[str, Any], match_type: str) -> None:
    case = EvalCase(conversation=[
        Invocation(user_content="q", expected_tool_trajectory=inv["expected"]) for inv in row["invocations"]])
    turns = [_trajectory(inv["actual"]) for inv in row["invocations"]]
    adk = row["adk"][match_type]
    configs = [EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": {
        "threshold": threshold, "matchType": match_type, "ignore_args": row["ignore_args"]}}})
        for threshold in THRESHOLDS]
    for threshold, result in zip(THRESHOLDS, _case_results(configs, case, turns)):
        score, passed = result["tool_trajectory_avg_score"]
        assert score == pytest.approx(adk["score"], abs=1e-6)
        assert passed is adk["passed"][str(threshold)], threshold


def test_default_criteria_are_adks() -> None:
    assert {name: c.threshold for name, c in EvalConfig.adk_default().criteria.items()} == \
        TABLE["default_criteria"]


@functools.cache
def _eval_set(path: Path) -> EvalSet:
    return EvalSet.load(path)


@pytest.mark.parametrize("run", TABLE["evalsets"], ids=[f"{r['file']}-{r['perturbation']}" for r in TABLE["evalsets"]])
def test_real_adk_eval_sets_score_as_adk(shared_data: Path, run: dict[str, Any]) -> None:
    folder = shared_data / "evalsets"
    eval_set = _eval_set(folder / run["file"])
    # with its own test_config.json, or, like ``adk eval`` without one, ADK's default criteria
    config = EvalConfig.load(folder / run["config"]) if run["config"] else EvalConfig.default_for(eval_set)
    cases = [case for case in eval_set.eval_cases if case.conversation]
    assert len(cases) == len(run["cases"])
    for case, expected in zip(cases, run["cases"]):
        turns = [_trajectory(t["tool_calls"], t["final_response"]) for t in expected["turns"]]
        ours = _case_results([config], case, turns)[0]
        assert set(ours) == set(expected["adk"])
        for name, adk in expected["adk"].items():
            assert ours[name][0] == pytest.approx(adk["score"], abs=1e-6), name
            assert ours[name][1] is adk["passed"], name
