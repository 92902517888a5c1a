"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for generating traces.

The "model" follows a fixed script keyed on the conversation's last user message, so every
framework driving it makes the same tool calls: a real HTTP server speaking the Chat Completions
API (plain and streamed), no key, no network. The weather agent it plays has two tools,
``get_weather(city)`` and ``celsius_to_fahrenheit(celsius)``:

- "What's the weather in Paris in Fahrenheit?": get_weather(Paris), then
  celsius_to_fahrenheit(18.0), then "It is 64.4 F in Paris."
- "What's the weather in London and Tokyo?": both get_weather calls at once (parallel), then
  "London: 11.0 C, Tokyo: 24.0 C."
- "What's the weather in Berlin?": get_weather(Berlin), then "It is 15.0 C in Berlin."
- "What's the weather in Atlantis?": get_weather(Atlantis) (the tool fails), then
  "I could not get the weather for Atlantis."
- anything else: a greeting, no tool.

When the request offers a tool named ``final_answer`` (smolagents), the answer is given by
calling it instead of as text. Run ``python scripted_openai.py`` to serve on a free port (printed
as ``PORT <n>``), or use :func:`serve` in a ``with`` block.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WEATHER = {"Paris": 18.0, "London": 11.0, "Tokyo": 24.0, "Berlin": 15.0}
_ids = itertools.count(1)
_lock = threading.Lock()


def _next_id(prefix: str) -> str:
    with _lock:
        return f"{prefix}_{next(_ids)}"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": _next_id("call"), "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}


def _cities(text: str) -> list[str]:
    return [c for c in re.findall(r"\b[A-Z][a-z]+\b", text) if c in WEATHER or c == "Atlantis"]


def decide(messages: list[dict[str, Any]], tool_names: set[str]) -> dict[str, Any]:
    """The assistant message the script answers ``messages`` with."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    question = _text(messages[last_user].get("content")) if last_user >= 0 else ""
    rounds = sum(1 for m in messages[last_user + 1:] if m.get("role") == "assistant" and m.get("tool_calls"))
    cities = _cities(question)
    calls: list[dict[str, Any]] = []
    answer: str | None = None
    if not cities:
        answer = "Hello! Ask me about the weather in any city."
    elif "Fahrenheit" in question and len(cities) == 1:
        city = cities[0]
        if rounds == 0:
            calls = [_call("get_weather", {"city": city})]
        elif rounds == 1:
            calls = [_call("celsius_to_fahrenheit", {"celsius": WEATHER[city]})]
        else:
            answer = f"It is {round(WEATHER[city] * 9 / 5 + 32, 1)} F in {city}."
    elif rounds == 0:
        calls = [_call("get_weather", {"city": city}) for city in cities]
    elif "Atlantis" in cities:
        answer = "I could not get the weather for Atlantis."
    elif len(cities) == 1:
        answer = f"It is {WEATHER[cities[0]]} C in {cities[0]}."
    else:
        answer = ", ".join(f"{city}: {WEATHER[city]} C" for city in cities) + "."
    if answer is not None and "final_answer" in tool_names:
        calls, answer = [_call("final_answer", {"answer": answer})], None
    message: dict[str, Any] = {"role": "assistant", "content": answer}
    if calls:
        message["tool_calls"] = calls
    return message


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "gpt-4o-mini", "object": "model", "owned_by": "script"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        tools = {t.get("function", {}).get("name") for t in request.get("tools") or [] if isinstance(t, dict)}
        message = decide(request.get("messages") or [], tools)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
        completion_id, created, model = _next_id("chatcmpl"), int(time.time()), request.get("model") or "gpt-4o-mini"
        if not request.get("stream"):
            self._json(200, {"id": completion_id, "object": "chat.completion", "created": created, "model": model,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                             "usage": usage})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        base = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model}
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
        chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]
        if (request.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": usage})
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


@contextmanager
def serve() -> Iterator[str]:
    """Serve on a free port of 127.0.0.1 for the block; yields the base URL (``.../v1``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0), _Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()
