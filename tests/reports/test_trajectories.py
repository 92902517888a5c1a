"""The JSON of ``agenteval trajectory`` is written trajectory by trajectory, and reads exactly as
the whole list dumped at once."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agenteval_otel.reports._trajectories import iter_trajectories_json, trajectories_json
from agenteval_otel.traces.files import read_trajectories

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted((REPO / "tests" / "data" / "corpus").glob("*/*.otlp.json"))


def _whole(trajectories: list) -> str:  # type: ignore[type-arg]
    return orjson.dumps([t.to_json_dict() for t in trajectories], option=orjson.OPT_INDENT_2, default=str).decode()


@pytest.mark.parametrize("path", CORPUS[:8], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pieces_make_the_list_dumped_at_once(path: Path) -> None:
    trajectories = read_trajectories([path]).trajectories
    assert len(list(iter_trajectories_json(trajectories))) == len(trajectories) + 1
    assert trajectories_json(trajectories) == _whole(trajectories)
    assert orjson.loads(trajectories_json(trajectories)) == [t.to_json_dict() for t in trajectories]


def test_no_trajectory_is_an_empty_list() -> None:
    assert trajectories_json([]) == "[]"
