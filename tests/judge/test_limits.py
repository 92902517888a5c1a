"""The judge's call against a server that trickles its answer: one overall deadline (reliability
promise 20), through the real ``openai`` client (the size limit is tested in ``test_client``)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import openai  # noqa: F401 - loaded here, so the timed calls do not include loading it
import pytest
from pydantic import BaseModel

from agenteval_otel.errors import JudgeTimeoutError
from agenteval_otel.judge import JudgeClient, JudgeSettings
from tests.traces.test_jaeger_client import RawServer

MESSAGES = [{"role": "user", "content": "Is it sunny?"}]


class Verdict(BaseModel):
    score: float


@pytest.fixture
def server() -> Iterator[Any]:
    servers: list[RawServer] = []

    def start(reply: Any) -> RawServer:
        servers.append(RawServer(reply))
        return servers[-1]

    yield start
    for started in servers:
        started.close()


def _client(url: str, timeout_s: float) -> JudgeClient:
    return JudgeClient(JudgeSettings(base_url=f"{url}/v1", model="judge-model", timeout_s=timeout_s, max_retries=0))


def _announce(length: int, sent: bytes, every_s: float) -> Any:
    """A reply announcing ``length`` bytes, then sending ``sent`` and a byte every ``every_s``, for
    8 s at most (then it hangs up, the answer cut short)."""

    def reply(connection: socket.socket, stop: threading.Event) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                           b"Content-Length: %d\r\n\r\n" % length + sent)
        for _ in range(int(8 / every_s)):
            if stop.wait(every_s):
                break
            connection.sendall(b" ")

    return reply


@pytest.mark.promise(15, 20)
def test_an_answer_trickled_past_the_deadline_is_cut_off_at_it(server: Any) -> None:
    trickling = server(_announce(100_000, b'{"id": "x", ', every_s=0.1))  # each read comes in time
    started = time.monotonic()
    with pytest.raises(JudgeTimeoutError, match="gave no answer within 1 s"):
        _client(trickling.url, timeout_s=1.0).judge(MESSAGES, Verdict)
    assert time.monotonic() - started < 2.0
