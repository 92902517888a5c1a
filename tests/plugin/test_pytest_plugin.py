"""The pytest plugin, seen from a user's test suite: generated suites run with ``pytester``.

The generated suites load no plugin by entry point, only pytest-asyncio and ours (``-p``), so
they run the same (and fast) whatever else is installed and whether or not our entry point is;
the last test checks the entry point itself, in a subprocess.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from agenteval_otel import EvalConfig, EvalReport, EvalSet, evaluate
from agenteval_otel.tracing import current_provider
from agenteval_otel.tracing.content import active_policy
from tests.conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"
EXAMPLE_SET = EXAMPLES / "weather_agent.evalset.json"
EXAMPLE_CONFIG = EXAMPLES / "weather_agent.config.json"
EXAMPLE_IDS = ["paris_weather", "tokyo_fahrenheit", "greeting", "london_follow_up"]
PLUGIN = ("-p", "asyncio", "-p", "agenteval_otel.pytest_plugin")

PRELUDE = f"""
import pytest
from agenteval_otel.evaluation._agents import load_agent

EVALSET = {str(EXAMPLE_SET)!r}
CONFIG = {str(EXAMPLE_CONFIG)!r}
weather_agent = load_agent({f"{EXAMPLES / 'weather_agent.py'}:weather_agent"!r})


def wrong_agent(question: str) -> str:
    return "I do not know."
"""


def wrong_agent(question: str) -> str:
    return "I do not know."


@pytest.fixture(autouse=True)
def _plain_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def test_marker_runs_one_passing_test_per_case_named_by_eval_id(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_weather=PRELUDE + """
@pytest.mark.agenteval(evalset=EVALSET, config=CONFIG)
def test_case(agenteval, eval_case):
    report = agenteval.run(eval_case, weather_agent)
    assert [r.eval_id for r in report.results] == [eval_case.eval_id]
    assert report.eval_set_id == "weather-agent-v1"
    assert set(report.config_used["criteria"]) == {"trajectory_match", "response_match", "node_order"}
    report.assert_passed()


@pytest.mark.agenteval(evalset=EVALSET, tags=["multi-turn"])
def test_tagged(agenteval, eval_case):
    agenteval.run(eval_case, weather_agent).assert_passed()
""")
    result = pytester.runpytest(*PLUGIN, "-v", "--strict-markers")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(
        [f"test_weather.py::test_case[[]{eval_id}[]] PASSED*" for eval_id in EXAMPLE_IDS]
        + ["test_weather.py::test_tagged[[]london_follow_up[]] PASSED*"]
    )


def test_paths_are_relative_to_the_test_file(pytester: pytest.Pytester) -> None:
    evals = pytester.mkdir("evals")
    shutil.copy(EXAMPLE_SET, evals / "weather.evalset.json")
    shutil.copy(EXAMPLE_CONFIG, evals / "weather.config.json")
    pytester.mkdir("suite").joinpath("test_relative.py").write_text(PRELUDE + """
@pytest.mark.agenteval(evalset="../evals/weather.evalset.json", config="../evals/weather.config.json",
                       tags=["units", "multi-turn"])
def test_case(agenteval, eval_case):
    agenteval.run(eval_case, weather_agent).assert_passed()


def test_whole_set(agenteval):
    report = agenteval.run("../evals/weather.evalset.json", weather_agent,
                           config="../evals/weather.config.json")
    assert report.summary.passed_cases == 4
""")
    result = pytester.runpytest(*PLUGIN, "suite")  # run from the folder above
    result.assert_outcomes(passed=3)


def test_wrong_agent_fails_naming_case_criterion_score_threshold_and_reason(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_wrong=PRELUDE + """
@pytest.mark.agenteval(evalset=EVALSET, config=CONFIG)
def test_case(agenteval, eval_case):
    agenteval.run(eval_case, wrong_agent).assert_passed()
