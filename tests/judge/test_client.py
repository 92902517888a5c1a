"""The judge client against a real HTTP server on 127.0.0.1, through the real ``openai`` client."""

from __future__ import annotations

import asyncio
import gzip
import json
import pickle
import sys
import time
import traceback
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

from agenteval_otel import semconv as attr
from agenteval_otel.errors import (
    ConfigError,
    JudgeNotConfiguredError,
    JudgeOutputError,
    JudgeTimeoutError,
    JudgeUnavailableError,
)
from agenteval_otel.judge import JudgeClient, JudgeSettings, JudgeUsage
from agenteval_otel.tracing import ContentPolicy
from tests.judge.judge_server import Reply, Request, serve, verdict


class Verdict(BaseModel):
    score: float
    reason: str = ""


MESSAGES = [{"role": "system", "content": "Judge."}, {"role": "user", "content": "Is it sunny?"}]


def _client(url: str, tmp_path: Path | None = None, **options: Any) -> JudgeClient:
    settings = dict(base_url=url, model="judge-model", timeout_s=1.0, backoff_s=0.01, max_backoff_s=0.05,
                    cache_dir=str(tmp_path / "cache") if tmp_path is not None else None)
    settings.update(options)
    return JudgeClient(JudgeSettings(**settings))  # type: ignore[arg-type]


def test_a_good_answer_is_read_in_its_shape_with_temperature_0_a_seed_and_a_json_schema() -> None:
    with serve(lambda r: verdict(0.9, "same meaning")) as server:
        usage = JudgeUsage()
        answer = _client(server.url).recording(usage).judge(MESSAGES, Verdict)
    assert answer == Verdict(score=0.9, reason="same meaning")
    body = server.requests[0].body
    assert (body["model"], body["temperature"], body["seed"]) == ("judge-model", 0, 0)
    assert body["response_format"]["type"] == "json_schema"
    assert "matching this JSON schema" in body["messages"][0]["content"]
    assert (usage.calls, usage.input_tokens, usage.output_tokens, usage.cache_hits) == (1, 120, 15, 0)


async def test_async_samples_get_a_seed_each() -> None:
    with serve(lambda r: verdict(0.5 + r.body["seed"] / 10)) as server:
        answers = await _client(server.url).asample(MESSAGES, Verdict, n=3)
    assert sorted(a.score for a in answers) == [0.5, 0.6, 0.7]
    assert sorted(r.body["seed"] for r in server.requests) == [0, 1, 2]


@pytest.mark.promise(15)
def test_429_then_200_waits_the_retry_after_and_succeeds() -> None:
    def script(request: Request) -> Reply:
        return Reply(status=429, headers={"Retry-After": "0.3"}) if request.number == 1 else verdict(1.0)

    with serve(script) as server:
        usage = JudgeUsage()
        started = time.monotonic()
        answer = _client(server.url, timeout_s=2.0).recording(usage).judge(MESSAGES, Verdict)
        waited = time.monotonic() - started
    assert answer.score == 1.0 and server.count == 2 and usage.retries == 1
    assert waited >= 0.3  # the server's Retry-After, not the 0.01 s backoff


@pytest.mark.promise(15)
def test_500s_are_retried_with_backoff_then_reported() -> None:
    with serve(lambda r: Reply(status=500)) as server:
        with pytest.raises(JudgeUnavailableError, match=r"did not run: .* answered HTTP 500 after 3 attempts"):
            _client(server.url, max_retries=2).judge(MESSAGES, Verdict)
    assert server.count == 3


@pytest.mark.promise(15)
@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_http_errors_are_not_retried(status: int) -> None:
    with serve(lambda r: Reply(status=status)) as server:
        with pytest.raises(JudgeUnavailableError, match=f"HTTP {status}"):
            _client(server.url, max_retries=3).judge(MESSAGES, Verdict)
    # a 400 walks down the response formats (schema, JSON mode, text); nothing else is repeated
    assert server.count == (3 if status == 400 else 1)


@pytest.mark.promise(15, 20)
def test_a_hang_past_the_deadline_is_a_timeout_error() -> None:
    with serve(lambda r: Reply(text="{}", delay_s=5)) as server:
        started = time.monotonic()
        with pytest.raises(JudgeTimeoutError, match=r"gave no answer within 0.4 s"):
            _client(server.url, timeout_s=0.4).judge(MESSAGES, Verdict)
        assert time.monotonic() - started < 1.5


