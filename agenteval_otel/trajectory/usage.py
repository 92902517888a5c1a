"""``TokenUsage``: how many tokens model calls consumed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from agenteval_otel.trajectory._unchecked import unchecked

__all__ = ["TokenUsage"]


class TokenUsage(BaseModel):
    """Input and output tokens of one model call, or summed over a trajectory.

    >>> TokenUsage(input_tokens=10, output_tokens=2) + TokenUsage(input_tokens=5, output_tokens=1)
    TokenUsage(input_tokens=15, output_tokens=3)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    @classmethod
    def from_attributes(
        cls, attributes: Mapping[str, Any], input_keys: tuple[str, ...], output_keys: tuple[str, ...]
    ) -> TokenUsage | None:
        """The usage recorded under the first present key of each group; ``None`` if neither is."""
        found_input = _first_int(attributes, input_keys)
        found_output = _first_int(attributes, output_keys)
        if found_input is None and found_output is None:
            return None
        return unchecked(cls, {"input_tokens": found_input or 0, "output_tokens": found_output or 0})

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return unchecked(TokenUsage, {
            "input_tokens": self.input_tokens + other.input_tokens,
            "output_tokens": self.output_tokens + other.output_tokens,
        })

    def __repr__(self) -> str:
        return f"TokenUsage(input_tokens={self.input_tokens}, output_tokens={self.output_tokens})"


def _first_int(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = attributes.get(key)
        if value is None:
            continue
        if type(value) is int:  # what nearly every producer writes
            return value
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            return int(value)
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
    return None
