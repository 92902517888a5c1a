"""The judge client: structured answers from any OpenAI-compatible Chat Completions endpoint,
through the ``openai`` package (imported on the first call, so importing this module is cheap).

One call asks for one answer of a given shape (a pydantic model):

- response format: a JSON schema where the server supports it; JSON mode when it rejects that
  with HTTP 400; plain text last; the shape is also described in the system message, and the
  answer is read tolerantly (:func:`~agenteval_otel.judge.output.parse_reply`) and validated;
- one overall deadline (``timeout_s``) for the call, retries and waits included;
- a size limit (``max_response_bytes``) on every answer, checked on its ``Content-Length`` and
  again while it is read (see :mod:`~agenteval_otel.judge.body_limit`);
- retries on HTTP 429 and 5xx only, honouring ``Retry-After``, else exponential backoff with
  jitter (the openai client's own retries are off);
- at most ``concurrency`` requests in flight over every call made through the client (and its
  :meth:`JudgeClient.recording` views) in one event loop; sync calls share one loop of their own;
- temperature 0 and a seed; ``num_samples`` answers with seeds ``seed``, ``seed + 1``, ...;
- an optional on-disk cache, so a rerun asks the endpoint nothing;
- a GenAI ``chat`` span per call, marked as evaluation traffic.

``acomplete`` (``complete`` from sync code) returns the reply's text as it is, for callers that
read it themselves (graders with their own response parser): no response format, no shape.

Whatever goes wrong raises a :class:`~agenteval_otel.errors.JudgeError` saying what and where,
its cause chained; neither its text nor its cause's holds the API key, whole or in part
(:func:`~agenteval_otel.errors.redact_secrets`).

>>> client = JudgeClient(JudgeSettings(base_url="http://127.0.0.1:9/v1"))
>>> client.settings.endpoint
'http://127.0.0.1:9/v1'
"""

from __future__ import annotations

import asyncio
import copy
import functools
import itertools
import json
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, TypeVar

import orjson
from opentelemetry.trace import Tracer
from pydantic import BaseModel

from agenteval_otel.errors import (
    JudgeError,
    JudgeNotConfiguredError,
    JudgeOutputError,
    JudgeTimeoutError,
    JudgeUnavailableError,
)
from agenteval_otel.judge.body_limit import IDENTITY_ENCODING, ResponseTooLarge, size_limit_hook
from agenteval_otel.judge.cache import JudgeCache
from agenteval_otel.judge.output import parse_reply
from agenteval_otel.judge.retry import Deadline, backoff, retry_after, retryable
from agenteval_otel.judge.settings import OPENAI_BASE_URL, JudgeSettings
from agenteval_otel.judge.telemetry import ContentCleaner, end_chat_span, start_chat_span
from agenteval_otel.judge.usage import JudgeUsage

__all__ = ["JudgeClient", "ResponseFormat"]

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
E = TypeVar("E", bound=BaseException)
ResponseFormat = str  # "json_schema" | "json_object" | "text"
_FALLBACK: dict[str, str] = {"json_schema": "json_object", "json_object": "text"}
TEMPERATURE = 0.0


def _openai() -> ModuleType:
    try:
        import openai
    except ImportError:
        raise JudgeNotConfiguredError(
            "the LLM judge did not run: the openai package is not installed "
            "(pip install 'agenteval-otel[judge]')") from None
    return openai


@functools.lru_cache(maxsize=256)
def _schema(shape: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``shape``, made once per shape (pydantic builds it anew on every call,
    a few milliseconds each: more than the rest of a judge call's own work). Not to be mutated."""
    return shape.model_json_schema()


@functools.lru_cache(maxsize=256)
def _shape_instruction(shape: type[BaseModel]) -> str:
    schema = json.dumps(_schema(shape), separators=(",", ":"))
    return f"Answer with one JSON object, and nothing else, matching this JSON schema: {schema}"


def _with_shape(messages: Sequence[dict[str, Any]], shape: type[BaseModel]) -> list[dict[str, Any]]:
    """``messages`` with the answer's shape described at the end of the system message."""
    out = [dict(m) for m in messages]
    instruction = _shape_instruction(shape)
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0].get('content') or ''}\n\n{instruction}"
    else:
        out.insert(0, {"role": "system", "content": instruction})
    return out


