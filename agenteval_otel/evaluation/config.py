"""Evaluation config: which criteria score a run, with which thresholds and settings.

Criterion names are ours; names from other tools load as aliases (Google ADK's
``tool_trajectory_avg_score`` is ``trajectory_match``). Unknown names and unknown fields are
errors. ``EvalConfig.load`` reads our JSON and ADK's ``test_config.json``.

>>> EvalConfig.default().criteria["trajectory_match"].threshold
0.8
>>> EvalConfig(criteria={"tool_trajectory_avg_score": {"threshold": 1.0}}).criteria.keys()
dict_keys(['trajectory_match'])
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agenteval_otel.errors import ConfigError
from agenteval_otel.evaluation.arguments import ArgMatch
from agenteval_otel.evaluation.criteria.registry import canonical_criterion_name, get_criterion
from agenteval_otel.evaluation.files import read_json, validate_file_data, write_json

__all__ = ["CriterionConfig", "EvalConfig", "MatchType", "Rubric", "UserSimulatorConfig"]

DEFAULT_JUDGE_MODEL = "gpt-4o-mini"

class MatchType(str, Enum):
    """How expected and actual sequences (tool calls, node visits) are compared."""

    EXACT = "EXACT"
    """Same items, same order, same length."""
    IN_ORDER = "IN_ORDER"
    """Expected items appear in order; other items may be interleaved."""
    ANY_ORDER = "ANY_ORDER"
    """Expected items all appear, in any order."""

    @classmethod
    def _missing_(cls, value: object) -> MatchType | None:
        if isinstance(value, str):
            return cls.__members__.get(value.upper().replace("-", "_"))
        return None


class Rubric(BaseModel):
    """One quality an LLM judge scores on its ``scoring_guide`` scale, weighted by ``weight``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    scoring_guide: str = "1=fully meets the description, 0=does not"
    weight: float = Field(default=1.0, gt=0)


class UserSimulatorConfig(BaseModel):
    """How a simulated user plays ``conversation_scenario`` cases."""

    model_config = ConfigDict(extra="forbid")

    model: str = DEFAULT_JUDGE_MODEL
    max_turns: int = Field(default=10, ge=1)
    temperature: float = Field(default=0.0, ge=0)
    instructions: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _adk_names(cls, data: Any) -> Any:
        if isinstance(data, dict) and "max_allowed_invocations" in data:
            data = dict(data)
            data.setdefault("max_turns", data.pop("max_allowed_invocations"))
        return data


class CriterionConfig(BaseModel):
    """Settings of one criterion. ``passed = score >= threshold``."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    threshold: float = Field(default=0.8, ge=0.0, le=1.0)
    match_type: MatchType = MatchType.EXACT
    judge_model: str = DEFAULT_JUDGE_MODEL
    rubrics: list[Rubric] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)
    check_args: bool = False
    arg_match: ArgMatch = Field(default_factory=ArgMatch)
    num_samples: int = Field(default=1, ge=1)

    @classmethod
    def trajectory(
        cls,
        threshold: float = 0.8,
        *,
        match_type: MatchType | str = MatchType.EXACT,
        check_args: bool = False,
        arg_match: ArgMatch | str | None = None,
    ) -> CriterionConfig:
        """``trajectory_match``: expected vs actual tool calls."""
        return cls.model_validate(
            {"threshold": threshold, "match_type": match_type, "check_args": check_args,
             "arg_match": arg_match if arg_match is not None else ArgMatch()}
        )

    @classmethod
    def response(cls, threshold: float = 0.7) -> CriterionConfig:
        """``response_match``: ROUGE-1 F-measure of the final responses."""
        return cls(threshold=threshold)

    @classmethod
    def llm_judge(
        cls, threshold: float = 0.7, *, judge_model: str = DEFAULT_JUDGE_MODEL,
        num_samples: int = 1,
    ) -> CriterionConfig:
        """``llm_judge``: an LLM judges whether the response means what was expected."""
        return cls(threshold=threshold, judge_model=judge_model, num_samples=num_samples)

    @classmethod
    def rubric(
        cls, rubrics: list[Rubric], threshold: float = 0.8, *,
        judge_model: str = DEFAULT_JUDGE_MODEL, num_samples: int = 1,
    ) -> CriterionConfig:
        """``rubric_based``: weighted rubric scores from an LLM judge."""
        return cls(threshold=threshold, rubrics=rubrics, judge_model=judge_model,
                   num_samples=num_samples)

    @classmethod
    def node_order(
        cls, threshold: float = 1.0, *, match_type: MatchType | str = MatchType.EXACT
    ) -> CriterionConfig:
        """``node_order``: expected vs actual graph node visits."""
        return cls.model_validate({"threshold": threshold, "match_type": match_type})


def _adk_criterion(name: str, value: Any) -> Any:
    """One ADK ``test_config.json`` criterion entry in our form."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = {"threshold": value}
    if not isinstance(value, dict):
        return value
    value = dict(value)
    options = value.pop("judge_model_options", None)
    if isinstance(options, dict):
        if "judge_model" in options:
            value.setdefault("judge_model", options["judge_model"])
        if "num_samples" in options:
            value.setdefault("num_samples", options["num_samples"])
    if isinstance(value.get("rubrics"), list):
        value["rubrics"] = [_adk_rubric(r) for r in value["rubrics"]]
    if name == "tool_trajectory_avg_score":
        value.setdefault("check_args", True)  # ADK compares names and arguments
    return value


