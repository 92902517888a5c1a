"""Content policy: capture on/off, redaction before an attribute is set, truncation, repr fallback."""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import re
import uuid
from collections import OrderedDict
from enum import Enum
from typing import Any

import pytest
from pydantic import BaseModel

from agenteval_otel.tracing import (
    ContentPolicy,
    agent,
    conditional,
    configure,
    message,
    node,
    start_step,
    tool,
)
from agenteval_otel.tracing.content import CAPTURE_CONTENT_ENV, DEFAULT_REDACT_KEYS, REDACTED

CONTENT_KEYS = {
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "agenteval.agent.input",
    "agenteval.agent.output",
    "agenteval.node.input",
    "agenteval.node.output",
    "agenteval.message.content",
}


def _run_every_step() -> None:
    @tool
    def lookup(city: str) -> dict[str, str]:
        return {"city": city}

    @message
    def reply(text: str) -> str:
        return text

    @node("n", capture_io=True)
    def step(state: dict[str, int]) -> dict[str, int]:
        lookup("Oslo")
        reply("hi")
        return state

    @conditional
    def route(state: dict[str, int]) -> str:
        return "end"

    @agent
    def run(q: str) -> str:
        step({"a": 1})
        route({})
        return "done"

    run("question")


# --- capture on / off (promise 10) ---------------------------------------------------------------
def test_capture_is_on_by_default(spans: Any) -> None:
    _run_every_step()
    seen = {key for span in spans.all() for key in span.attributes}
    assert CONTENT_KEYS <= seen


@pytest.mark.promise(10)
def test_capture_off_by_configure_leaves_no_content(spans: Any, provider: Any) -> None:
    configure(tracer_provider=provider, set_global=False, capture_content=False)
    _run_every_step()
    finished = spans.all()
    assert len(finished) == 5
    assert not {key for span in finished for key in span.attributes} & CONTENT_KEYS
    # what is not content is still there
    tool_span = next(s for s in finished if s.name == "execute_tool lookup")
    assert tool_span.attributes["gen_ai.tool.call.id"].startswith("call_")
    route_span = next(s for s in finished if s.name == "conditional route")
    assert route_span.attributes["agenteval.conditional.branch"] == "end"
    chat_span = next(s for s in finished if s.name == "chat")
    assert chat_span.attributes["agenteval.message.role"] == "assistant"


@pytest.mark.promise(10)
@pytest.mark.parametrize(
    ("value", "capture"),
    [
        ("NO_CONTENT", False),
        ("false", False),
        ("EVENT_ONLY", False),
        ("SPAN_ONLY", True),
        ("span_and_event", True),
        ("true", True),
        ("", True),
    ],
)
def test_capture_follows_the_environment(monkeypatch: pytest.MonkeyPatch, value: str, capture: bool) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, value)
    assert ContentPolicy.from_env().capture is capture


@pytest.mark.parametrize(("value", "capture"), [("", False), ("SPAN_ONLY", True), ("NO_CONTENT", False)])
def test_instrumentations_default_to_no_content(monkeypatch: pytest.MonkeyPatch, value: str, capture: bool) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, value)
    assert ContentPolicy.from_env(default_capture=False).capture is capture


@pytest.mark.promise(10)
def test_capture_env_off_applies_through_configure(spans: Any, provider: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "NO_CONTENT")
    handle = configure(tracer_provider=provider, set_global=False)
    assert handle.content_policy.capture is False
    _run_every_step()
    assert not {key for span in spans.all() for key in span.attributes} & CONTENT_KEYS


@pytest.mark.promise(10)
def test_explicit_capture_wins_over_the_environment(provider: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "NO_CONTENT")
    handle = configure(tracer_provider=provider, set_global=False, capture_content=True)
    assert handle.content_policy.capture is True
    handle.shutdown(timeout=1)


def test_unknown_env_value_is_logged_and_capture_stays_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "sometimes")
    with caplog.at_level(logging.WARNING, logger="agenteval_otel.tracing.content"):
        assert ContentPolicy.from_env().capture is True
    assert len(caplog.records) == 1


