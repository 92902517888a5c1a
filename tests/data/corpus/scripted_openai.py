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

A second scenario, a travel-booking agent (``serve("travel")``, see :func:`travel_script` and
``TRAVEL_RUNS``), has three tools: ``search_flights(route, dates)`` (a nested object and a list),
``list_airports()`` (no arguments) and ``book(flight_id)`` (returns a plain string, fails for an
unknown flight); its texts and arguments hold non-ASCII city names, and tool arguments are sent as
UTF-8, not ``\\u`` escapes, as OpenAI does.

When the request offers a tool named ``final_answer`` (smolagents, BeeAI's ``RequirementAgent``),
the answer is given by calling it instead of as text, under the name of its first parameter
(``answer`` for smolagents, ``response`` for BeeAI). Frameworks that replay earlier tool rounds as plain text (smolagents
sends a past call as an assistant message "Calling tools:\n[...]" and its result as a *user*
message "Observation:\n..." or "[Call id: ...\n]Error:\n...", and merges consecutive user messages
into one text, "New task:\n..." included) are understood too: user text is cut at those markers,
result segments are not taken for the question, and each counts as a tool round (a failed call
leaves no "Calling tools:" message, so results are what is counted). DSPy's ``ReAct``, which asks
for text fields rather than API tool calls, is answered in its ChatAdapter format, one scripted
tool call per step (see :func:`_dspy_reply`).

A streamed answer sends the role and text in a first chunk and then each tool call in a chunk of
its own, as OpenAI does. Run ``python scripted_openai.py [port] [scenario]`` to serve on a free
port (printed as ``PORT <n>``), or use :func:`serve` in a ``with`` block.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WEATHER = {"Paris": 18.0, "London": 11.0, "Tokyo": 24.0, "Berlin": 15.0}
ROUTE = {"from": "Zürich", "to": "São Paulo"}
DATES = ["2026-12-01", "2026-12-03"]
FLIGHTS = {"LX92": {"flight_id": "LX92", **ROUTE, "date": "2026-12-01", "price_eur": 890},
           "LX94": {"flight_id": "LX94", **ROUTE, "date": "2026-12-03", "price_eur": 910}}
AIRPORTS = [{"code": "ZRH", "city": "Zürich"}, {"code": "GRU", "city": "São Paulo"},
            {"code": "GVA", "city": "Genève"}]
TRAVEL_RUNS = {
    "run1_sequential": ["Find a flight from Zürich to São Paulo on 2026-12-01 or 2026-12-03 and book the cheaper one."],
    "run2_parallel": ["Which airports do you know, and which flights go from Zürich to São Paulo on 2026-12-01 or "
                      "2026-12-03?"],
    "run3_multi_turn": ["Which flights go from Zürich to São Paulo on 2026-12-01 or 2026-12-03?",
                        "Book the one on 2026-12-03, please."],
    "run4_failing_tool": ["Book flight LX99 from Zürich to São Paulo on 2026-12-01."],
}
"""The travel scenario's runs: the user turns of each, in order (generators name their files after the keys)."""
Script = Callable[[str, int], tuple[list[tuple[str, dict[str, Any]]], "str | None"]]
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
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}


def _cities(text: str) -> list[str]:
    return [c for c in re.findall(r"\b[A-Z][a-z]+\b", text) if c in WEATHER or c == "Atlantis"]


_TEXT_TOOL_RESULT = ("Observation:", "Error:", "Call id:")  # smolagents' user-role tool results
_SEGMENT = re.compile(r"^(?=Observation:|Error:|Call id:|New task:)", re.MULTILINE)


def _segments(content: Any) -> list[str]:
    """A user message's texts, cut where smolagents starts a tool result or a new task.

    smolagents sends tool results as user text and merges consecutive user messages, joining
    their texts with newlines, so one message may hold a task, results and the next task.
    """
    texts = [part.get("text", "") for part in content if isinstance(part, dict)] \
        if isinstance(content, list) else [_text(content)]
    return [segment for text in texts for segment in _SEGMENT.split(text) if segment.strip()]


def _question_and_rounds(messages: list[dict[str, Any]]) -> tuple[str, int]:
    """The question (the latest user text that is not a tool result) and the tool rounds after it.

    A round is an assistant message with ``tool_calls``, or a tool result sent back as user text
    ("Call id: ...\nError: ..." is one result).
    """
    question: list[str] = []
    rounds, asking, previous = 0, False, ""
    for message in messages:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            rounds += 1
        if message.get("role") != "user":
            asking, previous = False, ""
            continue
        for segment in _segments(message.get("content")):
            if segment.startswith(_TEXT_TOOL_RESULT):
                if not (segment.startswith("Error:") and previous.startswith("Call id:")):
                    rounds += 1
                asking = False
            else:
                question, rounds = (question + [segment] if asking else [segment]), 0
                asking = True
            previous = segment
    return " ".join(question), rounds


