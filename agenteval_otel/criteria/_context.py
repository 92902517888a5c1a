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
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

    from agenteval_otel.criteria._config import CriterionConfig
    from agenteval_otel.evalsets import EvalCase, Invocation
    from agenteval_otel.judge import JudgeClient
    from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["CriterionContext"]

SettingsT = TypeVar("SettingsT", bound="BaseModel")


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
    judge: JudgeClient | None = None
    settings: BaseModel | None = None
    """The criterion's ``params`` validated by its settings model (``None`` when it declared
    none); :meth:`settings_as` gives them typed."""

    @property
    def reference_free(self) -> bool:
        """Whether there is no expected invocation to compare with."""
        return self.expected is None

    def settings_as(self, model: type[SettingsT]) -> SettingsT:
        """``settings``, as the criterion's settings ``model`` (the one it registered with
        ``settings=``); ``TypeError`` when they are not one (no settings, or another model's).

        >>> from pydantic import BaseModel
        >>> from agenteval_otel.criteria import CriterionConfig
        >>> from agenteval_otel.trajectory import Trajectory
        >>> class Limit(BaseModel):
        ...     max_calls: int = 3
        >>> ctx = CriterionContext(actual=Trajectory(), expected=None, config=CriterionConfig(), settings=Limit())
        >>> ctx.settings_as(Limit).max_calls
        3
        """
        if not isinstance(self.settings, model):
            raise TypeError(f"the criterion's settings are {type(self.settings).__name__}, not {model.__name__} "
                            f"(register the criterion with settings={model.__name__})")
        return self.settings
