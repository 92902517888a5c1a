"""``agenteval_otel.errors``: the one tree of exceptions, and the one URL masker every message and
log line shows URLs through."""

from __future__ import annotations

import pytest

from agenteval_otel.errors import AgentEvalError, TraceReadError, mask_url, mask_url_in
from agenteval_otel.judge.settings import JudgeSettings
from agenteval_otel.traces import jaeger_client


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("http://user:s3cret@jaeger:16686", "http://user:***@jaeger:16686"),
        ("https://s3cret@jaeger/api/traces", "https://***@jaeger/api/traces"),
        ("https://s3cret:@judge.example/v1", "https://***@judge.example/v1"),
        ("http://:s3cret@judge.example/v1", "http://***@judge.example/v1"),
        ("http://us%40er:p%3Ass@host:8000/v1", "http://us%40er:***@host:8000/v1"),
        ("http://jaeger/api?service=a&api_key=s3cret&X-Auth-Token=s3cret",
         "http://jaeger/api?service=a&api_key=***&X-Auth-Token=***"),
        ("http://h/p?password=s3cret&pwd=s3cret&client_secret=s3cret&sig=s3cret&credential=s3cret&q=1",
         "http://h/p?password=***&pwd=***&client_secret=***&sig=***&credential=***&q=1"),
        ("http://h/p?access%5Ftoken=s3cret&flag", "http://h/p?access%5Ftoken=***&flag"),
        ("http://127.0.0.1:4318/v1/traces", "http://127.0.0.1:4318/v1/traces"),
        ("localhost:8000/v1", "localhost:8000/v1"),
        ("", ""),
        ("http://u:s3cret@[::1/x", "http://***@[::1/x"),
        ("http://u:s3cret@[::1/x?token=s3cret", "http://***@[::1/x?***"),
    ],
)
def test_mask_url_hides_user_info_and_secret_parameters(url: str, masked: str) -> None:
    assert mask_url(url) == masked
    assert "s3cret" not in mask_url(url)


def test_mask_url_in_hides_the_url_and_its_password_anywhere_in_a_text() -> None:
    url = "http://admin:p%40ss@jaeger:16686/api/traces?token=t0k"
    text = f"GET {url} failed: login p@ss refused (p%40ss)"
    assert mask_url_in(text, url) == "GET http://admin:***@jaeger:16686/api/traces?token=*** failed: login *** refused (***)"
    assert mask_url_in("no url here", "http://[::1") == "no url here"


def test_the_masker_is_the_one_the_jaeger_client_and_the_judge_show_urls_with() -> None:
    assert jaeger_client.mask_url is mask_url
    settings = JudgeSettings(base_url="https://admin:s3cret@judge.example/v1?api-key=s3cret")
    assert settings.endpoint == "https://admin:***@judge.example/v1?api-key=***"
    assert JudgeSettings(base_url="https://sk-s3cret@judge.example/v1").endpoint == "https://***@judge.example/v1"
    assert JudgeSettings(base_url="http://[::1/v1").endpoint == "http://[::1/v1"  # shown, not raised


def test_every_error_is_an_agenteval_error() -> None:
    assert issubclass(TraceReadError, AgentEvalError) and issubclass(TraceReadError, ValueError)
