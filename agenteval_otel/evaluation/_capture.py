"""Capturing the turns of a live evaluation: each turn runs as its own trace, and its
trajectory comes back through an in-process ``TrajectoryProcessor``.

The turn's root span is an ``invoke_agent`` span started through the public capture lifecycle
(``start_step``), so the user input and the reply on it follow the content policy in force
(capture on/off, redaction, truncation) and an agent's exception is recorded cleaned; it carries
the conversation id and the eval ids; every span started inside the turn is tagged with
``agenteval.eval_set_id`` and ``agenteval.eval_id`` so evaluation traffic can be kept out of
production dashboards. Concurrent turns never mix: each is matched to its trajectory by trace id.

A turn run with ``roots=`` keeps its root span open after the agent returned (an :class:`OpenRoot`):
its trajectory is read from the spans ended so far and the open root, and the root takes the
verdicts as attributes once the case is scored, then ends at the time the agent returned, so a
trace viewer shows them on the span itself with the turn's true duration.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.trace import ProxyTracerProvider

from agenteval_otel import semconv as attr
from agenteval_otel.evaluation._agents import AgentCaller, AgentTurn, reply_text
from agenteval_otel.tracing import (
    AgentClaim,
    StepRun,
    current_provider,
    route_to_provider,
    start_step,
    step_kind_of,
)
from agenteval_otel.trajectory.processor import TrajectoryProcessor
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["OpenRoot", "TurnCapture", "capture_for", "evaluation_tags"]

_log = logging.getLogger(__name__)

_EVAL_TAGS: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "agenteval_eval_tags", default=None)

DELIVERY_TIMEOUT_S = 10.0
"""How long to wait for a turn's trajectory after its root span ended."""


@contextmanager
def evaluation_tags(eval_set_id: str, eval_id: str) -> Iterator[None]:
    """Tag every span started inside the block (on a provider a :class:`TurnCapture` watches)
    with the eval set and case ids: the turns' spans, and the calls made for the case between
    turns (a simulated user's)."""
    token = _EVAL_TAGS.set((eval_set_id, eval_id))
    try:
        yield
    finally:
        _EVAL_TAGS.reset(token)


class _EvalTagProcessor(SpanProcessor):
    """Tags every span started inside an evaluated turn with the eval set and case ids."""

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        tags = _EVAL_TAGS.get()
        if tags is not None:
            try:
                span.set_attributes({attr.EVAL_SET_ID: tags[0], attr.EVAL_ID: tags[1]})
            except Exception:  # never reach the app
                _log.debug("could not tag span", exc_info=True)

    def on_end(self, span: ReadableSpan) -> None:
        return None

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int | None = 30000) -> bool:
        return True


class OpenRoot:
    """A turn's root span kept open after the agent returned, to take the turn's verdicts."""

    def __init__(self, run: StepRun, returned_ns: int) -> None:
        self.run = run
        self.returned_ns = returned_ns

    def close(self, attributes: Mapping[str, Any] | None = None) -> None:
        """Set ``attributes`` on the root and end it at the time the agent returned. Once; never raises."""
        if self.run.ended:
            return
        try:
            if attributes:
                self.run.span.set_attributes(dict(attributes))
        except Exception:  # never reach the run
            _log.debug("could not set the verdicts on a turn's root span", exc_info=True)
        self.run.end(end_time=self.returned_ns)


def _set_result(future: asyncio.Future[Trajectory], trajectory: Trajectory) -> None:
    if not future.done():
        future.set_result(trajectory)