@pytest.mark.promise(15, 20)
def test_a_retry_after_past_the_deadline_fails_at_once() -> None:
    with serve(lambda r: Reply(status=503, headers={"Retry-After": "30"})) as server:
        started = time.monotonic()
        with pytest.raises(JudgeTimeoutError, match="HTTP 503 and a retry after 30 s would pass the deadline"):
            _client(server.url, timeout_s=0.5).judge(MESSAGES, Verdict)
        assert time.monotonic() - started < 0.5 and server.count == 1


def test_an_unreachable_endpoint_is_named() -> None:
    with serve(lambda r: verdict(1.0)) as server:
        url = server.url
    with pytest.raises(JudgeUnavailableError, match=r"could not reach the judge endpoint http://127.0.0.1"):
        _client(url).judge(MESSAGES, Verdict)


def test_without_the_openai_package_the_judge_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # as if it were not installed
    with pytest.raises(JudgeNotConfiguredError, match=r"openai package is not installed .*\[judge\]"):
        JudgeClient(JudgeSettings(base_url="http://127.0.0.1:9/v1")).judge(MESSAGES, Verdict)


def test_settings_come_from_the_environment_and_a_bad_number_is_named() -> None:
    settings = JudgeSettings.from_env({"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": "http://gw/v1",
                                       "AGENTEVAL_JUDGE_BASE_URL": "http://local:8000/v1",
                                       "AGENTEVAL_JUDGE_CONCURRENCY": "2", "AGENTEVAL_JUDGE_CACHE": "c"})
    assert (settings.base_url, settings.api_key, settings.concurrency, settings.cache_dir) == (
        "http://local:8000/v1", "sk-x", 2, "c")
    with pytest.raises(ConfigError, match="AGENTEVAL_JUDGE_MAX_RETRIES='many': expected an integer"):
        JudgeSettings.from_env({"AGENTEVAL_JUDGE_MAX_RETRIES": "many"})


@pytest.mark.promise(15)
def test_no_endpoint_and_no_key_is_not_configured() -> None:
    with pytest.raises(JudgeNotConfiguredError, match="no LLM judge is configured"):
        JudgeClient(JudgeSettings()).judge(MESSAGES, Verdict)


@pytest.mark.parametrize("text", ["{not json", '{"reason": "no score"}', "", '{"score": "high"}'])
def test_malformed_answers_are_output_errors(text: str) -> None:
    with serve(lambda r: Reply(text)) as server:
        usage = JudgeUsage()
        with pytest.raises(JudgeOutputError, match="could not be read"):
            _client(server.url).recording(usage).judge(MESSAGES, Verdict)
    assert usage.failures == 1


def test_prose_with_an_explicit_score_is_read_and_prose_without_one_is_not() -> None:
    with serve(lambda r: Reply("Both answers say it is sunny in Paris. Score: 0.8")) as server:
        assert _client(server.url).judge(MESSAGES, Verdict).score == 0.8
    with serve(lambda r: Reply("It is 18 C in Paris and 64 F, looks right to me.")) as server:
        with pytest.raises(JudgeOutputError):
            _client(server.url).judge(MESSAGES, Verdict)


def test_json_in_a_code_fence_or_in_prose_is_read() -> None:
    with serve(lambda r: Reply('Here you go:\n```json\n{"score": 0.7, "reason": "close"}\n```')) as server:
        assert _client(server.url).judge(MESSAGES, Verdict).score == 0.7
    with serve(lambda r: Reply('My verdict is {"score": 0.2, "reason": "off"} as asked.')) as server:
        assert _client(server.url).judge(MESSAGES, Verdict).score == 0.2


def test_a_server_rejecting_json_schema_gets_json_mode_and_is_remembered() -> None:
    def script(request: Request) -> Reply:
        return Reply(status=400) if request.response_format == "json_schema" else verdict(0.6)

    with serve(script) as server:
        client = _client(server.url)
        assert client.judge(MESSAGES, Verdict).score == 0.6
        assert client.judge(MESSAGES, Verdict).score == 0.6
    assert [r.response_format for r in server.requests] == ["json_schema", "json_object", "json_object"]


