"""Graders against a scripted judge on 127.0.0.1, through the real openai client: scores from the
reply, users' own parsers, model configurations, and failures as data."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel.errors import GraderError
from agenteval_otel.experiments.graders import Grader, GraderModelConfig
from agenteval_otel.judge import JudgeClient, JudgeSettings
from tests.judge.judge_server import Reply, serve

TEMPLATE = "Evaluate this conversation.\nCONVERSATION:\n{{ entry.content }}\nAnswer with JSON scores."
SCORES = {"groundedness": 1.0, "overall_satisfaction": 0.75, "professionalism": 0.5}


def _judge(url: str, **options: Any) -> JudgeClient:
    settings: dict[str, Any] = dict(base_url=url, model="env-model", timeout_s=1.0, max_retries=0)
    settings.update(options)
    return JudgeClient(JudgeSettings(**settings))


def _closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_grader_renders_the_entry_and_reads_json_scores_from_the_reply() -> None:
    reply = f"Here you go:\n```json\n{json.dumps(SCORES)}\n```"
    with serve(lambda r: Reply(reply)) as server:
        grader = Grader(TEMPLATE, {"model": "gpt-4o", "temperature": 0.3}, judge=_judge(server.url))
        result = grader.grade({"content": "USER: Are dogs allowed?\nASSISTANT: Yes, dogs are welcome."})
    assert result.ok and result.scores == SCORES
    assert (result.reply, result.model) == (reply, "gpt-4o")
    assert (result.usage.calls, result.usage.input_tokens, result.usage.output_tokens) == (1, 120, 15)
    body = server.requests[0].body
    assert (body["model"], body["temperature"]) == ("gpt-4o", 0.3)
    assert body["messages"] == [{"role": "user", "content": "Evaluate this conversation.\nCONVERSATION:\n"
                                 "USER: Are dogs allowed?\nASSISTANT: Yes, dogs are welcome.\nAnswer with JSON scores."}]


async def test_agrade_grades_from_async_code_and_files_make_the_same_grader(tmp_path: Path) -> None:
    (tmp_path / "grader.j2").write_text(TEMPLATE)
    (tmp_path / "model.json").write_text('{"model": "grader-model"}')
    with serve(lambda r: Reply(json.dumps(SCORES))) as server:
        grader = Grader.from_files(template=tmp_path / "grader.j2", model_config=tmp_path / "model.json",
                                   judge=_judge(server.url))
        result = await grader.agrade({"content": "Thanks for the stay!"})
    assert result.scores == SCORES and result.model == "grader-model"
    assert "Thanks for the stay!" in server.requests[0].body["messages"][0]["content"]
    assert server.requests[0].body["temperature"] == 0


PARSER_MODULE = '''
def parse_grader_response(response: str) -> dict:
    """Reads 'metric=value' pairs separated by semicolons."""
    return {name.strip(): float(value) for name, value in (pair.split("=") for pair in response.split(";"))}


def parse_to_words(response: str) -> dict:
    return {"groundedness": "excellent"}
'''


@pytest.mark.parametrize("spec", ["my_graders.parsing:parse_grader_response",
                                  "my_graders.parsing.parse_grader_response", "FILE:parse_grader_response"])
def test_a_users_parser_named_by_its_dotted_path_or_file_reads_the_reply(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str) -> None:
    package = tmp_path / "my_graders"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "parsing.py").write_text(PARSER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = spec.replace("FILE", str(package / "parsing.py"))
    with serve(lambda r: Reply("groundedness=0.75; professionalism=1")) as server:
        result = Grader(TEMPLATE, {"model": "m"}, spec, judge=_judge(server.url)).grade({"content": "hi"})
    assert result.error is None and result.scores == {"groundedness": 0.75, "professionalism": 1.0}


@pytest.mark.promise(12)
def test_a_parser_that_returns_no_numbers_or_raises_gives_an_error_result_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "word_parsers.py").write_text(PARSER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    with serve(lambda r: Reply("no pairs here")) as server:
        judge = _judge(server.url)
        words = Grader(TEMPLATE, {"model": "m"}, "word_parsers:parse_to_words", judge=judge).grade({"content": "x"})
        raised = Grader(TEMPLATE, {"model": "m"}, "word_parsers:parse_grader_response",
                        judge=judge).grade({"content": "x"})
    assert words.scores == {} and words.error_type == "JudgeOutputError"
    assert words.error == ("the grader's reply gave no usable scores: metric 'groundedness': expected a number, "
                           "got 'excellent'")
    assert raised.scores == {} and raised.reply == "no pairs here" and raised.error_type == "JudgeOutputError"
    assert raised.error is not None and "word_parsers:parse_grader_response failed on the reply: ValueError" \
        in raised.error


@pytest.mark.parametrize(("spec", "message"), [
    ("no_such_module_anywhere:parse", "cannot import 'no_such_module_anywhere'"),
    ("json:no_such_function", "json has no attribute 'no_such_function'"),
    ("json:__doc__", "is not a function"),
    ("parse", "expected 'module:attribute', 'package.module.attribute'"),
])
def test_a_parser_that_cannot_be_found_is_refused_when_the_grader_is_made(spec: str, message: str) -> None:
    with pytest.raises(GraderError, match=message):
        Grader(TEMPLATE, {"model": "m"}, spec, judge=_judge(_closed_url()))


def test_a_model_configuration_with_an_unknown_key_or_bad_json_is_refused(tmp_path: Path) -> None:
    with pytest.raises(GraderError, match=r"top_p: unknown key \(expected model, temperature, base_url, "
                                          r"api_key_env\)"):
        Grader(TEMPLATE, {"model": "gpt-4o", "top_p": 0.9})
    path = tmp_path / "model.json"
    path.write_text('{\n  "model": "gpt-4o",\n  "temperature": "warm"\n}')
    with pytest.raises(GraderError, match=rf"grader model configuration {path}: temperature: Input should be"):
        GraderModelConfig.load(path)
    path.write_text('{\n  "model": "gpt-4o",\n}')
    # Python 3.13's json points at the trailing comma itself, older ones at the brace after it
    where = "line 2, column 20" if sys.version_info >= (3, 13) else "line 3, column 1"
    with pytest.raises(GraderError, match=rf"{path}: {where}: not JSON"):
        GraderModelConfig.load(path)
    path.write_text('["gpt-4o"]')
    with pytest.raises(GraderError, match="expected a JSON object"):
        GraderModelConfig.load(path)
    with pytest.raises(GraderError, match="model: Field required"):
        GraderModelConfig.load({"temperature": 0})


@pytest.mark.promise(12)
def test_a_reply_that_is_not_json_gives_an_error_result_with_the_reply_and_no_score() -> None:
    with serve(lambda r: Reply("The assistant was great, I'd say 9 out of 10.")) as server:
        result = Grader(TEMPLATE, {"model": "m"}, judge=_judge(server.url)).grade({"content": "x"})
    assert not result.ok and result.scores == {} and result.error_type == "JudgeOutputError"
    assert result.error is not None and result.error.startswith("the grader's reply gave no usable scores: no JSON")
    assert result.reply == "The assistant was great, I'd say 9 out of 10." and result.usage.calls == 1


@pytest.mark.promise(12)
def test_an_unreachable_or_absent_judge_gives_an_error_result(monkeypatch: pytest.MonkeyPatch) -> None:
    url = _closed_url()
    result = Grader(TEMPLATE, {"model": "m"}, judge=_judge(url)).grade({"content": "x"})
    assert result.scores == {} and result.reply is None and result.error_type == "JudgeUnavailableError"
    assert result.error is not None and f"could not reach the judge endpoint {url}" in result.error
    assert result.usage.failures == 1
    for name in ("AGENTEVAL_JUDGE_BASE_URL", "OPENAI_BASE_URL", "AGENTEVAL_JUDGE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    absent = Grader(TEMPLATE, {"model": "m"}).grade({"content": "x"})
    assert absent.error_type == "JudgeNotConfiguredError" and absent.scores == {}


def test_a_template_that_fails_for_an_entry_gives_an_error_result_and_asks_nothing() -> None:
    with serve(lambda r: Reply(json.dumps(SCORES))) as server:
        grader = Grader("{{ entry.__class__ }}", {"model": "m"}, judge=_judge(server.url))
        unsafe = grader.grade({"content": "x"})
        missing = Grader(TEMPLATE, {"model": "m"}, judge=_judge(server.url)).grade({"text": "x"})
    assert server.count == 0
    assert unsafe.error_type == missing.error_type == "GraderError"
    assert unsafe.error == "grader template <template>, line 1: access to attribute '__class__' of 'dict' object is unsafe."
    assert missing.error == "grader template <template>, line 3: 'dict object' has no attribute 'content'"


def test_a_base_url_in_the_model_configuration_replaces_the_judges_endpoint() -> None:
    with serve(lambda r: Reply(json.dumps(SCORES))) as server:
        grader = Grader(TEMPLATE, {"model": "local-model", "base_url": server.url}, judge=_judge(_closed_url()))
        result = grader.grade({"content": "x"})
    assert result.scores == SCORES and server.count == 1
    assert server.requests[0].body["model"] == "local-model"


@pytest.mark.promise(16)
def test_a_graders_own_endpoint_never_receives_the_judges_key(monkeypatch: pytest.MonkeyPatch) -> None:
    judge_key = "sk-judge-0123456789abcdef"
    with serve(lambda r: Reply(json.dumps(SCORES))) as judge_server, \
            serve(lambda r: Reply(json.dumps(SCORES))) as grader_server:
        judge = _judge(judge_server.url, api_key=judge_key)
        plain = Grader(TEMPLATE, {"model": "m", "base_url": grader_server.url}, judge=judge).grade({"content": "x"})
        monkeypatch.setenv("GRADER_ENDPOINT_KEY", "grader-own-key")
        keyed = Grader(TEMPLATE, {"model": "m", "base_url": grader_server.url, "api_key_env": "GRADER_ENDPOINT_KEY"},
                       judge=judge).grade({"content": "x"})
        same = Grader(TEMPLATE, {"model": "m"}, judge=judge).grade({"content": "x"})
    assert plain.ok and keyed.ok and same.ok
    sent = [request.headers.get("authorization") for request in grader_server.requests]
    assert sent == ["Bearer no-key", "Bearer grader-own-key"]
    assert [request.headers.get("authorization") for request in judge_server.requests] == [f"Bearer {judge_key}"]


def test_an_api_key_env_that_is_not_set_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRADER_ENDPOINT_KEY", raising=False)
    with pytest.raises(GraderError, match="api_key_env: the environment variable GRADER_ENDPOINT_KEY is not set "
                                          r"\(expected the key of http://127.0.0.1:9/v1\)"):
        Grader(TEMPLATE, {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "GRADER_ENDPOINT_KEY"},
               judge=_judge(_closed_url()))
    with pytest.raises(GraderError, match="api_key_env: String should match pattern"):
        GraderModelConfig.load({"model": "m", "api_key_env": "not a name"})
