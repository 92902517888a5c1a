"""What judge calls cost: calls answered by the endpoint, cache hits, retries, tokens, time.

>>> usage = JudgeUsage(calls=2, input_tokens=300, output_tokens=40, seconds=1.5)
>>> (usage + JudgeUsage(cache_hits=1)).cache_hits
1
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

__all__ = ["JudgeUsage"]


class JudgeUsage(BaseModel):
    """The judge's work for one criterion on one turn, or summed over a case, a criterion, a run.

    ``calls``: requests the endpoint answered (cache hits not included); ``cache_hits``: answers
    read from the cache instead; ``retries``: requests repeated after HTTP 429 or 5xx;
    ``failures``: judge calls that gave no usable answer; ``seconds``: time spent in judge calls.
    """

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0

    def __add__(self, other: JudgeUsage) -> JudgeUsage:
        return JudgeUsage(
            calls=self.calls + other.calls, cache_hits=self.cache_hits + other.cache_hits,
            retries=self.retries + other.retries, failures=self.failures + other.failures,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens, seconds=self.seconds + other.seconds)

    @property
    def used(self) -> bool:
        """Whether the judge was asked at all."""
        return bool(self.calls or self.cache_hits or self.failures)

    @classmethod
    def total(cls, usages: Iterable[JudgeUsage | None]) -> JudgeUsage | None:
        """The sum of the given usages; ``None`` when none was given."""
        found = [u for u in usages if u is not None]
        if not found:
            return None
        total = cls()
        for usage in found:
            total = total + usage
        return total
