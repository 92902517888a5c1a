"""A scripted judge: a real HTTP server on 127.0.0.1 speaking the Chat Completions API.

Each request is answered by a script, a function from the request (its JSON body, headers and
number) to a :class:`Reply`: a status, the assistant's text (or a raw body, or chunks streamed
until the client hangs up), headers and a delay.
The server records every request, counts them and keeps the highest number in flight at once.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One answer: ``text`` as the assistant's message (status 200), or ``body`` as it is, or
    ``chunks`` written one by one with no ``Content-Length`` (unless ``headers`` declare one)."""

    text: str | None = None
    status: int = 200
    body: Any = None
    chunks: Iterable[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    finish_reason: str = "stop"


@dataclass
class Request:
    number: int
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def prompt(self) -> str:
        """Every message's content, joined."""
        return "\n".join(str(m.get("content")) for m in self.body.get("messages", []))

    @property
    def response_format(self) -> str:
        return (self.body.get("response_format") or {}).get("type", "text")


Script = Callable[[Request], Reply]


def verdict(score: float, reason: str = "judged") -> Reply:
    return Reply(json.dumps({"score": score, "reason": reason}))


@dataclass
class JudgeServer:
    script: Script
    url: str = ""
    requests: list[Request] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    streamed: int = 0
    """Bytes of streamed bodies written before the client hung up."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def count(self) -> int:
        return len(self.requests)

    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self.lock:
            request = Request(len(self.requests) + 1, body, headers)
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            reply = self.script(request)
            if reply.delay_s:
                self.stop.wait(reply.delay_s)
            return reply
        finally:
            with self.lock:
                self.in_flight -= 1


def _completion(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-judge", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "finish_reason": reply.finish_reason,
                     "message": {"role": "assistant", "content": reply.text}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 15, "total_tokens": 135},
    }


@contextmanager
def serve(script: Script) -> Iterator[JudgeServer]:
    """Serve ``script`` on a free port of 127.0.0.1 until the block ends; ``server.url`` is the
    base URL (``http://127.0.0.1:<port>/v1``)."""
    state = JudgeServer(script)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - the http.server protocol
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            reply = state.answer(body, {k.lower(): v for k, v in self.headers.items()})
            if state.stop.is_set():
                return
            if reply.chunks is not None:
                self._stream(reply)
                return
            payload = reply.body if reply.body is not None else (
                _completion(reply, str(body.get("model"))) if reply.status == 200
                else {"error": {"message": f"scripted HTTP {reply.status}", "type": "scripted"}})
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass

        def _stream(self, reply: Reply) -> None:
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                for chunk in reply.chunks or ():
                    if state.stop.is_set():
                        return
                    self.wfile.write(chunk)
                    state.streamed += len(chunk)
            except OSError:  # the client hung up
                pass
            self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
