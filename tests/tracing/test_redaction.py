"""Redaction covers every text we write (promise 19): step inputs by parameter name, exception
messages, stack traces and status descriptions, whatever reaches a span, a log record or a file."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider

from agenteval_otel import semconv as attr
from agenteval_otel.tracing import (
    ContentPolicy,
    agent,
    configure,
    node,
    set_active_policy,
    start_step,
    tool,
    trace_step,
)
from agenteval_otel.tracing.content import REDACTED

SECRET = "hunter2-7f3a9c"
PATTERN = r"hunter2-\w+"


def texts(spans: Iterable[ReadableSpan]) -> list[str]:
    """Every text of every span: attribute values, event attribute values, status description."""
    found: list[str] = []
    for span in spans:
        found += [str(value) for value in (span.attributes or {}).values()]
        for event in span.events:
            found += [str(value) for value in (event.attributes or {}).values()]
        found.append(span.status.description or "")
    return found


def assert_nowhere(secret: str, spans: Iterable[ReadableSpan], records: Iterable[logging.LogRecord]) -> None:
    leaked = [text for text in texts(spans) if secret in text]
    assert not leaked, f"{secret!r} reached a span: {leaked}"
    logged = [record.getMessage() for record in records if secret in _record_text(record)]
    assert not logged, f"{secret!r} reached a log record: {logged}"


def _record_text(record: logging.LogRecord) -> str:
    text = record.getMessage()
    if record.exc_info:
        text += logging.Formatter().formatException(record.exc_info)
    return text


@pytest.fixture
def ours(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every record of our loggers, DEBUG included."""
    with caplog.at_level(logging.DEBUG, logger="agenteval_otel"):
        yield caplog


# --- step inputs by parameter name ----------------------------------------------------------------
@pytest.mark.promise(19)
def test_a_lone_secret_parameter_is_redacted_as_the_step_input(spans: Any, ours: pytest.LogCaptureFixture) -> None:
    @agent
    def log_in(password: str) -> str:
        return "welcome"

    @node("check", capture_io=True)
    def check(token: str) -> bool:
        return True

    @agent(name="keyed")
    def keyed(*, apiKey: str) -> str:  # noqa: N803 - a camel-case secret name
        return "ok"

    @agent(name="named", input_arg="secret")
    def named(user: str, secret: str) -> str:
        return "ok"

    log_in(SECRET)
    log_in(password=SECRET)
    check(SECRET)
    keyed(apiKey=SECRET)
    named("ann", SECRET)

    assert_nowhere(SECRET, spans.all(), ours.records)
    inputs = [span.attributes[attr.AGENT_INPUT] for span in spans.all() if attr.AGENT_INPUT in span.attributes]
    assert inputs == [REDACTED] * 4
    assert spans.attributes("invoke_node check")[attr.NODE_INPUT] == REDACTED
    messages = json.loads(spans.all()[0].attributes[attr.GEN_AI_INPUT_MESSAGES])
    assert messages[0]["parts"][0]["content"] == REDACTED


@pytest.mark.promise(19)
async def test_a_lone_secret_parameter_of_an_async_agent_is_redacted(spans: Any) -> None:
    @agent
    async def log_in(password: str) -> str:
        await asyncio.sleep(0)
        return "welcome"

    assert await log_in(SECRET) == "welcome"
    assert spans.attributes("invoke_agent log_in")[attr.AGENT_INPUT] == REDACTED


def test_a_lone_ordinary_parameter_is_recorded_as_it_is(spans: Any) -> None:
    @agent
    def ask(question: str) -> str:
        return "sunny"

    ask("weather in Oslo?")
    assert spans.attributes("invoke_agent ask")[attr.AGENT_INPUT] == "weather in Oslo?"


