"""``TrajectoryProcessor`` inside a real OpenTelemetry SDK pipeline."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from agenteval_otel.trajectory import Trajectory, TrajectoryProcessor


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def provider() -> Iterator[TracerProvider]:
    provider = TracerProvider()
    yield provider
    provider.shutdown()


def _agent_run(tracer: trace.Tracer, city: str = "Paris") -> None:
    with tracer.start_as_current_span(
        "invoke_agent weather",
        attributes={
            "agenteval.step.type": "agent",
            "gen_ai.agent.name": "weather",
            "agenteval.agent.input": f"Weather in {city}?",
        },
    ) as agent:
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={
                "agenteval.step.type": "tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": f'{{"city": "{city}"}}',
                "gen_ai.tool.call.result": '{"temp_c": 18}',
            },
        ):
            pass
        agent.set_attribute("agenteval.agent.output", f"18 C in {city}.")


def test_a_trajectory_is_handed_over_when_the_root_ends(provider: TracerProvider) -> None:
    received: list[Trajectory] = []
    processor = TrajectoryProcessor(received.append)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    _agent_run(tracer, "Paris")
    _agent_run(tracer, "Oslo")
    assert processor.force_flush(5000)
    assert [t.final_response for t in received] == ["18 C in Paris.", "18 C in Oslo."]
    assert [(c.name, c.args) for c in received[0].tool_calls()] == [("get_weather", {"city": "Paris"})]
    assert processor.delivered == 2


@pytest.mark.parametrize(("skip_empty", "delivered"), [(True, 0), (False, 1)])
def test_an_empty_trajectory_is_handed_over_only_when_asked(
    provider: TracerProvider, skip_empty: bool, delivered: int
) -> None:
    received: list[Trajectory] = []
    processor = TrajectoryProcessor(received.append, group="trace", skip_empty=skip_empty)
    provider.add_span_processor(processor)
    with provider.get_tracer("test").start_as_current_span(
        "invoke_agent quiet", attributes={"agenteval.step.type": "agent", "gen_ai.agent.name": "quiet"}
    ):
        pass  # recorded with content capture off: no input, no output, no steps
    assert processor.force_flush(5000)
    assert len(received) == processor.delivered == delivered
    assert all(trajectory.is_empty for trajectory in received)


def test_concurrent_runs_never_mix(provider: TracerProvider) -> None:
    received: list[Trajectory] = []
    lock = threading.Lock()

    def keep(trajectory: Trajectory) -> None:
        with lock:
            received.append(trajectory)

    processor = TrajectoryProcessor(keep)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    cities = [f"city{i}" for i in range(40)]
    threads = [threading.Thread(target=_agent_run, args=(tracer, city)) for city in cities]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert processor.force_flush(5000)
    assert sorted(t.tool_calls()[0].args["city"] for t in received) == sorted(cities)
    assert all(t.user_input == f"Weather in {t.tool_calls()[0].args['city']}?" for t in received)


def test_a_remote_parent_makes_a_local_root(provider: TracerProvider) -> None:
    received: list[Trajectory] = []
    processor = TrajectoryProcessor(received.append)
    provider.add_span_processor(processor)
    remote = SpanContext(trace_id=0xABC, span_id=0xDEF, is_remote=True, trace_flags=TraceFlags(1))
    with trace.use_span(NonRecordingSpan(remote)):
        _agent_run(provider.get_tracer("test"))
    assert processor.force_flush(5000)
    assert received and received[0].trace_ids == [format(0xABC, "032x")]


@pytest.mark.promise(4)
def test_a_raising_callback_is_logged_and_the_others_still_run(provider: TracerProvider, caplog) -> None:
    received: list[Trajectory] = []

    def broken(trajectory: Trajectory) -> None:
        raise RuntimeError("callback bug")

    processor = TrajectoryProcessor(broken, received.append)
    provider.add_span_processor(processor)
    with caplog.at_level(logging.ERROR, logger="agenteval_otel.trajectory.processor"):
        _agent_run(provider.get_tracer("test"))  # must not raise
        assert processor.force_flush(5000)
    assert len(received) == 1 and processor.callback_errors == 1
    assert "callback bug" in caplog.text


@pytest.mark.promise(4)
def test_on_end_never_raises_even_on_a_broken_span(caplog) -> None:
    processor = TrajectoryProcessor()
    with caplog.at_level(logging.WARNING):
        processor.on_end(object())  # type: ignore[arg-type]
        processor.on_start(object())  # type: ignore[arg-type]
    assert "on_end failed" in caplog.text
    processor.shutdown()


def test_evaluation_spans_are_ignored(provider: TracerProvider) -> None:
    received: list[Trajectory] = []
    processor = TrajectoryProcessor(received.append)
    provider.add_span_processor(processor)
    with provider.get_tracer("test").start_as_current_span(
        "evaluate", attributes={"agenteval.evaluation": True}
    ):
        pass
    assert processor.force_flush(5000)
    assert received == [] and processor.delivered == 0


@pytest.mark.promise(6)
def test_open_traces_are_bounded_and_drops_are_counted_and_logged_once(
    provider: TracerProvider, caplog
) -> None:
    processor = TrajectoryProcessor(max_open_traces=2)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    roots = [tracer.start_span(f"root{i}") for i in range(5)]
    with caplog.at_level(logging.WARNING, logger="agenteval_otel.trajectory.processor"):
        for root in roots:
            with tracer.start_as_current_span("child", context=trace.set_span_in_context(root)):
                pass
    assert processor.dropped_spans == 3
    assert caplog.text.count("open traces") == 1
    for root in roots:
        root.end()


def test_when_too_many_traces_are_open_the_longest_quiet_is_dropped(provider: TracerProvider) -> None:
    received: list[Trajectory] = []
    processor = TrajectoryProcessor(received.append, max_open_traces=1)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    agent, tool = {"gen_ai.operation.name": "invoke_agent"}, {"gen_ai.operation.name": "execute_tool"}
    stale = tracer.start_span("invoke_agent stale", attributes=agent)
    with tracer.start_as_current_span("execute_tool old", context=trace.set_span_in_context(stale)):
        pass
    with tracer.start_as_current_span("invoke_agent fresh", attributes=agent):
        with tracer.start_as_current_span("execute_tool new", attributes=tool):
            pass
    assert processor.force_flush(5000)
    assert processor.dropped_traces == 1 and processor.dropped_spans == 1
    assert [[c.name for c in t.tool_calls()] for t in received] == [["new"]]
    stale.end()


@pytest.mark.promise(6)
def test_spans_per_trace_are_bounded(provider: TracerProvider) -> None:
    received: list[Trajectory] = []
    processor = TrajectoryProcessor(received.append, max_spans_per_trace=3)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("invoke_agent a", attributes={"gen_ai.operation.name": "invoke_agent"}):
        for index in range(5):
            with tracer.start_as_current_span(
                f"execute_tool t{index}", attributes={"gen_ai.operation.name": "execute_tool"}
            ):
                pass
    assert processor.force_flush(5000)
    assert processor.dropped_spans == 3
    assert [c.name for c in received[0].tool_calls()] == ["t0", "t1", "t2"]


def test_traces_whose_root_never_ends_expire(provider: TracerProvider) -> None:
    clock = Clock()
    processor = TrajectoryProcessor(trace_ttl_s=60, clock=clock)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    root = tracer.start_span("never ends")
    with tracer.start_as_current_span("child", context=trace.set_span_in_context(root)):
        pass
    clock.now += 61
    with tracer.start_as_current_span("another trace"):
        pass
    assert processor.dropped_traces == 1 and processor.dropped_spans == 1


@pytest.mark.promise(6)
def test_a_full_queue_drops_whole_traces(provider: TracerProvider) -> None:
    release = threading.Event()
    processor = TrajectoryProcessor(lambda t: release.wait(5), max_queued_traces=1)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    try:
        for _ in range(4):
            _agent_run(tracer)
            time.sleep(0.05)
        assert processor.dropped_traces >= 1
    finally:
        release.set()
    assert processor.force_flush(5000)


@pytest.mark.promise(7)
def test_force_flush_honours_its_timeout(provider: TracerProvider) -> None:
    release = threading.Event()
    processor = TrajectoryProcessor(lambda t: release.wait(10))
    provider.add_span_processor(processor)
    _agent_run(provider.get_tracer("test"))
    started = time.monotonic()
    assert processor.force_flush(200) is False
    assert time.monotonic() - started < 1.0
    release.set()
    assert processor.force_flush(5000) is True


@pytest.mark.promise(7)
def test_shutdown_has_one_deadline_is_idempotent_and_drops_later_spans(provider: TracerProvider) -> None:
    release = threading.Event()
    processor = TrajectoryProcessor(lambda t: release.wait(10))
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    _agent_run(tracer)
    _agent_run(tracer)
    started = time.monotonic()
    processor.shutdown(timeout_millis=300)
    assert time.monotonic() - started < 1.5
    processor.shutdown(timeout_millis=300)
    with tracer.start_as_current_span("after shutdown"):
        pass
    assert processor.dropped_spans >= 1
    release.set()


@pytest.mark.parametrize("bad", [{"group": "span"}, {"max_open_traces": 0}, {"trace_ttl_s": 0}])
def test_bad_arguments_fail_at_construction(bad) -> None:
    with pytest.raises(ValueError):
        TrajectoryProcessor(**bad)


def test_a_timeout_of_none_means_the_default_deadline(provider: TracerProvider) -> None:
    delivered: list[Trajectory] = []
    processor = TrajectoryProcessor(delivered.append)
    provider.add_span_processor(processor)
    _agent_run(provider.get_tracer("test"))
    assert processor.force_flush(None) is True
    assert processor.force_flush(timeout_millis=None) is True
    processor.shutdown(timeout_millis=None)
    assert len(delivered) == 1


class WatchedSpan(ReadableSpan):
    """A finished span that records which threads read it, and can hold the reader up."""

    def __init__(self, name: str, trace_id: int, span_id: int, hold: threading.Event | None = None) -> None:
        context = SpanContext(trace_id=trace_id, span_id=span_id, is_remote=False, trace_flags=TraceFlags(1))
        super().__init__(name=name, context=context, attributes={"gen_ai.operation.name": "invoke_agent"})
        self.readers: set[str] = set()
        self._hold = hold

    @property
    def attributes(self):  # type: ignore[override]
        self.readers.add(threading.current_thread().name)
        if self._hold is not None:
            self._hold.wait(5)
        return super().attributes

    @property
    def parent(self):  # type: ignore[override]
        self.readers.add(threading.current_thread().name)
        return super().parent

    def get_span_context(self):  # type: ignore[override]
        self.readers.add(threading.current_thread().name)
        return super().get_span_context()


def test_on_end_reads_nothing_of_the_span_on_the_app_thread() -> None:
    received: list[Trajectory] = []
    processor = TrajectoryProcessor(received.append, skip_empty=False)
    spans = [WatchedSpan(f"invoke_agent a{index}", trace_id=index + 1, span_id=index + 1) for index in range(20)]
    for span in spans:
        processor.on_end(span)
    app = threading.current_thread().name
    assert not any(app in span.readers for span in spans)
    assert processor.force_flush(5000)
    assert len(received) == 20  # every span was read, as a root of its own trace
    processor.shutdown()


@pytest.mark.promise(6)
def test_spans_waiting_to_be_buffered_are_bounded_and_drops_are_counted_and_logged_once(caplog) -> None:
    hold = threading.Event()
    processor = TrajectoryProcessor(max_pending_spans=5, skip_empty=False)
    try:
        processor.on_end(WatchedSpan("invoke_agent held", trace_id=1, span_id=1, hold=hold))
        deadline = time.monotonic() + 2
        while processor._intake and time.monotonic() < deadline:  # the intake thread took it and is held
            time.sleep(0.01)
        with caplog.at_level(logging.WARNING, logger="agenteval_otel.trajectory.processor"):
            for index in range(8):  # never blocks, though the intake thread is held up
                processor.on_end(WatchedSpan(f"invoke_agent b{index}", trace_id=index + 2, span_id=index + 2))
            hold.set()
            assert processor.dropped_spans == 3
        assert caplog.text.count("wait to be buffered") == 1
    finally:
        hold.set()
        processor.shutdown()


def test_fed_records_are_assembled_whatever_their_order_within_a_batch(provider: TracerProvider) -> None:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agenteval_otel.trajectory import SpanRecord

    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _agent_run(provider.get_tracer("test"), "Lima")
    records = [SpanRecord.from_readable_span(span) for span in exporter.get_finished_spans()]
    received: list[Trajectory] = []
    processor = TrajectoryProcessor(received.append)
    try:
        assert processor.feed(reversed(records))  # the root first, as some receivers' batches have it
        assert processor.force_flush(5000)
        assert [t.final_response for t in received] == ["18 C in Lima."]
        assert processor.dropped_traces == 0
    finally:
        processor.shutdown(1000)
    assert processor.feed(records) is False  # after shutdown: refused and counted
    assert processor.dropped_spans == len(records)
