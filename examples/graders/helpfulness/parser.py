"""The helpfulness grader's response parser: the JSON object in the reply, its three metrics only."""

from __future__ import annotations

import json

METRICS = ("helpfulness", "groundedness", "professionalism")


def parse_grader_response(response: str) -> dict:
    """The metrics of the first JSON object in ``response`` (code fences and prose around it allowed)."""
    start, end = response.find("{"), response.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the reply")
    scores = json.loads(response[start:end + 1])
    missing = [name for name in METRICS if name not in scores]
    if missing:
        raise ValueError(f"the reply has no score for {', '.join(missing)}")
    return {name: scores[name] for name in METRICS}