def _adk_rubric(rubric: Any) -> Any:
    if isinstance(rubric, dict) and "rubric_id" in rubric:
        content = rubric.get("rubric_content") or {}
        return {"name": rubric["rubric_id"], "description": content.get("text_property", "")}
    return rubric


def _looks_like_an_eval_set(data: Any) -> bool:
    """Eval-set JSON (ours, ADK's camelCase or legacy list form) rather than a config."""
    if isinstance(data, dict):
        return "criteria" not in data and bool({"eval_cases", "evalCases", "eval_set_id", "evalSetId"} & set(data))
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "query" in data[0]


class EvalConfig(BaseModel):
    """Which criteria to apply: a dict from criterion name (or alias) to its settings.

    A criterion given without a threshold gets its own default (``node_order`` 1.0,
    ``response_match`` 0.7, ...); a bare number is the threshold.
    """

    model_config = ConfigDict(extra="forbid")

    criteria: dict[str, CriterionConfig] = Field(default_factory=dict)
    user_simulator_config: UserSimulatorConfig | None = None

    @field_validator("criteria", mode="before")
    @classmethod
    def _canonical_names(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        for name, settings in value.items():
            try:
                canonical = canonical_criterion_name(name)
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
            if canonical in out:
                raise ValueError(f"criterion {canonical!r} is given twice (as {name!r})")
            out[canonical] = _adk_criterion(name, settings)
        return out

    @model_validator(mode="after")
    def _defaults_and_settings(self) -> EvalConfig:
        for name, settings in self.criteria.items():
            registered = get_criterion(name)
            if "threshold" not in settings.model_fields_set:
                settings = self.criteria[name] = settings.model_copy(
                    update={"threshold": registered.default_threshold}
                )
            try:
                registered.parse_settings(settings.params)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or '(params)'}: {e['msg']}" for e in exc.errors())
                raise ValueError(f"criterion {name!r} params: {problems}") from None
        return self

    @classmethod
    def default(cls, *, include_judge: bool = True) -> EvalConfig:
        """``trajectory_match`` 0.8, ``response_match`` 0.7, ``llm_judge`` 0.7 (gpt-4o-mini);
        without ``llm_judge`` when ``include_judge`` is false."""
        criteria = {
            "trajectory_match": CriterionConfig.trajectory(0.8),
            "response_match": CriterionConfig.response(0.7),
        }
        if include_judge:
            criteria["llm_judge"] = CriterionConfig.llm_judge(0.7, judge_model=DEFAULT_JUDGE_MODEL)
        return cls(criteria=criteria)

    def enabled(self) -> dict[str, CriterionConfig]:
        """The criteria that are switched on."""
        return {name: c for name, c in self.criteria.items() if c.enabled}

    @classmethod
    def load(cls, path: str | Path) -> EvalConfig:
        """Load our EvalConfig JSON or Google ADK's ``test_config.json``.

        Raises ``ConfigError`` naming the file, the JSON path and what was expected.
        """
        file = Path(path)
        data = read_json(file, ConfigError)
        if _looks_like_an_eval_set(data):
            raise ConfigError(
                f"{file}: this is an eval set, not a config; give it as the eval set and a file "
                "with 'criteria' as the config (--config)"
            )
        if not isinstance(data, dict):
            raise ConfigError(
                f"{file}: expected a JSON object with 'criteria', got {type(data).__name__}"
            )
        return validate_file_data(cls, data, file, ConfigError)

    def save(self, path: str | Path) -> Path:
        """Write the config as JSON; ``load`` of the file gives an equal object."""
        return write_json(path, self.model_dump(mode="json"))
