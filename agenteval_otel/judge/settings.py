"""Where the judge is and how it is called: endpoint, key, model, deadline, retries, concurrency,
cache; read from the environment or given in code.

The endpoint is any OpenAI-compatible Chat Completions API: OpenAI itself, a local server (vLLM,
llama.cpp, Ollama) or a gateway in front of another provider.

>>> settings = JudgeSettings.from_env({"AGENTEVAL_JUDGE_BASE_URL": "http://127.0.0.1:8000/v1",
...                                     "AGENTEVAL_JUDGE_MODEL": "qwen2.5"})
>>> settings.configured, settings.model_for("gpt-4o-mini"), settings.model_for("llama3")
(True, 'qwen2.5', 'llama3')
>>> JudgeSettings.from_env({}).configured
False
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Final

from agenteval_otel.errors import ConfigError, mask_url, redact_secrets

__all__ = ["DEFAULT_JUDGE_MODEL", "JudgeSettings", "OPENAI_BASE_URL"]

DEFAULT_JUDGE_MODEL: Final = "gpt-4o-mini"
OPENAI_BASE_URL: Final = "https://api.openai.com/v1"
NO_KEY: Final = "no-key"
"""Sent as the key to an endpoint given without one (local servers ignore it)."""

ENV_MODEL: Final = "AGENTEVAL_JUDGE_MODEL"
ENV_BASE_URL: Final = "AGENTEVAL_JUDGE_BASE_URL"
ENV_API_KEY: Final = "AGENTEVAL_JUDGE_API_KEY"
ENV_TIMEOUT: Final = "AGENTEVAL_JUDGE_TIMEOUT"
ENV_RETRIES: Final = "AGENTEVAL_JUDGE_MAX_RETRIES"
ENV_CONCURRENCY: Final = "AGENTEVAL_JUDGE_CONCURRENCY"
ENV_CACHE: Final = "AGENTEVAL_JUDGE_CACHE"
ENV_MAX_RESPONSE_BYTES: Final = "AGENTEVAL_JUDGE_MAX_RESPONSE_BYTES"
DEFAULT_MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class JudgeSettings:
    """How to reach and call the judge.

    ``base_url``: the OpenAI-compatible endpoint (``None``: OpenAI's). ``api_key``: never shown
    in a repr, a span, a log line or a report. ``model``: the model when a criterion names none
    of its own (see :meth:`model_for`). ``timeout_s``: one overall deadline per judge call,
    retries and their waits included. ``max_retries``: retries after HTTP 429 or 5xx (nothing
    else is retried), with exponential backoff and jitter from ``backoff_s`` up to
    ``max_backoff_s``, or after the server's ``Retry-After``. ``concurrency``: judge requests in
    flight at once, over a whole run. ``cache_dir``: a directory of earlier answers (``None``:
    no cache). ``seed``: sent with every request (sample *i* gets ``seed + i``); temperature is 0.
    ``max_response_bytes``: the largest answer read (4 MiB), checked on its ``Content-Length``
    and again while it is read; a larger one is an error, never held.
    """

    base_url: str | None = None
    api_key: str | None = dataclasses.field(default=None, repr=False)
    model: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 4
    concurrency: int = 8
    cache_dir: str | None = None
    seed: int | None = 0
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ConfigError(f"judge timeout_s must be positive, got {self.timeout_s!r}")
        if self.max_retries < 0:
            raise ConfigError(f"judge max_retries must be 0 or more, got {self.max_retries!r}")
        if self.concurrency < 1:
            raise ConfigError(f"judge concurrency must be at least 1, got {self.concurrency!r}")
        if self.backoff_s < 0 or self.max_backoff_s < 0:
            raise ConfigError("judge backoff_s and max_backoff_s must be 0 or more")
        if self.max_response_bytes < 1:
            raise ConfigError(f"judge max_response_bytes must be at least 1, got {self.max_response_bytes!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> JudgeSettings:
        """Settings from ``AGENTEVAL_JUDGE_*`` (``BASE_URL``, ``API_KEY``, ``MODEL``, ``TIMEOUT``,
        ``MAX_RETRIES``, ``CONCURRENCY``, ``CACHE``, ``MAX_RESPONSE_BYTES``), falling back to ``OPENAI_BASE_URL`` and
        ``OPENAI_API_KEY``; ``overrides`` win. ``ConfigError`` naming a variable that is not a number."""
        env = os.environ if environ is None else environ

        def text(*names: str) -> str | None:
            for name in names:
                value = (env.get(name) or "").strip()
                if value:
                    return value
            return None

        def number(name: str, kind: type[float] | type[int]) -> dict[str, float | int]:
            raw = text(name)
            if raw is None:
                return {}
            try:
                return {"value": kind(raw)}
            except ValueError:
                raise ConfigError(f"{name}={raw!r}: expected {'a number' if kind is float else 'an integer'}") \
                    from None

        values: dict[str, object] = {
            "base_url": text(ENV_BASE_URL, "OPENAI_BASE_URL"),
            "api_key": text(ENV_API_KEY, "OPENAI_API_KEY"),
            "model": text(ENV_MODEL),
            "cache_dir": text(ENV_CACHE),
        }
        for field, name, kind in (("timeout_s", ENV_TIMEOUT, float), ("max_retries", ENV_RETRIES, int),
                                  ("concurrency", ENV_CONCURRENCY, int),
                                  ("max_response_bytes", ENV_MAX_RESPONSE_BYTES, int)):
            found = number(name, kind)
            if found:
                values[field] = found["value"]
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    @property
    def configured(self) -> bool:
        """Whether a judge can be called: an endpoint or an API key is given."""
        return bool(self.base_url or self.api_key)

    @property
    def endpoint(self) -> str:
        """The endpoint, fit to be shown: its credentials masked (``agenteval_otel.errors.mask_url``)."""
        return mask_url(self.base_url or OPENAI_BASE_URL)

    @property
    def key(self) -> str:
        """The key sent (a placeholder for an endpoint given without one)."""
        return self.api_key or NO_KEY

    def model_for(self, requested: str | None) -> str:
        """The model to call for a criterion that asks for ``requested``: the criterion's own when
        it names one other than the default, else ``model`` (``AGENTEVAL_JUDGE_MODEL``), else the
        default (gpt-4o-mini)."""
        if requested and requested != DEFAULT_JUDGE_MODEL:
            return requested
        return self.model or requested or DEFAULT_JUDGE_MODEL

    def redact(self, text: str) -> str:
        """``text`` without the API key in it, whole or in part, nor anything shaped like a
        credential (servers may echo the key in an error): see
        :func:`~agenteval_otel.errors.redact_secrets`."""
        return redact_secrets(text, [self.api_key])
