"""``PhoenixAnnotations``: verdicts as Arize Phoenix span annotations on the judged root spans.

Each verdict becomes one annotation through Phoenix's REST API (``POST /v1/span_annotations``,
several per request): ``name`` = the criterion, ``annotator_kind`` ``LLM`` when the judge was
asked and ``CODE`` otherwise, ``result`` = {``label`` ``pass``/``fail``, ``score``,
``explanation``}, ``metadata`` = our provenance (``agenteval.evaluation.run_id``, eval set and case
ids, threshold, evaluator version, judge model, ``error.type``), and ``identifier`` = the
evaluation run id. Phoenix keeps one annotation per (span, name, identifier) and overwrites it
with a newer one, so exporting the same verdict twice leaves one, and two runs with different
run ids sit side by side. Phoenix stores annotations in the background and holds those whose span
it has not stored yet until the span arrives (a verdict may overtake its trace); its answer
therefore counts an annotation as exported when Phoenix accepted it.

The API key (``api_key``, else ``PHOENIX_API_KEY``) goes in ``Authorization: Bearer ...`` and is
masked in every message.

>>> sink = PhoenixAnnotations("http://127.0.0.1:6006", api_key="", run_id="nightly")
>>> sink.run_id, sink.shutdown(timeout=1)
('nightly', True)
"""

from __future__ import annotations

import os
from typing import Any

from agenteval_otel.results._annotations import ExportFailure, Verdict, VerdictDelivery

__all__ = ["PhoenixAnnotations"]

API_KEY_ENV = "PHOENIX_API_KEY"
PATH = "/v1/span_annotations"


def annotation(verdict: Verdict) -> dict[str, Any]:
    """The body Phoenix takes for one verdict.

    >>> from agenteval_otel.results._results import CriterionResult
    >>> v = Verdict.of(CriterionResult(criterion="max_turns", score=0.0, passed=False, threshold=1.0,
    ...                reason="7 turns"), trace_id="ab" * 16, span_id="cd" * 8, run_id="nightly")
    >>> body = annotation(v); body["name"], body["annotator_kind"], body["result"], body["identifier"]
    ('max_turns', 'CODE', {'label': 'fail', 'score': 0.0, 'explanation': '7 turns'}, 'nightly')
    """
    result: dict[str, Any] = {"label": verdict.label, "score": verdict.score}
    if verdict.explanation:
        result["explanation"] = verdict.explanation
    return {"span_id": verdict.span_id, "name": verdict.criterion, "annotator_kind": "LLM" if verdict.judged else "CODE",
            "result": result, "metadata": dict(verdict.metadata), "identifier": verdict.run_id}


class PhoenixAnnotations(VerdictDelivery):
    """An ``EvaluationSink`` writing each verdict as a Phoenix span annotation on the judged root
    span (see the module docs). ``base_url``: the Phoenix server (``http://localhost:6006``, or
    under a path prefix); ``api_key``: ``None`` reads ``PHOENIX_API_KEY``, ``""`` sends none.
    The other keywords are :class:`VerdictDelivery`'s: ``run_id``, ``eval_set_id``,
    ``evaluator_version``, ``judge_model``, ``timeout`` (each request's deadline), ``max_queue``,
    ``batch_size``, ``delay_s``. ``counters`` says what became of every verdict; nothing raises
    into the run.
    """

    backend = "Phoenix"

    def __init__(self, base_url: str, *, api_key: str | None = None, **options: Any) -> None:
        self._api_key = os.environ.get(API_KEY_ENV, "") if api_key is None else api_key
        super().__init__(base_url, secrets=[self._api_key], **options)

    def _send(self, batch: list[Verdict]) -> int:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        status, answer = self._request("POST", PATH, {"data": [annotation(verdict) for verdict in batch]}, headers)
        if not 200 <= status < 300:
            raise ExportFailure(self._refusal(PATH, status, answer))
        return len(batch)