def _format_params(response_format: str, shape: type[BaseModel] | None) -> dict[str, Any]:
    if response_format == "json_schema" and shape is not None:
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": shape.__name__, "schema": _schema(shape), "strict": False}}}
    if response_format == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


class _Reply:
    """A Chat Completions answer read from its JSON body, its fields as attributes (a missing one
    is ``None``), as the openai types give them but without building those types, which costs
    more CPU than the rest of reading the answer. ``ValueError`` for a body that is not a JSON
    object (the call reports it as an answer that is not a readable chat completion)."""

    __slots__ = ("_fields",)

    def __init__(self, fields: dict[str, Any]) -> None:
        self._fields = fields

    @staticmethod
    def of(body: bytes) -> _Reply:
        fields = orjson.loads(body)
        if not isinstance(fields, dict):
            raise ValueError(f"a JSON {type(fields).__name__}, not an object")
        return _Reply(fields)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _reply_value(self._fields.get(name))


def _reply_value(value: Any) -> Any:
    if isinstance(value, dict):
        return _Reply(value)
    if isinstance(value, list):
        return [_reply_value(item) for item in value]
    return value


_CALLS_PER_POOL = 16
"""Judge requests at once per HTTP connection pool (see ``JudgeClient._loop_state``)."""

_sync_lock = threading.Lock()
_sync_loop: asyncio.AbstractEventLoop | None = None


def _loop_for_sync_calls() -> asyncio.AbstractEventLoop:
    """The event loop, in a daemon thread of its own, that runs every sync judge call."""
    global _sync_loop
    with _sync_lock:
        if _sync_loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="agenteval-judge", daemon=True).start()
            _sync_loop = loop
        return _sync_loop


