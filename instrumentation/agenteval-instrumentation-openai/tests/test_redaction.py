"""No secret reaches a span or a log record (promises 10 and 19): the client's API key echoed by a
server's 401, and secret-looking keys inside the JSON text of tool results."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest
from opentelemetry.trace import StatusCode

from agenteval_otel import semconv as attr
from agenteval_otel.tracing import agent, routed_to

QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]
KEYS = {
    "openai-shaped": "sk-proj-Q7vR2mX9pL4tK8wZ3nB6c",  # 30 characters
    "no known shape": "c2f81e7a9b04d63e5f17a8c92d4b0e6f",
}


class EchoingServer(ThreadingHTTPServer):
    """Answers every request with OpenAI's 401 body, quoting the bearer key in full and in part."""

    daemon_threads = True


class Refusal(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        body = json.dumps({"error": {
            "message": f"Incorrect API key provided: {key}. A key ending in {key[-20:]} is not valid "
                       f"(it starts {key[:20]}).",
            "type": "invalid_request_error", "param": None, "code": "invalid_api_key",
        }}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def refusing_url() -> Iterator[str]:
    server = EchoingServer(("127.0.0.1", 0), Refusal)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def texts(spans: Any) -> list[str]:
    """Every text of every span: attribute values, event attribute values, status description."""
    found: list[str] = []
    for span in spans:
        found += [str(value) for value in (span.attributes or {}).values()]
        for event in span.events:
            found += [str(value) for value in (event.attributes or {}).values()]
        found.append(span.status.description or "")
    return found


def record_texts(records: list[logging.LogRecord]) -> list[str]:
    found = []
    for record in records:
        text = record.getMessage()
        if record.exc_info:
            text += logging.Formatter().formatException(record.exc_info)
        found.append(text)
    return found


def leaks(key: str, texts: list[str]) -> list[str]:
    """The texts holding ``key`` or any 8 characters of it in a row."""
    fragments = {key[i:i + 8] for i in range(len(key) - 7)}
    return [text for text in texts if any(fragment in text for fragment in fragments)]


@pytest.mark.promise(19)
@pytest.mark.parametrize("key", list(KEYS.values()), ids=list(KEYS))
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_401_echoing_the_api_key_leaves_no_trace_of_it(
    refusing_url: str, instrument: Any, exporter: Any, caplog: pytest.LogCaptureFixture, key: str, api: str
) -> None:
    instrument()  # content capture off: the default for a third-party client
    client = openai.OpenAI(base_url=refusing_url, api_key=key, max_retries=0, timeout=5)
    with caplog.at_level(logging.DEBUG), pytest.raises(openai.AuthenticationError) as raised:  # every logger
        if api == "chat":
            client.chat.completions.create(model="gpt-test", messages=QUESTION)
        else:
            client.responses.create(model="gpt-test", input="What is the weather in Paris?")
    assert key in str(raised.value)  # the caller's exception itself is untouched
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[attr.ERROR_TYPE] == "AuthenticationError"
    (event,) = span.events
    assert "Incorrect API key provided" in event.attributes["exception.message"]
    assert "Traceback" in event.attributes["exception.stacktrace"]
    assert not leaks(key, texts([span]))
    assert not leaks(key, record_texts(caplog.records))


@pytest.mark.promise(19)
def test_the_steps_around_the_failed_call_do_not_record_the_echoed_key_either(
    refusing_url: str, instrument: Any, exporter: Any, provider: Any
) -> None:
    key = KEYS["no known shape"]
    instrument()
    client = openai.OpenAI(base_url=refusing_url, api_key=key, max_retries=0, timeout=5)

    @agent(name="assistant")
    def assistant(question: str) -> str:
        try:
            client.chat.completions.create(model="gpt-test", messages=QUESTION)
        except openai.AuthenticationError as error:
            raise RuntimeError(f"the model refused: {error}") from error
        return "unreachable"

    with routed_to(provider), pytest.raises(RuntimeError):
        assistant("Weather in Paris?")
    chat, agent_span = exporter.get_finished_spans()
    assert (chat.name, agent_span.name) == ("chat gpt-test", "invoke_agent assistant")
    assert "the model refused: Error code: 401" in (agent_span.status.description or "")
    assert not leaks(key, texts([chat, agent_span]))


SECRET = "hunter2-7f3a9c"


@pytest.fixture
def terse_client(model_server: Any) -> Iterator[openai.OpenAI]:
    """A client of a local model that answers "Noted." (it never quotes what it was sent)."""
    with model_server.serve(lambda request: model_server.Turn(text="Noted.")) as running:
        yield openai.OpenAI(base_url=running.base_url, api_key="test-key", max_retries=0, timeout=5)


@pytest.mark.promise(10, 19)
def test_secret_keys_inside_json_tool_results_and_arguments_are_redacted(
    terse_client: openai.OpenAI, instrumented: Any, only_span: Any, caplog: pytest.LogCaptureFixture
) -> None:
    arguments = json.dumps({"city": "Paris", "api_key": SECRET})
    result = json.dumps({"password": SECRET, "city": "Paris", "session": {"token": SECRET}})
    messages = [*QUESTION,
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": result},
                {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": result}]},
                {"role": "tool", "tool_call_id": "call_3", "content": "{not json, password hunter2 stays text"}]
    with caplog.at_level(logging.DEBUG):
        terse_client.chat.completions.create(model="gpt-test", messages=messages)
    span = only_span()
    assert not [text for text in texts([span]) if SECRET in text]
    assert not [text for text in record_texts(caplog.records) if SECRET in text]
    sent = json.loads(span.attributes[attr.GEN_AI_INPUT_MESSAGES])
    assert sent[1]["parts"][0]["arguments"] == {"city": "Paris", "api_key": "[REDACTED]"}
    first, second, third = (message["parts"][0]["response"] for message in sent[2:])
    assert json.loads(first) == {"password": "[REDACTED]", "city": "Paris", "session": {"token": "[REDACTED]"}}
    assert json.loads(second[0]["text"]) == json.loads(first)
    assert third == "{not json, password hunter2 stays text"


@pytest.mark.promise(10, 19)
def test_secret_keys_inside_a_responses_function_call_output_are_redacted(
    terse_client: openai.OpenAI, instrumented: Any, only_span: Any
) -> None:
    items = [{"role": "user", "content": "Weather in Paris?"},
             {"type": "function_call", "call_id": "call_1", "name": "get_weather",
              "arguments": json.dumps({"city": "Paris", "token": SECRET})},
             {"type": "function_call_output", "call_id": "call_1",
              "output": json.dumps([{"city": "Paris", "authorization": f"Bearer {SECRET}"}])}]
    terse_client.responses.create(model="gpt-test", input=items)
    span = only_span()
    assert not [text for text in texts([span]) if SECRET in text]
    sent = json.loads(span.attributes[attr.GEN_AI_INPUT_MESSAGES])
    assert json.loads(sent[2]["parts"][0]["response"]) == [{"city": "Paris", "authorization": "[REDACTED]"}]