@pytest.mark.promise(19)
def test_several_parameters_are_bound_by_name_and_redacted_by_key(spans: Any) -> None:
    @agent
    def log_in(user: str, password: str) -> str:
        return "welcome"

    @node("check", capture_io=True)
    def check(user: str, token: str) -> bool:
        return True

    log_in("ann", SECRET)
    check("ann", token=SECRET)
    assert json.loads(spans.attributes("invoke_agent log_in")[attr.AGENT_INPUT]) == {
        "user": "ann",
        "password": REDACTED,
    }
    assert json.loads(spans.attributes("invoke_node check")[attr.NODE_INPUT]) == {"user": "ann", "token": REDACTED}
    assert_nowhere(SECRET, spans.all(), [])


@pytest.mark.promise(19)
def test_lifecycle_and_block_inputs_are_redacted_by_key(spans: Any, ours: pytest.LogCaptureFixture) -> None:
    with start_step("agent", "a", input={"user": "ann", "password": SECRET}) as run:
        run.set_result({"token": SECRET})
    with trace_step.node("n", input={"credentials": {"api_key": SECRET}}) as block:
        block.set_input({"secret": SECRET})
    run = start_step("tool", "t", arguments={"authorization": SECRET}, input={"password": SECRET})
    run.end()
    start_step("tool", "u", arguments=[SECRET]).end()  # not a mapping: logged by type, not value

    assert_nowhere(SECRET, spans.all(), ours.records)
    assert json.loads(spans.attributes("invoke_agent a")[attr.AGENT_INPUT])["password"] == REDACTED
    assert any("input=<dict>" in record.getMessage() for record in ours.records)
    assert any("of type list" in record.getMessage() for record in ours.records)


# --- exception messages, stack traces, status descriptions -----------------------------------------
class LoginFailed(Exception):
    pass


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError(SECRET)


@pytest.mark.promise(19)
def test_patterns_clean_exception_messages_stack_traces_and_status(
    spans: Any, provider: TracerProvider, ours: pytest.LogCaptureFixture
) -> None:
    configure(tracer_provider=provider, set_global=False, content_policy=ContentPolicy(redact_patterns=(PATTERN,)))

    @tool
    def log_in(user: str) -> None:
        raise LoginFailed(f"bad password {SECRET} for {user}")

    with pytest.raises(LoginFailed) as raised:
        log_in("ann")
    assert SECRET in str(raised.value)  # the user's exception itself is untouched
    with pytest.raises(LoginFailed), start_step("node", "n"):
        raise LoginFailed(f"token {SECRET}")

    assert_nowhere(SECRET, spans.all(), ours.records)
    failed = spans.named("execute_tool log_in")
    assert failed.attributes[attr.ERROR_TYPE] == "LoginFailed"
    assert failed.status.description == f"LoginFailed: bad password {REDACTED} for ann"
    (event,) = failed.events
    assert event.name == "exception"
    assert event.attributes["exception.type"].endswith("LoginFailed")
    assert event.attributes["exception.message"] == f"bad password {REDACTED} for ann"
    stacktrace = event.attributes["exception.stacktrace"]
    assert "Traceback" in stacktrace and f"LoginFailed: bad password {REDACTED} for ann" in stacktrace
    assert event.attributes["exception.escaped"] == "False"


def test_an_exception_whose_str_raises_is_still_recorded(spans: Any, ours: pytest.LogCaptureFixture) -> None:
    @agent
    def run(q: str) -> str:
        raise Unprintable()

    with pytest.raises(Unprintable):
        run("q")
    failed = spans.named("invoke_agent run")
    assert failed.status.description == "Unprintable"
    assert failed.attributes[attr.ERROR_TYPE] == "Unprintable"
    assert [event.name for event in failed.events] == ["exception"]
    assert_nowhere(SECRET, spans.all(), ours.records)


@pytest.mark.promise(19)
def test_long_stack_traces_are_truncated_with_the_marker(spans: Any) -> None:
    set_active_policy(ContentPolicy(max_length=200))

    @tool
    def explode() -> None:
        raise ValueError("x" * 1000)

    with pytest.raises(ValueError):
        explode()
    (event,) = spans.named("execute_tool explode").events
    assert event.attributes["exception.message"].endswith("...[truncated 800 chars]")
    assert "...[truncated" in event.attributes["exception.stacktrace"]