@pytest.mark.promise(10)
def test_a_step_started_without_content_records_none_whatever_the_policy(spans: Any) -> None:
    runs = {
        "agent": start_step("agent", "a", input="question", capture_content=False),
        "tool": start_step("tool", "t", arguments={"city": "Oslo"}, call_id="call_1", capture_content=False),
        "node": start_step("node", "n", input={"state": 1}, capture_content=False),
        "message": start_step("message", model="m1", input="hello", capture_content=False),
    }
    assert all(run.recording and not run.capturing for run in runs.values())
    for run in runs.values():
        run.set_input({"more": "input"})
        run.set_result({"role": "assistant", "content": "answer"})
        run.end()
    with start_step("tool", "on", arguments={"city": "Oslo"}) as run:
        assert run.capturing
        run.set_result(None)

    recorded = {span.name: set(span.attributes or {}) & CONTENT_KEYS for span in spans.all()}
    assert recorded == {"invoke_agent a": set(), "execute_tool t": set(), "invoke_node n": set(), "chat m1": set(),
                        "execute_tool on": {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}}
    assert spans.attributes("execute_tool t")["gen_ai.tool.call.id"] == "call_1"
    assert spans.attributes("chat m1")["agenteval.message.role"] == "assistant"


# --- redaction (promise 10) ----------------------------------------------------------------------
@pytest.mark.promise(10)
def test_secret_looking_keys_arrive_redacted_at_any_depth(spans: Any) -> None:
    @tool
    def call_api(url: str, api_key: str, headers: dict[str, Any], max_tokens: int) -> dict[str, Any]:
        return {"ok": True, "session": {"accessToken": "tok-123", "user": "ann"}}

    call_api("https://x", "sk-live-1", {"Authorization": "Bearer abc", "x-api-key": "k", "Accept": "json"}, 10)

    attributes = spans.attributes("execute_tool call_api")
    arguments = json.loads(attributes["gen_ai.tool.call.arguments"])
    assert arguments == {
        "url": "https://x",
        "api_key": REDACTED,
        "headers": {"Authorization": REDACTED, "x-api-key": REDACTED, "Accept": "json"},
        "max_tokens": 10,
    }
    assert json.loads(attributes["gen_ai.tool.call.result"]) == {
        "ok": True,
        "session": {"accessToken": REDACTED, "user": "ann"},
    }
    assert "sk-live-1" not in str(attributes) and "Bearer abc" not in str(attributes)


@pytest.mark.promise(10, 19)
def test_secret_looking_keys_inside_json_text_are_redacted(spans: Any) -> None:
    @tool
    def log_in(user: str, options: str) -> str:
        return '{"password": "hunter2", "city": "Paris", "nested": "[{\\"token\\": \\"t0p\\"}]"}'

    log_in("ann", '[{"api_key": "k-123", "retries": 2}]')

    attributes = spans.attributes("execute_tool log_in")
    result = json.loads(json.loads(attributes["gen_ai.tool.call.result"]))
    assert result == {"password": REDACTED, "city": "Paris", "nested": json.dumps([{"token": REDACTED}], separators=(",", ":"))}
    arguments = json.loads(attributes["gen_ai.tool.call.arguments"])
    assert json.loads(arguments["options"]) == [{"api_key": REDACTED, "retries": 2}]
    assert "hunter2" not in str(attributes) and "t0p" not in str(attributes) and "k-123" not in str(attributes)

    policy = ContentPolicy()  # text that is not JSON holding a secret-looking key is left as written
    for text in ('{"city": "Paris",  "celsius": 21}', "[1, 2]", "{not json, password hunter2}",
                 '{"password": "hunter2"', "[password] hunter2", '"a JSON string"', ""):
        assert json.loads(policy.json({"result": text})) == {"result": text}
        assert json.loads(policy.json([text])) == [text] and json.loads(policy.json(text)) == text


@pytest.mark.promise(10)
def test_a_large_json_text_is_redacted_and_truncated_with_the_marker() -> None:
    text = json.dumps([{"city": f"c{i}", "token": "t0p-secret"} for i in range(20_000)])  # about 0.8 MB
    cleaned = ContentPolicy().json({"result": text})
    assert cleaned.endswith(" chars]") and "...[truncated " in cleaned
    assert "t0p-secret" not in cleaned and REDACTED in cleaned


@pytest.mark.parametrize(
    ("key", "redacted"),
    [
        ("password", True),
        ("db_password", True),
        ("passwordHash", True),
        ("OPENAI_API_KEY", True),
        ("apiKey", True),
        ("APIKEY", True),
        ("client_secret", True),
        ("refresh-token", True),
        ("Authorization", True),
        ("max_tokens", False),
        ("tokenizer", False),
        ("input_tokens", False),
        ("city", False),
        ("secretary_name", False),
    ],
)
def test_key_matching_is_by_words(key: str, redacted: bool) -> None:
    assert ContentPolicy().is_sensitive(key) is redacted


