"""The judge of a run: built from the environment when none is given, with its spans on the
provider our steps go to and its content under the content policy in force.

>>> default_judge({}) is None   # no endpoint and no key: no judge
True
"""

from __future__ import annotations

from collections.abc import Mapping

from agenteval_otel.judge import JudgeClient, JudgeSettings
from agenteval_otel.tracing import active_policy, current_tracer

__all__ = ["default_judge", "judge_client"]


def judge_client(settings: JudgeSettings) -> JudgeClient:
    """A judge client for ``settings`` whose spans and content follow our tracing set-up."""
    return JudgeClient(settings, tracer=current_tracer, content_policy=active_policy)


def default_judge(environ: Mapping[str, str] | None = None) -> JudgeClient | None:
    """The judge the environment configures (``AGENTEVAL_JUDGE_*``, ``OPENAI_*``), or ``None``
    when it names no endpoint and no key. ``ConfigError`` for a setting that is not a number."""
    settings = JudgeSettings.from_env(environ)
    return judge_client(settings) if settings.configured else None
