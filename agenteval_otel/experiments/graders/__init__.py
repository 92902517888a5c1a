"""Graders: an LLM turns an entry (a query-set entry, or the data of a run) into metric scores.

A grader is three things: an input template (Jinja2, rendered in a sandbox over the entry's data
only), a model configuration (JSON: ``model``, optional ``temperature`` and ``base_url``) and a
response parser (the first JSON object in the reply by default, or your own function); a grader
directory holds the three as files (:func:`load_grader_dir`).

>>> from agenteval_otel.experiments.graders import Grader
>>> Grader("Rate: {{ entry.content }}", {"model": "gpt-4o"}).render({"content": "Hi"})
'Rate: Hi'
"""

from agenteval_otel.experiments.graders._directory import load_grader_dir
from agenteval_otel.experiments.graders._grader import Grader, GradeResult
from agenteval_otel.experiments.graders._model_config import GraderModelConfig
from agenteval_otel.experiments.graders._parsers import (
    ResponseParser,
    load_parser,
    metric_scores,
    parse_json_response,
)
from agenteval_otel.experiments.graders._template import InputTemplate

__all__ = [
    "GradeResult",
    "Grader",
    "GraderModelConfig",
    "InputTemplate",
    "ResponseParser",
    "load_grader_dir",
    "load_parser",
    "metric_scores",
    "parse_json_response",
]