@pytest.mark.promise(10)
def test_redaction_keys_are_extendable_and_patterns_apply_to_text(spans: Any, provider: Any) -> None:
    policy = ContentPolicy(
        redact_keys=(*DEFAULT_REDACT_KEYS, "ssn"),
        redact_patterns=(r"sk-[A-Za-z0-9]{8,}", re.compile(r"\b\d{4}-\d{4}\b")),
    )
    configure(tracer_provider=provider, set_global=False, content_policy=policy)

    @agent
    def run(note: str) -> str:
        return "card 1234-5678 on file"

    @tool
    def store(ssn: str, note: str) -> None:
        return None

    run("my key is sk-abcdef123456")
    store("123-45-6789", "sk-ABCDEFGH99")

    agent_attributes = spans.attributes("invoke_agent run")
    assert agent_attributes["agenteval.agent.input"] == f"my key is {REDACTED}"
    assert REDACTED in json.loads(agent_attributes["gen_ai.input.messages"])[0]["parts"][0]["content"]
    assert agent_attributes["agenteval.agent.output"] == f"card {REDACTED} on file"
    assert json.loads(spans.attributes("execute_tool store")["gen_ai.tool.call.arguments"]) == {
        "ssn": REDACTED,
        "note": REDACTED,
    }


# --- truncation (promise 10) ---------------------------------------------------------------------
@pytest.mark.promise(10)
def test_a_1mb_argument_arrives_truncated_with_the_marker(spans: Any) -> None:
    @tool
    def ingest(document: str) -> int:
        return len(document)

    assert ingest("x" * 1_000_000) == 1_000_000

    arguments = spans.attributes("execute_tool ingest")["gen_ai.tool.call.arguments"]
    limit = ContentPolicy().max_length
    assert arguments.startswith('{"document":"xxxx')
    full_length = len('{"document":""}') + 1_000_000
    assert arguments.endswith(f"...[truncated {full_length - limit} chars]")
    assert len(arguments) < limit + 40


@pytest.mark.promise(10)
def test_max_length_is_configurable(spans: Any, provider: Any) -> None:
    configure(tracer_provider=provider, set_global=False, content_policy=ContentPolicy(max_length=10))

    @agent
    def run(q: str) -> str:
        return "y" * 25

    run("short")
    attributes = spans.attributes("invoke_agent run")
    assert attributes["agenteval.agent.input"] == "short"
    assert attributes["agenteval.agent.output"] == "yyyyyyyyyy...[truncated 15 chars]"


def test_long_lists_are_bounded_before_serialisation() -> None:
    policy = ContentPolicy(max_length=50)
    text = policy.json(list(range(1_000_000)))
    assert text.startswith("[0,1,2,") and text.endswith("chars]")
    assert len(text) < 100


# --- serialisation -------------------------------------------------------------------------------
class Colour(Enum):
    RED = "red"


@dataclasses.dataclass
class Credentials:
    user: str
    password: str


class Query(BaseModel):
    text: str
    api_key: str


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque " + "z" * 1000 + ">"


class Unrepresentable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_rich_values_serialise_with_redaction() -> None:
    policy = ContentPolicy()
    value = {
        "when": datetime.date(2024, 5, 1),
        "id": uuid.UUID(int=1),
        "colour": Colour.RED,
        "creds": Credentials("ann", "hunter2"),
        "query": Query(text="hi", api_key="k"),
        "ordered": OrderedDict(token="t", n=1),
        "tags": {"b"},
        "pair": (1, 2),
        7: "int key",
    }
    assert json.loads(policy.json(value)) == {
        "when": "2024-05-01",
        "id": "00000000-0000-0000-0000-000000000001",
        "colour": "red",
        "creds": {"user": "ann", "password": REDACTED},
        "query": {"text": "hi", "api_key": REDACTED},
        "ordered": {"token": REDACTED, "n": 1},
        "tags": ["b"],
        "pair": [1, 2],
        "7": "int key",
    }


