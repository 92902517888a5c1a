"""``configure(instrument=[...])``: instrumentors loaded by name from the ``opentelemetry_instrumentor``
entry points of an installed distribution (a real ``.dist-info`` on ``sys.path``), never imported
by agenteval_otel itself."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel.errors import ConfigError
from agenteval_otel.tracing import configure, instrumentors

INSTRUMENTOR = '''
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

applied = []

class RecordingInstrumentor(BaseInstrumentor):
    def instrumentation_dependencies(self):
        return ()

    def _instrument(self, **options):
        applied.append(options)

    def _uninstrument(self, **options):
        applied.clear()
'''


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A distribution ``recordlib-instr`` registering ``recordlib`` and a broken ``brokenlib``."""
    (tmp_path / "recordlib_instr.py").write_text(INSTRUMENTOR)
    (tmp_path / "brokenlib_instr.py").write_text("raise ImportError('no brokenlib here')\n")
    info = tmp_path / "recordlib_instr-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: recordlib-instr\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[opentelemetry_instrumentor]\nrecordlib = recordlib_instr:RecordingInstrumentor\n"
        "brokenlib = brokenlib_instr:Broken\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    module = sys.modules.pop("recordlib_instr", None)
    if module is not None:
        module.RecordingInstrumentor().uninstrument()


def test_instrumentors_are_loaded_by_name_with_the_content_setting(installed: Path) -> None:
    handle = configure(exporter=InMemorySpanExporter(), set_global=False, capture_content=True,
                       instrument=["recordlib"])
    try:
        from recordlib_instr import applied  # type: ignore[import-not-found]

        assert applied == [{"capture_content": True}]
        assert [type(i).__name__ for i in handle.instrumentors] == ["RecordingInstrumentor"]
    finally:
        handle.shutdown(timeout=5)


def test_content_is_passed_on_only_when_given(installed: Path) -> None:
    handle = configure(exporter=InMemorySpanExporter(), set_global=False, instrument=["recordlib"])
    try:
        from recordlib_instr import applied

        assert applied == [{}]
    finally:
        handle.shutdown(timeout=5)


def test_an_unknown_name_is_a_clear_error_before_anything_is_set_up(installed: Path) -> None:
    with pytest.raises(ConfigError, match=r"no instrumentor named 'recordlb'.*installed: .*recordlib"):
        configure(exporter=InMemorySpanExporter(), set_global=False, instrument=["recordlb"])
    assert "recordlib_instr" not in sys.modules
    with pytest.raises(TypeError, match="list of instrumentor names"):
        configure(exporter=InMemorySpanExporter(), set_global=False, instrument="recordlib")


@pytest.mark.promise(8)
def test_a_missing_or_broken_package_is_one_log_line(installed: Path, monkeypatch, caplog) -> None:
    monkeypatch.setitem(instrumentors.KNOWN_INSTRUMENTORS, "absentlib", "agenteval-instrumentation-absentlib")
    with caplog.at_level(logging.WARNING, logger=instrumentors.__name__):
        handle = configure(exporter=InMemorySpanExporter(), set_global=False,
                           instrument=["absentlib", "brokenlib", "recordlib"])
    handle.shutdown(timeout=5)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert "'absentlib' is not installed (pip install agenteval-instrumentation-absentlib)" in lines[0]
    assert "'brokenlib'" in lines[1]
    assert len(handle.instrumentors) == 1
