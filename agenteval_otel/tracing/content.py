"""Content policy: whether arguments, results and messages are captured, and how they are cleaned.

A :class:`ContentPolicy` turns any Python value into the string that goes into a span attribute:
JSON (orjson) with secret-looking keys redacted at every depth (inside JSON text held in a str
too: a tool result or tool-call arguments sent as JSON), configured regular expressions redacted
in the text, and the text truncated with an explicit marker. A value that cannot be serialised
becomes a bounded ``repr``. Exception text (messages, stack traces, status descriptions) has
credential shapes and the secrets it is given masked as well (:meth:`ContentPolicy.clean_error`).
Nothing here raises.

Our decorators capture content by default because evaluation needs it. It is switched off by
``configure(capture_content=False)`` or by ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
set to ``NO_CONTENT`` (or ``false`` / ``EVENT_ONLY``: we write no events). ``active_policy()`` is
the policy in force for our decorators, ``trace_step`` and ``start_step``; an instrumentor that
records content of its own cleans it with the same policy.

>>> policy = ContentPolicy(max_length=40)
>>> policy.json({"city": "Tokyo", "api_key": "sk-123"})
'{"city":"Tokyo","api_key":"[REDACTED]"}'
>>> print(policy.json(['{"token": "t0p"}']))
["{\\"token\\":\\"[REDACTED]\\"}"]
>>> policy.clean_error("401: Incorrect API key provided: sk-proj-abcdefgh12345678")
'401: Incorrect API key provided: ***'
>>> policy.text("x" * 50)
'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...[truncated 10 chars]'
>>> active_policy().capture in (True, False)
True
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import reprlib
from collections.abc import Callable, Iterable, Mapping
from itertools import islice
from typing import Any, Final

import orjson

from agenteval_otel.errors import redact_secrets

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "DEFAULT_MAX_LENGTH",
    "DEFAULT_REDACT_KEYS",
    "REDACTED",
    "ContentPolicy",
    "active_policy",
    "remember_secrets",
    "set_active_policy",
]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())

CAPTURE_CONTENT_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
DEFAULT_REDACT_KEYS: Final = ("password", "secret", "token", "api_key", "authorization")
DEFAULT_MAX_LENGTH: Final = 32_768
REDACTED: Final = "[REDACTED]"

_CAPTURE_OFF: Final = frozenset({"no_content", "false", "event_only"})
_CAPTURE_ON: Final = frozenset({"true", "span_only", "span_and_event"})
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_JSON_OPTIONS: Final = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_SERIALIZE_NUMPY
_MAX_DEPTH: Final = 32
_KEY_CACHE_SIZE: Final = 4096
_KEY_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_JSON_OPENERS: Final = ("{", "[")
_MAX_KNOWN_SECRETS: Final = 16
_MIN_KNOWN_SECRET: Final = 8

_known_secrets: tuple[str, ...] = ()
"""Secrets remembered from failures (an instrumentor's client keys): masked in all exception text."""

_repr = reprlib.Repr()
_repr.maxstring = 200
_repr.maxother = 200


def bounded_repr(value: object) -> str:
    """``repr(value)`` cut to a few hundred characters; never raises."""
    try:
        return _repr.repr(value)
    except Exception:
        return f"<unrepresentable {type(value).__qualname__}>"


def _words(key: str) -> tuple[str, ...]:
    """``"x-apiKey"`` -> ``("x", "api", "key")``: the lower-case words of a key."""
    return tuple(word.lower() for word in _KEY_WORDS.findall(key))


def _capture_from_env(default: bool) -> bool:
    raw = os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower()
    if raw in _CAPTURE_ON:
        return True
    if raw in _CAPTURE_OFF:
        return False
    if raw:
        _logger.warning("%s=%r is not a known value; content capture stays %s", CAPTURE_CONTENT_ENV, raw, default)
    return default


@dataclasses.dataclass(frozen=True)
class ContentPolicy:
    """What content our spans carry and how it is cleaned before an attribute is set.

    ``capture``: record arguments, results and messages at all; ``None`` (the default) reads
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` when the policy is made (on when unset),
    so after construction it is always a bool.
    ``redact_keys``: keys ADDED to ``DEFAULT_REDACT_KEYS``; values under mapping keys (and
    parameters) holding one of these words (``api_key`` matches ``apiKey``, ``x-api-key``,
    ``OPENAI_API_KEY``; ``token`` does not match ``max_tokens``) become ``[REDACTED]`` at any depth.
    ``replace_default_keys=True`` uses ``redact_keys`` alone instead. After construction
    ``redact_keys`` holds the effective keys.
    ``redact_patterns``: regular expressions replaced by ``[REDACTED]`` in every text we write:
    content, exception messages and stack traces, status descriptions. Exception text has the
    credential shapes of ``agenteval_otel.errors.SECRET_PATTERNS`` (``sk-...``, ``Bearer ...``,
    cloud and forge tokens) masked in any case; content gets them when they are given here
    (``redact_patterns=SECRET_PATTERNS``: they cost a few µs per value, so they are not a default).
    ``max_length``: longer texts are cut and end with ``...[truncated N chars]``.

    >>> ContentPolicy(redact_keys=("ssn",), capture=True).redact_keys[-2:]
    ('authorization', 'ssn')
    >>> ContentPolicy(redact_keys=("ssn",), replace_default_keys=True, capture=True).redact_keys
    ('ssn',)
    """

    capture: bool | None = None
    redact_keys: tuple[str, ...] = ()
    replace_default_keys: bool = False
    redact_patterns: tuple[str | re.Pattern[str], ...] = ()
    max_length: int = DEFAULT_MAX_LENGTH
    _patterns: tuple[re.Pattern[str], ...] = dataclasses.field(init=False, repr=False, compare=False)
    _terms: tuple[str, ...] = dataclasses.field(init=False, repr=False, compare=False)
    _sensitive: dict[str, bool] = dataclasses.field(init=False, repr=False, compare=False)
    _hook: Callable[[Any], Any] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.capture is None:
            object.__setattr__(self, "capture", _capture_from_env(True))
        if not isinstance(self.capture, bool):
            raise TypeError(f"capture must be a bool or None, not {type(self.capture).__name__}")
        if not isinstance(self.replace_default_keys, bool):
            raise TypeError(f"replace_default_keys must be a bool, not {type(self.replace_default_keys).__name__}")
        if isinstance(self.max_length, bool) or not isinstance(self.max_length, int) or self.max_length < 1:
            raise ValueError(f"max_length must be a positive int, not {self.max_length!r}")
        given = (self.redact_keys,) if isinstance(self.redact_keys, str) else tuple(self.redact_keys)
        if not all(isinstance(key, str) and _words(key) for key in given):
            raise ValueError(f"redact_keys must be non-empty strings, not {self.redact_keys!r}")
        keys = tuple(dict.fromkeys(given if self.replace_default_keys else (*DEFAULT_REDACT_KEYS, *given)))
        raw = (
            (self.redact_patterns,)
            if isinstance(self.redact_patterns, (str, re.Pattern))
            else tuple(self.redact_patterns)
        )
        patterns = tuple(re.compile(p) if isinstance(p, str) else p for p in raw)
        object.__setattr__(self, "redact_keys", keys)
        object.__setattr__(self, "redact_patterns", raw)
        object.__setattr__(self, "_patterns", patterns)
        object.__setattr__(self, "_terms", tuple("".join(_words(key)) for key in keys))
        object.__setattr__(self, "_sensitive", {})
        object.__setattr__(self, "_hook", self._default)  # bound once: orjson calls it per object

    @classmethod
    def from_env(cls, *, default_capture: bool = True, **overrides: Any) -> ContentPolicy:
        """A policy whose ``capture`` follows ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``.

        ``default_capture`` applies when the variable is unset: on for our decorators; an
        instrumentation of a third-party client passes ``False`` to keep OpenTelemetry's default.
        """
        overrides.setdefault("capture", _capture_from_env(default_capture))
        return cls(**overrides)

    # --- keys -----------------------------------------------------------------------------------
    def is_sensitive(self, key: str) -> bool:
        """Whether values under ``key`` are redacted (cached per key)."""
        cached = self._sensitive.get(key)
        if cached is not None:
            return cached
        words = _words(key)
        runs = {"".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}
        verdict = not runs.isdisjoint(self._terms)
        if len(self._sensitive) >= _KEY_CACHE_SIZE:
            self._sensitive.clear()
        self._sensitive[key] = verdict
        return verdict

    # --- values ---------------------------------------------------------------------------------
    def json(self, value: Any) -> str:
        """``value`` as cleaned JSON text (a str is JSON-encoded too)."""
        try:
            if self._is_flat(value):  # nothing to redact or convert: orjson alone
                data = orjson.dumps(value)
            else:
                data = orjson.dumps(self._plain(value, 0), default=self._hook, option=_JSON_OPTIONS)
        except Exception as error:  # orjson.JSONEncodeError, RecursionError, a raising __repr__ ...
            _logger.debug(  # the error's type only: its message may quote the value
                "value of type %s is not JSON-serialisable (%s); recorded its repr",
                type(value).__qualname__,
                type(error).__name__,
            )
            data = orjson.dumps(bounded_repr(value))
        text = data.decode()
        if self._patterns or len(text) > self.max_length:
            return self.clean(text)
        return text

    def text(self, value: Any) -> str:
        """A str stays as it is (cleaned); anything else becomes cleaned JSON."""
        if type(value) is str:
            return self.clean(value) if self._patterns or len(value) > self.max_length else value
        return self.json(value)

    def clean(self, text: str) -> str:
        """Apply the redaction patterns, then truncate with a marker."""
        for pattern in self._patterns:
            text = pattern.sub(REDACTED, text)
        return self._truncated(text)

    def _truncated(self, text: str) -> str:
        if len(text) > self.max_length:
            return f"{text[: self.max_length]}...[truncated {len(text) - self.max_length} chars]"
        return text

    def clean_error(self, text: str, secrets: tuple[str | None, ...] | list[str | None] = ()) -> str:
        """Exception text (a message, a stack trace, a status description) fit to record: the
        redaction patterns applied, then credential shapes, each of ``secrets`` and the secrets
        remembered (:func:`remember_secrets`) masked as ``***`` (whole, or any 8 or more of their
        characters in a row), then truncated (never before: a cut key could slip through). An
        instrumentor passes its client's keys as ``secrets``: a server may echo a key in its error."""
        for pattern in self._patterns:
            text = pattern.sub(REDACTED, text)
        known = _known_secrets
        return self._truncated(redact_secrets(text, (*secrets, *known) if known else secrets))

    def _is_flat(self, value: Any) -> bool:
        """A scalar, or a short dict or list of scalars under keys known to be safe; no str that
        may hold JSON."""
        cls = type(value)
        if cls is str:
            return not value.startswith(_JSON_OPENERS)
        if cls in _SCALARS:
            return True
        if cls is dict:
            if len(value) > self.max_length:
                return False
            verdicts = self._sensitive
            for key, item in value.items():
                kind = type(item)
                if (
                    kind not in _SCALARS
                    or verdicts.get(key) is not False
                    or (kind is str and item.startswith(_JSON_OPENERS))
                ):
                    return False
            return True
        if cls is list:
            return len(value) <= self.max_length and all(
                type(item) in _SCALARS and not (type(item) is str and item.startswith(_JSON_OPENERS))
                for item in value
            )
        return False

    def _plain(self, value: Any, depth: int) -> Any:
        """``value`` with every mapping key checked and containers bounded; the rest is orjson's."""
        cls = type(value)
        if cls is str:
            return self._json_text(value, depth) if value.startswith(_JSON_OPENERS) else value
        if cls in _SCALARS:
            return value
        if depth >= _MAX_DEPTH:
            return bounded_repr(value)
        if cls is dict:
            plain = {}
            for key, item in islice(value.items(), self.max_length):
                name = key if type(key) is str else str(key)
                plain[name] = REDACTED if self.is_sensitive(name) else self._plain(item, depth + 1)
            return plain
        if cls is list or cls is tuple:
            return [self._plain(item, depth + 1) for item in islice(value, self.max_length)]
        return value

    def _json_text(self, text: str, depth: int) -> str:
        """``text`` as it is, unless it is a JSON object or array holding a secret-looking key (at
        any depth, JSON text inside it included): then that JSON with those values redacted, re-serialised.
        Parsed once, within the depth bound; text that is not such JSON is left alone."""
        if depth >= _MAX_DEPTH:
            return text
        try:
            parsed = orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
        if type(parsed) is not dict and type(parsed) is not list:
            return text
        plain = self._plain(parsed, depth + 1)
        return text if plain == parsed else orjson.dumps(plain).decode()

    def _default(self, value: Any) -> Any:
        """orjson's hook for what it does not serialise natively (or was told to pass through)."""
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
            return self._plain(fields, 1)
        model_dump = getattr(value, "model_dump", None)
        if callable(model_dump):
            return self._plain(model_dump(mode="json"), 1)
        if isinstance(value, Mapping):
            return self._plain(dict(value), 1)
        if isinstance(value, (list, tuple, set, frozenset)):
            return self._plain(list(value), 1)
        for scalar in (str, int, float):
            if isinstance(value, scalar):
                return scalar(value)
        _logger.debug("value of type %s is not JSON-serialisable; recorded its repr", type(value).__qualname__)
        return bounded_repr(value)


def remember_secrets(secrets: Iterable[str | None]) -> None:
    """Mask ``secrets`` (of 8 characters or more; the last 16 remembered are kept) in every
    exception text recorded from now on, by any step: an error quoting a client's key travels up
    through the steps around the call, and may be re-raised in other words. ``StepRun.fail``
    remembers the secrets it is given."""
    global _known_secrets
    known = _known_secrets
    new = tuple(
        dict.fromkeys(s for s in secrets if isinstance(s, str) and len(s) >= _MIN_KNOWN_SECRET and s not in known)
    )
    if new:
        _known_secrets = (*known, *new)[-_MAX_KNOWN_SECRETS:]


_active: ContentPolicy = ContentPolicy.from_env()


def active_policy() -> ContentPolicy:
    """The policy our decorators apply now (from the environment until ``configure`` sets one)."""
    return _active


def set_active_policy(policy: ContentPolicy) -> None:
    """Make ``policy`` the one our decorators apply."""
    global _active
    if not isinstance(policy, ContentPolicy):
        raise TypeError(f"expected a ContentPolicy, not {type(policy).__name__}")
    _active = policy
