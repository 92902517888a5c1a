"""The local viewer (``agenteval view``) over a real history written by two real runs of the
quickstart (the second with an agent that forgets the Fahrenheit conversion): its pages in
headless Chromium against the real server on 127.0.0.1, hostile text kept as text, the server
bound to loopback only, and a missing or damaged history said in one line, never a traceback."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

from agenteval_otel.cli import main
from agenteval_otel.errors import ConfigError
from agenteval_otel.reports import Viewer, viewer_server
from agenteval_otel.results import CriterionResult, EvalCaseResult, EvalReport, HistoryStore
from tests.browser import chromium
from tests.conftest import REPO_ROOT
from tests.reports.conftest import IMG, SCRIPT

EXAMPLES = REPO_ROOT / "examples"
JAEGER = "http://localhost:16686/trace/{trace_id}?uiFind={span_id}"
SHOTS_ENV = "AGENTEVAL_VIEWER_SHOTS"
"""A folder to keep the screenshots in (default: the test's temporary folder)."""


@dataclass
class Runs:
    folder: Path
    store: HistoryStore


def _agenteval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    env.pop("AGENTEVAL_HISTORY_KEEP", None)
    return subprocess.run([sys.executable, "-m", "agenteval_otel.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Two quickstart runs recorded in ``history.db``, with their JSON reports in ``reports/``;
    the second against the first (``--baseline last``), with its HTML report."""
    folder = tmp_path_factory.mktemp("viewer")
    forgetful = (EXAMPLES / "weather_agent.py").read_text(encoding="utf-8").replace(
        "    if city and fahrenheit:", '    if city and fahrenheit and city == "Atlantis":')
    (folder / "forgetful_agent.py").write_text(forgetful, encoding="utf-8")
    common = ("run", str(EXAMPLES / "weather_agent.evalset.json"), "--config", str(EXAMPLES / "weather_agent.config.json"),
              "--history", "history.db", "--quiet")
    first = _agenteval(*common, "--agent", f"{EXAMPLES / 'weather_agent.py'}:weather_agent",
                       "--report", "reports/first.json", cwd=folder)
    assert first.returncode == 0, first.stderr
    second = _agenteval(*common, "--agent", "forgetful_agent.py:weather_agent", "--report", "reports/second.json",
                        "--baseline", "last", "--html", "second.html", cwd=folder)
    assert second.returncode == 1, second.stderr
    return Runs(folder, HistoryStore(folder / "history.db"))


@pytest.fixture
def served(runs: Runs) -> Iterator[str]:
    """The viewer of ``runs`` served on a free port of 127.0.0.1; its address."""
    server = viewer_server(Viewer(runs.store, [runs.folder / "reports"], trace_url=JAEGER))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_the_viewer_shows_runs_a_run_and_a_comparison_in_chromium(runs: Runs, served: str, tmp_path: Path) -> None:
    shots = Path(os.environ.get(SHOTS_ENV) or tmp_path)
    newest, oldest = runs.store.runs()
    failure = runs.store.failures(newest.id)[0]
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        errors: list[str] = []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        answer = page.goto(served + "/")
        assert answer is not None and answer.status == 200
        assert "default-src 'none'" in answer.headers["content-security-policy"]
        charts = page.locator("svg.plot.lines")
        assert charts.count() >= 3  # pass rate, mean score, agent time
        assert [charts.nth(i).locator("title").first.text_content() for i in range(2)] == ["Pass rate", "Mean score"]
        for i in range(charts.count()):
            box = charts.nth(i).bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 150
        assert page.locator("svg.plot.lines .plot-point").count() >= 16
        page.screenshot(path=str(shots / "viewer-runs.png"), full_page=True)

        page.get_by_role("link", name=newest.id).click()
        page.wait_for_url(f"**/run/{newest.id}")
        assert page.locator("svg.plot.histogram").count() == 3
        histogram_titles = page.locator("svg.plot.histogram > title").all_text_contents()
        assert histogram_titles == ["trajectory_match", "response_match", "node_order"]
        rows = page.locator("table.failures tbody tr")
        assert rows.count() == len(runs.store.failures(newest.id)) == 4
        link = rows.first.locator("a.trace-link")
        assert link.get_attribute("href") == f"http://localhost:16686/trace/{failure.trace_id}?uiFind={failure.span_id}"
        assert rows.first.locator("td.reason").text_content() == failure.reason
        # the failed cases with their evidence, as the HTML report renders them
        cases = page.locator("#evidence-title ~ details.case")
        assert cases.count() == 2
        assert cases.first.locator(".diff-missing").first.is_visible()
        assert "celsius_to_fahrenheit" in (cases.first.locator(".diff-missing").first.text_content() or "")
        rows.first.locator("th a").click()
        assert page.url.endswith("#case-2")
        page.screenshot(path=str(shots / "viewer-run.png"), full_page=True)

        page.goto(served + "/")
        assert page.locator(f'input[name="a"][value="{oldest.id}"]').is_checked()
        page.get_by_role("button", name="Compare B against A").click()
        page.wait_for_url("**/compare?*")
        forest = page.locator("svg.plot.forest")
        assert forest.count() == 1 and forest.locator(".plot-point").count() == 3
        assert forest.locator(".plot-ci").count() == 3
        deltas = page.locator("table.deltas tbody tr th").all_text_contents()
        assert deltas == ["trajectory_match", "response_match", "node_order"]
        assert "-0.250" in (page.locator("table.deltas tbody tr").first.text_content() or "")
        changed = page.locator("ul.changes code").all_text_contents()
        assert changed == ["tokyo_fahrenheit", "london_follow_up"]
        page.screenshot(path=str(shots / "viewer-compare.png"), full_page=True)
        assert errors == []


def test_the_html_report_shows_the_forest_plot_of_its_baseline(runs: Runs) -> None:
    page = (runs.folder / "second.html").read_text(encoding="utf-8")
    section = page[page.index('id="baseline-title"'):page.index('id="chart-title"')]
    assert section.count('class="plot forest"') == 1
    assert section.count('class="plot-point"') == section.count('class="plot-ci"') == 3
    assert "trajectory_match: -0.250 [-0.500, +0.000]" in section
    assert "tokyo_fahrenheit (passed → failed)" in section


@pytest.mark.promise(16)
def test_hostile_text_in_the_history_and_reports_stays_text(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.db")
    for run_id, score in (("before", 1.0), (f"after{SCRIPT}", 0.2)):
        case = EvalCaseResult(eval_id=f"case{IMG}", passed=score == 1.0, trace_id=f'"><b>{SCRIPT}', span_id="s&1",
                              criterion_results=[CriterionResult(criterion=f"m{SCRIPT}", score=score, threshold=0.5,
                                                                 passed=score == 1.0, reason=f"low {IMG}")])
        report = EvalReport.from_results(f"set{SCRIPT}", [case])
        report.save(tmp_path / f"{score}.json")
        store.record(report, command="run", run_id=run_id)
    viewer = Viewer(store, [tmp_path], trace_url=JAEGER)
    pages = [viewer.render(path) for path in (
        "/", f"/?source={quote(f'set{SCRIPT}')}", f"/run/{quote(f'after{SCRIPT}')}",
        f"/compare?a=before&b={quote(f'after{SCRIPT}')}", f"/run/{quote(SCRIPT)}")]
    assert [int(status) for status, _ in pages] == [200, 200, 200, 200, 404]
    for _, page in pages:
        assert SCRIPT not in page and IMG not in page and "<b>" not in page
    run_page = pages[2][1]
    assert "low &lt;img src=&quot;x&quot; onerror=&quot;window.__pwned = 2&quot;&gt;" in run_page
    assert 'href="http://localhost:16686/trace/%22%3E%3Cb%3E%3Cscript%3E' in run_page
    assert "uiFind=s%261" in run_page
    assert 'details class="case status-failed" id="case-1"' in run_page  # its report was found
    with pytest.raises(ConfigError, match="--trace-url .javascript:"):
        Viewer(store, trace_url="javascript:alert('{trace_id}')")


@pytest.mark.promise(25)
def test_the_server_listens_on_loopback_only_and_answers_loopback_names_only(runs: Runs) -> None:
    viewer = Viewer(runs.store)
    for host in ("0.0.0.0", "::", "192.168.1.10", "localhost"):
        with pytest.raises(ConfigError, match="listens on 127.0.0.1 only"):
            viewer_server(viewer, host=host)
    server = viewer_server(viewer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert server.server_address[0] == "127.0.0.1"
        statuses = []
        for host in (None, "attacker.example"):
            connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
            connection.request("GET", "/", headers={"Host": host} if host else {})
            statuses.append(connection.getresponse().status)
            connection.close()
        assert statuses == [200, 403]  # a page reaching the viewer through a rebound name is refused
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.mark.promise(13)
def test_a_missing_or_damaged_history_is_one_line_and_exit_2(runs: Runs, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"this is no SQLite file" * 100)
    history = str(runs.folder / "history.db")
    for args, said in ((["--history", str(tmp_path / "missing.db")], "missing.db: no run history there"),
                       (["--history", str(damaged)], "damaged.db: not a run history, or damaged"),
                       (["--history", history, "--reports", str(tmp_path / "nope")], "--reports"),
                       (["--history", history, "--trace-url", "localhost:16686/{trace_id}"], "--trace-url")):
        assert main(["view", *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("agenteval: error: ") and said in err and err.count("\n") == 1, err
    # damaged while it is served: the page says so, the server goes on
    copy = tmp_path / "copy.db"
    copy.write_bytes((runs.folder / "history.db").read_bytes())
    viewer = Viewer(HistoryStore(copy))
    assert int(viewer.render("/")[0]) == 200
    copy.write_bytes(b"garbage" * 1000)
    status, page = viewer.render("/")
    assert int(status) == 500 and "not a run history, or damaged" in page and "Traceback" not in page


def test_agenteval_view_prints_its_address_serves_and_stops_on_ctrl_c(runs: Runs) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "agenteval_otel.cli", "view", "--history", "history.db",
                                "--reports", "reports"], cwd=runs.folder, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("agenteval view: history.db at http://127.0.0.1:"), line
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request("GET", "/")
        assert connection.getresponse().status == 200
        connection.close()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0 and err.strip() == "agenteval view: stopped", err