API_KEY = "sk-proj-Q7vR2mX9pL4tK8wZ3nB6c"
PLAIN_KEY = "c2f81e7a9b04d63e5f17a8c92d4b0e6f"  # no known shape: masked only when given


@pytest.mark.promise(19)
def test_credential_shapes_are_masked_in_exception_text_with_no_pattern_configured(
    spans: Any, ours: pytest.LogCaptureFixture
) -> None:
    @tool
    def call_api(city: str) -> None:
        raise PermissionError(f"401 Incorrect API key provided: {API_KEY}; sent Authorization: Bearer {PLAIN_KEY}")

    with pytest.raises(PermissionError) as raised:
        call_api("Paris")
    assert API_KEY in str(raised.value)  # the user's exception itself is untouched
    for secret in (API_KEY, PLAIN_KEY):
        assert_nowhere(secret, spans.all(), ours.records)
    failed = spans.named("execute_tool call_api")
    assert failed.status.description == "PermissionError: 401 Incorrect API key provided: ***; sent Authorization: ***"
    (event,) = failed.events
    assert event.attributes["exception.message"].endswith("Authorization: ***")


@pytest.mark.promise(19)
def test_secrets_given_to_fail_are_masked_whole_and_in_part(spans: Any, ours: pytest.LogCaptureFixture) -> None:
    error = RuntimeError(f"key {PLAIN_KEY} refused; a key ending in {PLAIN_KEY[-20:]} or starting {PLAIN_KEY[:12]}")
    run = start_step("message", model="m1")
    run.fail(error, secrets=(PLAIN_KEY, None))
    start_step("message", model="m2").fail(error, secrets=PLAIN_KEY)  # a lone str is one secret
    start_step("message", model="m3").fail(error, secrets=[PLAIN_KEY, 42])  # type: ignore[list-item]

    @agent
    def assistant(question: str) -> str:  # the error travels up, re-raised in other words
        raise PermissionError(f"the model refused: {error}")

    with pytest.raises(PermissionError):
        assistant("q")

    for secret in (PLAIN_KEY, PLAIN_KEY[-20:], PLAIN_KEY[:12], PLAIN_KEY[4:12]):
        assert_nowhere(secret, spans.all(), ours.records)
    assert spans.named("chat m1").status.description == "RuntimeError: key *** refused; a key ending in *** or starting ***"
    assert spans.named("invoke_agent assistant").status.description.startswith("PermissionError: the model refused: key ***")
    assert "a secret of type int is not a str" in ours.text


# --- the same, end to end: a real traces file ----------------------------------------------------
@pytest.mark.promise(19)
def test_no_secret_reaches_the_traces_file_or_a_log_record(
    tmp_path: Path, provider: TracerProvider, ours: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "traces.jsonl"
    handle = configure(
        tracer_provider=TracerProvider(),
        traces_file=path,
        set_global=False,
        content_policy=ContentPolicy(redact_patterns=(PATTERN,)),
    )

    @tool
    def fetch(url: str, token: str) -> dict[str, str]:
        return {"body": f"echo {SECRET}", "session": {"api_key": SECRET}}

    @node("authenticate", capture_io=True)
    def authenticate(password: str) -> str:
        fetch("https://example.test", SECRET)
        raise PermissionError(f"password {SECRET} rejected")

    @agent
    def assistant(question: str) -> str:
        try:
            authenticate(SECRET)
        except PermissionError:
            pass
        return f"done; your key {SECRET} is safe"

    assert assistant(f"my password is {SECRET}") == f"done; your key {SECRET} is safe"
    assert handle.shutdown(timeout=5)
    written = path.read_text()
    assert "invoke_agent assistant" in written and "execute_tool fetch" in written and "exception" in written
    assert SECRET not in written
    assert_nowhere(SECRET, [], ours.records)