def script(question: str, rounds: int) -> tuple[list[tuple[str, dict[str, Any]]], str | None]:
    """The script: the tool calls (name, arguments) of round ``rounds`` of ``question``, or its answer."""
    cities = _cities(question)
    if not cities:
        return [], "Hello! Ask me about the weather in any city."
    if "Fahrenheit" in question and len(cities) == 1:
        city = cities[0]
        if rounds == 0:
            return [("get_weather", {"city": city})], None
        if rounds == 1:
            return [("celsius_to_fahrenheit", {"celsius": WEATHER[city]})], None
        return [], f"It is {round(WEATHER[city] * 9 / 5 + 32, 1)} F in {city}."
    if rounds == 0:
        return [("get_weather", {"city": city}) for city in cities], None
    if "Atlantis" in cities:
        return [], "I could not get the weather for Atlantis."
    if len(cities) == 1:
        return [], f"It is {WEATHER[cities[0]]} C in {cities[0]}."
    return [], ", ".join(f"{city}: {WEATHER[city]} C" for city in cities) + "."


def booking(flight_id: str) -> str:
    """What ``book`` returns: a confirmation sentence; an unknown flight fails."""
    if flight_id not in FLIGHTS:
        raise ValueError(f"unknown flight: {flight_id}")
    flight = FLIGHTS[flight_id]
    return f"Booked {flight_id} {flight['from']} → {flight['to']} on {flight['date']}, confirmation ZRH-GRU-{flight_id}."


def flights(route: dict[str, Any], dates: list[str]) -> list[dict[str, Any]]:
    """What ``search_flights`` returns: the flights of the route on those dates."""
    return [f for f in FLIGHTS.values() if f["from"] == route.get("from") and f["to"] == route.get("to")
            and f["date"] in dates]


def _offer(found: list[dict[str, Any]]) -> str:
    return " and ".join(f"{f['flight_id']} on {f['date']} ({f['price_eur']} EUR)" for f in found)


def travel_script(question: str, rounds: int) -> tuple[list[tuple[str, dict[str, Any]]], str | None]:
    """The travel agent's script (the prompts of ``TRAVEL_RUNS``), as :func:`script` for the weather one.

    - book the cheaper one: search_flights(ROUTE, DATES), then book("LX92"), then the booking;
    - airports and flights: list_airports() and search_flights(ROUTE, DATES) at once, then both;
    - which flights go: search_flights(ROUTE, DATES), then the offer and a question back;
      "Book the one on 2026-12-03": book("LX94"), then the booking;
    - book LX99: book("LX99") fails, then search_flights(ROUTE, ["2026-12-01"]), then
      book("LX92"), then the booking and why;
    - anything else: a greeting, no tool.
    """
    search = ("search_flights", {"route": dict(ROUTE), "dates": list(DATES)})
    if "LX99" in question:
        steps = [[("book", {"flight_id": "LX99"})],
                 [("search_flights", {"route": dict(ROUTE), "dates": ["2026-12-01"]})],
                 [("book", {"flight_id": "LX92"})]]
        answer = f"There is no flight LX99, so I booked LX92 instead: {booking('LX92')}"
    elif "book the cheaper" in question:
        steps, answer = [[search], [("book", {"flight_id": "LX92"})]], f"Done. {booking('LX92')}"
    elif "airports" in question:
        airports = ", ".join(f"{a['city']} ({a['code']})" for a in AIRPORTS)
        steps = [[("list_airports", {}), search]]
        answer = f"Airports: {airports}. Flights from Zürich to São Paulo: {_offer(flights(ROUTE, DATES))}."
    elif "Which flights go" in question:
        steps = [[search]]
        answer = f"From Zürich to São Paulo: {_offer(flights(ROUTE, DATES))}. Which one shall I book?"
    elif "Book the one on 2026-12-03" in question:
        steps, answer = [[("book", {"flight_id": "LX94"})]], f"Done. {booking('LX94')}"
    else:
        return [], "Hello! I can search and book flights for you."
    return (steps[rounds], None) if rounds < len(steps) else ([], answer)


