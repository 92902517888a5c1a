"""``MlflowAssessments``: verdicts as MLflow 3 feedback assessments on the judged root spans.

MLflow names a trace it received over OTLP ``tr-`` + the trace id in hex, so the trace of a
judged span is known without a lookup. For each batch of verdicts the sink reads the traces'
assessments (``POST /api/3.0/mlflow/traces/batchGetInfos``), then for each verdict updates the
feedback it exported before, the one with the same name (the criterion), span and
``agenteval.evaluation.run_id`` in its metadata (``PATCH
/api/3.0/mlflow/traces/{trace_id}/assessments/{assessment_id}``), or creates it (``POST
.../assessments``): exporting the same verdict twice leaves one. The feedback carries the source
(``LLM_JUDGE`` when the judge was asked, else ``CODE``; its id is the judge's model or
``agenteval``), the value (``value="passed"``: ``true``/``false``, which MLflow shows as pass and
fail; ``value="score"``: the score), the explanation as rationale, and our provenance as
metadata (the score, the label, the run id, eval set and case ids, threshold, evaluator version).
A criterion that could not score gives a feedback with an error instead of a value. A verdict
whose trace MLflow does not hold (yet) fails and is counted.

Credentials: ``token`` (else ``MLFLOW_TRACKING_TOKEN``) as ``Authorization: Bearer ...``, or
``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD`` as basic authentication; masked in
every message.

>>> sink = MlflowAssessments("http://127.0.0.1:5000", token="", eval_set_id="weather")
>>> sink.run_id, sink.shutdown(timeout=1)
('weather', True)
"""

from __future__ import annotations

import base64
import os
import urllib.parse
from typing import Any, Literal

from agenteval_otel import semconv as attr
from agenteval_otel.results._annotations import RUN_ID_KEY, ExportFailure, Verdict, VerdictDelivery

__all__ = ["MlflowAssessments"]

TOKEN_ENV = "MLFLOW_TRACKING_TOKEN"
USERNAME_ENV = "MLFLOW_TRACKING_USERNAME"
PASSWORD_ENV = "MLFLOW_TRACKING_PASSWORD"
TRACES = "/api/3.0/mlflow/traces"
SCORE_KEY = "agenteval.evaluation.score"
LABEL_KEY = "agenteval.evaluation.label"
SOURCE_ID = "agenteval"


def mlflow_trace_id(trace_id: str) -> str:
    """The id MLflow gives a trace received over OTLP.

    >>> mlflow_trace_id("4BF92F3577B34DA6A3CE929D0E0E4736")
    'tr-4bf92f3577b34da6a3ce929d0e0e4736'
    """
    return f"tr-{trace_id.lower()}"


def feedback(verdict: Verdict, value: Literal["passed", "score"] = "passed") -> dict[str, Any]:
    """The assessment MLflow takes for one verdict (without its trace and assessment ids).

    >>> from agenteval_otel.results._results import CriterionResult
    >>> v = Verdict.of(CriterionResult(criterion="max_turns", score=0.0, passed=False, threshold=1.0,
    ...                reason="7 turns"), trace_id="ab" * 16, span_id="cd" * 8, run_id="nightly")
    >>> body = feedback(v); body["feedback"], body["source"], body["rationale"]
    ({'value': False}, {'source_type': 'CODE', 'source_id': 'agenteval'}, '7 turns')
    """
    metadata = {**verdict.metadata, SCORE_KEY: verdict.score, LABEL_KEY: verdict.label}
    model = verdict.metadata.get(attr.EVAL_JUDGE_MODEL)
    found: dict[str, Any] = {
        "assessment_name": verdict.criterion,
        "span_id": verdict.span_id,
        "source": {"source_type": "LLM_JUDGE" if verdict.judged else "CODE",
                   "source_id": str(model) if verdict.judged and model else SOURCE_ID},
        "feedback": ({"error": {"error_code": verdict.error_type, "error_message": verdict.explanation or ""}}
                     if verdict.error_type else {"value": verdict.passed if value == "passed" else verdict.score}),
        "metadata": {key: str(item) for key, item in metadata.items()},
    }
    if verdict.explanation:
        found["rationale"] = verdict.explanation
    return found


