"""With the OpenInference keys on, a real Phoenix (``phoenix serve`` from ``.venvs/phoenix``) types
every span of an evaluated run of the weather agent and shows the turns' input and output: through
its REST API, and on its trace view in headless Chromium."""

from __future__ import annotations

import importlib
import importlib.util
import json
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agenteval_otel.evalsets import EvalSet
from agenteval_otel.evaluation import LiveRunner, load_agent, run_sync
from agenteval_otel.results import TraceExport
from agenteval_otel.tracing import active_conventions, set_conventions
from tests.backends import PhoenixServer, phoenix_server
from tests.shared_data import REPO_ROOT, skip_or_fail

PROJECT = "weather-openinference"
CHROMIUM = Path("/usr/bin/chromium")
REQUIRE_BROWSER_ENV = "AGENTEVAL_REQUIRE_BROWSER"
EXPECTED_KINDS = {"invoke_agent": "AGENT", "invoke_node": "CHAIN", "conditional": "CHAIN",
                  "execute_tool": "TOOL", "chat": "LLM", "evaluation": "EVALUATOR"}


@dataclass(frozen=True)
class Run:
    phoenix: PhoenixServer
    spans: list[dict[str, Any]]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - a server of the test's own
        return json.load(response)


def _spans(phoenix: PhoenixServer, expected: int, timeout: float = 20.0) -> list[dict[str, Any]]:
    """The project's spans once Phoenix stored ``expected`` of them (it stores in batches)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            found: list[dict[str, Any]] = _get(f"{phoenix.url}/v1/projects/{PROJECT}/spans?limit=1000")["data"]
        except OSError:
            found = []
        if len(found) >= expected:
            return found
        assert time.monotonic() < deadline, f"Phoenix stored {len(found)} of {expected} spans in {timeout:g} s"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    folder = tmp_path_factory.mktemp("phoenix")
    before = active_conventions()
    set_conventions(("gen_ai", "openinference"))
    try:
        with phoenix_server(folder, auth=False) as phoenix:  # its UI, unauthenticated, for the browser
            provider = TracerProvider(resource=Resource.create(
                {"service.name": "weather-agent", "openinference.project.name": PROJECT}))
            exporter = OTLPSpanExporter(endpoint=phoenix.otlp_traces_url, timeout=10)
            sent: list[int] = []
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            provider.add_span_processor(_Counter(sent))
            agent = load_agent(f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent")
            runner = LiveRunner(agent, tracer_provider=provider)
            eval_set = EvalSet.load(REPO_ROOT / "examples" / "weather_agent.evalset.json")
            evaluation_spans = TraceExport(provider, write="spans")  # in traces of their own, linked to the turns
            assert run_sync(runner.aevaluate(eval_set, sinks=[evaluation_spans]), "aevaluate").passed
            provider.shutdown()
            yield Run(phoenix, _spans(phoenix, len(sent)))
    finally:
        set_conventions(before)


class _Counter(SpanProcessor):
    """Counts the spans ended, so the test waits for exactly that many in Phoenix."""

    def __init__(self, sent: list[int]) -> None:
        self.sent = sent

    def on_end(self, span: Any) -> None:
        self.sent.append(1)

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def test_phoenix_types_every_span_and_shows_the_turns(run: Run) -> None:
    kinds: dict[str, set[str]] = {}
    for span in run.spans:
        kinds.setdefault(str(span["name"]).split(" ")[0], set()).add(span["span_kind"])
    assert kinds == {operation: {kind} for operation, kind in EXPECTED_KINDS.items()}
    roots = [span for span in run.spans if span["parent_id"] is None and span["name"].startswith("invoke_agent")]
    assert len(roots) == 5  # one agent span per turn
    judged = {root["context"]["trace_id"] for root in roots}
    evaluations = [span for span in run.spans if span["name"].startswith("evaluation ")]
    assert evaluations and all(span["parent_id"] is None and span["context"]["trace_id"] not in judged
                               for span in evaluations)  # in traces of their own: the turns' stay as they ended
    for root in roots:
        attributes = root["attributes"]
        assert root["span_kind"] == "AGENT"
        assert attributes["input.value"] and attributes["output.value"].startswith(("It is", "Hello"))
        assert attributes["session.id"] == attributes["gen_ai.conversation.id"]


def test_the_trace_view_shows_the_kinds(run: Run, tmp_path: Path) -> None:
    if importlib.util.find_spec("playwright") is None:
        skip_or_fail("browser check needs playwright: pip install -e '.[browser]'", REQUIRE_BROWSER_ENV)
    if not CHROMIUM.exists():
        skip_or_fail("browser check needs /usr/bin/chromium: apt-get install chromium", REQUIRE_BROWSER_ENV)
    sync_api = importlib.import_module("playwright.sync_api")
    project = next(p["id"] for p in _get(f"{run.phoenix.url}/v1/projects")["data"] if p["name"] == PROJECT)
    traces = [next(s["context"]["trace_id"] for s in run.spans if s["span_kind"] == kind) for kind in ("TOOL", "EVALUATOR")]
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM),
                                         args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            for number, trace_id in enumerate(traces):  # a turn's trace, and a verdict's
                names = sorted({s["name"] for s in run.spans if s["context"]["trace_id"] == trace_id})
                page.goto(f"{run.phoenix.url}/projects/{project}/traces/{trace_id}", wait_until="networkidle")
                drawer = page.get_by_label("Detail drawer")
                for name in names:  # each span of the trace, selected in the tree: its kind heads its details
                    drawer.get_by_text(name, exact=True).first.click()
                    kind = EXPECTED_KINDS[name.split(" ")[0]].lower()
                    page.wait_for_function("([kind, name]) => document.body.innerText.includes(kind + '\\n' + name)",
                                           arg=[kind, name], timeout=10_000)
                    assert "unknown" not in drawer.inner_text().lower(), name
                page.screenshot(path=str(tmp_path / f"phoenix-trace-{number}.png"), full_page=True)
        finally:
            browser.close()
    assert all((tmp_path / f"phoenix-trace-{number}.png").stat().st_size > 10_000 for number in range(len(traces)))
