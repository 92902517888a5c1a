"""LangGraph instrumentation: a graph's runs, nodes, conditional edges and tool calls as
agenteval-otel steps, so their traces read back as trajectories with no decorator in your code.

Usage
-----

.. code:: python

    from agenteval_instrumentation_langgraph import LangGraphInstrumentor

    LangGraphInstrumentor().instrument(capture_content=True)   # content off without it

    # or no code: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true opentelemetry-instrument python app.py

    graph = builder.compile()
    graph.invoke({"messages": [("user", "Weather in Paris?")]},
                 {"configurable": {"thread_id": "thread-1"}})

What is recorded (the conventions of agenteval-otel's decorators, through the public step
lifecycle ``agenteval_otel.tracing.start_step``):

- each ``invoke`` / ``ainvoke`` / ``stream`` / ``astream`` of a compiled graph: an agent step
  ``invoke_agent {graph name}``, ``gen_ai.conversation.id`` from
  ``config["configurable"]["thread_id"]``, the last user message of the input and the last
  assistant message of the output (a stream's last ``"values"`` chunk) as input and final response;
  a subgraph run inside a node is a child of that node;
- each node run (sync or async, retries included): a node step ``invoke_node {node}`` with, when
  content is captured, its input state and the update it wrote;
- each conditional edge taken: a conditional step named after its routing function, with the
  routing function's value and the branch taken (a list of nodes for a fan-out or ``Send``);
- each tool call run by ``langgraph.prebuilt.ToolNode``: a tool step ``execute_tool {tool}`` with
  its call id and, when content is captured, its arguments and result; a call ToolNode turned
  into an error message is a failed step (``error.type`` ``ToolCallError``).

Content (the user's message, the final response, node states and updates, tool arguments and
results) follows OpenTelemetry's default for a third-party library, as the openai
instrumentation does: off, unless ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is
``true`` / ``span_only`` / ``span_and_event`` or ``instrument(capture_content=True)`` (which
``configure(capture_content=True, instrument=[...])`` passes) turns it on; then agenteval-otel's
content policy in force (``configure(content_policy=...)``) redacts and truncates it, and its
``capture=False`` turns it off again. With content off, a run still records its steps, names,
thread id, the branches taken and errors, which is what node-order and tool-trajectory
criteria without arguments read. ``instrument`` also takes an optional ``tracer_provider``;
without one, steps go where agenteval-otel's steps go (the global provider, or the one a live
evaluation routes them to). Instrumenting twice is instrumenting once; ``uninstrument()`` puts
back the very functions it wrapped. Without ``langgraph`` (or with one older than
``package._instruments`` names) nothing is wrapped and one line is logged.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]
from opentelemetry.instrumentation.utils import unwrap
from wrapt import wrap_function_wrapper

from agenteval_instrumentation_langgraph.package import _instruments
from agenteval_instrumentation_langgraph.version import __version__
from agenteval_otel.tracing import ContentPolicy

__all__ = ["LangGraphInstrumentor", "__version__"]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())


class LangGraphInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Traces LangGraph graphs: ``LangGraphInstrumentor().instrument(capture_content=None, tracer_provider=None)``."""

    _wrapped: tuple[tuple[str, str], ...] = ()
    """``(module, attribute)`` of each function wrapped, to be unwrapped."""

    def instrumentation_dependencies(self) -> Collection[str]:
        """The ``langgraph`` versions this instrumentor supports."""
        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        from agenteval_instrumentation_langgraph.patch import HOOKS, Settings  # imports langgraph: only now

        capture = kwargs.get("capture_content")
        if capture is None:
            capture = ContentPolicy.from_env(default_capture=False).capture
        settings = Settings(bool(capture), kwargs.get("tracer_provider"))
        wrapped: list[tuple[str, str]] = []
        for module, attribute, factory in HOOKS:
            try:
                wrap_function_wrapper(module, attribute, factory(settings))
            except (ImportError, AttributeError):
                _logger.warning("langgraph has no %s.%s; that part of a graph run is not traced", module, attribute)
                continue
            wrapped.append((module, attribute))
        self._wrapped = tuple(wrapped)

    def _uninstrument(self, **kwargs: Any) -> None:
        for module, attribute in self._wrapped:
            owner_path, _, name = attribute.rpartition(".")
            owner: Any = importlib.import_module(module)
            for part in owner_path.split(".") if owner_path else ():
                owner = getattr(owner, part)
            unwrap(owner, name)
        self._wrapped = ()
