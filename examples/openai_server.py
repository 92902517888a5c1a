"""A scripted OpenAI-compatible model on 127.0.0.1: Chat Completions and Responses, plain and
streamed (server-sent events), for running ``openai_agent.py`` with no API key:

    python examples/openai_server.py            # prints its base URL; Ctrl-C stops it
    OPENAI_BASE_URL=<that URL> OPENAI_API_KEY=local python examples/openai_agent.py

The default model is a deterministic weather assistant: asked about a city while a
``get_weather`` tool is offered, it calls ``get_weather(city=...)``; given the tool's result, it
answers ``The weather in <city> is <result>.``. ``serve(script)`` runs any other script (a
function from the request to a :class:`Turn`) in a background thread, for tests and benchmarks.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ModelRequest", "ScriptedServer", "Turn", "serve", "weather_model"]


@dataclass
class Turn:
    """What the model answers: text and/or tool calls ``(call id, name, arguments)``; or an HTTP
    error ``status``; ``stream_error`` ends a stream with an error event after its first chunk,
    ``stream_drop`` cuts the connection there."""

    text: str | None = None
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    finish_reason: str | None = None
    status: int = 200
    stream_error: bool = False
    stream_drop: bool = False


@dataclass
class ModelRequest:
    """One request: which API (``chat`` or ``responses``) and its JSON body."""

    api: str
    body: dict[str, Any]

    @property
    def tools(self) -> list[str]:
        """The names of the tools offered."""
        names = []
        for tool in self.body.get("tools") or []:
            function = tool.get("function") or tool
            names.append(str(function.get("name")))
        return names

    def history(self) -> list[dict[str, Any]]:
        """The conversation as ``{"role", "content", "tool_calls"?, "call_id"?}`` dicts, either API."""
        if self.api == "chat":
            return list(self.body.get("messages") or [])
        items = self.body.get("input")
        if isinstance(items, str):
            return [{"role": "user", "content": items}]
        history: list[dict[str, Any]] = []
        for item in items or []:
            kind = item.get("type")
            if kind == "function_call":
                call = {"id": item.get("call_id"), "function": {"name": item.get("name"),
                                                                 "arguments": item.get("arguments")}}
                history.append({"role": "assistant", "content": None, "tool_calls": [call]})
            elif kind == "function_call_output":
                history.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")})
            else:
                content = item.get("content")
                if isinstance(content, list):
                    content = "".join(str(part.get("text", "")) for part in content)
                history.append({"role": item.get("role", "user"), "content": content})
        return history


Script = Callable[[ModelRequest], Turn]
_CITY = re.compile(r"\b(?:in|for|at)\s+([A-Z][a-zA-Z]+)")


def weather_model(request: ModelRequest) -> Turn:
    """The default script: call ``get_weather`` for the city asked about, then answer with its result."""
    history = request.history()
    last_user = max((i for i, m in enumerate(history) if m.get("role") == "user"), default=-1)
    asked = {}  # call id -> city, from the assistant's calls since the user's message
    for message in history[last_user + 1 :]:
        for call in message.get("tool_calls") or []:
            arguments = json.loads(call["function"].get("arguments") or "{}")
            asked[call.get("id")] = arguments.get("city", "?")
    results = [(asked.get(m.get("tool_call_id"), "?"), m.get("content")) for m in history[last_user + 1 :]
               if m.get("role") == "tool"]
    if results:
        return Turn(" ".join(f"The weather in {city} is {result}." for city, result in results))
    question = str(history[last_user].get("content") or "") if last_user >= 0 else ""
    cities = _CITY.findall(question)
    if cities and "get_weather" in request.tools:
        return Turn(tool_calls=[(f"call_{i + 1}", "get_weather", {"city": city}) for i, city in enumerate(cities)])
    return Turn("Hello! Ask me about the weather in a city.")


def _words(value: Any) -> int:
    return len(json.dumps(value).split())


def _chat_completion(turn: Turn, model: str, prompt_tokens: int) -> dict[str, Any]:
    calls = [{"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
             for cid, name, args in turn.tool_calls]
    message: dict[str, Any] = {"role": "assistant", "content": turn.text}
    if calls:
        message["tool_calls"] = calls
    reason = turn.finish_reason or ("tool_calls" if calls else "stop")
    completion_tokens = _words(turn.text or "") + _words(calls) if calls else _words(turn.text or "")
    return {
        "id": "chatcmpl-local", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "finish_reason": reason, "message": message, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def _chat_chunks(turn: Turn, model: str, prompt_tokens: int, with_usage: bool) -> Iterator[dict[str, Any]]:
    whole = _chat_completion(turn, model, prompt_tokens)

    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-local", "object": "chat.completion.chunk", "created": whole["created"],
                "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}

    yield chunk({"role": "assistant", "content": ""})
    text = turn.text or ""
    for start in range(0, len(text), 12):
        yield chunk({"content": text[start : start + 12]})
    for index, call in enumerate(whole["choices"][0]["message"].get("tool_calls", [])):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"], "arguments": arguments[:half]}}]})
        yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]})
    yield chunk({}, whole["choices"][0]["finish_reason"])
    if with_usage:
        yield {"id": "chatcmpl-local", "object": "chat.completion.chunk", "created": whole["created"],
               "model": model, "choices": [], "usage": whole["usage"]}


def _response(turn: Turn, model: str, prompt_tokens: int, status: str = "completed") -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if turn.text is not None:
        output.append({"type": "message", "id": "msg_local", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})
    for cid, name, args in turn.tool_calls:
        output.append({"type": "function_call", "id": f"fc_{cid}", "call_id": cid, "name": name,
                       "arguments": json.dumps(args), "status": "completed"})
    output_tokens = _words(output) if status == "completed" else 0
    return {
        "id": "resp_local", "object": "response", "created_at": int(time.time()), "model": model,
        "status": status, "output": output if status == "completed" else [], "error": None,
        "incomplete_details": None, "instructions": None, "metadata": {}, "parallel_tool_calls": True,
        "temperature": 1.0, "top_p": 1.0, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": prompt_tokens, "output_tokens": output_tokens,
                  "total_tokens": prompt_tokens + output_tokens, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }


def _response_events(turn: Turn, model: str, prompt_tokens: int) -> Iterator[tuple[str, dict[str, Any]]]:
    whole = _response(turn, model, prompt_tokens)
    yield "response.created", {"response": _response(turn, model, prompt_tokens, "in_progress")}
    for index, item in enumerate(whole["output"]):
        yield "response.output_item.added", {"output_index": index, "item": {**item, "status": "in_progress"}}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            for start in range(0, len(text), 12):
                yield "response.output_text.delta", {"item_id": item["id"], "output_index": index,
                                                     "content_index": 0, "delta": text[start : start + 12]}
        else:
            yield "response.function_call_arguments.delta", {"item_id": item["id"], "output_index": index,
                                                             "delta": item["arguments"]}
        yield "response.output_item.done", {"output_index": index, "item": item}
    yield "response.completed", {"response": whole}


@dataclass
class ScriptedServer:
    """The running server: ``base_url`` for the client, the ``requests`` it was sent."""

    script: Script
    base_url: str = ""
    requests: list[ModelRequest] = field(default_factory=list)


def _handler(state: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, events: Iterator[bytes], drop: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in events:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                if drop:  # the body stops short: the client sees the connection cut
                    self.close_connection = True
                    return
            self.wfile.write(b"0\r\n\r\n")

        def do_POST(self) -> None:  # noqa: N802 - the http.server protocol
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            api = "responses" if self.path.rstrip("/").endswith("/responses") else "chat"
            request = ModelRequest(api, body)
            state.requests.append(request)
            turn = state.script(request)
            model = str(body.get("model"))
            if turn.status != 200:
                self._send(turn.status, {"error": {"message": f"scripted HTTP {turn.status}", "type": "scripted"}})
                return
            prompt_tokens = _words(body.get("messages") or body.get("input") or "")
            try:
                if not body.get("stream"):
                    reply = (_chat_completion if api == "chat" else _response)(turn, model, prompt_tokens)
                    self._send(200, reply)
                elif api == "chat":
                    with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                    self._stream(_sse_chat(_chat_chunks(turn, model, prompt_tokens, with_usage), turn.stream_error),
                                 turn.stream_drop)
                else:
                    self._stream(_sse_responses(_response_events(turn, model, prompt_tokens), turn.stream_error),
                                 turn.stream_drop)
            except OSError:  # the client went away (an abandoned stream)
                self.close_connection = True

    return Handler


def _sse_chat(chunks: Iterator[dict[str, Any]], error: bool) -> Iterator[bytes]:
    for number, chunk in enumerate(chunks):
        if error and number == 1:
            yield b'data: {"error": {"message": "scripted stream error", "type": "server_error"}}\n\n'
            return
        yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


def _sse_responses(events: Iterator[tuple[str, dict[str, Any]]], error: bool) -> Iterator[bytes]:
    for number, (kind, data) in enumerate(events):
        if error and number == 1:
            payload = {"type": "error", "sequence_number": number, "message": "scripted stream error"}
            yield b"event: error\ndata: " + json.dumps(payload).encode() + b"\n\n"
            return
        payload = {"type": kind, "sequence_number": number, **data}
        yield f"event: {kind}\ndata: ".encode() + json.dumps(payload).encode() + b"\n\n"


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (a stream left early) is no error of the server's."""


@contextmanager
def serve(script: Script = weather_model) -> Iterator[ScriptedServer]:
    """Serve ``script`` on a free port of 127.0.0.1 until the block ends; ``server.base_url`` is
    the client's base URL (``http://127.0.0.1:<port>/v1``)."""
    state = ScriptedServer(script)
    server = _QuietServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


if __name__ == "__main__":
    with serve() as running:
        print(running.base_url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
