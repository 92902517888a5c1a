"""A grader: an input template, a model configuration and a response parser, turning one entry
(a query-set entry, or the data of one run) into metric scores from an LLM.

Failures are data: a template that cannot be rendered for the entry, a judge that is not
configured, cannot be reached or times out, a reply the parser cannot read: the
:class:`GradeResult` has ``error`` and ``error_type`` set and no score, never a made-up one.

>>> grader = Grader("Rate this answer: {{ entry.content }}", {"model": "my-model"},
...                 judge=JudgeClient(JudgeSettings()))       # no endpoint: nothing is called
>>> grader.render({"content": "It is sunny."})
'Rate this answer: It is sunny.'
>>> result = grader.grade({"content": "It is sunny."})
>>> result.scores, result.error_type
({}, 'JudgeNotConfiguredError')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenteval_otel.errors import GraderError, JudgeError, JudgeNotConfiguredError, JudgeOutputError
from agenteval_otel.evaluation import judge_client
from agenteval_otel.experiments.graders._model_config import GraderModelConfig
from agenteval_otel.experiments.graders._parsers import (
    ResponseParser,
    load_parser,
    metric_scores,
    parse_json_response,
    parser_name,
)
from agenteval_otel.experiments.graders._template import InputTemplate
from agenteval_otel.judge import JudgeClient, JudgeSettings, JudgeUsage

__all__ = ["GradeResult", "Grader"]


class GradeResult(BaseModel):
    """One entry graded: the metric scores, the grader's raw reply, the model and the judge's
    work; or, when grading failed, ``error`` (what went wrong) and ``error_type`` (its class)."""

    model_config = ConfigDict(extra="forbid")

    scores: dict[str, float] = Field(default_factory=dict)
    reply: str | None = None
    model: str | None = None
    usage: JudgeUsage = Field(default_factory=JudgeUsage)
    error: str | None = None
    error_type: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the entry was graded."""
        return self.error is None


class Grader:
    """Grades entries with an LLM (see the module docstring).

    ``template``: the input formatter (an :class:`InputTemplate` or its source). ``model_config``:
    a :class:`GraderModelConfig`, a dict or a JSON file's path (``None``: the judge's model).
    ``parser``: a function ``(response: str) -> dict`` or its dotted name (``None``: the first
    JSON object in the reply). ``judge``: the client to call (``None``: the one the environment
    configures, ``AGENTEVAL_JUDGE_*``); a ``base_url`` in the model configuration replaces its
    endpoint and is sent the key in the configuration's ``api_key_env``, or none, never the judge's.
    """

    def __init__(
        self,
        template: InputTemplate | str,
        model_config: GraderModelConfig | Mapping[str, Any] | str | Path | None = None,
        parser: ResponseParser | str | None = None,
        *,
        judge: JudgeClient | None = None,
    ) -> None:
        self.template = template if isinstance(template, InputTemplate) else InputTemplate(template)
        self.model_config = (model_config if isinstance(model_config, GraderModelConfig) or model_config is None
                             else GraderModelConfig.load(model_config))
        if parser is None:
            self.parser: ResponseParser = parse_json_response
        elif isinstance(parser, str):
            self.parser = load_parser(parser)
        elif callable(parser):
            self.parser = parser
        else:
            raise GraderError(f"grader response parser: expected a function or its dotted name, "
                              f"got {type(parser).__name__}")
        self.judge = self._judge_for(judge)
        self.source: str | None = None
        """Where the grader was loaded from (its directory), if it was."""

    @classmethod
    def from_files(
        cls,
        template: str | Path,
        model_config: str | Path | Mapping[str, Any] | None = None,
        parser: ResponseParser | str | None = None,
        *,
        judge: JudgeClient | None = None,
    ) -> Grader:
        """A grader from a template file, a model configuration file (JSON) and a parser."""
        return cls(InputTemplate.from_file(template), model_config, parser, judge=judge)

    def _judge_for(self, judge: JudgeClient | None) -> JudgeClient | None:
        config = self.model_config
        settings = judge.settings if judge is not None else JudgeSettings.from_env()
        base_url = config.base_url if config is not None else None
        own_endpoint = bool(base_url) and base_url != settings.base_url
        if config is not None and (own_endpoint or config.api_key_env):
            # the judge's key stays with the judge's endpoint: a grader's own one gets its own key or none
            return judge_client(dataclasses.replace(settings, base_url=base_url or settings.base_url,
                                                    api_key=config.api_key()))
        if judge is not None:
            return judge
        return judge_client(settings) if settings.configured else None

    @property
    def model(self) -> str | None:
        """The model the grader calls."""
        requested = self.model_config.model if self.model_config is not None else None
        return self.judge.settings.model_for(requested) if self.judge is not None else requested

    def render(self, entry: Mapping[str, Any]) -> str:
        """The grader's input for ``entry``; ``GraderError`` when the template cannot be rendered."""
        return self.template.render(entry)

    # --- grading --------------------------------------------------------------------------------
    def grade(self, entry: Mapping[str, Any]) -> GradeResult:
        """The metric scores of ``entry`` (failures as data, see the module docstring)."""
        usage = JudgeUsage()
        try:
            judge, messages = self._request(entry)
            reply = judge.recording(usage).complete(messages, **self._call_options())
        except (GraderError, JudgeError) as exc:
            return self._failed(exc, usage)
        return self._read(reply, usage)

    async def agrade(self, entry: Mapping[str, Any]) -> GradeResult:
        """:meth:`grade`, awaited."""
        usage = JudgeUsage()
        try:
            judge, messages = self._request(entry)
            reply = await judge.recording(usage).acomplete(messages, **self._call_options())
        except (GraderError, JudgeError) as exc:
            return self._failed(exc, usage)
        return self._read(reply, usage)

    def _request(self, entry: Mapping[str, Any]) -> tuple[JudgeClient, list[dict[str, Any]]]:
        prompt = self.render(entry)
        if self.judge is None:
            raise JudgeNotConfiguredError(
                "the grader did not run: no LLM judge is configured (set AGENTEVAL_JUDGE_BASE_URL to an "
                "OpenAI-compatible endpoint, OPENAI_API_KEY for OpenAI, or base_url in the grader's model "
                "configuration)")
        return self.judge, [{"role": "user", "content": prompt}]

    def _call_options(self) -> dict[str, Any]:
        config = self.model_config
        return {"model": config.model if config else None, "temperature": config.temperature if config else None}

    def _read(self, reply: str, usage: JudgeUsage) -> GradeResult:
        try:
            parsed = self.parser(reply)
        except JudgeError as exc:
            return self._failed(exc, usage, reply)
        except Exception as exc:
            error = JudgeOutputError(f"the grader's response parser {parser_name(self.parser)} failed on the "
                                     f"reply: {type(exc).__name__}: {exc}")
            return self._failed(error, usage, reply)
        try:
            scores = metric_scores(parsed)
        except JudgeOutputError as exc:
            return self._failed(exc, usage, reply)
        return GradeResult(scores=scores, reply=reply, model=self.model, usage=usage)

    def _failed(self, error: Exception, usage: JudgeUsage, reply: str | None = None) -> GradeResult:
        return GradeResult(reply=reply, model=self.model, usage=usage, error=str(error),
                           error_type=type(error).__name__)
