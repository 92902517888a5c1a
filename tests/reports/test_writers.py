"""Report files are written whole or not at all, and a report that could not be written fails
the command with one line naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval_otel.cli import main
from agenteval_otel.reports import ReportFile, ReportFormat
from agenteval_otel.results import EvalCaseResult, EvalReport
from tests.conftest import REPO_ROOT


def _no_space(*args: object) -> str:
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize(("kind", "halfway", "error"), [
    ("json", None, "UnicodeEncodeError: 'utf-8' codec can't encode character '\\udc80'"),  # a real one
    ("junit", "agenteval_otel.reports._junit._document_around", "OSError: [Errno 28] No space left on device"),
    ("html", "agenteval_otel.reports._html._config", "OSError: [Errno 28] No space left on device"),
], ids=["json", "junit", "html"])
def test_a_report_that_fails_halfway_leaves_the_previous_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: ReportFormat, halfway: str | None, error: str
) -> None:
    path = tmp_path / f"report.{kind}"
    path.write_text("the previous report\n", encoding="utf-8")
    cases = [EvalCaseResult(eval_id=f"case-{i}", passed=True, actual_response="Sunny.") for i in range(50)]
    cases.append(EvalCaseResult(eval_id="torn", passed=True, actual_response="half a character: \udc80"))
    if halfway is not None:  # the disk fills up once part of the report is written
        monkeypatch.setattr(halfway, _no_space)
    sink = ReportFile(path, kind)
    for case in cases:
        sink.submit(case)
    with pytest.raises((UnicodeEncodeError, OSError)):
        sink.finish(EvalReport.from_results("weather", cases))
    assert path.read_text(encoding="utf-8") == "the previous report\n"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind
    assert sink.written is None and (sink.error or "").startswith(error)


def test_a_report_file_that_cannot_be_written_fails_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "out.json"
    taken.mkdir()  # a folder stands where the report should go
    trace = REPO_ROOT / "tests" / "data" / "corpus" / "crewai_openinference" / "run1_sequential.otlp.json"
    code = main(["eval", "--traces", str(trace), "--config", str(REPO_ROOT / "examples" / "production_policies.json"),
                 "--quiet", "--run-file", str(tmp_path / "run.jsonl"), "--report", str(taken),
                 "--junit", str(tmp_path / "junit.xml")])
    err = capsys.readouterr().err
    assert code == 1  # every case passed, but a report asked for is missing
    assert f"agenteval: error: {taken}: the json report could not be written (IsADirectoryError: " in err
    assert "Traceback" not in err and (tmp_path / "junit.xml").is_file()
