"""Regenerate ``adk_parity.json``: Google ADK's own scores, written next to every input.

Runs google-adk's evaluators (``RougeEvaluator``, ``TrajectoryEvaluator``) on response pairs,
tool-call trajectories under the three match types, and the real ADK eval sets of
``../shared/data/evalsets`` (with their own ``test_config.json``, or ADK's default criteria when
they have none) against actual runs built from each set's own expected data plus perturbations.
google-adk is never a dependency of agenteval-otel: run this in a virtual environment of its own::

    python -m venv /tmp/adkvenv
    /tmp/adkvenv/bin/pip install google-adk==2.13.0 rouge-score
    /tmp/adkvenv/bin/python tests/data/adk_parity/generate.py [SHARED_EVALSETS_DIR]

``tests/criteria/test_adk_parity.py`` scores the same inputs with our criteria.
"""

from __future__ import annotations

import copy
import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from google.adk.evaluation.eval_case import IntermediateData, Invocation
from google.adk.evaluation.eval_config import (
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
from google.adk.evaluation.eval_set import EvalSet
from google.adk.evaluation.evaluator import EvalStatus
from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
from google.adk.evaluation.local_eval_sets_manager import convert_eval_set_to_pydantic_schema
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
from google.genai import types

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "adk_parity.json"
THRESHOLDS = (1.0, 0.8, 0.7, 0.5)
MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")

RESPONSES: list[tuple[str, str, str]] = [  # (id, reference, candidate)
    ("ascii_equal", "The weather in London is sunny.", "The weather in London is sunny."),
    ("ascii_partial", "The weather in London is sunny.", "London is rainy today."),
    ("ascii_disjoint", "cat", "dog"),
    ("stemming", "running runs ran", "run running"),
    ("stemming_long", "The agents generously agreed", "agent generous agree"),
    ("repeats_candidate", "sunny", "sunny sunny sunny"),
    ("repeats_reference", "yes yes yes no", "yes no"),
    ("punctuation", "Hello, world! It's e-mail O.K.", "hello world it s e mail o k"),
    ("underscores", "device_2 is on", "device 2 is on"),
    ("case", "PARIS Is Lovely", "paris is LOVELY"),
    ("numbers", "Rolled 13 and 4", "rolled 4 and 13 and 17"),
    ("decimals", "It is 18.5 degrees", "It is 18 degrees"),
    ("accents", "Café à Paris", "cafe a paris"),
    ("accents_equal", "Café crème brûlée", "café CRÈME brûlée"),
    ("combining_accent", "Cafe\u0301 ouvert", "Café ouvert"),
    ("cyrillic", "Погода в Москве хорошая", "погода в москве плохая"),
    ("greek", "Ο καιρός είναι καλός", "ο καιρός είναι κακός"),
    ("arabic", "الطقس مشمس اليوم", "الطقس ممطر اليوم"),
    ("nfkc_fullwidth", "ｐａｒｉｓ ｗｅａｔｈｅｒ", "paris weather"),
    ("nfkc_ligature", "ﬁne ﬂight", "fine flight"),
    ("nfkc_superscript", "x² + y²", "x2 y2"),
    ("nfkc_compat_ideograph", "\uf900 豈", "豈 豈"),
    ("nfkc_circled", "① ② ③", "1 2 3"),
    ("nfkc_roman", "Chapter Ⅻ and Ⅳ", "chapter xii and iv"),
    ("nfkc_kelvin", "300 \u212a", "300 k"),
    ("thai", "สวัสดีครับ วันนี้อากาศดี", "สวัสดีค่ะ วันนี้อากาศดี"),
    ("thai_disjoint", "แมว", "หมา"),
    ("devanagari", "नमस्ते दुनिया", "नमस्ते दोस्त"),
    ("devanagari_matras", "किताब पढ़ो", "किताबें पढ़ो"),
    ("lao", "ສະບາຍດີ", "ສະບາຍ"),
    ("khmer", "សួស្តី", "សួស្តី ពិភពលោក"),
    ("myanmar", "မင်္ဂလာပါ", "မင်္ဂလာ"),
    ("cjk_chinese", "今天天气很好", "天气很好"),
    ("cjk_japanese", "東京は晴れです", "大阪は雨です"),
    ("cjk_korean", "서울 날씨 좋아요", "서울 날씨 나빠요"),
    ("cjk_extension_a", "\u3400\u3401\u3402 abc", "\u3400 abc"),
    ("cjk_extension_a_equal", "\u4db5\u4db4", "\u4db5\u4db4"),
    ("cjk_mixed_latin", "Tokyo東京weather天气", "tokyo weather 東京"),
    ("emoji_vs16", "I ❤️ Paris", "I ❤ Paris"),
    ("emoji_vs16_both", "Sunny ☀️ today ☀️", "sunny ☀️"),
    ("emoji_plain", "Great job 👍", "great job"),
    ("empty_both", "", ""),
    ("empty_reference", "", "Some answer."),
    ("empty_candidate", "Some answer.", ""),
    ("only_punctuation", "!!!", "???"),
    ("mixed_scripts", "Hello мир 世界 नमस्ते", "hello мир 世 नमस्ते"),
    ("long_answer", "I have rolled a 17 sided die twice. The first roll was 13 and the second roll was 4.",
     "I rolled the 17-sided die two times: 13 first, then 4."),
]


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


A, B, C = _call("get_weather", city="Paris"), _call("convert", celsius=18), _call("search", q="x")
TRAJECTORIES: list[tuple[str, list[tuple[list[dict[str, Any]], list[dict[str, Any]]]], bool]] = [
    # (id, [(expected calls, actual calls) per invocation], ignore_args); a call without "args" has None
    ("equal", [([A, B], [A, B])], False),
    ("extra_at_end", [([A, B], [A, B, C])], False),
    ("extra_in_middle", [([A, B], [A, C, B])], False),
    ("extra_at_start", [([A, B], [C, A, B])], False),
    ("missing_last", [([A, B, C], [A, B])], False),
    ("missing_all", [([A, B], [])], False),
    ("reordered", [([A, B], [B, A])], False),
    ("reordered_with_extra", [([A, B, C], [C, B, A, C])], False),
    ("different_args", [([A], [_call("get_weather", city="London")])], False),
    ("different_args_ignored", [([A], [_call("get_weather", city="London")])], True),
    ("different_name_ignored", [([A], [_call("get_forecast", city="Paris")])], True),
    ("int_vs_float", [([_call("roll", sides=17)], [_call("roll", sides=17.0)])], False),
    ("bool_vs_int", [([_call("switch", on=True)], [_call("switch", on=1)])], False),
    ("bool_vs_int_zero", [([_call("switch", on=False)], [_call("switch", on=0)])], False),
    ("string_vs_number", [([_call("roll", sides=17)], [_call("roll", sides="17")])], False),
    ("json_string_vs_object", [([_call("set", cfg={"a": 1})], [_call("set", cfg='{"a": 1}')])], False),
    ("nested_equal", [([_call("book", trip={"to": "LHR", "pax": [{"n": "Al", "age": 30}]})],
                       [_call("book", trip={"pax": [{"age": 30.0, "n": "Al"}], "to": "LHR"})])], False),
    ("nested_different", [([_call("book", trip={"to": "LHR", "pax": [1, 2]})],
                           [_call("book", trip={"to": "LHR", "pax": [2, 1]})])], False),
    ("expected_empty_args", [([_call("now")], [_call("now", tz="UTC")])], False),
    ("extra_arg_key", [([_call("now", tz="UTC")], [_call("now", tz="UTC", fmt="iso")])], False),
    ("null_arg", [([_call("now", tz=None)], [_call("now")])], False),
    ("expected_no_args", [([{"name": "now"}], [_call("now")])], False),  # None is not {}
    ("expected_no_args_ignored", [([{"name": "now"}], [_call("now")])], True),
    ("expected_no_args_with_args", [([{"name": "now"}], [_call("now", tz="UTC")])], False),
    ("empty_both", [([], [])], False),
    ("empty_expected", [([], [A, B])], False),
    ("empty_actual", [([A], [])], False),
    ("duplicates_needed_twice", [([A, A], [A, B])], False),
    ("duplicates_present", [([A, A], [A, B, A])], False),
    ("greedy_in_order", [([A, B], [B, A, B])], False),
    ("invocations_pass_fail", [([A], [A]), ([B], [C])], False),
    ("invocations_three", [([A], [A]), ([A, B], [B, A]), ([], [C])], False),
    ("invocations_all_fail", [([A], []), ([B], [A]), ([C], [B])], False),
]


def _content(text: str | None, role: str) -> types.Content | None:
    return None if text is None else types.Content(parts=[types.Part(text=text)], role=role)


def _invocation(calls: list[dict[str, Any]], response: str | None = None) -> Invocation:
    return Invocation(
        user_content=types.Content(parts=[types.Part(text="q")], role="user"),
        final_response=_content(response, "model"),
        intermediate_data=IntermediateData(
            tool_uses=[types.FunctionCall(name=c["name"], args=c.get("args")) for c in calls]),
    )


def _status(result: Any) -> bool:
    return result.overall_eval_status is EvalStatus.PASSED


def _responses() -> list[dict[str, Any]]:
    rows = []
    for case_id, reference, candidate in RESPONSES:
        entry: dict[str, Any] = {"id": case_id, "reference": reference, "candidate": candidate}
        for threshold in THRESHOLDS:
            result = RougeEvaluator(EvalMetric(metric_name="response_match_score", threshold=threshold)) \
                .evaluate_invocations([_invocation([], candidate)], [_invocation([], reference)])
            entry["adk_score"] = result.overall_score
            entry.setdefault("adk_passed", {})[str(threshold)] = _status(result)
        rows.append(entry)
    return rows


def _trajectories() -> list[dict[str, Any]]:
    rows = []
    for case_id, invocations, ignore_args in TRAJECTORIES:
        invocations = json.loads(json.dumps(invocations))  # the values the test will read back
        entry: dict[str, Any] = {"id": case_id, "ignore_args": ignore_args,
                                 "invocations": [{"expected": e, "actual": a} for e, a in invocations],
                                 "adk": {}}
        for match_type in MATCH_TYPES:
            scores: dict[str, Any] = {"passed": {}}
            for threshold in THRESHOLDS:
                criterion = ToolTrajectoryCriterion(threshold=threshold, match_type=match_type,
                                                    ignore_args=ignore_args)
                evaluator = TrajectoryEvaluator(
                    eval_metric=EvalMetric(metric_name="tool_trajectory_avg_score", criterion=criterion))
                result = evaluator.evaluate_invocations(
                    [_invocation(a) for _, a in invocations], [_invocation(e) for e, _ in invocations])
                scores["score"] = result.overall_score
                scores["passed"][str(threshold)] = _status(result)
            entry["adk"][match_type] = scores
        rows.append(entry)
    return rows


# --- the real eval sets ------------------------------------------------------------------------

CONFIGS = {  # eval-set file prefix -> its test_config.json (the longest prefix wins)
    "adk-python__ecommerce_customer_service_agent__": "adk-python__ecommerce_customer_service_agent__test_config.json",
    "adk-python__hello_world_agent__": "adk-python__hello_world_agent__test_config.json",
    "adk-python__home_automation_agent__": "adk-python__home_automation_agent__test_config.json",
    "adk-python__home_automation_agent__test_files__":
        "adk-python__home_automation_agent__test_files__test_config.json",
    "adk-python__home_automation_agent__test_files__memorizing_past_events__":
        "adk-python__home_automation_agent__test_files__memorizing_past_events__test_config.json",
    "adk-python__trip_planner_agent__": "adk-python__trip_planner_agent__test_config.json",
    "adk-python__trip_planner_agent__test_files__": "adk-python__trip_planner_agent__test_files__test_config.json",
}


def config_for(name: str) -> str | None:
    """The test_config.json beside an eval-set file, if any."""
    found = [prefix for prefix in CONFIGS if name.startswith(prefix)]
    return CONFIGS[max(found, key=len)] if found else None


def _load_eval_set(path: Path) -> EvalSet | None:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        if "eval_cases" not in data and "evalCases" not in data:
            return None  # a session dump or a config
        return EvalSet.model_validate(data)
    if all("query" in row for row in data):  # the legacy list of turns: one conversation
        data = [{"name": path.stem, "data": data}]
    return convert_eval_set_to_pydantic_schema(path.stem, data)


def _perturbed_args(args: dict[str, Any] | None) -> dict[str, Any]:
    args = copy.deepcopy(args or {})
    for key, value in args.items():
        if isinstance(value, str):
            args[key] = value.upper() if value.upper() != value else value + "!"
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            args[key] = value + 1
        else:
            continue
        break
    else:
        args["extra"] = 1
    return args


def _as_floats(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _as_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_floats(v) for v in value]
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _words(text: str) -> list[str]:
    return text.split()


PERTURBATIONS = {  # name -> (expected calls, expected response, turn index) -> (calls, response)
    "perfect": lambda calls, text, i: (calls, text),
    "extra_call": lambda calls, text, i: (
        calls + [{"name": "lookup_extra", "args": {"q": "more"}}], (text or "") + " Anything else?"),
    "reordered": lambda calls, text, i: (calls[::-1], " ".join(_words(text or "")[::-1])),
    "changed_args": lambda calls, text, i: (
        [{"name": c["name"], "args": _perturbed_args(c.get("args")) if k == 0 else c.get("args")}
         for k, c in enumerate(calls)],
        " ".join(_words(text or "")[: max(1, len(_words(text or "")) // 2)])),
    "numbers_as_floats": lambda calls, text, i: (
        [{"name": c["name"], "args": _as_floats(c.get("args"))} for c in calls], (text or "").upper()),
    "names_only_first_turn": lambda calls, text, i: (
        [{"name": c["name"], "args": {}} for c in calls] if i == 0 else calls,
        "" if i == 0 else text),
}


def _calls_of(invocation: Invocation) -> list[dict[str, Any]]:
    tool_uses = invocation.intermediate_data.tool_uses if invocation.intermediate_data else []
    return [{"name": c.name, **({"args": c.args} if c.args is not None else {})} for c in tool_uses]


def _text_of(invocation: Invocation) -> str | None:
    content = invocation.final_response
    if content is None or not content.parts:
        return None
    return "\n".join(p.text for p in content.parts if p.text)


def _evalsets(folder: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted(folder.glob("*.json")):
        eval_set = _load_eval_set(path) if "test_config" not in path.name else None
        if eval_set is None or not any(case.conversation for case in eval_set.eval_cases):
            continue
        config_name = config_for(path.name)
        config = get_evaluation_criteria_or_default(str(folder / config_name) if config_name else None)
        metrics = [m for m in get_eval_metrics_from_config(config)
                   if m.metric_name in ("tool_trajectory_avg_score", "response_match_score")]
        for perturbation, change in PERTURBATIONS.items():
            cases = []
            for case in eval_set.eval_cases:
                if not case.conversation:
                    continue
                actual_turns = []
                for index, expected in enumerate(case.conversation):
                    calls, text = change(_calls_of(expected), _text_of(expected), index)
                    actual_turns.append({"tool_calls": json.loads(json.dumps(calls)), "final_response": text})
                actual = [_invocation(t["tool_calls"], t["final_response"]) for t in actual_turns]
                scores = {}
                for metric in metrics:
                    evaluator = (TrajectoryEvaluator(eval_metric=metric)
                                 if metric.metric_name == "tool_trajectory_avg_score" else RougeEvaluator(metric))
                    result = evaluator.evaluate_invocations(actual, case.conversation)
                    scores[metric.metric_name] = {"score": result.overall_score, "passed": _status(result)}
                cases.append({"turns": actual_turns, "adk": scores})
            rows.append({"file": path.name, "config": config_name, "perturbation": perturbation, "cases": cases})
    return rows


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[3] / "shared" / "data" / "evalsets"
    table = {
        "generator": "tests/data/adk_parity/generate.py",
        "google_adk": version("google-adk"),
        "rouge_score": version("rouge-score"),
        "nltk": version("nltk"),
        "thresholds": list(THRESHOLDS),
        "default_criteria": get_evaluation_criteria_or_default(None).criteria,
        "responses": _responses(),
        "trajectories": _trajectories(),
        "evalsets": _evalsets(folder),
    }
    OUTPUT.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}: {len(table['responses'])} responses, {len(table['trajectories'])} trajectories "
          f"x {len(MATCH_TYPES)} match types, {len(table['evalsets'])} eval-set runs")


if __name__ == "__main__":
    main()
