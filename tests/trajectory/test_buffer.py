"""``TraceBuffer``: grouping spans into traces, linger, time-to-live, bounds and flush."""

from __future__ import annotations

import pytest

from agenteval_otel.trajectory import BufferedTrace, TraceBuffer


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _out(traces: list[BufferedTrace[str]]) -> list[tuple[object, list[str], str, bool]]:
    return [(t.trace_id, t.items, t.reason, t.complete) for t in traces]


def test_linger_zero_hands_a_trace_out_when_its_root_arrives() -> None:
    buffer: TraceBuffer[str] = TraceBuffer()
    assert buffer.add("a", "child", is_root=False) == []
    assert _out(buffer.add("a", "root", is_root=True)) == [("a", ["child", "root"], "complete", True)]
    assert buffer.open_traces == 0


def test_a_rooted_trace_waits_for_linger_spans_of_other_traces() -> None:
    buffer: TraceBuffer[str] = TraceBuffer(linger=2)
    assert buffer.add("a", "root", is_root=True) == []
    assert buffer.add("b", "b1", is_root=False) == []
    assert buffer.add("a", "straggler", is_root=False) == []  # its own span: the count restarts
    assert buffer.add("b", "b2", is_root=False) == []
    assert _out(buffer.add("c", "c1", is_root=False)) == [("a", ["root", "straggler"], "complete", True)]
    assert buffer.open_traces == 2


def test_a_trace_without_its_root_is_never_complete_however_quiet() -> None:
    buffer: TraceBuffer[str] = TraceBuffer(linger=1)
    buffer.add("a", "child", is_root=False)
    for index in range(10):
        assert buffer.add(index, f"other{index}", is_root=False) == []
    assert buffer.open_traces == 11


def test_the_time_to_live_counts_from_the_first_span_on_the_injected_clock() -> None:
    clock = Clock()
    buffer: TraceBuffer[str] = TraceBuffer(ttl_s=60, clock=clock)
    buffer.add("a", "a1", is_root=False)
    clock.now += 30
    buffer.add("b", "b1", is_root=False)
    clock.now += 29.5
    assert buffer.add("a", "a2", is_root=False) == []  # still young, though never quiet
    clock.now += 0.5
    assert _out(buffer.add("c", "c1", is_root=False)) == [("a", ["a1", "a2"], "expired", False)]
    clock.now += 30
    assert _out(buffer.expire()) == [("b", ["b1"], "expired", False)]  # without a new span
    assert buffer.open_traces == 1


def test_a_span_taken_in_late_counts_from_the_time_it_arrived() -> None:
    clock = Clock()
    buffer: TraceBuffer[str] = TraceBuffer(ttl_s=60, clock=clock)
    arrived = clock.now
    clock.now += 61  # the caller takes the span in a minute after it arrived
    assert buffer.add("a", "a1", is_root=False, now=arrived) == []
    assert _out(buffer.add("b", "b1", is_root=False)) == [("a", ["a1"], "expired", False)]


def test_an_expired_trace_is_not_complete_even_with_its_root() -> None:
    clock = Clock()
    buffer: TraceBuffer[str] = TraceBuffer(linger=5, ttl_s=1, clock=clock)
    buffer.add("a", "root", is_root=True)
    clock.now += 1
    [trace] = buffer.expire()
    assert trace.has_root and trace.reason == "expired" and not trace.complete


def test_without_a_time_to_live_nothing_expires() -> None:
    clock = Clock()
    buffer: TraceBuffer[str] = TraceBuffer(clock=clock)
    buffer.add("a", "a1", is_root=False)
    clock.now += 1e9
    assert buffer.add("b", "b1", is_root=False) == [] and buffer.expire() == []


def test_too_many_open_traces_hand_out_the_longest_quiet_rootless_one_first() -> None:
    buffer: TraceBuffer[str] = TraceBuffer(linger=100, max_open_traces=3)
    buffer.add("rooted", "root", is_root=True)  # the quietest, but it has its root
    buffer.add("a", "a1", is_root=False)
    buffer.add("b", "b1", is_root=False)
    buffer.add("a", "a2", is_root=False)  # a is now busier than b
    assert _out(buffer.add("c", "c1", is_root=False)) == [("b", ["b1"], "evicted", False)]
    assert _out(buffer.add("d", "d1", is_root=False)) == [("a", ["a1", "a2"], "evicted", False)]
    assert _out(buffer.add("e", "e1", is_root=False)) == [("c", ["c1"], "evicted", False)]
    assert buffer.open_traces == 3


def test_rooted_traces_are_evicted_when_no_rootless_one_is_left() -> None:
    buffer: TraceBuffer[str] = TraceBuffer(linger=100, max_open_traces=2)
    buffer.add("a", "a", is_root=True)
    buffer.add("b", "b", is_root=True)
    [trace] = buffer.add("c", "c", is_root=True)
    assert (trace.trace_id, trace.reason, trace.has_root, trace.complete) == ("a", "evicted", True, False)


@pytest.mark.promise(6)
def test_spans_beyond_the_bound_of_a_trace_are_dropped_and_counted() -> None:
    buffer: TraceBuffer[str] = TraceBuffer(max_spans_per_trace=2)
    for index in range(4):
        buffer.add("a", f"a{index}", is_root=False)
    buffer.add("b", "b0", is_root=False)
    assert buffer.dropped_spans == 2
    assert _out(buffer.add("a", "root", is_root=True)) == [("a", ["a0", "a1"], "complete", True)]
    assert buffer.dropped_spans == 3


def test_a_span_after_its_trace_was_handed_out_opens_a_new_entry() -> None:
    clock = Clock()
    buffer: TraceBuffer[str] = TraceBuffer(ttl_s=10, clock=clock)
    assert _out(buffer.add("a", "root", is_root=True)) == [("a", ["root"], "complete", True)]
    assert buffer.add("a", "late", is_root=False) == []
    assert buffer.open_traces == 1
    clock.now += 10
    assert _out(buffer.expire()) == [("a", ["late"], "expired", False)]


def test_flush_hands_out_everything_rooted_first_and_says_which_is_complete() -> None:
    buffer: TraceBuffer[str] = TraceBuffer(linger=100)
    buffer.add("a", "a1", is_root=False)
    buffer.add("b", "root", is_root=True)
    buffer.add("b", "b1", is_root=False)
    assert _out(buffer.flush()) == [("b", ["root", "b1"], "flushed", True), ("a", ["a1"], "flushed", False)]
    assert buffer.open_traces == 0 and buffer.flush() == []


def test_a_root_arriving_late_moves_the_trace_among_the_rooted() -> None:
    buffer: TraceBuffer[str] = TraceBuffer(linger=1, max_open_traces=2)
    buffer.add("a", "a1", is_root=False)
    buffer.add("b", "b1", is_root=False)
    assert buffer.add("a", "root", is_root=True) == []
    assert _out(buffer.add("b", "b2", is_root=False)) == [("a", ["a1", "root"], "complete", True)]


@pytest.mark.parametrize(
    "bad", [{"linger": -1}, {"max_open_traces": 0}, {"max_spans_per_trace": 0}, {"ttl_s": 0}]
)
def test_bad_arguments_fail_at_construction(bad: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        TraceBuffer(**bad)  # type: ignore[arg-type]