""")
    result = pytester.runpytest(*PLUGIN, "-k", "paris_weather")
    result.assert_outcomes(failed=1, deselected=3)
    result.stdout.fnmatch_lines([
        "*test_case?paris_weather?*",
        ">*agenteval.run(eval_case, wrong_agent).assert_passed()",
        "E*AssertionError: eval set weather-agent: 0/1 cases passed (1 failed, 0 errored)",
        "E*paris_weather: trajectory_match scored 0.00 < threshold 1.00: ?*",
        "E*paris_weather: response_match scored 0.00 < threshold 0.70: ?*",
        "E*paris_weather: node_order scored 0.00 < threshold 1.00: ?*",
    ])
    paris = EvalSet.load(EXAMPLE_SET).get_case("paris_weather")
    direct = evaluate(EvalSet(eval_set_id="direct", eval_cases=[paris]), wrong_agent,
                      EvalConfig.load(EXAMPLE_CONFIG), tracer_provider=TracerProvider())
    reasons = [r.reason for r in direct.results[0].criterion_results]
    assert len(reasons) == 3 and all(reasons)
    output = result.stdout.str()
    assert all(reason in output for reason in reasons)


def test_bad_eval_set_or_marker_is_a_collection_error_naming_the_problem(
    pytester: pytest.Pytester,
) -> None:
    pytester.path.joinpath("broken.evalset.json").write_text('{"eval_cases": [\n')
    pytester.path.joinpath("shape.evalset.json").write_text('{"eval_cases": [{"eval_id": "a"}]}')
    test = """
import pytest

@pytest.mark.agenteval({marker})
def test_case(agenteval, eval_case):
    pass
"""
    pytester.makepyfile(
        test_missing=test.format(marker='evalset="no/such.evalset.json"'),
        test_broken=test.format(marker='evalset="broken.evalset.json"'),
        test_shape=test.format(marker='evalset="shape.evalset.json"'),
        test_typo=test.format(marker='evalsets="shape.evalset.json"'),
        test_no_set=test.format(marker='tags=["weather"]'),
    )
    result = pytester.runpytest(*PLUGIN)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=5)
    output = result.stdout.str()
    where = "::test_case: @pytest.mark.agenteval: "
    folder = pytester.path.resolve()
    assert f"test_missing.py{where}{folder / 'no' / 'such.evalset.json'}: no such file" in output
    assert f"test_broken.py{where}{folder / 'broken.evalset.json'}: line 2, column 1: invalid JSON" in output
    assert f"test_shape.py{where}{folder / 'shape.evalset.json'}: eval_cases[0]: " in output
    assert f"test_typo.py{where}unknown argument 'evalsets'; expected evalset, config, tags" in output
    assert f"test_no_set.py{where}the test takes 'eval_case', so the marker needs evalset=PATH" in output
    assert "Traceback" not in output and "agenteval_otel" not in output


def test_bad_path_inside_a_test_fails_at_the_users_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inside=PRELUDE + """
def test_missing(agenteval):
    agenteval.run("missing.evalset.json", weather_agent)
""")
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        '>*agenteval.run("missing.evalset.json", weather_agent)',
        "E*EvalSetLoadError: */missing.evalset.json: no such file",
    ])
    assert "files.py" not in result.stdout.str()


def test_tracing_is_per_test_and_put_back_afterwards(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_isolated=PRELUDE + """
import gc
import weakref

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel import configure, tool
from agenteval_otel.tracing import current_provider
from agenteval_otel.tracing.content import active_policy

BEFORE = (current_provider(), trace.get_tracer_provider(), active_policy())
user_spans = InMemorySpanExporter()
user_provider = TracerProvider()
user_provider.add_span_processor(SimpleSpanProcessor(user_spans))


@tool
def ping() -> str:
    return "pong"


@pytest.fixture(scope="module")
def user_tracing():
    handle = configure(tracer_provider=user_provider, set_global=False)
    yield
    handle.shutdown(timeout=5)


test_providers = []


def test_1_evaluate(agenteval):
    agenteval.run(EVALSET, weather_agent, CONFIG).assert_passed()
    eval_ids = {span.attributes.get("agenteval.eval_id") for span in agenteval.spans}
    assert eval_ids == {"paris_weather", "tokyo_fahrenheit", "greeting", "london_follow_up"}
    test_providers.append(weakref.ref(current_provider()))


