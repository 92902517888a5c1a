"""The LLM judge: structured verdicts from any OpenAI-compatible Chat Completions endpoint.

>>> from agenteval_otel.judge import JudgeClient, JudgeSettings
>>> judge = JudgeClient(JudgeSettings(base_url="http://localhost:11434/v1", model="llama3.1"))
>>> judge.settings.model_for(None)
'llama3.1'

``JudgeClient.ajudge(messages, Shape)`` (``judge`` from sync code) returns one answer validated
as the pydantic model ``Shape``; ``asample(..., n=k)`` returns ``k``; ``acomplete(messages)``
(``complete``) returns the reply's text as it is. ``data_block`` puts text
the agent produced in front of the judge as delimited data. Settings come from
``AGENTEVAL_JUDGE_BASE_URL`` / ``OPENAI_BASE_URL``, ``AGENTEVAL_JUDGE_API_KEY`` /
``OPENAI_API_KEY``, ``AGENTEVAL_JUDGE_MODEL``, ``AGENTEVAL_JUDGE_TIMEOUT``,
``AGENTEVAL_JUDGE_MAX_RETRIES``, ``AGENTEVAL_JUDGE_CONCURRENCY``, ``AGENTEVAL_JUDGE_CACHE`` and
``AGENTEVAL_JUDGE_MAX_RESPONSE_BYTES`` (the largest answer read, 4 MiB by default).
"""

from agenteval_otel.judge.cache import JudgeCache
from agenteval_otel.judge.client import JudgeClient
from agenteval_otel.judge.output import parse_reply
from agenteval_otel.judge.prompts import DATA_RULE, as_text, data_block
from agenteval_otel.judge.settings import DEFAULT_JUDGE_MODEL, JudgeSettings
from agenteval_otel.judge.telemetry import ContentCleaner
from agenteval_otel.judge.usage import JudgeUsage

__all__ = [
    "DATA_RULE",
    "DEFAULT_JUDGE_MODEL",
    "ContentCleaner",
    "JudgeCache",
    "JudgeClient",
    "JudgeSettings",
    "JudgeUsage",
    "as_text",
    "data_block",
    "parse_reply",
]
