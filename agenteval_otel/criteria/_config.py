"""Evaluation config: which criteria score a run, with which thresholds and settings.

A criterion named in another tool's vocabulary means what it means there: Google ADK's
``tool_trajectory_avg_score`` and ``response_match_score`` are criteria of their own that score
exactly as ADK does; ADK's LLM-judged names load as our judged criteria. Every ADK 2.x criterion
shape loads (a bare number, ``threshold``, ``match_type``/``matchType`` as a name or 0/1/2,
``ignore_args``, ``judge_model_options``, ``rubrics``); an ADK field we cannot honour is refused
by name. Unknown names and unknown fields are errors. ``EvalConfig.load`` reads our JSON and
ADK's ``test_config.json``.

>>> EvalConfig.default().criteria["trajectory_match"].threshold
0.8
>>> adk = EvalConfig(criteria={"tool_trajectory_avg_score": {"threshold": 1.0, "matchType": 1}})
>>> adk.criteria["tool_trajectory_avg_score"].match_type
<MatchType.IN_ORDER: 'IN_ORDER'>
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agenteval_otel.criteria._arguments import ArgMatch
from agenteval_otel.criteria._registry import canonical_criterion_name, criterion_names, get_criterion
from agenteval_otel.errors import ConfigError
from agenteval_otel.evalsets import is_adk_eval_set
from agenteval_otel.judge.settings import DEFAULT_JUDGE_MODEL
from agenteval_otel.loading import SchemaReferenced, read_document, validate_file_data, write_document

if TYPE_CHECKING:
    from agenteval_otel.evalsets import EvalSet

__all__ = ["CriterionConfig", "EvalConfig", "MatchType", "Rubric", "UserSimulatorConfig", "require_reference_free"]


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
        cls, threshold: float = 0.7, *, judge_model: str | None = None, num_samples: int = 1,
    ) -> CriterionConfig:
        """``llm_judge``: an LLM judges whether the response means what was expected
        (``judge_model``: default gpt-4o-mini, or ``AGENTEVAL_JUDGE_MODEL`` when set)."""
        model = {} if judge_model is None else {"judge_model": judge_model}
        return cls.model_validate({"threshold": threshold, "num_samples": num_samples, **model})

    @classmethod
    def rubric(
        cls, rubrics: list[Rubric], threshold: float = 0.8, *,
        judge_model: str | None = None, num_samples: int = 1,
    ) -> CriterionConfig:
        """``rubric_based``: weighted rubric scores from an LLM judge."""
        model = {} if judge_model is None else {"judge_model": judge_model}
        return cls.model_validate({"threshold": threshold, "rubrics": rubrics, "num_samples": num_samples,
                                   **model})

    @classmethod
    def node_order(
        cls, threshold: float = 1.0, *, match_type: MatchType | str = MatchType.EXACT
    ) -> CriterionConfig:
        """``node_order``: expected vs actual graph node visits."""
        return cls.model_validate({"threshold": threshold, "match_type": match_type})


# ADK's ToolTrajectoryCriterion.MatchType, in its order: EXACT = 0, IN_ORDER = 1, ANY_ORDER = 2.
_ADK_MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")
_ADK_CAMEL = {
    "matchType": "match_type", "ignoreArgs": "ignore_args", "judgeModelOptions": "judge_model_options",
    "includeIntermediateResponsesInFinal": "include_intermediate_responses_in_final",
    "evaluateIntermediateNlResponses": "evaluate_intermediate_nl_responses", "stopSignal": "stop_signal",
}
_ADK_JUDGE_CAMEL = {"judgeModel": "judge_model", "judgeModelConfig": "judge_model_config",
                    "numSamples": "num_samples", "parallelismLimit": "parallelism_limit"}
# ADK criterion fields that only ask for more than the final response: false (ADK's default)
# loads, true is refused. ADK's own response_match_score and tool_trajectory_avg_score ignore them.
_ADK_INTERMEDIATE_FLAGS = ("include_intermediate_responses_in_final", "evaluate_intermediate_nl_responses")


def _adk_names(value: dict[str, Any], camel: dict[str, str], where: str) -> dict[str, Any]:
    """``value`` with ADK's camelCase keys in snake_case; a field given both ways is an error."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = camel.get(key, key)
        if name in out:
            raise ValueError(f"{where}: {name!r} is given twice ({key!r} and {name!r})")
        out[name] = item
    return out


