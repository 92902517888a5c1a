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
    ├── HistoryError       the run history store could not be read or written, or has no such run
    └── JudgeError         an LLM judge is missing, failed or answered what could not be read
        ├── JudgeNotConfiguredError  no judge endpoint (or no openai package) is configured
        ├── JudgeUnavailableError    the endpoint could not be reached or refused the request
        ├── JudgeTimeoutError        the judge did not answer within the call's deadline
        ├── JudgeOutputError         the answer could not be read, or is out of range
        └── UserSimulatorError       the simulated user's model failed, timed out or answered
                                     what could not be read

Every message names where the problem is (file, line or JSON path) and what was expected, and
never a credential: a URL in a message or a log line is shown through :func:`mask_url`.
"""

from __future__ import annotations

import re
import urllib.parse

__all__ = [
    "AgentEvalError",
    "ConfigError",
    "EvalSetLoadError",
    "ExperimentLoadError",
    "GraderError",
    "HistoryError",
    "JudgeError",
    "JudgeNotConfiguredError",
    "JudgeOutputError",
    "SECRET_PATTERNS",
    "JudgeTimeoutError",
    "JudgeUnavailableError",
    "QuerySetLoadError",
    "SimulationLoadError",
    "TraceReadError",
    "UserSimulatorError",
    "mask_url",
    "mask_url_in",
    "redact_secrets",
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


class HistoryError(AgentEvalError):
    """The run history (a SQLite file) could not be read or written, or holds no such run."""


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


_MASK = "***"
_SECRET_PARAMETER = re.compile(r"pass|pwd|secret|token|key|auth|sig|credential", re.IGNORECASE)


def mask_url(url: str) -> str:
    """``url`` fit to show in a message or a log: its credentials become ``***``. Never raises.

    A user name followed by a password keeps the name (it tells accounts apart) and loses the
    password; a lone user part, or one with an empty password, is taken for a token and masked
    whole. The values of query parameters whose names look secret (``pass``, ``pwd``, ``secret``,
    ``token``, ``key``, ``auth``, ``sig``, ``credential``, in any case) are masked. Text that is
    not even a URL keeps nothing between ``//`` and ``@``, and no query.

    >>> mask_url("http://user:s3cret@jaeger:16686/api/traces?service=a&api_key=k")
    'http://user:***@jaeger:16686/api/traces?service=a&api_key=***'
    >>> mask_url("https://sk-s3cret@judge.example/v1"), mask_url("https://sk-s3cret:@judge.example/v1")
    ('https://***@judge.example/v1', 'https://***@judge.example/v1')
    >>> mask_url("http://127.0.0.1:4318/v1/traces?X-Amz-Signature=abc&service=a")
    'http://127.0.0.1:4318/v1/traces?X-Amz-Signature=***&service=a'
    >>> mask_url("http://u:s3cret@[::1/x")  # not a URL: no IPv6 host ends
    'http://***@[::1/x'
    """
    try:
        parts = urllib.parse.urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, host = netloc.rpartition("@")
            user, _, password = userinfo.partition(":")
            netloc = f"{user}:{_MASK}@{host}" if user and password else f"{_MASK}@{host}"
        query = "&".join(_masked_parameter(pair) for pair in parts.query.split("&")) if parts.query else ""
        return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query))
    except Exception:  # not even a URL: hide anything between "//" and "@", and every query
        return re.sub(r"\?.*", "?" + _MASK, re.sub(r"//[^/]*@", f"//{_MASK}@", str(url)))


def _masked_parameter(pair: str) -> str:
    name, has_value, _ = pair.partition("=")
    if has_value and _SECRET_PARAMETER.search(urllib.parse.unquote_plus(name)):
        return f"{name}={_MASK}"
    return pair


def mask_url_in(text: str, url: str) -> str:
    """``text`` with ``url`` in it masked (:func:`mask_url`), and the URL's password wherever
    else it appears (an operating system's error may quote it decoded, or alone).

    >>> mask_url_in("cannot open http://admin:p%40ss@host/x: p@ss rejected", "http://admin:p%40ss@host/x")
    'cannot open http://admin:***@host/x: *** rejected'
    """
    text = text.replace(url, mask_url(url))
    try:
        password = urllib.parse.urlsplit(url).password
    except ValueError:
        password = None
    for secret in {password, urllib.parse.unquote(password)} if password else ():
        text = text.replace(secret, _MASK)
    return text


SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),  # OpenAI, Anthropic and compatible API keys
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}"),  # an Authorization header's credentials
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"),  # Google API keys
    re.compile(r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}"),  # GitHub tokens
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),  # Slack tokens
)
"""Shapes of credentials masked in every text we write, whatever produced it."""
_MIN_FRAGMENT = 8


def redact_secrets(text: str, secrets: tuple[str | None, ...] | list[str | None] = ()) -> str:
    """``text`` with credential-shaped strings (:data:`SECRET_PATTERNS`) and each of ``secrets``
    masked as ``***``, including any part of a secret of 8 or more characters (a server that
    echoes a key in part). Never raises.

    >>> redact_secrets("401: Incorrect API key provided: sk-proj-abcdefgh12345678")
    '401: Incorrect API key provided: ***'
    >>> redact_secrets("key ending in wxyz-0123456789 refused", ["abcdefghijklmnopqrstuvwxyz-0123456789"])
    'key ending in *** refused'
    >>> redact_secrets("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30")
    'Authorization: ***'
    """
    try:
        for secret in secrets:
            if secret and len(secret) >= 4:
                text = _mask_fragments(text, secret)
        for pattern in SECRET_PATTERNS:
            text = pattern.sub(_MASK, text)
        return text
    except Exception:  # noqa: BLE001 - redaction must never fail the message it cleans
        return _MASK


def _mask_fragments(text: str, secret: str) -> str:
    """``text`` with ``secret`` masked, and every run of 8 or more of its characters in order."""
    text = text.replace(secret, _MASK)
    width = min(_MIN_FRAGMENT, len(secret))
    if len(text) < width:
        return text
    spans: list[tuple[int, int]] = []
    for start in range(len(secret) - width + 1):
        window = secret[start:start + width]
        found = text.find(window)
        while found != -1:
            end, offset = found + width, start + width  # extend the match as far as it goes
            while end < len(text) and offset < len(secret) and text[end] == secret[offset]:
                end, offset = end + 1, offset + 1
            spans.append((found, end))
            found = text.find(window, found + 1)
    if not spans:
        return text
    spans.sort()
    merged: list[list[int]] = []
    for begin, end in spans:
        if merged and begin <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([begin, end])
    out, last = [], 0
    for begin, end in merged:
        out.append(text[last:begin])
        out.append(_MASK)
        last = end
    out.append(text[last:])
    return "".join(out)