def test_a_rerun_with_the_cache_asks_the_server_nothing(tmp_path: Path) -> None:
    with serve(lambda r: verdict(0.9)) as server:
        first, second = JudgeUsage(), JudgeUsage()
        assert _client(server.url, tmp_path).recording(first).judge(MESSAGES, Verdict).score == 0.9
        assert _client(server.url, tmp_path).recording(second).judge(MESSAGES, Verdict).score == 0.9
    assert server.count == 1
    assert (first.calls, first.cache_hits, second.calls, second.cache_hits) == (1, 0, 0, 1)
    assert second.input_tokens == 0


def test_a_failed_answer_is_not_cached(tmp_path: Path) -> None:
    with serve(lambda r: Reply("garbage") if r.number == 1 else verdict(0.4)) as server:
        with pytest.raises(JudgeOutputError):
            _client(server.url, tmp_path).judge(MESSAGES, Verdict)
        assert _client(server.url, tmp_path).judge(MESSAGES, Verdict).score == 0.4
    assert server.count == 2


def test_complete_returns_the_reply_as_it_is_in_plain_text_at_the_temperature_asked(tmp_path: Path) -> None:
    reply = "groundedness=0.75; not JSON at all"
    with serve(lambda r: Reply(reply)) as server:
        first, second = JudgeUsage(), JudgeUsage()
        text = _client(server.url, tmp_path).recording(first).complete(MESSAGES, model="grader-model",
                                                                         temperature=0.4)
        again = _client(server.url, tmp_path).recording(second).complete(MESSAGES, model="grader-model",
                                                                           temperature=0.4)
    assert text == again == reply
    body = server.requests[0].body
    assert (body["model"], body["temperature"]) == ("grader-model", 0.4)
    assert "response_format" not in body and body["messages"] == MESSAGES  # no shape described
    assert server.count == 1  # the rerun was read from the cache
    assert (first.calls, first.input_tokens, second.calls, second.cache_hits) == (1, 120, 0, 1)


async def test_acomplete_fails_like_a_judgement_and_marks_its_span_as_text() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with serve(lambda r: Reply(status=500)) as server:
        client = JudgeClient(JudgeSettings(base_url=server.url, timeout_s=1.0, max_retries=1, backoff_s=0.01),
                             tracer=lambda: provider.get_tracer("t"))
        usage = JudgeUsage()
        with pytest.raises(JudgeUnavailableError, match="HTTP 500 after 2 attempts"):
            await client.recording(usage).acomplete(MESSAGES)
    assert usage.failures == 1 and usage.retries == 1
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None and span.attributes[attr.GEN_AI_OUTPUT_TYPE] == "text"
    assert span.attributes[attr.GEN_AI_REQUEST_TEMPERATURE] == 0.0
    with pytest.raises(JudgeNotConfiguredError):
        await JudgeClient(JudgeSettings()).acomplete(MESSAGES)


@pytest.mark.promise(15)
async def test_the_concurrency_limit_holds_over_every_call() -> None:
    with serve(lambda r: Reply(json.dumps({"score": 1.0}), delay_s=0.1)) as server:
        client = _client(server.url, concurrency=2)
        views = [client.recording(JudgeUsage()) for _ in range(3)]
        await asyncio.gather(*(view.asample([{"role": "user", "content": f"q{i}"}], Verdict, n=2)
                               for i, view in enumerate(views)))
    assert server.count == 6 and server.max_in_flight == 2


