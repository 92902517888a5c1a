"""Built-in criteria on hand-checked cases, through the registry as the runner calls them."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from agenteval_otel import CriterionConfig, EvalConfig, ToolCall
from agenteval_otel.criteria import (
    ArgMatch,
    CriterionContext,
    MatchType,
    Score,
    criterion,
    get_criterion,
    run_criterion,
)
from agenteval_otel.evalsets import Invocation
from agenteval_otel.evaluation._scoring import score_case
from agenteval_otel.results._results import CriterionResult
from agenteval_otel.trajectory import TrajectoryStep
from agenteval_otel.trajectory.trajectory import Trajectory


def _turn(tools: list[ToolCall | str] = (), response: str | None = None, nodes: list[str] = (),
          **metadata: Any) -> Invocation:
    return Invocation(user_content="q", expected_tool_trajectory=list(tools),  # type: ignore[arg-type]
                      expected_final_response=response, expected_node_order=list(nodes),  # type: ignore[arg-type]
                      metadata=metadata)


def _trajectory(*calls: tuple[str, dict[str, Any]], response: str | None = None,
                nodes: list[str] = ()) -> Trajectory:
    steps = [TrajectoryStep.node(n) for n in nodes]
    steps += [TrajectoryStep.tool(name, args) for name, args in calls]
    return Trajectory(steps=steps, final_response=response)


def _score(name: str, expected: Invocation | None, actual: Trajectory, config: CriterionConfig,
           timeout_s: float | None = None, **context: Any) -> CriterionResult | None:
    ctx = CriterionContext(actual=actual, expected=expected, config=config, **context)
    return asyncio.run(run_criterion(name, ctx, timeout_s=timeout_s))


class TestTrajectoryMatch:
    def test_exact_penalises_an_extra_call(self) -> None:
        result = _score("trajectory_match", _turn(["get_weather"]),
                        _trajectory(("get_weather", {}), ("search", {"q": "x"})),
                        CriterionConfig.trajectory())
        assert result is not None
        assert result.score == 0.5 and not result.passed
        assert result.details["unexpected"] == ['search({"q": "x"})']
        assert "unexpected: search" in result.reason

    def test_exact_all_matched(self) -> None:
        result = _score("trajectory_match", _turn(["a", "b"]), _trajectory(("a", {}), ("b", {})),
                        CriterionConfig.trajectory(threshold=1.0))
        assert result is not None and result.score == 1.0 and result.passed

    def test_nothing_expected_nothing_called(self) -> None:
        result = _score("trajectory_match", _turn(), _trajectory(), CriterionConfig.trajectory())
        assert result is not None and result.score == 1.0

    def test_in_order_allows_interleaving(self) -> None:
        result = _score("trajectory_match", _turn(["a", "c"]),
                        _trajectory(("a", {}), ("b", {}), ("c", {})),
                        CriterionConfig.trajectory(match_type=MatchType.IN_ORDER))
        assert result is not None and result.score == 1.0

    def test_any_order_counts_a_multiset(self) -> None:
        result = _score("trajectory_match", _turn(["a", "a", "b"]),
                        _trajectory(("b", {}), ("a", {})),
                        CriterionConfig.trajectory(match_type="ANY_ORDER"))
        assert result is not None and result.score == pytest.approx(2 / 3)
        assert result.details["missing"] == ["a()"]

    def test_argument_mismatch_is_diffed(self) -> None:
        expected = _turn([ToolCall(name="get_weather", args={"city": "Paris", "units": "C"})])
        actual = _trajectory(("get_weather", {"city": "Tokyo", "units": "C"}))
        checked = _score("trajectory_match", expected, actual, CriterionConfig.trajectory(check_args=True))
        assert checked is not None and checked.score == 0.0
        assert checked.details["mismatched"] == [{
            "expected": 'get_weather({"city": "Paris", "units": "C"})',
            "actual": 'get_weather({"city": "Tokyo", "units": "C"})',
            "diff": ["argument 'city': expected 'Paris', got 'Tokyo'"],
        }]
        assert checked.details["missing"] == [] and checked.details["unexpected"] == []
        unchecked = _score("trajectory_match", expected, actual, CriterionConfig.trajectory())
        assert unchecked is not None and unchecked.score == 1.0

    def test_argument_rules_apply(self) -> None:
        expected = _turn([ToolCall(name="search", args={"q": "news"})])
        actual = _trajectory(("search", {"q": "news", "page": 2}))
        config = CriterionConfig.trajectory(check_args=True, arg_match=ArgMatch(mode="subset"))
        result = _score("trajectory_match", expected, actual, config)
        assert result is not None and result.score == 1.0


class TestResponses:
    def test_response_match_adk_numbers(self) -> None:
        config = CriterionConfig.response()
        r1 = _score("response_match", _turn(response="sunny"), _trajectory(response="sunny sunny sunny"), config)
        r2 = _score("response_match", _turn(response="running"), _trajectory(response="run"), config)
        assert r1 is not None and r1.score == 0.5 and not r1.passed
        assert r2 is not None and r2.score == 1.0 and r2.passed

    def test_response_match_does_not_apply_without_expected_response(self) -> None:
        assert _score("response_match", _turn(), _trajectory(response="x"), CriterionConfig.response()) is None

    def test_missing_actual_response_scores_zero(self) -> None:
        result = _score("response_match", _turn(response="sunny"), _trajectory(), CriterionConfig.response())
        assert result is not None and result.score == 0.0

    def test_exact_match(self) -> None:
        config = CriterionConfig(threshold=1.0)
        same = _score("exact_match", _turn(response="It is  sunny."), _trajectory(response="It is sunny. "), config)
        other = _score("exact_match", _turn(response="It is sunny."), _trajectory(response="it is sunny."), config)
        folded = _score("exact_match", _turn(response="It is sunny."), _trajectory(response="it is sunny."),
                        CriterionConfig(params={"case_sensitive": False}))
        assert same is not None and same.score == 1.0
        assert other is not None and other.score == 0.0
        assert folded is not None and folded.score == 1.0

    def test_contains_keywords(self) -> None:
        config = CriterionConfig(threshold=1.0, params={"keywords": ["Paris", "18°C"]})
        half = _score("contains_keywords", _turn(), _trajectory(response="paris is sunny"), config)
        assert half is not None and half.score == 0.5 and half.details["missing"] == ["18°C"]
        per_turn = _score("contains_keywords", _turn(keywords=["sunny"]), _trajectory(response="Sunny!"),
                          CriterionConfig())
        assert per_turn is not None and per_turn.score == 1.0
        assert _score("contains_keywords", _turn(), _trajectory(response="x"), CriterionConfig()) is None


class TestNodesAndNames:
    def test_node_order(self) -> None:
        config = CriterionConfig.node_order()
        exact = _score("node_order", _turn(nodes=["plan", "tools", "respond"]),
                       _trajectory(nodes=["plan", "tools", "respond"]), config)
        wrong = _score("node_order", _turn(nodes=["plan", "respond"]),
                       _trajectory(nodes=["plan", "tools", "respond"]), config)
        in_order = _score("node_order", _turn(nodes=["plan", "respond"]),
                          _trajectory(nodes=["plan", "tools", "respond"]),
                          CriterionConfig.node_order(match_type="IN_ORDER"))
        assert exact is not None and exact.score == 1.0
        assert wrong is not None and wrong.score == pytest.approx(1 / 3) and not wrong.passed
        assert in_order is not None and in_order.score == 1.0
        assert _score("node_order", _turn(), _trajectory(nodes=["x"]), config) is None

    def test_tool_name_match(self) -> None:
        result = _score("tool_name_match", _turn(["a", "b", "b"]),
                        _trajectory(("b", {}), ("a", {}), ("c", {})), CriterionConfig(threshold=1.0))
        assert result is not None and result.score == pytest.approx(2 / 3)
        assert result.details == {"missing": ["b"], "extra": ["c"]}
        assert result.reason == "2/3 tool name(s) shared; missing: b; extra: c"


class TestRegistry:
    def test_aliases_find_builtins(self) -> None:
        assert get_criterion("trajectory").name == "trajectory_match"
        assert get_criterion("rouge_match").name == "response_match"

    def test_adk_names_are_criteria_of_their_own(self) -> None:
        for adk_name in ("tool_trajectory_avg_score", "response_match_score"):
            registered = get_criterion(adk_name)
            assert (registered.name, registered.semantics) == (adk_name, "adk")
        assert get_criterion("trajectory_match").semantics == "agenteval"

    @pytest.mark.promise(12)
    def test_judge_criteria_error_without_a_judge(self) -> None:
        result = _score("llm_judge", _turn(response="x"), _trajectory(response="x"),
                        CriterionConfig.llm_judge())
        assert result is not None and result.error is not None
        assert "no LLM judge is configured" in result.error
        assert result.score == 0.0 and not result.passed

    @pytest.mark.promise(12)
    def test_raising_criterion_becomes_an_error_result(self) -> None:
        @criterion("explodes_for_test")
        def explodes(ctx: CriterionContext) -> float:
            raise ZeroDivisionError("boom")

        result = _score("explodes_for_test", _turn(), _trajectory(), CriterionConfig())
        assert result is not None and result.error == "ZeroDivisionError: boom"
        assert result.error_type == "ZeroDivisionError"
        assert result.traceback is not None and "ZeroDivisionError" in result.traceback

    @pytest.mark.promise(12)
    def test_user_criteria_sync_async_bool_and_garbage(self) -> None:
        @criterion("polite_for_test", default_threshold=1.0)
        async def polite(ctx: CriterionContext) -> Score:
            await asyncio.sleep(0)
            return Score(2.0, "very polite")  # clamped to 1

        @criterion("said_hi_for_test")
        def said_hi(ctx: CriterionContext) -> bool:
            return "hi" in (ctx.actual.final_response or "")

        @criterion("garbage_for_test")
        def garbage(ctx: CriterionContext) -> Any:
            return "ten out of ten"

        actual = _trajectory(response="hi there")
        polite_result = _score("polite_for_test", _turn(), actual, CriterionConfig(threshold=1.0))
        hi_result = _score("said_hi_for_test", _turn(), actual, CriterionConfig())
        garbage_result = _score("garbage_for_test", _turn(), actual, CriterionConfig())
        assert polite_result is not None and polite_result.score == 1.0 and polite_result.reason == "very polite"
        assert hi_result is not None and hi_result.score == 1.0 and hi_result.passed
        assert garbage_result is not None and garbage_result.error is not None
        assert "expected a float, a bool, a Score or None" in garbage_result.error


class TestScoreCase:
    def test_mean_over_applicable_invocations(self) -> None:
        config = CriterionConfig(threshold=0.7)
        results = [CriterionResult(criterion="c", score=1.0, passed=True, threshold=0.7),
                   None,
                   CriterionResult(criterion="c", score=0.5, passed=False, threshold=0.7, reason="half")]
        case = score_case("c", ["i1", "i2", "i3"], results, config)
        assert case is not None and case.score == 0.75 and case.passed
        assert case.reason == "turn 2: half"
        assert case.details == {} and case.evidence == []  # each turn's own result is kept once, on its turn

    def test_not_applicable_anywhere(self) -> None:
        assert score_case("c", ["i1"], [None], CriterionConfig()) is None

    def test_an_error_on_one_turn_errors_the_case(self) -> None:
        results = [CriterionResult(criterion="c", score=1.0, passed=True, threshold=0.8),
                   CriterionResult.failure("c", 0.8, "TimeoutError: judge")]
        case = score_case("c", ["i1", "i2"], results, CriterionConfig())
        assert case is not None and case.error == "i2: TimeoutError: judge" and not case.passed


class TestCriterionContract:
    """One context in, failures as data out."""

    def test_the_context_carries_the_case_the_turn_and_the_turns_before(self) -> None:
        seen: list[CriterionContext] = []

        @criterion("sees_context_for_test")
        def sees(ctx: CriterionContext) -> float:
            seen.append(ctx)
            return 1.0

        earlier = _trajectory(response="first")
        _score("sees_context_for_test", _turn(), _trajectory(response="second"), CriterionConfig(),
               turn_index=1, previous_turns=(earlier,), judge="a judge")
        ctx = seen[0]
        assert (ctx.turn_index, ctx.previous_turns, ctx.judge) == (1, (earlier,), "a judge")
        assert not ctx.reference_free

    def test_reference_free_scoring(self) -> None:
        @criterion("short_reply_for_test", default_threshold=1.0)
        def short(ctx: CriterionContext) -> bool:
            assert ctx.expected is None
            return len(ctx.actual.final_response or "") < 10

        result = _score("short_reply_for_test", None, _trajectory(response="ok"), CriterionConfig(threshold=1.0))
        assert result is not None and result.passed
        # built-ins that need a reference do not apply without one
        assert _score("trajectory_match", None, _trajectory(("a", {})), CriterionConfig.trajectory()) is None
        assert _score("response_match", None, _trajectory(response="x"), CriterionConfig.response()) is None

    def test_three_argument_criteria_still_work_with_a_deprecation_warning(self) -> None:
        with pytest.warns(DeprecationWarning, match="CriterionContext"):
            @criterion("legacy_for_test")
            def legacy(expected: Invocation, actual: Trajectory, config: CriterionConfig) -> float:
                return 1.0 if actual.final_response == expected.expected_final_response.get_text() else 0.0

        hit = _score("legacy_for_test", _turn(response="yes"), _trajectory(response="yes"), CriterionConfig())
        assert hit is not None and hit.score == 1.0
        assert _score("legacy_for_test", None, _trajectory(response="yes"), CriterionConfig()) is None

    def test_settings_model_validates_params(self) -> None:
        from pydantic import BaseModel

        from agenteval_otel import EvalConfig
        from agenteval_otel.errors import ConfigError

        class Limit(BaseModel):
            max_calls: int

        @criterion("call_budget_for_test", settings=Limit)
        def budget(ctx: CriterionContext) -> bool:
            return len(ctx.actual.tool_calls()) <= ctx.settings.max_calls

        result = _score("call_budget_for_test", _turn(), _trajectory(("a", {}), ("b", {})),
                        CriterionConfig(params={"max_calls": 1}))
        assert result is not None and result.score == 0.0

        @criterion("typed_call_budget_for_test", settings=Limit)
        def typed_budget(ctx: CriterionContext) -> bool:
            return len(ctx.actual.tool_calls()) <= ctx.settings_as(Limit).max_calls

        typed = _score("typed_call_budget_for_test", _turn(), _trajectory(("a", {})),
                       CriterionConfig(params={"max_calls": 1}))
        assert typed is not None and typed.score == 1.0
        bare = CriterionContext(actual=_trajectory(), expected=None, config=CriterionConfig())
        with pytest.raises(TypeError, match=r"^the criterion's settings are NoneType, not Limit \(register the "
                                            r"criterion with settings=Limit\)$"):
            typed_budget(bare)
        with pytest.raises((ConfigError, ValueError), match="call_budget_for_test.*max_calls"):
            EvalConfig(criteria={"call_budget_for_test": {"params": {"max_calls": "many"}}})

    def test_an_exception_that_cannot_be_printed_is_still_a_result(self) -> None:
        class Unprintable(Exception):
            def __str__(self) -> str:
                raise RuntimeError("no")

        @criterion("unprintable_for_test")
        def unprintable(ctx: CriterionContext) -> float:
            raise Unprintable()

        result = _score("unprintable_for_test", _turn(), _trajectory(), CriterionConfig())
        assert result is not None and result.error_type == "Unprintable" and not result.passed
        assert result.error is not None and result.error.startswith("Unprintable")

    @pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
    def test_a_non_finite_score_is_an_error(self, value: float) -> None:
        @criterion("non_finite_for_test")
        def non_finite(ctx: CriterionContext) -> float:
            return value

        result = _score("non_finite_for_test", _turn(), _trajectory(), CriterionConfig(threshold=0.0))
        assert result is not None and result.error is not None and not result.passed

    @pytest.mark.promise(12, 17)
    def test_a_hung_async_criterion_times_out(self) -> None:
        @criterion("hangs_for_test")
        async def hangs(ctx: CriterionContext) -> float:
            await asyncio.Event().wait()
            return 1.0

        started = time.perf_counter()
        result = _score("hangs_for_test", _turn(), _trajectory(), CriterionConfig(), timeout_s=0.2)
        assert time.perf_counter() - started < 5
        assert result is not None and result.error_type == "TimeoutError" and "0.2 s" in (result.error or "")


class TestAdkCriteria:
    def test_trajectory_evidence_and_reason(self) -> None:
        config = EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": {"matchType": "IN_ORDER"}}})
        result = _score("tool_trajectory_avg_score",
                        _turn([ToolCall(name="get_weather", args={"city": "Paris"}), ToolCall(name="convert", args={})]),
                        _trajectory(("get_weather", {"city": "London"}), ("convert", {})),
                        config.criteria["tool_trajectory_avg_score"])
        assert result is not None and (result.score, result.passed, result.semantics) == (0.0, False, "adk")
        assert [(row.status, row.note) for row in result.evidence] == [
            ("mismatch", "city: expected 'Paris', got 'London'"),
            ("mismatch", "same call, out of the expected order")]  # ADK's greedy IN_ORDER stops there
        assert "IN_ORDER, names and arguments, Google ADK rules" in result.reason

    def test_response_without_reference_is_scored_against_nothing(self) -> None:
        result = _score("response_match_score", _turn(), _trajectory(response="Done."), CriterionConfig(threshold=0.8))
        assert result is not None and (result.score, result.passed) == (0.0, False)
        assert "no expected response" in result.reason
        assert _score("response_match", _turn(), _trajectory(response="Done."), CriterionConfig()) is None
