"""``CriterionContext``: the one input of every criterion.

A criterion reads what it needs from the context and ignores the rest, so a new field never
breaks a criterion that exists (the shape of pydantic-evals' ``EvaluatorContext``).

>>> from agenteval_otel.criteria._config import CriterionConfig
>>> from agenteval_otel.trajectory import Trajectory
>>> ctx = CriterionContext(actual=Trajectory(final_response="Sunny."), expected=None,
...                        config=CriterionConfig())
>>> ctx.reference_free, ctx.actual.final_response
(True, 'Sunny.')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agenteval_otel.criteria._config import CriterionConfig
    from agenteval_otel.evalsets import EvalCase, Invocation
    from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["CriterionContext"]


@dataclass(frozen=True)
class CriterionContext:
    """What a criterion scores, and with what.

    ``actual``: the turn's trajectory (tool calls, node order, messages, final response ...).
    ``expected``: the eval case's invocation for this turn, or ``None`` when scoring without a
    reference (online, or traces with no eval set). ``config``: the criterion's settings, with
    ``settings`` its ``params`` validated by the criterion's own settings model (if it declared
    one). ``case``: the whole eval case (``None`` when there is none). ``turn_index``: this turn's
    position in the conversation, ``previous_turns`` the trajectories of the turns before it.
    ``judge``: the LLM judge client, ``None`` when no judge is configured.
    """

    actual: Trajectory
    expected: Invocation | None
    config: CriterionConfig
    case: EvalCase | None = None
    turn_index: int = 0
    previous_turns: Sequence[Trajectory] = ()
    judge: Any = None
    settings: Any = None

    @property
    def reference_free(self) -> bool:
        """Whether there is no expected invocation to compare with."""
        return self.expected is None
