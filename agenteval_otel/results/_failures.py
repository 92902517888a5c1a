"""How an exception raised by the user's agent is reported: ``Type: message`` (even when the
message cannot be printed), the frame that raised it and its traceback, each cleaned by the
active content policy like every other text we write.

>>> try:
...     {}["city"]
... except KeyError as error:
...     failure = AgentFailure.of(error)
>>> failure.error_type, failure.message.startswith("KeyError: 'city' (raised at ")
('KeyError', True)
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass

from agenteval_otel.tracing import active_policy

__all__ = ["AgentFailure", "describe_error"]

TRACEBACK_FRAMES = 20
"""The innermost frames kept in a traceback (where the agent raised, not our runner's frames)."""


def describe_error(error: BaseException) -> str:
    """``Type: message``, even for an exception whose ``__str__`` raises."""
    name = type(error).__name__
    try:
        message = str(error)
    except Exception:  # the exception's own __str__ failed
        return f"{name}: <message could not be printed>"
    return f"{name}: {message}" if message else name


def _where(filename: str) -> str:
    """``filename`` relative to the working directory when it lies under it."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive
        return filename
    return filename if relative.startswith(os.pardir) else relative


def _raising_frame(error: BaseException) -> str | None:
    """``path/to/file.py:42 in plan``: the innermost frame of ``error``'s traceback."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return None
    last = frames[-1]
    return f"{_where(last.filename)}:{last.lineno} in {last.name}"


def _traceback_text(error: BaseException) -> str | None:
    try:
        return "".join(traceback.format_exception(
            type(error), error, error.__traceback__, limit=-TRACEBACK_FRAMES))
    except Exception:  # an exception whose printing fails still gets a result
        return None


@dataclass(frozen=True)
class AgentFailure:
    """An agent's exception as report text: ``message`` (type, message and raising frame),
    ``error_type`` and ``traceback``, all cleaned by the active content policy."""

    message: str
    error_type: str
    traceback: str | None

    @classmethod
    def of(cls, error: BaseException) -> AgentFailure:
        """The report text of ``error``; never raises."""
        policy = active_policy()
        message = describe_error(error)
        try:
            frame = _raising_frame(error)
        except Exception:
            frame = None
        if frame is not None:
            message += f" (raised at {frame})"
        text = _traceback_text(error)
        return cls(message=policy.clean_error(message), error_type=type(error).__name__,
                   traceback=policy.clean_error(text) if text is not None else None)