class TurnCapture:
    """Runs turns as traces on ``provider`` and returns each turn's trajectory."""

    def __init__(self, provider: SdkTracerProvider) -> None:
        self._pending: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future[Trajectory]]] = {}
        self._lock = threading.Lock()
        self.processor = TrajectoryProcessor(self._deliver, group="trace", skip_empty=False)
        provider.add_span_processor(_EvalTagProcessor())
        provider.add_span_processor(self.processor)
        # a weak reference: the capture must not keep its provider alive (it is the value of
        # a weak-keyed cache whose key is that provider)
        self._provider = weakref.ref(provider)

    @property
    def provider(self) -> SdkTracerProvider | None:
        """The provider the turns are captured on (``None`` once it is gone)."""
        return self._provider()

    def _deliver(self, trajectory: Trajectory) -> None:
        for trace_id in trajectory.trace_ids:
            with self._lock:
                waiting = self._pending.pop(trace_id, None)
            if waiting is not None:
                loop, future = waiting
                loop.call_soon_threadsafe(_set_result, future, trajectory)

    async def run_turn(
        self, caller: AgentCaller, turn: AgentTurn, *, eval_set_id: str, roots: list[OpenRoot] | None = None
    ) -> tuple[Trajectory, str | None]:
        """Call the agent for ``turn`` inside a new trace; its trajectory and its reply's text.

        With ``roots``, the root span stays open when the agent returns and is appended there
        (the caller closes it); an agent that raises ends it at once, as without."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Trajectory] = loop.create_future()
        token = _EVAL_TAGS.set((eval_set_id, turn.eval_id))
        trajectory: Trajectory | None = None
        try:
            if step_kind_of(caller.entry_point) == attr.STEP_AGENT:
                run, reply = await self._run_traced_agent(caller, turn)
            else:
                # the public capture lifecycle: the turn's root span follows the content policy in
                # force (capture on/off, redaction, truncation) like every span of the agent's own
                run = start_step("agent", caller.name, input=turn.user_input, conversation_id=turn.thread_id,
                                 parent_context=otel_context.Context(), tracer_provider=self._provider())
                run.activate()
                try:
                    reply = await caller(turn)
                except BaseException as error:
                    run.fail(error)
                    raise
            trace_id = format(run.span.get_span_context().trace_id, "032x")
            if roots is None:
                with self._lock:
                    self._pending[trace_id] = (loop, future)
            text = reply_text(reply)
            if text is not None:
                run.set_result(text)
            if roots is None:
                run.end()
            else:
                run.deactivate()
                roots.append(OpenRoot(run, time.time_ns()))
                trajectory = self._open_trajectory(run)
        finally:
            _EVAL_TAGS.reset(token)
        if trajectory is None and roots is None:
            try:
                trajectory = await asyncio.wait_for(future, DELIVERY_TIMEOUT_S)
            except asyncio.TimeoutError:
                with self._lock:
                    self._pending.pop(trace_id, None)
                _log.warning("no trajectory arrived for trace %s; scoring the reply alone", trace_id)
        if trajectory is None:
            trajectory = Trajectory(trace_ids=[trace_id], conversation_id=turn.thread_id,
                                    user_input=turn.user_input, final_response=text)
        # the spans hold them as the content policy left them (absent, redacted, truncated):
        # the turn is scored on what was really said
        actual: dict[str, str] = {"user_input": turn.user_input}
        if text is not None:
            actual["final_response"] = text
        return trajectory.model_copy(update=actual), text

    async def _run_traced_agent(self, caller: AgentCaller, turn: AgentTurn) -> tuple[StepRun, Any]:
        """Call an agent decorated with ``@agent``: its own step is the turn's root (one agent
        span per turn), held open after it returns; a plain step stands in when none was held
        (instrumentation suppressed, a span not recorded). The root's user input is the turn's."""
        claim = AgentClaim(input=turn.user_input, conversation_id=turn.thread_id)
        token = otel_context.attach(claim.context())
        try:
            reply = await caller(turn)
        except BaseException:
            claim.release()  # failed: its step ended with the error; abandoned: it ends when done
            raise
        finally:
            otel_context.detach(token)
        run = claim.run
        return (StepRun() if run is None else run), reply

    def _open_trajectory(self, run: StepRun) -> Trajectory | None:
        """The trajectory of ``run``'s trace so far, its root still open; ``None`` if unreadable."""
        span = run.span
        if not isinstance(span, ReadableSpan):  # instrumentation suppressed: no span to read
            return None
        try:
            found = self.processor.open_trace_trajectories(span.get_span_context().trace_id, [span])
        except Exception:  # never lose the turn: it is scored on its reply alone
            _log.warning("could not read an open turn's trace; scoring the reply alone", exc_info=True)
            return None
        return found[0] if found else None


_captures: weakref.WeakKeyDictionary[SdkTracerProvider, TurnCapture] = weakref.WeakKeyDictionary()
_captures_lock = threading.Lock()


def _sdk_provider(provider: trace.TracerProvider | None) -> SdkTracerProvider:
    """The SDK provider our spans go to, making one if tracing was never set up."""
    if isinstance(provider, SdkTracerProvider):
        return provider
    current = current_provider()
    if isinstance(current, SdkTracerProvider):
        return current
    own = SdkTracerProvider(resource=Resource.create({"service.name": "agenteval"}))
    if isinstance(trace.get_tracer_provider(), ProxyTracerProvider):
        trace.set_tracer_provider(own)  # third-party instrumentations are captured too
    else:
        route_to_provider(own)
    return own


def capture_for(provider: trace.TracerProvider | None = None) -> TurnCapture:
    """The turn capture attached to ``provider`` (default: the one our spans go to)."""
    sdk = _sdk_provider(provider)
    with _captures_lock:
        capture = _captures.get(sdk)
        if capture is None:
            capture = _captures[sdk] = TurnCapture(sdk)
        return capture
