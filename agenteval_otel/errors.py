"""The exceptions agenteval-otel raises, as one tree so callers can catch at any level.

::

    AgentEvalError
    ├── EvalSetLoadError   (also a ValueError) an eval-set file could not be read
    │   └── QuerySetLoadError  a query-set file (JSONL) could not be read
    ├── SimulationLoadError (also a ValueError) a simulation run file (JSONL) could not be read
    ├── ConfigError        (also a ValueError) an evaluation config is invalid, or a feature
    │   │                  asked for needs an extra that is not installed (e.g. ``grpc``)
    │   └── GraderError    a grader's template, model configuration or response parser is invalid,
    │                      or its template could not be rendered for an entry
    ├── TraceReadError     (also a ValueError) a trace file or trace source could not be read
    ├── ExperimentLoadError (also a ValueError) an experiment results file could not be read
    └── JudgeError         an LLM judge is missing, failed or answered what could not be read
        ├── JudgeNotConfiguredError  no judge endpoint (or no openai package) is configured
        ├── JudgeUnavailableError    the endpoint could not be reached or refused the request
        ├── JudgeTimeoutError        the judge did not answer within the call's deadline
        ├── JudgeOutputError         the answer could not be read, or is out of range
        └── UserSimulatorError       the simulated user's model failed, timed out or answered
                                     what could not be read

Every message names where the problem is (file, line or JSON path) and what was expected.
"""

from __future__ import annotations

__all__ = [
    "AgentEvalError",
    "ConfigError",
    "EvalSetLoadError",
    "ExperimentLoadError",
    "GraderError",
    "JudgeError",
    "JudgeNotConfiguredError",
    "JudgeOutputError",
    "JudgeTimeoutError",
    "JudgeUnavailableError",
    "QuerySetLoadError",
    "SimulationLoadError",
    "TraceReadError",
    "UserSimulatorError",
]


class AgentEvalError(Exception):
    """Base class of every error raised on purpose by agenteval-otel."""


class EvalSetLoadError(AgentEvalError, ValueError):
    """An eval set could not be loaded: missing file, bad JSON, or a field of the wrong shape."""


class QuerySetLoadError(EvalSetLoadError):
    """A query set could not be loaded: missing file, a line that is not JSON, or a query of the wrong shape."""


class SimulationLoadError(AgentEvalError, ValueError):
    """A simulation run file could not be read: missing file, or a line that is not a record."""


class ConfigError(AgentEvalError, ValueError):
    """An evaluation config is invalid: unknown criterion, unknown field, or a bad value; or a
    feature asked for needs an extra that is not installed (the message names it)."""


class GraderError(ConfigError):
    """A grader's template, model configuration or response parser is invalid, or its template
    reached for something the entry does not hold (or may not be reached)."""


class TraceReadError(AgentEvalError, ValueError):
    """A trace file or trace source could not be read."""


class ExperimentLoadError(AgentEvalError, ValueError):
    """An experiment results file could not be read: missing file, bad JSON, or a record of the
    wrong shape (the message names the line)."""


class JudgeError(AgentEvalError):
    """An LLM judge is not configured, failed, or gave an answer that could not be read."""


class JudgeNotConfiguredError(JudgeError):
    """An LLM-judged criterion was asked for, but no judge endpoint is configured."""


class JudgeUnavailableError(JudgeError):
    """The judge endpoint could not be reached, or answered with an HTTP error (after retries)."""


class JudgeTimeoutError(JudgeError):
    """The judge did not answer within the call's deadline."""


class JudgeOutputError(JudgeError, ValueError):
    """The judge answered, but not in the expected shape or range."""


class UserSimulatorError(JudgeError):
    """The model playing a simulated user (through the judge client) is not configured, failed,
    timed out, or answered what could not be read as the user's next message."""
