"""EvalConfig and CriterionConfig: defaults, factories, aliases, strictness, ADK criteria files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agenteval_otel import CriterionConfig, EvalCase, EvalConfig, EvalSet
from agenteval_otel.criteria import (
    ArgMatch,
    MatchType,
    Rubric,
    canonical_criterion_name,
    criterion,
    require_reference_free,
)
from agenteval_otel.errors import ConfigError


def test_default_config() -> None:
    config = EvalConfig.default()
    assert {k: c.threshold for k, c in config.criteria.items()} == {
        "trajectory_match": 0.8, "response_match": 0.7, "llm_judge": 0.7}
    assert config.criteria["llm_judge"].judge_model == "gpt-4o-mini"
    assert config.user_simulator_config is None


def test_criterion_config_defaults() -> None:
    c = CriterionConfig()
    assert (c.enabled, c.threshold, c.match_type, c.judge_model, c.rubrics) == (
        True, 0.8, MatchType.EXACT, "gpt-4o-mini", [])
    assert (c.params, c.check_args, c.arg_match, c.num_samples) == ({}, False, ArgMatch(), 1)


def test_factories() -> None:
    t = CriterionConfig.trajectory(check_args=True, match_type="in_order")
    assert (t.threshold, t.check_args, t.match_type) == (0.8, True, MatchType.IN_ORDER)
    assert CriterionConfig.trajectory(arg_match="subset").arg_match.mode == "subset"
    assert CriterionConfig.response().threshold == 0.7
    j = CriterionConfig.llm_judge(judge_model="my-model", num_samples=3)
    assert (j.threshold, j.judge_model, j.num_samples) == (0.7, "my-model", 3)
    rubric = Rubric(name="clarity", description="Is it clear?", scoring_guide="5=clear, 1=not")
    r = CriterionConfig.rubric([rubric])
    assert (r.threshold, r.rubrics) == (0.8, [rubric])
    n = CriterionConfig.node_order(match_type=MatchType.ANY_ORDER)
    assert (n.threshold, n.match_type) == (1.0, MatchType.ANY_ORDER)


@pytest.mark.parametrize("spelling", ["EXACT", "exact", "in_order", "IN_ORDER", "any-order"])
def test_match_type_spellings(spelling: str) -> None:
    assert isinstance(MatchType(spelling), MatchType)


def test_aliases_load_as_our_names() -> None:
    config = EvalConfig.model_validate({"criteria": {
        "trajectory": 1.0, "rouge_match": {"threshold": 0.5},
        "final_response_match_v2": {}, "rubric_based_final_response_quality_v1": {},
        "hallucinations_v1": {}, "safety_v1": {}, "node_order_score": {},
        "tool_name_match_score": {}, "exact_match": {}, "contains_keywords": {},
        "factual_accuracy_v1": {},
    }})
    assert {k: c.threshold for k, c in config.criteria.items()} == {
        "trajectory_match": 1.0, "response_match": 0.5, "llm_judge": 0.7, "rubric_based": 0.8,
        "hallucination": 0.8, "safety": 0.8, "node_order": 1.0, "tool_name_match": 1.0,
        "exact_match": 1.0, "contains_keywords": 1.0, "factual_accuracy": 0.8}
    assert canonical_criterion_name("rouge_match") == "response_match"
    assert canonical_criterion_name("trajectory") == "trajectory_match"


def test_unknown_criterion_and_field_are_errors() -> None:
    with pytest.raises(ValidationError, match="unknown criterion 'trajectroy_match'"):
        EvalConfig.model_validate({"criteria": {"trajectroy_match": {}}})
    with pytest.raises(ValidationError, match="extra"):
        EvalConfig.model_validate({"criteria": {"trajectory_match": {"treshold": 0.5}}})
    with pytest.raises(ValidationError):
        EvalConfig.model_validate({"criterias": {}})
    with pytest.raises(ValidationError, match="given twice"):
        EvalConfig.model_validate({"criteria": {"trajectory_match": {}, "trajectory": {}}})
    with pytest.raises(ValidationError):
        CriterionConfig(threshold=1.5)


def test_explicit_threshold_is_kept_and_instances_not_mutated() -> None:
    shared = CriterionConfig()
    config = EvalConfig(criteria={"node_order": shared, "safety": CriterionConfig(threshold=0.3)})
    assert config.criteria["node_order"].threshold == 1.0
    assert shared.threshold == 0.8
    assert config.criteria["safety"].threshold == 0.3


def test_registered_names_become_known() -> None:
    criterion("politeness_for_config_test", default_threshold=0.6)(lambda ctx: 1.0)
    config = EvalConfig.model_validate({"criteria": {"politeness_for_config_test": {}}})
    assert config.criteria["politeness_for_config_test"].threshold == 0.6


def test_adk_judge_options_and_rubrics(tmp_path: Path) -> None:
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps({"criteria": {
        "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
        "final_response_match_v2": {"threshold": 0.8, "judge_model_options": {
            "judge_model": "gemini-2.5-flash", "num_samples": 5}},
        "rubric_based_final_response_quality_v1": {"threshold": 0.8, "rubrics": [
            {"rubric_id": "concise", "rubric_content": {"text_property": "The answer is short."}}]},
    }, "user_simulator_config": {"model": "m", "max_allowed_invocations": 4}}))
    config = EvalConfig.load(path)
    trajectory = config.criteria["tool_trajectory_avg_score"]
    assert (trajectory.match_type, trajectory.params) == (MatchType.IN_ORDER, {})
    judge = config.criteria["llm_judge"]
    assert (judge.threshold, judge.judge_model, judge.num_samples) == (0.8, "gemini-2.5-flash", 5)
    rubric = config.criteria["rubric_based"].rubrics[0]
    assert (rubric.name, rubric.description) == ("concise", "The answer is short.")
    assert config.user_simulator_config is not None
    assert config.user_simulator_config.max_turns == 4


def test_config_round_trip(tmp_path: Path) -> None:
    config = EvalConfig(criteria={
        "trajectory_match": CriterionConfig.trajectory(
            0.9, match_type="ANY_ORDER", check_args=True,
            arg_match=ArgMatch.model_validate({"mode": "subset", "keys": {"ts": {"ignore": True}}})),
        "rubric_based": CriterionConfig.rubric([Rubric(name="r", description="d", weight=2)]),
    })
    assert EvalConfig.load(config.save(tmp_path / "config.json")) == config


@pytest.mark.promise(13)
def test_bad_config_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        EvalConfig.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"criteria": {"trajectory_match": {"threshold": "high"}}}')
    with pytest.raises(ConfigError, match=r"criteria\.trajectory_match\.threshold"):
        EvalConfig.load(bad)
    bad.write_text('{"criteria": {"nope": 1}}')
    with pytest.raises(ConfigError) as raised:
        EvalConfig.load(bad)
    assert str(raised.value).startswith(f"{bad}: criteria: unknown criterion 'nope'; expected one of: ")
    bad.write_text("[1]")
    with pytest.raises(ConfigError, match="expected a JSON object with 'criteria'"):
        EvalConfig.load(bad)


def test_an_eval_set_given_as_config_is_named(tmp_path: Path) -> None:
    from agenteval_otel import EvalSetBuilder

    for form in (EvalSetBuilder("s").add_case("q", "a").save(tmp_path / "ours.json").model_dump(mode="json"),
                 {"evalSetId": "s", "evalCases": []},
                 [{"query": "q", "expected_tool_use": [], "reference": "a"}]):
        path = tmp_path / "given.json"
        path.write_text(json.dumps(form))
        with pytest.raises(ConfigError, match=f"^{path}: this is an eval set, not a config"):
            EvalConfig.load(path)


@pytest.mark.parametrize(("given", "match_type", "params", "threshold"), [
    (0.7, MatchType.EXACT, {}, 0.7),
    (1, MatchType.EXACT, {}, 1.0),
    ({"threshold": 0.5}, MatchType.EXACT, {}, 0.5),
    ({}, MatchType.EXACT, {}, 1.0),  # ADK's default threshold
    ({"threshold": 1.0, "matchType": 1}, MatchType.IN_ORDER, {}, 1.0),
    ({"threshold": 1.0, "match_type": 2}, MatchType.ANY_ORDER, {}, 1.0),
    ({"threshold": 1.0, "match_type": 0.0}, MatchType.EXACT, {}, 1.0),
    ({"threshold": 1.0, "match_type": " in order "}, MatchType.IN_ORDER, {}, 1.0),
    ({"threshold": 1.0, "matchType": "any-order", "ignoreArgs": True}, MatchType.ANY_ORDER,
     {"ignore_args": True}, 1.0),
    ({"threshold": 0.9, "ignore_args": False, "include_intermediate_responses_in_final": True},
     MatchType.EXACT, {"ignore_args": False}, 0.9),
])
def test_adk_trajectory_criterion_shapes(given: Any, match_type: MatchType, params: dict[str, Any],
                                         threshold: float) -> None:
    config = EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": given}})
    loaded = config.criteria["tool_trajectory_avg_score"]
    assert (loaded.match_type, loaded.params, loaded.threshold) == (match_type, params, threshold)


@pytest.mark.parametrize(("name", "given", "message"), [
    ("tool_trajectory_avg_score", {"match_type": 3}, r"match_type: expected EXACT, IN_ORDER or ANY_ORDER.*got 3"),
    ("tool_trajectory_avg_score", {"match_type": True}, r"match_type: expected .*got True"),
    ("tool_trajectory_avg_score", {"match_type": "IN_ORDER", "matchType": "ANY_ORDER"}, "'match_type' is given twice"),
    ("tool_trajectory_avg_score", True, "expected a threshold number or an object, got True"),
    ("tool_trajectory_avg_score", {"check_args": True}, "compares arguments exactly as Google ADK does"),
    ("tool_trajectory_avg_score", {"stop_signal": "</done>"}, "stop_signal belongs to ADK's user-simulator"),
    ("trajectory_match", {"ignore_args": True}, "ignore_args is a field of Google ADK's tool_trajectory_avg_score"),
    ("response_match_score", {"ignore_args": True}, "ignore_args is a field of"),
    ("final_response_match_v2", {"include_intermediate_responses_in_final": True},
     "include_intermediate_responses_in_final: true is not supported"),
    ("hallucinations_v1", {"evaluateIntermediateNlResponses": True},
     "evaluate_intermediate_nl_responses: true is not supported"),
    ("final_response_match_v2", {"judge_model_options": {"judge_model_config": {"temperature": 0}}},
     "judge_model_config .* is not supported"),
    ("final_response_match_v2", {"judgeModelOptions": {"seed": 1}}, r"judge_model_options\.seed: unknown field"),
    ("tool_trajectory_avg_score", {"threshold": 1.0, "foo": 1}, "unknown field"),
])
def test_adk_fields_refused_by_name(tmp_path: Path, name: str, given: Any, message: str) -> None:
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps({"criteria": {name: given}}))
    with pytest.raises(ConfigError, match=message) as err:
        EvalConfig.load(path)
    assert str(path) in str(err.value)


def test_adk_judge_options_load_and_flags_at_their_default() -> None:
    config = EvalConfig.model_validate({"criteria": {"final_response_match_v2": {
        "threshold": 0.6, "includeIntermediateResponsesInFinal": False,
        "judgeModelOptions": {"judgeModel": "gemini-2.5-flash", "numSamples": 3, "parallelismLimit": 4}}}})
    judge = config.criteria["llm_judge"]
    assert (judge.threshold, judge.judge_model, judge.num_samples) == (0.6, "gemini-2.5-flash", 3)


def test_adk_criteria_config_round_trip(tmp_path: Path) -> None:
    config = EvalConfig.model_validate({"criteria": {
        "tool_trajectory_avg_score": {"threshold": 0.5, "matchType": 2, "ignoreArgs": True},
        "response_match_score": 0.6}})
    assert EvalConfig.load(config.save(tmp_path / "config.json")) == config


def test_default_criteria_follow_the_eval_set_format(tmp_path: Path) -> None:
    adk_file = tmp_path / "adk.test.json"
    adk_file.write_text(json.dumps([{"query": "Hi", "expected_tool_use": [], "reference": "Hello"}]))
    adk = EvalConfig.default_for(EvalSet.load(adk_file))
    assert {k: (c.threshold, c.match_type, c.params) for k, c in adk.criteria.items()} == {
        "tool_trajectory_avg_score": (1.0, MatchType.EXACT, {}), "response_match_score": (0.8, MatchType.EXACT, {})}
    ours = EvalSet(eval_cases=[EvalCase.single_turn(user_query="Hi", expected_response="Hello")])
    assert EvalConfig.default_for(ours) == EvalConfig.default(include_judge=False)
    saved = EvalSet.load(EvalSet.load(adk_file).save(tmp_path / "saved.evalset.json"))
    assert EvalConfig.default_for(saved) == adk  # still the cases of an ADK file


def test_scoring_with_no_eval_set_needs_a_criterion_that_needs_no_reference() -> None:
    policies = EvalConfig.model_validate({"criteria": {"trajectory_match": 0.8, "no_tool_errors": {}}})
    assert require_reference_free(policies) is policies  # a reference-based criterion beside one is fine
    reference_based = EvalConfig(criteria={"trajectory_match": 0.8, "response_match": 0.7})
    messages = []
    for config, where in ((reference_based, "policies.json: "), (None, "")):
        with pytest.raises(ConfigError) as raised:
            require_reference_free(config, where=where)
        messages.append(str(raised.value))
    named, missing = messages
    assert named.startswith("policies.json: no eval set, and no criterion of the config "
                            "(trajectory_match, response_match) scores an invocation without one; scoring with no eval set "
                            "needs a config naming criteria that need no reference: ")
    assert missing.startswith("no eval set, and no criterion of the config (none) scores an invocation without one")
    for message in messages:
        assert "max_tool_calls" in message and "no_tool_errors" in message and "trajectory_match," not in \
            message.split("need no reference: ")[1]
        assert message.endswith("; or give an eval set")
    disabled = EvalConfig.model_validate({"criteria": {"no_tool_errors": {"enabled": False}}})
    with pytest.raises(ConfigError, match=r"no criterion of the config \(none\)"):
        require_reference_free(disabled)
