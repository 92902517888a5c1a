"""Users' own convention readers: passed in, or installed under the ``agenteval.readers`` entry
point group (a real distribution's metadata on ``sys.path``), and explained span by span."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenteval_otel.trajectory import build_trajectories, conventions
from agenteval_otel.trajectory.conventions import READERS, SpanReading, SpanRole
from agenteval_otel.trajectory.explain import explain
from agenteval_otel.trajectory.spans import SpanRecord
from tests.conftest import REPO_ROOT

TRACE = "a" * 32


def _spans() -> list[SpanRecord]:
    return [
        SpanRecord(TRACE, "b" * 16, None, "MyAgent.run", start_ns=1, end_ns=9,
                   attributes={"acme.kind": "agent", "acme.input": "Weather?", "acme.output": "Sunny."}),
        SpanRecord(TRACE, "c" * 16, "b" * 16, "MyTool.call", start_ns=2, end_ns=3,
                   attributes={"acme.kind": "tool", "acme.tool": "get_weather", "acme.args": '{"city": "Paris"}'}),
        SpanRecord(TRACE, "d" * 16, "b" * 16, "GET /health", start_ns=4, end_ns=5, attributes={"http.method": "GET"}),
    ]


READER_SOURCE = '''
from agenteval_otel.trajectory.conventions import SpanReading, SpanRole
from agenteval_otel.trajectory.messages import decode_arguments

def read_acme(record):
    kind = record.attributes.get("acme.kind")
    if kind == "agent":
        return SpanReading(SpanRole.AGENT, record.name, "acme", input=record.attributes.get("acme.input"),
                           output=record.attributes.get("acme.output"), output_is_final=True)
    if kind == "tool":
        args, raw = decode_arguments(record.attributes.get("acme.args"))
        return SpanReading(SpanRole.TOOL, record.attributes["acme.tool"], "acme", args=args, raw_args=raw)
    return None
'''


@pytest.fixture
def installed_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A distribution ``acme-readers`` with an ``agenteval.readers`` entry point, on sys.path."""
    (tmp_path / "acme_readers.py").write_text(READER_SOURCE)
    info = tmp_path / "acme_readers-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-readers\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[agenteval.readers]\nacme = acme_readers:read_acme\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(conventions, "_default", None)
    yield
    sys.modules.pop("acme_readers", None)


def _acme_tool_calls() -> list[tuple[str, dict]]:
    trajectory = build_trajectories(_spans())[0]
    return [(c.name, c.args) for c in trajectory.tool_calls()]


def test_unknown_conventions_are_not_read_by_default() -> None:
    assert _acme_tool_calls() == []


def test_readers_passed_in() -> None:
    namespace: dict = {}
    exec(READER_SOURCE, namespace)  # noqa: S102 - the reader a user would write
    trajectory = build_trajectories(_spans(), readers=(namespace["read_acme"], *READERS))[0]
    assert [(c.name, c.args) for c in trajectory.tool_calls()] == [("get_weather", {"city": "Paris"})]
    assert (trajectory.user_input, trajectory.final_response) == ("Weather?", "Sunny.")


def test_installed_readers_are_tried_first(installed_reader: None) -> None:
    assert _acme_tool_calls() == [("get_weather", {"city": "Paris"})]


def test_a_reader_that_fails_to_load_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    info = tmp_path / "broken-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[agenteval.readers]\nbroken = no_such_module:read\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(conventions, "_default", None)
    assert conventions.default_readers() == READERS
    assert "could not be loaded" in caplog.text


def test_a_reader_that_raises_is_skipped_for_that_span() -> None:
    def broken(record: SpanRecord) -> SpanReading | None:
        raise KeyError("oops")

    trajectory = build_trajectories(_spans()[:1], readers=(broken, *READERS))[0]
    assert trajectory.steps == []


def test_explain_names_the_reader_of_every_span(installed_reader: None) -> None:
    lines = [e.line() for e in explain(_spans())]
    assert lines[0].startswith("MyAgent.run  ->  acme: agent MyAgent.run")
    assert lines[1] == '  MyTool.call  ->  acme: tool get_weather  args={"city": "Paris"}'
    assert lines[2] == "  GET /health  ->  not read (no reader recognised it)"
    assert [e.reading.role if e.reading else None for e in explain(_spans())] == [SpanRole.AGENT, SpanRole.TOOL, None]


def test_the_cli_explains_and_joins_log_files() -> None:
    corpus = REPO_ROOT / "tests" / "data" / "corpus" / "openai_v2_events"
    done = subprocess.run(
        [sys.executable, "-m", "agenteval_otel.cli", "trajectory", "--explain",
         str(corpus / "run1_sequential_two_tools.otlp.json"), "--logs", str(corpus / "run1_sequential_two_tools.logs.json")],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "weather_agent.turn  ->  not read" in done.stdout
    assert "chat gpt-4o-mini  ->  genai: model gpt-4o-mini  messages=1 in, 1 out  requested=get_weather" in done.stdout
