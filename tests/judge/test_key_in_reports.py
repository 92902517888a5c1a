"""A judge API key echoed in part by the endpoint reaches no file we write: the JSON report,
JUnit, HTML, the run file, nor the verdicts exported into the traces (spans and log records)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval_otel.cli import main
from agenteval_otel.tracing import logs_file_for
from tests.conftest import REPO_ROOT
from tests.judge.judge_server import Reply, serve

KEY = "jk-Q7vN2mK9pL4wR8tY3zB6cD1fG5h"  # 30 characters
ECHOED = KEY[5:25]  # the 20 an endpoint quotes back
TRACE = REPO_ROOT / "tests" / "data" / "corpus" / "crewai_openinference" / "run1_sequential.otlp.json"


@pytest.mark.promise(19)
def test_a_key_echoed_in_part_by_the_judge_reaches_no_report_run_file_or_exported_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(KEY) == 30 and len(ECHOED) == 20
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"safety": {}}}))
    written = {"report": tmp_path / "out.json", "junit": tmp_path / "junit.xml", "html": tmp_path / "report.html",
               "run-file": tmp_path / "run.jsonl", "export-results": tmp_path / "verdicts.jsonl"}
    refusal = Reply(status=401, body={"error": {"message": f"Incorrect API key provided: {ECHOED}**********",
                                                "type": "invalid_request_error", "code": "invalid_api_key"}})
    with serve(lambda request: refusal) as server:
        monkeypatch.setenv("AGENTEVAL_JUDGE_BASE_URL", server.url)
        monkeypatch.setenv("AGENTEVAL_JUDGE_API_KEY", KEY)
        code = main(["eval", "--traces", str(TRACE), "--config", str(config),
                     *(argument for flag, path in written.items() for argument in (f"--{flag}", str(path)))])
    out, err = capsys.readouterr()
    assert code == 1 and server.count == 1
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    (result,) = json.loads(written["report"].read_text(encoding="utf-8"))["results"]
    (safety,) = result["criterion_results"]
    assert "answered HTTP 401: " in safety["error"] and "Incorrect API key provided: ***" in safety["error"]
    texts = {name: path.read_text(encoding="utf-8") for name, path in written.items()}
    texts["export-results logs"] = logs_file_for(written["export-results"]).read_text(encoding="utf-8")
    texts["console"] = out + err
    assert "HTTP 401" in texts["export-results logs"] and "HTTP 401" in texts["junit"]  # the error is there...
    for name, text in texts.items():  # ...the key, or any 8 characters of it in a row, is not
        pieces = [KEY[start:start + 8] for start in range(len(KEY) - 7)]
        assert not [piece for piece in pieces if piece in text], f"{name} holds part of the key"