class JudgeClient:
    """Asks an OpenAI-compatible endpoint for structured judgements (see the module docstring).

    ``tracer`` and ``content_policy`` are functions giving the tracer the spans go to and the
    policy their content follows, looked up on every call (default: the global tracer provider,
    and no content recorded).
    """

    def __init__(
        self,
        settings: JudgeSettings | None = None,
        *,
        tracer: Callable[[], Tracer] | None = None,
        content_policy: Callable[[], ContentCleaner] | None = None,
    ) -> None:
        self.settings = settings if settings is not None else JudgeSettings.from_env()
        self.cache = JudgeCache(self.settings.cache_dir) if self.settings.cache_dir else None
        self._tracer = tracer
        self._content_policy = content_policy
        self._formats: dict[str, str] = {}  # model -> the response format its server accepted
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[asyncio.Semaphore, Iterator[Any]]] = \
            weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self.usage = JudgeUsage()
        self.criterion: str | None = None
        self._in_flight = [0]  # shared by every view of the client (see recording)

    @property
    def in_flight(self) -> int:
        """Requests to the endpoint under way now, over every view of this client (what a
        progress bar shows next to the concurrency limit)."""
        return self._in_flight[0]

    def recording(self, usage: JudgeUsage, criterion: str | None = None) -> JudgeClient:
        """A view of this client (same endpoint, cache and concurrency limit) that adds the cost
        of its calls to ``usage`` and names ``criterion`` on their spans."""
        view = copy.copy(self)
        view.usage, view.criterion = usage, criterion
        return view

    # --- public calls -------------------------------------------------------------------------
    async def ajudge(self, messages: Sequence[dict[str, Any]], shape: type[T], *,
                     model: str | None = None, sample: int = 0) -> T:
        """One answer of ``shape`` to ``messages`` (chat messages: ``role``, ``content``)."""
        return await self._call(messages, shape, model, sample)

    async def asample(self, messages: Sequence[dict[str, Any]], shape: type[T], *, n: int = 1,
                      model: str | None = None) -> list[T]:
        """``n`` answers (seeds ``seed`` .. ``seed + n - 1``), asked concurrently."""
        if n < 1:
            raise ValueError(f"n must be at least 1, got {n}")
        return list(await asyncio.gather(*(self.ajudge(messages, shape, model=model, sample=i)
                                            for i in range(n))))

    def judge(self, messages: Sequence[dict[str, Any]], shape: type[T], *,
              model: str | None = None, sample: int = 0) -> T:
        """:meth:`ajudge` from synchronous code (on one event loop, in a thread of its own, that
        runs every sync call)."""
        loop = _loop_for_sync_calls()
        return asyncio.run_coroutine_threadsafe(self._call(messages, shape, model, sample), loop).result()

    async def acomplete(self, messages: Sequence[dict[str, Any]], *, model: str | None = None,
                        temperature: float | None = None) -> str:
        """The reply's text, as it is, to ``messages``: no response format is asked for and no
        shape is described, so the messages say what to answer. Same deadline, retries, limit,
        cache, span and usage as :meth:`ajudge`; ``temperature`` defaults to 0."""
        if not self.settings.configured:
            raise self._not_configured()
        model_name = self.settings.model_for(model)
        wire_messages = [dict(m) for m in messages]
        temperature = TEMPERATURE if temperature is None else temperature
        return await self._answer(wire_messages, None, model_name, None, temperature, str)

    def complete(self, messages: Sequence[dict[str, Any]], *, model: str | None = None,
                 temperature: float | None = None) -> str:
        """:meth:`acomplete` from synchronous code (on the loop :meth:`judge` uses)."""
        loop = _loop_for_sync_calls()
        coroutine = self.acomplete(messages, model=model, temperature=temperature)
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    # --- one call -----------------------------------------------------------------------------
    def _loop_state(self, openai: ModuleType) -> tuple[asyncio.Semaphore, Any]:
        """The concurrency gate of the running event loop and an openai client of its own (built
        once per loop: building one costs tens of milliseconds). Above ``_CALLS_PER_POOL``
        requests at once the loop gets several clients, used in turn: an HTTP connection pool
        scans all its connections for every request, which at 64 connections costs more CPU
        than the rest of the call."""
        loop = asyncio.get_running_loop()
        with self._lock:
            state = self._per_loop.get(loop)
            if state is None:
                settings = self.settings
                pools = -(-settings.concurrency // _CALLS_PER_POOL)
                turns = itertools.cycle([self._new_client(openai) for _ in range(pools)])
                state = self._per_loop[loop] = (asyncio.Semaphore(settings.concurrency), turns)
        gate, in_turn = state
        return gate, next(in_turn)

    def _new_client(self, openai: ModuleType) -> Any:
        settings = self.settings
        http_client = openai.DefaultAsyncHttpxClient(
            headers=IDENTITY_ENCODING, event_hooks={"response": [size_limit_hook(settings.max_response_bytes)]})
        return openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.key, max_retries=0,
                                  timeout=settings.timeout_s, http_client=http_client)

    def _not_configured(self) -> JudgeNotConfiguredError:
        return JudgeNotConfiguredError(
            "the LLM judge did not run: no LLM judge is configured (set AGENTEVAL_JUDGE_BASE_URL to an "
            "OpenAI-compatible endpoint, or OPENAI_API_KEY for OpenAI; AGENTEVAL_JUDGE_MODEL names the model)")

    async def _call(self, messages: Sequence[dict[str, Any]], shape: type[T], model: str | None,
                    sample: int) -> T:
        if not self.settings.configured:
            raise self._not_configured()
        model_name = self.settings.model_for(model)
        seed = None if self.settings.seed is None else self.settings.seed + sample
        return await self._answer(_with_shape(messages, shape), shape, model_name, seed, TEMPERATURE,
                                  lambda text: parse_reply(text, shape))

    async def _answer(self, messages: list[dict[str, Any]], shape: type[BaseModel] | None, model: str,
                      seed: int | None, temperature: float, read: Callable[[str], R]) -> R:
        """``read`` of the answer's text: from the cache when it holds an answer ``read`` accepts,
        else from the endpoint (then cached)."""
        key = JudgeCache.key({
            "endpoint": self.settings.base_url or OPENAI_BASE_URL, "model": model,
            "messages": messages, "temperature": temperature, "seed": seed,
            "schema": _schema(shape) if shape is not None else None})
        if self.cache is not None:
            entry = self.cache.get(key)
            if entry is not None and isinstance(entry.get("text"), str):
                try:
                    answer = read(entry["text"])
                except JudgeOutputError:
                    pass  # an entry that no longer fits the shape: ask again
                else:
                    self.usage.cache_hits += 1
                    return answer
        started = time.monotonic()
        try:
            text = await self._request(messages, shape, model, seed, temperature)
            answer = read(text)
        except JudgeError as exc:
            self.usage.failures += 1
            self._scrubbed(exc)
            raise
        finally:
            self.usage.seconds += time.monotonic() - started
        if self.cache is not None:
            self.cache.put(key, {"model": model, "text": text})
        return answer

    async def _request(self, messages: list[dict[str, Any]], shape: type[BaseModel] | None, model: str,
                       seed: int | None, temperature: float) -> str:
        """The answer's text, after format fallbacks and retries, within the call's deadline (in
        plain text, with no fallback, when there is no ``shape``)."""
        openai = _openai()
        settings = self.settings
        gate, client = self._loop_state(openai)
        tracer = self._tracer() if self._tracer is not None else None
        policy = self._content_policy() if self._content_policy is not None else None
        span = start_chat_span(tracer, policy, model=model, base_url=settings.base_url or OPENAI_BASE_URL,
                               messages=messages, temperature=temperature, seed=seed, criterion=self.criterion,
                               output_type="json" if shape is not None else "text")
        response_format = self._formats.get(model, "json_schema") if shape is not None else "text"
        deadline = Deadline(settings.timeout_s)
        attempts = retries = 0
        response: Any = None
        text: str | None = None
        error: BaseException | None = None
        try:
            while True:
                params: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature,
                                          **_format_params(response_format, shape)}
                if seed is not None and response_format != "text":
                    params["seed"] = seed
                attempts += 1
                try:
                    response = await self._attempt(client, params, deadline, gate)
                except openai.BadRequestError as exc:
                    if response_format in _FALLBACK:  # the server may not support this format
                        response_format = self._formats[model] = _FALLBACK[response_format]
                        continue
                    raise self._http_error(exc, attempts) from self._scrubbed(exc)
                except openai.APIStatusError as exc:
                    if not retryable(exc.status_code) or retries >= settings.max_retries:
                        raise self._http_error(exc, attempts) from self._scrubbed(exc)
                    wait = retry_after(exc.response.headers)
                    wait = wait if wait is not None else backoff(
                        retries, base_s=settings.backoff_s, max_s=settings.max_backoff_s)
                    if wait >= deadline.remaining():
                        raise self._timeout(f"; it answered HTTP {exc.status_code} and a retry after "
                                            f"{wait:.2g} s would pass the deadline") from self._scrubbed(exc)
                    retries += 1
                    self.usage.retries += 1
                    await asyncio.sleep(wait)
                    continue
                break
            self.usage.calls += 1
            text = self._read(response)
            return text
        except JudgeError as exc:
            error = exc
            raise
        except (openai.APITimeoutError, asyncio.TimeoutError) as exc:
            error = self._timeout("")
            raise error from self._scrubbed(exc)
        except Exception as exc:  # every other failure is a judge error too, its cause chained
            error = self._failure(exc, openai)
            raise error from self._scrubbed(exc)
        except BaseException as exc:
            error = exc
            raise
        finally:
            end_chat_span(span, policy, response=response, text=text, attempts=attempts,
                          response_format=response_format, error=error, redact=settings.redact)

    async def _attempt(self, client: Any, params: dict[str, Any], deadline: Deadline,
                       gate: asyncio.Semaphore) -> Any:
        queued = time.monotonic()
        async with gate:
            deadline.extend(time.monotonic() - queued)  # waiting for a turn is not the judge's time
            remaining = deadline.remaining()
            if remaining <= 0:
                raise asyncio.TimeoutError
            self._in_flight[0] += 1
            try:
                # ``post`` sends the body as it is: ``chat.completions.create`` would first walk it
                # against the API's typed parameters, which costs more CPU than the rest of the
                # call and changes nothing in a body of plain JSON values like this one
                body = await asyncio.wait_for(
                    client.post("/chat/completions", cast_to=bytes, body=params, options={"timeout": remaining}),
                    remaining)
                return _Reply.of(body)
            finally:
                self._in_flight[0] -= 1

    def _read(self, response: Any) -> str:
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise JudgeOutputError("the LLM judge gave no usable verdict: its answer has no choices")
        usage = getattr(response, "usage", None)
        if usage is not None:
            self.usage.input_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.usage.output_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
        content = choices[0].message.content
        return content if isinstance(content, str) else ""

    def _timeout(self, detail: str) -> JudgeTimeoutError:
        return JudgeTimeoutError(
            f"the LLM judge did not run: the judge endpoint {self.settings.endpoint} gave no answer within "
            f"{self.settings.timeout_s:g} s{detail}")

    def _http_error(self, exc: Any, attempts: int) -> JudgeUnavailableError:
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        message = self.settings.redact(str(getattr(exc, "message", "") or exc))
        return JudgeUnavailableError(
            f"the LLM judge did not run: the judge endpoint {self.settings.endpoint} answered HTTP "
            f"{exc.status_code}{tries}: {message}")

    def _failure(self, exc: Exception, openai: ModuleType) -> JudgeError:
        """The judge error for a call that failed with ``exc`` (not an HTTP status, not a timeout)."""
        endpoint = self.settings.endpoint
        cause = exc.__cause__ if isinstance(exc, openai.APIConnectionError) and exc.__cause__ else exc
        if isinstance(cause, ResponseTooLarge):
            return JudgeOutputError(f"the LLM judge gave no usable verdict: the judge endpoint {endpoint} gave "
                                    f"{cause} (the judge's max_response_bytes)")
        if isinstance(exc, openai.APIConnectionError):
            return JudgeUnavailableError(
                f"the LLM judge did not run: could not reach the judge endpoint {endpoint} "
                f"({self.settings.redact(str(cause)) or type(cause).__name__})")
        detail = self.settings.redact(_first_line(exc))
        if isinstance(exc, (ValueError, RecursionError, LookupError, TypeError, AttributeError,
                            openai.APIResponseValidationError)):
            return JudgeOutputError(f"the LLM judge gave no usable verdict: the answer of the judge endpoint "
                                    f"{endpoint} is not a readable chat completion ({detail})")
        return JudgeError(f"the LLM judge did not run: calling the judge endpoint {endpoint} failed ({detail})")

    def _scrubbed(self, error: E) -> E:
        """``error`` with the key masked in its text and in every exception chained to it (a
        traceback shows them all)."""
        seen: set[int] = set()
        link: BaseException | None = error
        while link is not None and id(link) not in seen:
            seen.add(id(link))
            try:
                link.args = tuple(self.settings.redact(a) if isinstance(a, str) else a for a in link.args)
                if isinstance(getattr(link, "message", None), str):
                    link.message = self.settings.redact(link.message)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - an exception whose args cannot be set keeps them
                pass
            link = link.__cause__ or link.__context__
        return error


def _first_line(error: BaseException) -> str:
    """``Type: message``, the message's first line cut to 200 characters."""
    try:
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    except Exception:  # noqa: BLE001 - an exception whose message cannot be printed
        message = ""
    message = message if len(message) <= 200 else message[:200] + "…"
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
