"""A step running across several resumptions: a traced generator, or a ``trace_step`` block.

Its span is current only while the step's own code runs (``enter``/``leave`` around each
resumption) and ends exactly once, through :meth:`Run.finish` or :meth:`Run.fail`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import context as otel_context
from opentelemetry.trace import Span

from agenteval_otel.tracing.content import active_policy

if TYPE_CHECKING:
    from agenteval_otel.tracing._steps import Step

__all__ = ["Run"]

_MAX_COLLECTED: Final = 10_000

_attach = otel_context.attach
_detach = otel_context.detach


class Run:
    """A started step; ``pending`` is ``None`` when its span is not recording."""

    __slots__ = ("context", "ended", "pending", "span", "step", "token", "yielded")

    def __init__(self, step: Step, span: Span, pending: dict[str, Any] | None, context: otel_context.Context) -> None:
        self.step = step
        self.span = span
        self.pending = pending
        self.context = context
        self.token: object | None = None
        self.ended = False
        self.yielded: list[Any] | None = None

    @classmethod
    def start(
        cls, step: Step, args: tuple[Any, ...], kwargs: Mapping[str, Any], parent: otel_context.Context | None = None
    ) -> Run | None:
        """Start ``step`` under ``parent`` (default: the current context); not current yet."""
        opened = step.begin(otel_context.get_current() if parent is None else parent, args, kwargs)
        return None if opened is None else cls(step, *opened)

    def enter(self) -> None:
        """Make the step's span current (until :meth:`leave`)."""
        self.token = _attach(self.context)

    def leave(self) -> None:
        """Restore the context that was current before :meth:`enter`."""
        token = self.token
        if token is not None:
            self.token = None
            _detach(token)  # type: ignore[arg-type]

    def collect(self, item: Any) -> None:
        """Keep an item a traced generator yielded: its result when it returns nothing."""
        if self.pending is None or not active_policy().capture:
            return
        if self.yielded is None:
            self.yielded = []
        if len(self.yielded) < _MAX_COLLECTED:
            self.yielded.append(item)

    def finish(self, result: Any) -> None:
        """End the step with ``result`` (a generator's: its return value, else what it yielded)."""
        self.leave()
        if self.ended:
            return
        self.ended = True
        yielded = self.yielded
        if result is None and yielded:
            result = "".join(yielded) if all(type(item) is str for item in yielded) else yielded
        self.step.end(self.span, self.pending, result)

    def fail(self, error: BaseException) -> None:
        """End the step with the user's ``error``."""
        self.leave()
        if self.ended:
            return
        self.ended = True
        self.step.fail(self.span, self.pending, error)
