"""Giving each span only to the readers whose markers it carries reads every span exactly as
trying every reader on it does: checked on every span of our own runs, the recorded corpus and
the third-party runs."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from agenteval_otel.traces import read_spans
from agenteval_otel.trajectory import SpanRecord
from agenteval_otel.trajectory.conventions import READERS, Reader, SpanReading, SpanRole, read_span
from agenteval_otel.trajectory.spans import SpanEvent
from tests.shared_data import SHARED_DATA, shared_params

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted((REPO / "tests" / "data" / "corpus").glob("*/*.otlp.json"))


def every_reader_tried(readers: Iterable[Reader]) -> tuple[Reader, ...]:
    """The same readers, unknown to the dispatch: each is given every span."""
    return tuple((lambda record, reader=reader: reader(record)) for reader in readers)


def assert_read_alike(records: Iterable[SpanRecord]) -> int:
    everything = every_reader_tried(READERS)
    count = 0
    for record in records:
        assert read_span(record, READERS) == read_span(record, everything), record.name
        count += 1
    return count


def test_our_own_runs_read_alike(weather_runs: Path) -> None:
    assert sum(assert_read_alike(read_spans(path)) for path in sorted(weather_runs.glob("*.otlp.json"))) >= 40


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_corpus_run_reads_alike(path: Path) -> None:
    assert assert_read_alike(read_spans(path)) > 0


@pytest.mark.parametrize(
    "path",
    shared_params(pytest.param(p, id=f"{p.parent.name}/{p.name}")
                  for p in sorted((SHARED_DATA / "traces").rglob("*.otlp.json"))),
)
def test_every_third_party_run_reads_alike(path: Path) -> None:
    assert assert_read_alike(read_spans(path)) > 0


def test_a_span_of_ours_with_span_events_is_also_given_to_the_other_readers() -> None:
    record = SpanRecord(
        "a" * 32, "b" * 16, None, "chat",
        attributes={"agenteval.step.type": "message", "agenteval.message.role": "assistant",
                    "gen_ai.operation.name": "chat"},
        events=(),
    )
    with_events = SpanRecord(
        record.trace_id, record.span_id, None, "chat", attributes=record.attributes,
        events=(SpanEvent("gen_ai.user.message", 1, {"content": "Weather in Paris?"}),),
    )
    reading = read_span(with_events)
    assert isinstance(reading, SpanReading) and reading.role is SpanRole.MODEL
    assert [m.text for m in reading.input_messages] == ["Weather in Paris?"]
    assert read_span(record).input_messages == ()  # type: ignore[union-attr]


def test_a_reader_of_your_own_is_given_every_span() -> None:
    seen: list[str] = []

    def mine(record: SpanRecord) -> SpanReading | None:
        seen.append(record.name)
        return None

    read_span(SpanRecord("a" * 32, "b" * 16, None, "anything", attributes={"agenteval.step.type": "tool"}),
              (mine, *READERS))
    assert seen == ["anything"]
