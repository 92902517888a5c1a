"""``export_sink``: the sink that writes verdicts to one target, picked by the target's scheme.

- ``phoenix+http://HOST:PORT`` (or ``phoenix+https://``): :class:`PhoenixAnnotations`, span
  annotations on the judged root spans;
- ``mlflow+http://HOST:PORT`` (or ``mlflow+https://``): :class:`MlflowAssessments`, feedback
  assessments on them;
- anything else (an OTLP URL, ``grpc://``, a file path): :meth:`TraceExport.to_target`,
  evaluation spans and ``gen_ai.evaluation.result`` log records.

Neither backend needs a project or an experiment: the judged span's ids find it. A target with a
query or a fragment after a backend's scheme is refused, as are a backend scheme without a host
and options a sink does not take (``ConfigError``, the URL masked).

>>> export_sink("mlflow+http://127.0.0.1:5000", token="", run_id="nightly").shutdown(timeout=1)
True
>>> export_sink("phoenix+localhost:6006")
Traceback (most recent call last):
agenteval_otel.errors.ConfigError: phoenix+localhost:6006: expected phoenix+http://HOST:PORT or phoenix+https://HOST:PORT
"""

from __future__ import annotations

import os
import urllib.parse
from typing import Any

from agenteval_otel.errors import ConfigError, mask_url
from agenteval_otel.results._annotations import VerdictDelivery
from agenteval_otel.results._export import ExportMode, TraceExport
from agenteval_otel.results._mlflow import MlflowAssessments
from agenteval_otel.results._phoenix import PhoenixAnnotations
from agenteval_otel.results._sinks import EvaluationSink

__all__ = ["BACKEND_SCHEMES", "export_sink"]

BACKEND_SCHEMES: dict[str, type[VerdictDelivery]] = {"phoenix": PhoenixAnnotations, "mlflow": MlflowAssessments}
"""The backend-native sinks by the scheme prefix that picks them (``phoenix+http://...``)."""


def export_sink(target: str | os.PathLike[str], *, write: ExportMode = "events", **options: Any) -> EvaluationSink:
    """The sink writing verdicts to ``target`` (see the module docs), built with ``options``
    (e.g. ``run_id``, ``eval_set_id``; ``api_key`` for Phoenix, ``token`` for MLflow); ``write``
    says what a :class:`TraceExport` writes (see there).

    Raises ``ConfigError`` for a malformed backend target, and ``OSError`` when a file target
    cannot be opened for appending.
    """
    text = os.fspath(target)
    backend, plus, url = text.partition("+")
    sink = BACKEND_SCHEMES.get(backend.lower()) if plus else None
    if sink is None:
        return TraceExport.to_target(target, write=write, **options)
    shown = mask_url(text)
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{shown}: expected {backend}+http://HOST:PORT or {backend}+https://HOST:PORT")
    if parts.query or parts.fragment:
        raise ConfigError(f"{shown}: {sink.backend} targets take no query or fragment (the judged spans' "
                          "ids say where the verdicts go)")
    try:
        return sink(url, **options)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{shown}: {exc}") from None