def _adk_match_type(value: Any, where: str) -> Any:
    """A match type as ADK reads it: a name (any case, ``-`` or space for ``_``) or 0, 1, 2."""
    if isinstance(value, str):
        return value.strip().upper().replace("-", "_").replace(" ", "_")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value in (0, 1, 2):
        return _ADK_MATCH_TYPES[int(value)]
    if isinstance(value, MatchType):
        return value
    raise ValueError(f"{where}: match_type: expected EXACT, IN_ORDER or ANY_ORDER (or ADK's 0, 1, 2), "
                     f"got {value!r}")


def _adk_judge_options(value: dict[str, Any], options: Any, where: str) -> None:
    """ADK's ``judge_model_options`` as our ``judge_model`` and ``num_samples``."""
    if not isinstance(options, dict):
        raise ValueError(f"{where}: judge_model_options: expected an object, got {options!r}")
    options = _adk_names(options, _ADK_JUDGE_CAMEL, f"{where}.judge_model_options")
    if options.pop("judge_model_config", None) is not None:
        raise ValueError(f"{where}: judge_model_options.judge_model_config (Gemini generation settings) "
                         "is not supported; set the judge's model with judge_model")
    options.pop("parallelism_limit", None)  # how many judge calls run at once: never changes a score
    for key, item in options.items():
        if key not in ("judge_model", "num_samples"):
            raise ValueError(f"{where}: judge_model_options.{key}: unknown field; expected judge_model, "
                             "judge_model_config, num_samples or parallelism_limit")
        value.setdefault(key, item)


def _adk_criterion(given: str, name: str, value: Any) -> Any:
    """One criterion entry in our form, from any ADK 2.x shape: a bare number (the threshold),
    or an object with ``threshold``, ``match_type``/``matchType`` (a name or 0/1/2),
    ``ignore_args``, ``judge_model_options``, ``rubrics`` and ADK's other criterion fields, each
    loaded or refused by name. ``name`` is ours for ``given``."""
    where = f"criterion {given!r}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"threshold": value}
    if isinstance(value, bool):
        raise ValueError(f"{where}: expected a threshold number or an object, got {value!r}")
    if not isinstance(value, dict):
        return value
    value = _adk_names(value, _ADK_CAMEL, where)
    ours = get_criterion(name).semantics == "agenteval"
    for flag in _ADK_INTERMEDIATE_FLAGS:
        if value.pop(flag, False) and ours:
            raise ValueError(f"{where}: {flag}: true is not supported (the final response alone is "
                             "scored); remove it or set it to false")
    if "stop_signal" in value:
        raise ValueError(f"{where}: stop_signal belongs to ADK's user-simulator criteria "
                         "(per_turn_user_simulator_quality_v1), which are not supported")
    if "match_type" in value:
        value["match_type"] = _adk_match_type(value["match_type"], where)
    if "ignore_args" in value:
        if name != "tool_trajectory_avg_score":
            raise ValueError(f"{where}: ignore_args is a field of Google ADK's tool_trajectory_avg_score; "
                             f"{given!r} takes check_args and arg_match instead")
        value["params"] = {**(value.get("params") or {}), "ignore_args": value.pop("ignore_args")}
    if "judge_model_options" in value:
        _adk_judge_options(value, value.pop("judge_model_options"), where)
    if isinstance(value.get("rubrics"), list):
        value["rubrics"] = [_adk_rubric(r) for r in value["rubrics"]]
    return value


def _adk_rubric(rubric: Any) -> Any:
    if isinstance(rubric, dict) and ("rubric_id" in rubric or "rubricId" in rubric):
        content = rubric.get("rubric_content") or rubric.get("rubricContent") or {}
        text = content.get("text_property") or content.get("textProperty") or ""
        return {"name": rubric.get("rubric_id") or rubric.get("rubricId"), "description": text}
    return rubric


def _looks_like_an_eval_set(data: Any) -> bool:
    """Eval-set JSON (ours, ADK's camelCase or legacy list form) rather than a config."""
    if isinstance(data, dict):
        return "criteria" not in data and bool({"eval_cases", "evalCases", "eval_set_id", "evalSetId"} & set(data))
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "query" in data[0]


