"""Trace assembly builds its models without validating them: every trajectory it builds from our
runs, the corpus and the third-party runs must be exactly what validation would have built."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval_otel.traces import read_spans
from agenteval_otel.trajectory import Trajectory, build_trajectories
from tests.shared_data import SHARED_DATA, shared_params

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted((REPO / "tests" / "data" / "corpus").glob("*/*.otlp.json"))


def assert_valid_models(path: Path) -> None:
    for group in ("invocation", "conversation"):
        trajectories = build_trajectories(read_spans(path), group=group)
        assert trajectories
        for trajectory in trajectories:
            validated = Trajectory.model_validate(trajectory.model_dump())
            assert validated == trajectory
            assert validated.model_dump_json() == trajectory.model_dump_json()


def test_our_own_runs_build_valid_models(weather_runs: Path) -> None:
    for path in sorted(weather_runs.glob("*.otlp.json")):
        assert_valid_models(path)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_corpus_run_builds_valid_models(path: Path) -> None:
    assert_valid_models(path)


@pytest.mark.parametrize(
    "path",
    shared_params(pytest.param(p, id=f"{p.parent.name}/{p.name}")
                  for p in sorted((SHARED_DATA / "traces" / "generated").rglob("*.otlp.json"))),
)
def test_every_third_party_run_builds_valid_models(path: Path) -> None:
    assert_valid_models(path)