class MlflowAssessments(VerdictDelivery):
    """An ``EvaluationSink`` writing each verdict as an MLflow feedback assessment on the judged
    root span (see the module docs). ``base_url``: the MLflow tracking server
    (``http://localhost:5000``); ``token``: ``None`` reads ``MLFLOW_TRACKING_TOKEN``, ``""``
    sends none; ``value``: what the feedback's value is, ``"passed"`` (true/false) or ``"score"``.
    The other keywords are :class:`VerdictDelivery`'s: ``run_id``, ``eval_set_id``,
    ``evaluator_version``, ``judge_model``, ``timeout`` (each request's deadline), ``max_queue``,
    ``batch_size``, ``delay_s``. ``counters`` says what became of every verdict; nothing raises
    into the run.
    """

    backend = "MLflow"

    def __init__(self, base_url: str, *, token: str | None = None, value: Literal["passed", "score"] = "passed",
                 **options: Any) -> None:
        if value not in ("passed", "score"):
            raise ValueError(f"value must be 'passed' or 'score', got {value!r}")
        self.value: Literal["passed", "score"] = value
        token = os.environ.get(TOKEN_ENV, "") if token is None else token
        username, password = os.environ.get(USERNAME_ENV, ""), os.environ.get(PASSWORD_ENV, "")
        self._headers: dict[str, str] = {}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        elif username and password:
            basic = base64.b64encode(f"{username}:{password}".encode()).decode()
            self._headers["Authorization"] = f"Basic {basic}"
        secrets = [token, password, self._headers.get("Authorization", "").partition(" ")[2]]
        super().__init__(base_url, secrets=secrets, **options)

    def _send(self, batch: list[Verdict]) -> int:
        existing = self._assessments({mlflow_trace_id(verdict.trace_id) for verdict in batch})
        exported = 0
        for verdict in batch:
            trace_id = mlflow_trace_id(verdict.trace_id)
            if trace_id not in existing:
                self._warn_failure(f"{self.shown_url}{TRACES}: MLflow holds no trace {trace_id} (were its spans "
                                   "sent to this server's /v1/traces?)")
                continue
            key = (verdict.criterion, verdict.span_id, verdict.run_id)
            body = {**feedback(verdict, self.value), "trace_id": trace_id}
            assessment_id = existing[trace_id].get(key)
            try:
                if assessment_id is None:
                    path = f"{TRACES}/{trace_id}/assessments"
                    status, answer = self._request("POST", path, {"assessment": body}, self._headers)
                else:
                    path = f"{TRACES}/{trace_id}/assessments/{urllib.parse.quote(assessment_id, safe='')}"
                    body["assessment_id"] = assessment_id
                    status, answer = self._request("PATCH", path, {
                        "assessment": body, "update_mask": "feedback,rationale,metadata"}, self._headers)
            except ExportFailure as exc:  # no answer: the rest of the batch would wait in vain too
                self._warn_failure(str(exc))
                return exported
            if not 200 <= status < 300:
                self._warn_failure(self._refusal(path, status, answer))
                continue
            created = (answer.get("assessment") or {}).get("assessment_id") if isinstance(answer, dict) else None
            if created:
                existing[trace_id][key] = created  # the same verdict twice in one batch: updated, not doubled
            exported += 1
        return exported

    def _assessments(self, trace_ids: set[str]) -> dict[str, dict[tuple[str, str, str], str]]:
        """The traces MLflow holds among ``trace_ids``, each with the ids of our assessments by
        (criterion, span id, run id)."""
        path = f"{TRACES}/batchGetInfos"
        status, answer = self._request("POST", path, {"trace_ids": sorted(trace_ids)}, self._headers)
        if not 200 <= status < 300 or not isinstance(answer, dict):
            raise ExportFailure(self._refusal(path, status, answer))
        found: dict[str, dict[tuple[str, str, str], str]] = {}
        for info in answer.get("trace_infos") or ():
            ours: dict[tuple[str, str, str], str] = {}
            for assessment in info.get("assessments") or ():
                run_id = (assessment.get("metadata") or {}).get(RUN_ID_KEY)
                if run_id is not None and "feedback" in assessment:
                    key = (assessment.get("assessment_name", ""), assessment.get("span_id", ""), run_id)
                    ours.setdefault(key, assessment["assessment_id"])
            found[info["trace_id"]] = ours
        return found