class EvalConfig(SchemaReferenced):
    """Which criteria to apply: a dict from criterion name (or alias) to its settings.

    A criterion given without a threshold gets its own default (``node_order`` 1.0,
    ``response_match`` 0.7, ...); a bare number is the threshold.
    """

    model_config = ConfigDict(extra="forbid")

    criteria: dict[str, CriterionConfig] = Field(default_factory=dict)
    user_simulator_config: UserSimulatorConfig | None = None

    @field_validator("criteria", mode="before", json_schema_input_type=dict[str, float | CriterionConfig])
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
            out[canonical] = _adk_criterion(name, canonical, settings)
        return out

    @model_validator(mode="after")
    def _defaults_and_settings(self) -> EvalConfig:
        for name, settings in self.criteria.items():
            registered = get_criterion(name)
            if "threshold" not in settings.model_fields_set:
                settings = self.criteria[name] = settings.model_copy(
                    update={"threshold": registered.default_threshold}
                )
            if registered.semantics == "adk" and (settings.check_args or settings.arg_match != ArgMatch()):
                raise ValueError(
                    f"criterion {name!r} compares arguments exactly as Google ADK does (ignore_args to "
                    "compare names only); check_args and arg_match belong to trajectory_match")
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
            criteria["llm_judge"] = CriterionConfig.llm_judge(0.7)
        return cls(criteria=criteria)

    @classmethod
    def adk_default(cls) -> EvalConfig:
        """Google ADK's criteria when no config is given: ``tool_trajectory_avg_score`` 1.0
        (EXACT, arguments compared) and ``response_match_score`` 0.8."""
        return cls.model_validate({"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}})

    @classmethod
    def default_for(cls, eval_set: EvalSet) -> EvalConfig:
        """The criteria used when none are given: ADK's (:meth:`adk_default`) for an eval set read
        from a Google ADK file, else ours without a judge (``trajectory_match`` 0.8,
        ``response_match`` 0.7)."""
        if is_adk_eval_set(eval_set.metadata):
            return cls.adk_default()
        return cls.default(include_judge=False)

    def enabled(self) -> dict[str, CriterionConfig]:
        """The criteria that are switched on."""
        return {name: c for name, c in self.criteria.items() if c.enabled}

    def reference_free(self) -> dict[str, CriterionConfig]:
        """The criteria switched on that score an invocation with no expected one (policies such
        as ``max_tool_calls``, judged qualities such as ``safety``): those that apply to traces
        scored with no eval set.

        >>> EvalConfig(criteria={"trajectory_match": 0.8, "no_tool_errors": {}}).reference_free().keys()
        dict_keys(['no_tool_errors'])
        """
        return {name: c for name, c in self.enabled().items() if get_criterion(name).reference_free}

    @classmethod
    def load(cls, path: str | Path) -> EvalConfig:
        """Load our EvalConfig, JSON or YAML (``.yaml``/``.yml``), or Google ADK's
        ``test_config.json``.

        Raises ``ConfigError`` naming the file, the JSON path (and, in YAML, the line) and what
        was expected.
        """
        document = read_document(path, ConfigError)
        file, data = document.path, document.data
        if _looks_like_an_eval_set(data):
            raise ConfigError(
                f"{file}: this is an eval set, not a config; give it as the eval set and a file "
                "with 'criteria' as the config (--config)"
            )
        if not isinstance(data, dict):
            raise ConfigError(
                f"{file}: expected a JSON object with 'criteria', got {type(data).__name__}"
            )
        return validate_file_data(cls, data, file, ConfigError, document)

    def save(self, path: str | Path) -> Path:
        """Write the config as JSON, or YAML for ``.yaml``/``.yml``, with its ``$schema``
        (``agenteval schema config``); ``load`` of the file gives an equal object."""
        return write_document(path, self.model_dump(mode="json"), "config")


def require_reference_free(config: EvalConfig | None, *, where: str = "") -> EvalConfig:
    """``config``, when it can score invocations with no eval set: it enables at least one
    criterion that needs no reference (one registered ``reference_free``: policies such as
    ``max_tool_calls``, judged qualities such as ``safety``). Otherwise (no config, or only
    criteria that need an eval set's expected turns) a ``ConfigError`` naming the config's
    criteria and those that need no reference; ``where`` starts the message (e.g. the config
    file's path and a colon).

    >>> require_reference_free(EvalConfig(criteria={"no_tool_errors": {}})).enabled().keys()
    dict_keys(['no_tool_errors'])
    >>> require_reference_free(EvalConfig(criteria={"trajectory_match": 0.8}))
    Traceback (most recent call last):
    ...
    agenteval_otel.errors.ConfigError: no eval set, and no criterion of the config (trajectory_match) scores an invocation without one; scoring with no eval set needs a config naming criteria that need no reference: ...
    """
    if config is not None and config.reference_free():
        return config
    named = ", ".join(config.enabled()) if config is not None else ""
    policies = ", ".join(name for name in criterion_names() if get_criterion(name).reference_free)
    raise ConfigError(f"{where}no eval set, and no criterion of the config ({named or 'none'}) scores an invocation "
                      "without one; scoring with no eval set needs a config naming criteria that need no reference: "
                      f"{policies}; or give an eval set")
