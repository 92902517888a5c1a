"""Expected against actual, row by row: the tool-call diff every report shows.

Calls are aligned by tool name (a longest-matching-blocks alignment, as ``difflib`` does), so a
call with the right name and other arguments shows as a *mismatch* beside its expectation, and
a call nobody expected as *unexpected*.

>>> from agenteval_otel.evaluation.models import ToolCall
>>> [row.status for row in tool_call_diff([ToolCall(name="a"), ToolCall(name="b")],
...                                        [ToolCall(name="b", args={"x": 1})])]
['missing', 'match']
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from agenteval_otel.evaluation.arguments import args_diff
from agenteval_otel.evaluation.criteria.trajectory_match import describe_call
from agenteval_otel.evaluation.models import ToolCall

__all__ = ["DiffRow", "DiffStatus", "tool_call_diff"]

DiffStatus = Literal["match", "mismatch", "missing", "unexpected"]


@dataclass(frozen=True)
class DiffRow:
    """One line of a diff: the expected call, the actual one, and how they differ."""

    status: DiffStatus
    expected: str | None
    actual: str | None
    note: str = ""


def tool_call_diff(expected: list[ToolCall], actual: list[ToolCall]) -> list[DiffRow]:
    """Rows pairing expected and actual calls in order.

    An expected call with empty ``args`` matches any arguments (as in scoring); otherwise the
    arguments must be equal after JSON normalisation to be a ``match``.
    """
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(
        a=[c.name for c in expected], b=[c.name for c in actual], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for want, got in zip(expected[i1:i2], actual[j1:j2]):
                problems = args_diff(want.args, got.args, tool_name=want.name) if want.args else []
                rows.append(DiffRow("mismatch" if problems else "match", describe_call(want),
                                    describe_call(got), "; ".join(problems)))
            continue
        rows.extend(DiffRow("missing", describe_call(c), None) for c in expected[i1:i2])
        rows.extend(DiffRow("unexpected", None, describe_call(c)) for c in actual[j1:j2])
    return rows
