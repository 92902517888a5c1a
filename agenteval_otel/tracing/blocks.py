"""The same steps as context managers, for code that is not a function of its own.

>>> with trace_step.node("plan"):
...     with trace_step.tool("search", arguments={"q": "weather"}, call_id="call_1") as step:
...         step.set_result(["sunny"])

Each block records exactly what the matching decorator records; ``set_result`` gives the block
its result (the tool's result, the agent's final response, the node's output, the model message,
the condition's value). An exception leaving the block is recorded and propagates unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.trace import INVALID_SPAN, Span

from agenteval_otel.tracing._run import Run
from agenteval_otel.tracing._steps import (
    AgentStep,
    ConditionalStep,
    MessageStep,
    NodeStep,
    Step,
    ToolStep,
    keyword_binder,
)
from agenteval_otel.tracing.context import CONVERSATION_KEY, TOOL_CALL_KEY

__all__ = ["TraceStep", "TracedStep", "trace_step"]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())


class TracedStep:
    """A step running as a ``with`` block; ``span`` is its OpenTelemetry span."""

    __slots__ = ("_context", "_kwargs", "_result", "_run", "_step", "span")

    def __init__(self, step: Step, kwargs: Mapping[str, Any], context: Mapping[str, Any] | None = None) -> None:
        self._step = step
        self._kwargs = kwargs
        self._context = context
        self._result: Any = None
        self._run: Run | None = None
        self.span: Span = INVALID_SPAN

    def set_result(self, value: Any) -> None:
        """The block's result, recorded when the block ends."""
        self._result = value

    def __enter__(self) -> TracedStep:
        parent = None
        if self._context:
            parent = otel_context.get_current()
            for key, value in self._context.items():
                parent = otel_context.set_value(key, value, parent)
        run = Run.start(self._step, (), self._kwargs, parent)
        if run is not None:
            run.enter()
            self.span = run.span
        self._run = run
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        run, self._run = self._run, None
        if run is None:
            return
        if error is None:
            run.finish(self._result)
        else:
            run.fail(error)


def _name(name: object, default: str) -> str:
    if isinstance(name, str) and name:
        return name
    _logger.warning("step name %r is not a non-empty str; using %r", name, default)
    return default


def _arguments(arguments: object) -> dict[str, Any]:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if arguments is not None:
        _logger.warning("tool arguments %r are not a mapping; not recorded", arguments)
    return {}


class TraceStep:
    """The context-manager namespace: ``trace_step.agent/tool/node/message/conditional(...)``."""

    @staticmethod
    def agent(
        name: str, *, input: Any = None, conversation_id: str | None = None, description: str | None = None
    ) -> TracedStep:
        """An agent invocation; ``input`` is the user input, ``set_result`` the final response."""
        step = AgentStep(_name(name, "agent"), keyword_binder, input_arg="input", description=description)
        context = None if conversation_id is None else {CONVERSATION_KEY: str(conversation_id)}
        return TracedStep(step, {"input": input}, context)

    @staticmethod
    def tool(name: str, *, arguments: Mapping[str, Any] | None = None, call_id: str | None = None) -> TracedStep:
        """A tool call with ``arguments`` by name; ``set_result`` gives its result."""
        step = ToolStep(_name(name, "tool"), keyword_binder)
        context = None if call_id is None else {TOOL_CALL_KEY: str(call_id)}
        return TracedStep(step, _arguments(arguments), context)

    @staticmethod
    def node(name: str, *, input: Any = None) -> TracedStep:
        """A graph node; its ``input`` and its output (``set_result``) are recorded when given."""
        step = NodeStep(_name(name, "node"), keyword_binder, capture_io=True, input_arg="input")
        return TracedStep(step, {"input": input})

    @staticmethod
    def message(*, model: str | None = None, role: str = "assistant", provider: str | None = None) -> TracedStep:
        """A model message; ``set_result`` gives the message (str, dict, response object)."""
        step = MessageStep(
            keyword_binder, model=model, role=role if isinstance(role, str) else "assistant", provider=provider
        )
        return TracedStep(step, {})

    @staticmethod
    def conditional(name: str, *, branches: Mapping[Any, Any] | None = None) -> TracedStep:
        """A conditional edge; ``set_result`` gives the condition's value (the branch, a bool, ...)."""
        step = ConditionalStep(
            _name(name, "conditional"), keyword_binder, branches=branches if isinstance(branches, Mapping) else None
        )
        return TracedStep(step, {})


trace_step = TraceStep()
