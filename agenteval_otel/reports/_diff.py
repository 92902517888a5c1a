"""Expected against actual, row by row: the tool-call diff every report shows.

The rows are the evidence ``trajectory_match`` produced when it scored the turn, so a report
shows exactly the alignment the verdict was based on (under ``ANY_ORDER``, ``[a, b]`` against
``[b, a]`` is two matches). A report never matches calls itself: when the turn was not scored by
``trajectory_match`` (or it failed to score), the calls are listed side by side, unjudged.

>>> from agenteval_otel.results import InvocationResult
>>> from agenteval_otel.trajectory.messages import ToolCall
>>> inv = InvocationResult(invocation_id="t1", expected_tool_calls=[ToolCall(name="a")],
...                        actual_tool_calls=[ToolCall(name="b", args={"x": 1})])
>>> [(row.status, row.expected, row.actual) for row in tool_call_rows(inv)]
[('listed', 'a()', 'b({"x": 1})')]
"""

from __future__ import annotations

from itertools import zip_longest

from agenteval_otel.results import EvidenceRow, InvocationResult
from agenteval_otel.trajectory.messages import describe_call

__all__ = ["TOOL_CRITERION", "tool_call_rows"]

TOOL_CRITERION = "trajectory_match"
"""The criterion whose evidence the tool-call diff shows."""


def tool_call_rows(invocation: InvocationResult) -> list[EvidenceRow]:
    """The tool-call rows of one turn: the criterion's evidence, else the calls listed."""
    result = invocation.result(TOOL_CRITERION)
    if result is not None and result.error is None:
        return list(result.evidence)
    return [
        EvidenceRow(status="listed", expected=None if want is None else describe_call(want),
                    actual=None if got is None else describe_call(got))
        for want, got in zip_longest(invocation.expected_tool_calls, invocation.actual_tool_calls)
    ]