SCRIPTS: dict[str, Script] = {"weather": script, "travel": travel_script}
"""The scenarios the server can play, by name."""

_DSPY_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]\n?(.*?)(?=\[\[ ## \w+ ## \]\]|\Z)", re.DOTALL)


def _dspy_fields(text: str) -> dict[str, str]:
    return {name: value.strip() for name, value in _DSPY_FIELD.findall(text)}


def _dspy_reply(messages: list[dict[str, Any]], play: Script = script) -> str | None:
    """The answer to a DSPy ``ReAct`` request (ChatAdapter text fields), or None for any other request.

    DSPy's ReAct does not use the API's tools: its system message asks for the output fields
    ``next_thought``, ``next_tool_name``, ``next_tool_args`` (one tool per step, ``finish`` to stop),
    and its trajectory so far comes back in the last user message as ``tool_name_<n>`` fields;
    then its extract step asks for ``reasoning`` and ``answer``. The script's calls are made one
    per step, in order (so the parallel question becomes two sequential steps).
    """
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    users = [m for m in messages if m.get("role") == "user"]
    if "[[ ## trajectory ## ]]" not in system or not users:
        return None
    fields = _dspy_fields(_text(users[-1].get("content")))
    question = fields.get("question") or next(iter(fields.values()), "")
    steps: list[tuple[str, dict[str, Any]]] = []
    answer: str | None = None
    for rounds in range(10):
        calls, answer = play(question, rounds)
        if answer is not None:
            break
        steps += calls
    if "[[ ## next_tool_name ## ]]" in system:
        done = sum(1 for name, value in fields.items() if name.startswith("tool_name_") and value != "finish")
        name, args = steps[done] if done < len(steps) else ("finish", {})
        thought = f"I will call {name}." if name != "finish" else "I have everything needed to answer."
        return (f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{name}\n\n"
                f"[[ ## next_tool_args ## ]]\n{json.dumps(args)}\n\n[[ ## completed ## ]]")
    return (f"[[ ## reasoning ## ]]\nFrom the trajectory.\n\n[[ ## answer ## ]]\n{answer}\n\n"
            "[[ ## completed ## ]]")


def decide(messages: list[dict[str, Any]], tool_names: set[str], scenario: str = "weather",
           answer_key: str = "answer") -> dict[str, Any]:
    """The assistant message the script of ``scenario`` (a key of ``SCRIPTS``) answers ``messages`` with;
    ``answer_key``: the parameter of an offered ``final_answer`` tool."""
    play = SCRIPTS[scenario]
    dspy_text = _dspy_reply(messages, play)
    if dspy_text is not None:
        return {"role": "assistant", "content": dspy_text}
    question, rounds = _question_and_rounds(messages)
    specs, answer = play(question, rounds)
    calls = [_call(name, args) for name, args in specs]
    if answer is not None and "final_answer" in tool_names:
        calls, answer = [_call("final_answer", {answer_key: answer})], None
    message: dict[str, Any] = {"role": "assistant", "content": answer}
    if calls:
        message["tool_calls"] = calls
    return message


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    scenario = "weather"

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
        functions = [t.get("function") or {} for t in request.get("tools") or [] if isinstance(t, dict)]
        tools = {f.get("name") for f in functions}
        final = next((f for f in functions if f.get("name") == "final_answer"), {})
        answer_key = next(iter((final.get("parameters") or {}).get("properties") or {}), "answer")
        message = decide(request.get("messages") or [], tools, self.scenario, answer_key)
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
        # as OpenAI streams: the role (and text) first, then each tool call in its own chunk (some
        # clients, e.g. llama-index-llms-openai, read only the first tool call of a chunk)
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": message.get("content")}]
        deltas += [{"tool_calls": [{"index": i, **call}]} for i, call in enumerate(message.get("tool_calls") or [])]
        chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if (request.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": usage})
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def _handler(scenario: str) -> type[_Handler]:
    if scenario not in SCRIPTS:
        raise ValueError(f"scenario {scenario!r}: expected one of {', '.join(SCRIPTS)}")
    return type(f"_{scenario.title()}Handler", (_Handler,), {"scenario": scenario})


@contextmanager
def serve(scenario: str = "weather") -> Iterator[str]:
    """Serve ``scenario`` (a key of ``SCRIPTS``) on a free port of 127.0.0.1 for the block; yields
    the base URL (``.../v1``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(scenario))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    port, scenario = (int(sys.argv[1]) if len(sys.argv) > 1 else 0), (sys.argv[2] if len(sys.argv) > 2 else "weather")
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(scenario))
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()