def test_2_nothing_left(agenteval):
    assert agenteval.spans == ()
    assert agenteval.reports == []
    ping()  # our tracer now comes from this test's provider: nothing should hold the last one
    gc.collect()
    assert test_providers[0]() is None


def test_3_back_to_global():
    assert (current_provider(), trace.get_tracer_provider(), active_policy()) == BEFORE


def test_4_users_routing_is_kept(user_tracing, agenteval):
    ping()
    assert [span.name for span in agenteval.spans] == ["execute_tool ping"]
    assert current_provider() is not user_provider


def test_5_users_routing_is_back(user_tracing):
    assert current_provider() is user_provider
    assert user_spans.get_finished_spans() == ()
    ping()
    assert [span.name for span in user_spans.get_finished_spans()] == ["execute_tool ping"]
""")
    before = (current_provider(), trace.get_tracer_provider(), active_policy())
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=5)
    assert (current_provider(), trace.get_tracer_provider(), active_policy()) == before


def test_async_tests_use_arun(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_async=PRELUDE + """
async def async_agent(question, thread_id, history):
    return weather_agent(question, thread_id=thread_id, history=history)


@pytest.mark.asyncio
@pytest.mark.agenteval(evalset=EVALSET, config=CONFIG)
async def test_case(agenteval, eval_case):
    (await agenteval.arun(eval_case, async_agent)).assert_passed()


@pytest.mark.asyncio
async def test_run_in_a_loop_says_use_arun(agenteval):
    with pytest.raises(RuntimeError, match=r"await agenteval\\.arun"):
        agenteval.run(EVALSET, async_agent)
""")
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=5)


def test_report_option_saves_each_report_as_json(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_saved=PRELUDE + """
@pytest.mark.agenteval(evalset=EVALSET, config=CONFIG, tags=["units", "multi-turn"])
def test_case(agenteval, eval_case):
    agenteval.run(eval_case, weather_agent)
    agenteval.run(eval_case, wrong_agent)
""")
    result = pytester.runpytest(*PLUGIN, "--agenteval-report", "out/reports")
    result.assert_outcomes(passed=2)
    saved = sorted((pytester.path / "out" / "reports").iterdir())
    assert [path.name for path in saved] == [
        "test_saved.py_test_case[london_follow_up]-2.json",
        "test_saved.py_test_case[london_follow_up].json",
        "test_saved.py_test_case[tokyo_fahrenheit]-2.json",
        "test_saved.py_test_case[tokyo_fahrenheit].json",
    ]
    reports = [EvalReport.load(path) for path in saved]
    assert [r.passed for r in reports] == [False, True, False, True]
    assert [r.results[0].eval_id for r in reports] == [
        "london_follow_up", "london_follow_up", "tokyo_fahrenheit", "tokyo_fahrenheit"]


def test_entry_point_loads_the_plugin(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                      tmp_path: Path) -> None:
    """The entry point the package declares, installed as a stand-in distribution."""
    dist = tmp_path / "site" / "agenteval_entry_point-0.dist-info"
    dist.mkdir(parents=True)
    dist.joinpath("METADATA").write_text("Metadata-Version: 2.1\nName: agenteval-entry-point\nVersion: 0\n")
    dist.joinpath("entry_points.txt").write_text("[pytest11]\nagenteval = agenteval_otel.pytest_plugin\n")
    monkeypatch.setenv("PYTHONPATH", str(dist.parent))
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    pytester.makepyfile(test_installed="""
import pytest
from agenteval_otel import EvalCase


@pytest.mark.agenteval(tags=["x"])
def test_fixture_and_marker(agenteval):
    case = EvalCase.single_turn(user_query="Hello", expected_response="Hi!", eval_id="hello")
    agenteval.run(case, lambda query: "Hi!").assert_passed()
""")
    result = pytester.runpytest_subprocess("--strict-markers")
    result.assert_outcomes(passed=1)
