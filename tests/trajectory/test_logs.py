"""Content in log records: records join their span as events, and the GenAI readers read them."""

from __future__ import annotations

from agenteval_otel.trajectory import build_trajectories
from agenteval_otel.trajectory.logs import LogRecord, attach_logs
from agenteval_otel.trajectory.spans import SpanRecord

TRACE, ROOT, CHAT = "a" * 32, "b" * 16, "c" * 16


def _spans() -> list[SpanRecord]:
    return [
        SpanRecord(TRACE, ROOT, None, "my_agent.turn", start_ns=1, end_ns=10),
        SpanRecord(TRACE, CHAT, ROOT, "chat gpt-4o-mini", start_ns=2, end_ns=5,
                   attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"}),
    ]


def _logs() -> list[LogRecord]:
    return [
        LogRecord(TRACE, CHAT, body={"index": 0, "finish_reason": "stop", "message": {"content": "Sunny."}},
                  attributes={"event.name": "gen_ai.choice"}, time_ns=4),
        LogRecord(TRACE, CHAT, event_name="gen_ai.user.message", body={"content": "Weather in Paris?"}, time_ns=3),
        LogRecord(TRACE, "d" * 16, event_name="gen_ai.user.message", body={"content": "another span"}),
        LogRecord(None, None, event_name="app.started"),
    ]


def test_records_join_their_span_in_time_order() -> None:
    joined = {r.span_id: r for r in attach_logs(_spans(), _logs())}
    assert [e.name for e in joined[CHAT].events] == ["gen_ai.user.message", "gen_ai.choice"]
    assert joined[CHAT].events[1].attributes == {"index": 0, "finish_reason": "stop", "message": {"content": "Sunny."}}
    assert joined[ROOT].events == ()


def test_without_records_spans_pass_through_untouched() -> None:
    spans = _spans()
    assert all(a is b for a, b in zip(attach_logs(spans, []), spans, strict=True))


def test_the_genai_reader_reads_content_from_log_records() -> None:
    without = build_trajectories(_spans())[0]
    assert (without.user_input, without.final_response) == (None, None)
    trajectory = build_trajectories(attach_logs(_spans(), _logs()))[0]
    assert (trajectory.user_input, trajectory.final_response) == ("Weather in Paris?", "Sunny.")


def test_a_body_that_is_no_map_is_kept() -> None:
    event = LogRecord(TRACE, CHAT, event_name="note", body="plain text", attributes={"k": 1}).as_event()
    assert event.attributes == {"k": 1, "body": "plain text"}
