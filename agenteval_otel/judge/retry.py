"""When to ask the judge again: HTTP 429 and 5xx only, after the server's ``Retry-After`` or an
exponential backoff with jitter, and never past the call's deadline.

>>> retryable(429), retryable(503), retryable(400), retryable(401)
(True, True, False, False)
>>> retry_after({"retry-after": "2"}), retry_after({"retry-after-ms": "250"}), retry_after({})
(2.0, 0.25, None)
>>> 0.5 <= backoff(2, base_s=1.0, max_s=30.0) <= 4.0
True
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

__all__ = ["Deadline", "backoff", "retry_after", "retryable"]


def retryable(status: int) -> bool:
    """Whether an answer with HTTP ``status`` is worth asking again (rate limit, server error)."""
    return status == 429 or 500 <= status <= 599


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a server asked for, in seconds (``retry-after-ms``, or ``Retry-After`` as seconds
    or an HTTP date); ``None`` when it asked for none or said something unreadable."""
    lowered = {key.lower(): value for key, value in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None


def backoff(retry: int, *, base_s: float, max_s: float) -> float:
    """The wait before retry number ``retry`` (0-based): ``base_s * 2**retry`` capped at ``max_s``,
    scaled by a random factor in [0.5, 1] so that concurrent callers spread out."""
    return min(max_s, base_s * 2.0 ** retry) * random.uniform(0.5, 1.0)


class Deadline:
    """One overall deadline, ``seconds`` from now; time spent queued can be given back."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left (0 or less once it has passed)."""
        return self._end - time.monotonic()

    def extend(self, seconds: float) -> None:
        """Move the deadline ``seconds`` later (time spent waiting for a turn, not calling)."""
        self._end += seconds
