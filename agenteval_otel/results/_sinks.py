"""The results stage: where case results go as an evaluation produces them.

An :class:`EvaluationSink` has the shape of the OpenTelemetry SDK's ``SpanExporter``:
``submit(result)`` for each case result as soon as it is scored, ``force_flush(timeout)`` and
``shutdown(timeout)`` returning whether they succeeded. A sink may also have ``finish(report)``,
called once with the whole report at the end of a run (report writers use it). The run file,
the report writers and the export of verdicts into traces are sinks.

:class:`SinkGroup` fans results out to several sinks and isolates them: a sink that raises is
logged (once per sink and method, then counted) and never aborts the run nor keeps another sink
from its results; flush and shutdown keep one overall deadline across the sinks.

>>> class Printer:
...     def submit(self, result): print(result.eval_id, result.status)
...     def force_flush(self, timeout=None): return True
...     def shutdown(self, timeout=None): return True
>>> from agenteval_otel.results._results import EvalCaseResult
>>> SinkGroup([Printer()]).submit(EvalCaseResult(eval_id="case_1", passed=True))
case_1 passed
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

from agenteval_otel.results._results import EvalCaseResult, EvalReport

__all__ = ["CallbackSink", "EvaluationSink", "SinkGroup"]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

DEFAULT_TIMEOUT_S = 30.0


@runtime_checkable
class EvaluationSink(Protocol):
    """Receives case results as they are scored."""

    def submit(self, result: EvalCaseResult) -> None:
        """Take one case result (called as soon as the case is scored)."""

    def force_flush(self, timeout: float | None = None) -> bool:
        """Finish writing what was submitted within ``timeout`` seconds; whether that worked."""

    def shutdown(self, timeout: float | None = None) -> bool:
        """Flush and release resources within ``timeout`` seconds; later submissions are dropped."""


class CallbackSink:
    """A sink calling ``callback(result)`` for each result (e.g. to advance a progress bar)."""

    def __init__(self, callback: Callable[[EvalCaseResult], Any]) -> None:
        self.callback = callback

    def submit(self, result: EvalCaseResult) -> None:
        """Call the callback."""
        self.callback(result)

    def force_flush(self, timeout: float | None = None) -> bool:
        """Nothing is buffered."""
        return True

    def shutdown(self, timeout: float | None = None) -> bool:
        """Nothing to release."""
        return True


class SinkGroup:
    """Several sinks behind one, each isolated from the others and from the run.

    ``errors`` counts the calls that raised, per sink index. A sink that raises keeps receiving
    later results (a transient failure should not lose the rest of the run).
    """

    def __init__(self, sinks: Iterable[EvaluationSink] = ()) -> None:
        self.sinks: list[EvaluationSink] = list(sinks)
        self.errors: dict[int, int] = {}
        self._reported: set[tuple[int, str]] = set()

    def _call(self, index: int, method: str, *args: Any) -> Any:
        sink = self.sinks[index]
        function = getattr(sink, method, None)
        if function is None:
            return None
        try:
            return function(*args)
        except Exception:
            self.errors[index] = self.errors.get(index, 0) + 1
            level = logging.DEBUG if (index, method) in self._reported else logging.WARNING
            self._reported.add((index, method))
            _log.log(level, "evaluation sink %r: %s raised; the run goes on", sink, method, exc_info=True)
            return False

    def submit(self, result: EvalCaseResult) -> None:
        """Hand ``result`` to every sink."""
        for index in range(len(self.sinks)):
            self._call(index, "submit", result)

    def finish(self, report: EvalReport) -> None:
        """Hand the whole report to every sink that takes one (``finish(report)``)."""
        for index in range(len(self.sinks)):
            self._call(index, "finish", report)

    def _each_within(self, method: str, timeout: float | None) -> bool:
        deadline = time.monotonic() + (DEFAULT_TIMEOUT_S if timeout is None else timeout)
        ok = True
        for index in range(len(self.sinks)):
            remaining = max(0.0, deadline - time.monotonic())
            ok = self._call(index, method, remaining) is not False and ok
        return ok

    def force_flush(self, timeout: float | None = None) -> bool:
        """Flush every sink within one overall deadline; ``False`` if any failed."""
        return self._each_within("force_flush", timeout)

    def shutdown(self, timeout: float | None = None) -> bool:
        """Shut every sink down within one overall deadline; ``False`` if any failed."""
        return self._each_within("shutdown", timeout)
