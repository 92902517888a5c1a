"""The same steps as context managers, for code that is not a function of its own.

>>> with trace_step.node("plan"):
...     with trace_step.tool("search", arguments={"q": "weather"}, call_id="call_1") as step:
...         step.set_result(["sunny"])

Each block records exactly what the matching decorator records; ``set_result`` gives the block
its result (the tool's result, the agent's final response, the node's output, the model message,
the condition's value). An exception leaving the block is recorded and propagates unchanged.
A block is a :class:`~agenteval_otel.tracing.StepRun` started when it is entered
(:func:`~agenteval_otel.tracing.start_step` starts one at once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval_otel.tracing.lifecycle import StepKind, StepRun, _prepare

__all__ = ["TraceStep", "TracedStep", "trace_step"]


class TracedStep(StepRun):
    """A step running as a ``with`` block; ``span`` is its OpenTelemetry span once entered."""

    __slots__ = ("_kind", "_name", "_options")

    def __init__(self, kind: StepKind, name: str | None, **options: Any) -> None:
        super().__init__()
        self._kind = kind
        self._name = name
        self._options = options

    def __enter__(self) -> TracedStep:
        prepared = _prepare(self._kind, self._name, **self._options)
        if prepared is not None:
            self._start(*prepared)
        self.activate()
        return self


class TraceStep:
    """The context-manager namespace: ``trace_step.agent/tool/node/message/conditional(...)``."""

    @staticmethod
    def agent(
        name: str, *, input: Any = None, conversation_id: str | None = None, description: str | None = None
    ) -> TracedStep:
        """An agent invocation; ``input`` is the user input, ``set_result`` the final response."""
        return TracedStep("agent", name, input=input, conversation_id=conversation_id, description=description)

    @staticmethod
    def tool(name: str, *, arguments: Mapping[str, Any] | None = None, call_id: str | None = None) -> TracedStep:
        """A tool call with ``arguments`` by name; ``set_result`` gives its result."""
        return TracedStep("tool", name, arguments=arguments, call_id=call_id)

    @staticmethod
    def node(name: str, *, input: Any = None) -> TracedStep:
        """A graph node; its ``input`` and its output (``set_result``) are recorded when given."""
        return TracedStep("node", name, input=input)

    @staticmethod
    def message(*, model: str | None = None, role: str = "assistant", provider: str | None = None) -> TracedStep:
        """A model message; ``set_result`` gives the message (str, dict, response object)."""
        return TracedStep("message", None, model=model, role=role, provider=provider)

    @staticmethod
    def conditional(name: str, *, branches: Mapping[Any, Any] | None = None) -> TracedStep:
        """A conditional edge; ``set_result`` gives the condition's value (the branch, a bool, ...)."""
        return TracedStep("conditional", name, branches=branches)


trace_step = TraceStep()
