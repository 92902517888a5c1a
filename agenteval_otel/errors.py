"""The exceptions agenteval-otel raises, as one tree so callers can catch at any level.

::

    AgentEvalError
    ├── EvalSetLoadError   (also a ValueError) an eval-set file could not be read
    ├── ConfigError        (also a ValueError) an evaluation config is invalid
    ├── TraceReadError     (also a ValueError) a trace file or trace source could not be read
    └── JudgeError         an LLM judge is missing, failed or answered what could not be read

Every message names where the problem is (file, line or JSON path) and what was expected.
"""

from __future__ import annotations

__all__ = ["AgentEvalError", "ConfigError", "EvalSetLoadError", "JudgeError", "TraceReadError"]


class AgentEvalError(Exception):
    """Base class of every error raised on purpose by agenteval-otel."""


class EvalSetLoadError(AgentEvalError, ValueError):
    """An eval set could not be loaded: missing file, bad JSON, or a field of the wrong shape."""


class ConfigError(AgentEvalError, ValueError):
    """An evaluation config is invalid: unknown criterion, unknown field, or a bad value."""


class TraceReadError(AgentEvalError, ValueError):
    """A trace file or trace source could not be read."""


class JudgeError(AgentEvalError):
    """An LLM judge is not configured, failed, or gave an answer that could not be read."""