def test_each_call_is_a_chat_span_marked_as_evaluation_without_the_key(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    key = "sk-judge-secret-1234567890"
    with serve(lambda r: verdict(1.0)) as server:
        client = JudgeClient(JudgeSettings(base_url=server.url, api_key=key, model="judge-model"),
                             tracer=lambda: provider.get_tracer("t"),
                             content_policy=lambda: ContentPolicy(capture=True))
        client.recording(JudgeUsage(), "llm_judge").judge(MESSAGES, Verdict)
    assert server.requests[0].headers["authorization"] == f"Bearer {key}"
    (span,) = exporter.get_finished_spans()
    a = dict(span.attributes or {})
    assert span.name == "chat judge-model"
    assert a[attr.GEN_AI_OPERATION_NAME] == "chat" and a[attr.EVALUATION_MARKER] is True
    assert (a[attr.GEN_AI_REQUEST_MODEL], a[attr.GEN_AI_RESPONSE_MODEL]) == ("judge-model", "judge-model")
    assert (a[attr.GEN_AI_USAGE_INPUT_TOKENS], a[attr.GEN_AI_USAGE_OUTPUT_TOKENS]) == (120, 15)
    assert a[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert a[attr.EVAL_CRITERION] == "llm_judge" and a[attr.JUDGE_ATTEMPTS] == 1
    assert "Is it sunny?" in a[attr.GEN_AI_INPUT_MESSAGES] and "score" in a[attr.GEN_AI_OUTPUT_MESSAGES]
    assert key not in repr(client.settings)
    assert all(key not in str(value) for value in a.values())


def test_content_is_not_recorded_when_the_policy_captures_none() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with serve(lambda r: verdict(1.0)) as server:
        JudgeClient(JudgeSettings(base_url=server.url), tracer=lambda: provider.get_tracer("t"),
                    content_policy=lambda: ContentPolicy(capture=False)).judge(MESSAGES, Verdict)
    (span,) = exporter.get_finished_spans()
    assert attr.GEN_AI_INPUT_MESSAGES not in (span.attributes or {})
    assert attr.GEN_AI_OUTPUT_MESSAGES not in (span.attributes or {})


@pytest.mark.promise(19)
def test_a_key_echoed_in_part_reaches_neither_the_error_nor_its_cause() -> None:
    key = "sk-proj-Qx7vN2mK9pL4wR8tY3zB6c"  # 30 characters; the server echoes 20 of them
    fragment = key[6:26]

    def script(request: Request) -> Reply:
        return Reply(status=401, body={"error": {"message": f"Incorrect API key provided: ...{fragment}..."}})

    with serve(script) as server:
        with pytest.raises(JudgeUnavailableError) as raised:
            JudgeClient(JudgeSettings(base_url=server.url, api_key=key)).judge(MESSAGES, Verdict)
    shown = "".join(traceback.format_exception(raised.value))  # the chained cause too
    assert "HTTP 401" in str(raised.value) and raised.value.__cause__ is not None
    assert fragment[:8] not in shown and fragment[-8:] not in shown and "***" in shown


def _stream(total: int, chunk: int = 64 * 1024, pause_s: float = 0.0) -> Iterator[bytes]:
    """``total`` bytes of a JSON string's inside, ``chunk`` at a time, ``pause_s`` apart."""
    piece = b"x" * chunk
    yield b'{"id": "'
    for _ in range(total // chunk):
        if pause_s:
            time.sleep(pause_s)
        yield piece


@pytest.mark.promise(15, 20)
def test_a_body_declared_past_the_limit_fails_before_it_is_read() -> None:
    declared = 50 * 1024 * 1024
    reply = Reply(chunks=_stream(declared, pause_s=0.05), headers={"Content-Length": str(declared)})
    with serve(lambda r: reply) as server:
        started = time.monotonic()
        with pytest.raises(JudgeOutputError) as raised:
            _client(server.url, timeout_s=10.0).judge(MESSAGES, Verdict)
        took = time.monotonic() - started
    assert took < 2.0  # not read to the end (which takes 40 s), nor to the deadline
    assert "52,428,800 bytes (Content-Length)" in str(raised.value)
    assert "limit of 4,194,304 bytes" in str(raised.value) and "max_response_bytes" in str(raised.value)


@pytest.mark.promise(15, 20)
def test_a_body_streamed_past_the_limit_fails_as_it_passes_it_holding_no_more() -> None:
    limit = 1024 * 1024
    with serve(lambda r: Reply(chunks=_stream(50 * 1024 * 1024))) as server:
        client = _client(server.url, timeout_s=20.0, max_response_bytes=limit)
        tracemalloc.start()
        try:
            started = time.monotonic()
            with pytest.raises(JudgeOutputError) as raised:
                client.judge(MESSAGES, Verdict)
            took = time.monotonic() - started
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert "more than the limit of 1,048,576 bytes" in str(raised.value)
    assert isinstance(raised.value.__cause__, Exception)  # what the HTTP client raised, chained
    assert peak < 8 * limit, f"{peak / 1e6:.1f} MB held for a 1 MB limit"
    assert took < 5.0 and server.streamed < 20 * 1024 * 1024


@pytest.mark.promise(15, 20)
def test_a_compressed_answer_is_read_and_bounded_once_decoded() -> None:
    small = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": '{"score": 0.5}'}}]})
    bomb = gzip.compress(b'{"id": "' + b"0" * (50 * 1024 * 1024), compresslevel=9)  # 50 MB in 50 KB
    zipped = {"Content-Encoding": "gzip"}
    with serve(lambda r: Reply(body=gzip.compress(small.encode()) if r.number == 1 else bomb, headers=zipped)) as server:
        client = _client(server.url, max_response_bytes=1024 * 1024)
        assert client.judge(MESSAGES, Verdict).score == 0.5  # a server compressing though asked not to
        tracemalloc.start()
        try:
            with pytest.raises(JudgeOutputError, match="more than the limit of 1,048,576 bytes"):
                client.judge([*MESSAGES, {"role": "user", "content": "again"}], Verdict)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert server.requests[0].headers["accept-encoding"] == "identity"
    assert len(bomb) < 100_000 and peak < 8 * 1024 * 1024


@pytest.mark.promise(12, 15)
@pytest.mark.parametrize("body", [b"<html>502 Bad Gateway</html>", b"[" * 100_000 + b"]" * 100_000,
                                  b'{"choices": 5}'], ids=["not-json", "nested-100k-deep", "not-a-completion"])
def test_a_body_that_is_no_chat_completion_is_an_output_error_with_its_cause(body: bytes) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with serve(lambda r: Reply(body=body)) as server:
        client = JudgeClient(JudgeSettings(base_url=server.url, timeout_s=1.0), tracer=lambda: provider.get_tracer("t"))
        with pytest.raises(JudgeOutputError) as raised:
            client.judge(MESSAGES, Verdict)
    assert "is not a readable chat completion" in str(raised.value)
    assert raised.value.__cause__ is not None
    (span,) = exporter.get_finished_spans()  # ended, marked as failed
    assert (span.attributes or {})[attr.ERROR_TYPE] == "JudgeOutputError"


@pytest.mark.promise(12)
def test_an_answer_nested_100k_deep_is_an_output_error() -> None:
    with serve(lambda r: Reply("[" * 100_000)) as server:
        with pytest.raises(JudgeOutputError, match="could not be read"):
            _client(server.url).judge(MESSAGES, Verdict)


@pytest.mark.promise(16)
class TestAnswersAreDataNeverCode:
    """Reliability promise 16 for the judge: nothing it answers or we stored is run."""

    def test_an_answer_holding_code_is_an_output_error_not_evaluated(self, tmp_path: Path) -> None:
        marker = tmp_path / "ran"
        code = f"__import__('pathlib').Path({str(marker)!r}).touch() or 1"
        with serve(lambda r: Reply(json.dumps({"score": code}))) as server:
            with pytest.raises(JudgeOutputError):
                _client(server.url).judge(MESSAGES, Verdict)
        assert not marker.exists()

    def test_a_pickled_cache_entry_is_a_miss_never_unpickled(self, tmp_path: Path) -> None:
        with serve(lambda r: verdict(0.3)) as server:
            _client(server.url, tmp_path).judge(MESSAGES, Verdict)
            (entry,) = (tmp_path / "cache").rglob("*.json")
            entry.write_bytes(pickle.dumps({"text": '{"score": 1.0}'}))
            assert _client(server.url, tmp_path).judge(MESSAGES, Verdict).score == 0.3
        assert server.count == 2


def test_importing_the_judge_and_the_evaluation_loads_no_openai() -> None:
    import subprocess

    from tests.conftest import REPO_ROOT

    code = ("import sys, agenteval_otel.evaluation, agenteval_otel.judge\n"
            "from agenteval_otel.evaluation._scoring import Scorer\n"
            "from agenteval_otel.judge import JudgeClient, JudgeSettings\n"
            "JudgeClient(JudgeSettings(base_url='http://127.0.0.1:9/v1'))\n"
            "print('openai' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