def test_values_that_cannot_be_serialised_fall_back_to_a_bounded_repr(caplog: pytest.LogCaptureFixture) -> None:
    policy = ContentPolicy()
    with caplog.at_level(logging.DEBUG, logger="agenteval_otel.tracing.content"):
        opaque = json.loads(policy.json({"o": Opaque()}))["o"]
        broken = json.loads(policy.json(Unrepresentable()))
        circular: list[Any] = []
        circular.append(circular)
        nested = policy.json(circular)
    assert opaque.startswith("<Opaque zzz") and len(opaque) <= 200
    assert broken.startswith("<Unrepresentable instance at 0x")
    assert nested.startswith("[[[[")
    assert caplog.records


def test_str_stays_str_in_text_and_is_json_encoded_in_json() -> None:
    policy = ContentPolicy()
    assert policy.text("sunny") == "sunny"
    assert policy.json("sunny") == '"sunny"'
    assert policy.text({"a": 1}) == '{"a":1}'


@pytest.mark.parametrize(
    "bad",
    [{"max_length": 0}, {"max_length": "10"}, {"redact_keys": ("",)}, {"capture": "yes"}, {"redact_patterns": ("(",)}],
)
def test_bad_policy_arguments_fail_at_construction(bad: dict[str, Any]) -> None:
    with pytest.raises((TypeError, ValueError, re.error)):
        ContentPolicy(**bad)


# --- redaction keys add to the defaults; replacing them is explicit ------------------------------
@pytest.mark.promise(10)
def test_redact_keys_add_to_the_default_keys(spans: Any, provider: Any) -> None:
    policy = ContentPolicy(redact_keys=("ssn",))
    assert policy.redact_keys == (*DEFAULT_REDACT_KEYS, "ssn")
    assert "'password'" in repr(policy) and "'ssn'" in repr(policy)
    configure(tracer_provider=provider, set_global=False, content_policy=policy)

    @tool
    def sign_up(ssn: str, password: str, token: str, city: str) -> None:
        return None

    sign_up("123-45-6789", "hunter2", "tok-1", "Oslo")
    arguments = json.loads(spans.attributes("execute_tool sign_up")["gen_ai.tool.call.arguments"])
    assert arguments == {"ssn": REDACTED, "password": REDACTED, "token": REDACTED, "city": "Oslo"}


def test_replacing_the_default_keys_is_explicit() -> None:
    policy = ContentPolicy(redact_keys=("ssn",), replace_default_keys=True)
    assert policy.redact_keys == ("ssn",)
    assert policy.is_sensitive("ssn") and not policy.is_sensitive("password")
    assert json.loads(policy.json({"ssn": 1, "password": "p"})) == {"ssn": REDACTED, "password": "p"}
    # equal keys whatever the spelling: the defaults are not added twice, replace() keeps the keys
    assert ContentPolicy(redact_keys=(*DEFAULT_REDACT_KEYS, "ssn")) == ContentPolicy(redact_keys=("ssn",))
    assert dataclasses.replace(policy, max_length=5).redact_keys == ("ssn",)
    assert dataclasses.replace(ContentPolicy(redact_keys=("ssn",)), max_length=5).redact_keys == (
        *DEFAULT_REDACT_KEYS,
        "ssn",
    )


# --- a policy given to configure() follows the environment unless it says otherwise --------------
@pytest.mark.promise(10)
def test_a_policy_given_to_configure_keeps_the_environments_no_content(
    spans: Any, provider: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "NO_CONTENT")
    policy = ContentPolicy(redact_patterns=(r"sk-\w+",))
    handle = configure(tracer_provider=provider, set_global=False, content_policy=policy)
    assert handle.content_policy.capture is False
    _run_every_step()
    assert not {key for span in spans.all() for key in span.attributes} & CONTENT_KEYS


@pytest.mark.parametrize(
    ("policy", "capture_content", "captured"),
    [
        (ContentPolicy(capture=True), None, True),
        (ContentPolicy(capture=False), True, True),
        (ContentPolicy(capture=True), False, False),
    ],
)
def test_explicit_capture_in_the_policy_or_configure_wins_over_the_environment(
    provider: Any, monkeypatch: pytest.MonkeyPatch, policy: ContentPolicy, capture_content: Any, captured: bool
) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "NO_CONTENT")
    handle = configure(
        tracer_provider=provider, set_global=False, content_policy=policy, capture_content=capture_content
    )
    assert handle.content_policy.capture is captured
    handle.shutdown(timeout=1)


def test_a_standalone_policy_reads_the_environment_when_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "NO_CONTENT")
    assert ContentPolicy().capture is False
    monkeypatch.delenv(CAPTURE_CONTENT_ENV)
    assert ContentPolicy().capture is True
