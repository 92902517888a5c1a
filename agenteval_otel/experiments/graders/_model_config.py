"""A grader's model configuration: which model grades, at what temperature, behind which endpoint.

A JSON object, from a file or a dict: ``model`` (required), ``temperature`` (0 to 2; default 0),
``base_url`` (an OpenAI-compatible endpoint other than the judge's) and ``api_key_env`` (the
environment variable holding that endpoint's key). Any other key is refused.

An endpoint of the grader's own never receives the judge's key: it gets the key in
``api_key_env``, or none.

>>> GraderModelConfig.load({"model": "gpt-4o", "temperature": 0.2}).model
'gpt-4o'
>>> GraderModelConfig.load({"model": "gpt-4o", "top_k": 5})
Traceback (most recent call last):
...
agenteval_otel.errors.GraderError: grader model configuration: top_k: unknown key (expected model, temperature, base_url, api_key_env)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval_otel.errors import GraderError

__all__ = ["GraderModelConfig"]


class GraderModelConfig(BaseModel):
    """The model a grader calls, and how."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    """The model's name at the endpoint."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature; ``None``: 0, as every judge call."""
    base_url: str | None = None
    """An OpenAI-compatible endpoint for this grader; ``None``: the judge's."""
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """The environment variable holding the grader's key; ``None``: with ``base_url``, no key
    (the judge's key is never sent to a grader's own endpoint), else the judge's."""

    def api_key(self) -> str | None:
        """The key in ``api_key_env``; ``GraderError`` when that variable is not set."""
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise GraderError(f"grader model configuration: api_key_env: the environment variable "
                              f"{self.api_key_env} is not set (expected the key of "
                              f"{self.base_url or 'the judge endpoint'})")
        return key

    @classmethod
    def load(cls, source: str | Path | Mapping[str, Any], *, where: str = "") -> GraderModelConfig:
        """The configuration in a JSON file (a path) or a dict; ``GraderError`` naming the file,
        the key and what was expected."""
        if isinstance(source, Mapping):
            return cls._validate(source, where)
        path = Path(source)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise GraderError(f"grader model configuration {path}: cannot be read ({exc})") from None
        except json.JSONDecodeError as exc:
            raise GraderError(f"grader model configuration {path}: line {exc.lineno}, column {exc.colno}: "
                              f"not JSON ({exc.msg})") from None
        except UnicodeDecodeError as exc:
            raise GraderError(f"grader model configuration {path}: not UTF-8 text ({exc})") from None
        return cls._validate(data, str(path))

    @classmethod
    def _validate(cls, data: Any, where: str) -> GraderModelConfig:
        label = f"grader model configuration {where}".rstrip()
        if not isinstance(data, Mapping):
            raise GraderError(f"{label}: expected a JSON object such as {{\"model\": \"gpt-4o\"}}, "
                              f"got {type(data).__name__}")
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                key = ".".join(str(part) for part in error["loc"]) or "(object)"
                if error["type"] == "extra_forbidden":
                    problems.append(f"{key}: unknown key (expected {', '.join(cls.model_fields)})")
                else:
                    problems.append(f"{key}: {error['msg']}")
            raise GraderError(f"{label}: {'; '.join(problems)}") from None
