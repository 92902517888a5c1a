"""``EvalSetBuilder``: a fluent way to write eval sets in code.

>>> eval_set = (
...     EvalSetBuilder("weather-agent")
...     .add_case(query="Weather in London?", expected="Sunny.", expected_tools=["get_weather"])
...     .build()
... )
>>> [case.expected_tools[0].name for case in eval_set.eval_cases]
['get_weather']
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from typing_extensions import Self

from agenteval_otel.evalsets._models import (
    ConversationTurn,
    EvalCase,
    EvalSet,
    SessionInput,
    ToolCall,
)

__all__ = ["EvalSetBuilder"]

ExpectedTools = Sequence[ToolCall | str]


class EvalSetBuilder:
    """Collects eval cases and builds an :class:`EvalSet` (its id a generated UUID).

    A case added without ``case_id`` is named by its position: ``case_001``, ``case_002``, ...
    (the next free number if that id is taken), so ids stay readable and the same from one
    build to the next; they name console rows, report entries and pytest test ids.
    """

    def __init__(self, name: str = "", *, eval_set_id: str | None = None, description: str = ""):
        self.name = name
        self.eval_set_id = eval_set_id or str(uuid.uuid4())
        self.description = description
        self.metadata: dict[str, Any] = {}
        self._cases: list[EvalCase] = []

    def _next_id(self) -> str:
        """``case_NNN`` for the next position, or the first free number after it."""
        taken = {case.eval_id for case in self._cases}
        number = len(self._cases) + 1
        while f"case_{number:03d}" in taken:
            number += 1
        return f"case_{number:03d}"

    def _append(self, case: EvalCase) -> Self:
        if any(existing.eval_id == case.eval_id for existing in self._cases):
            raise ValueError(f"duplicate case id {case.eval_id!r} in eval set {self.name!r}")
        self._cases.append(case)
        return self

    def add_case(
        self,
        query: str,
        expected: str | None = None,
        expected_tools: ExpectedTools | None = None,
        expected_node_order: Sequence[str] | None = None,
        case_id: str | None = None,
        *,
        name: str = "",
        description: str = "",
        tags: Sequence[str] = (),
        metadata: dict[str, Any] | None = None,
        session_input: SessionInput | None = None,
    ) -> Self:
        """A single-turn case: the user's ``query`` and the ``expected`` response.

        ``expected_tools`` are tool names or :class:`ToolCall` objects (with arguments).
        """
        return self._append(
            EvalCase.single_turn(
                user_query=query,
                expected_response=expected,
                expected_tools=expected_tools,
                expected_node_order=expected_node_order,
                eval_id=case_id or self._next_id(),
                name=name,
                description=description,
                tags=tags,
                metadata=metadata,
                session_input=session_input,
            )
        )

    def add_tool_test(
        self,
        query: str,
        tool_name: str,
        tool_args: dict[str, Any] | None = None,
        expected_response: str | None = None,
        case_id: str | None = None,
        **options: Any,
    ) -> Self:
        """A case whose main concern is one tool call; the response defaults to
        ``"Result from <tool_name>"``."""
        return self.add_case(
            query=query,
            expected=expected_response if expected_response is not None
            else f"Result from {tool_name}",
            expected_tools=[ToolCall(name=tool_name, args=dict(tool_args or {}))],
            case_id=case_id,
            **options,
        )

    def add_multi_turn(
        self,
        conversation: Sequence[ConversationTurn],
        expected_tools: ExpectedTools | None = None,
        case_id: str | None = None,
        *,
        expected_node_order: Sequence[str] | None = None,
        name: str = "",
        description: str = "",
        tags: Sequence[str] = (),
        metadata: dict[str, Any] | None = None,
        session_input: SessionInput | None = None,
    ) -> Self:
        """A case of several ``(user, expected reply)`` turns; the expected tools belong to
        the last turn."""
        return self._append(
            EvalCase.multi_turn(
                conversation=conversation,
                expected_tools=expected_tools,
                expected_node_order=expected_node_order,
                eval_id=case_id or self._next_id(),
                name=name,
                description=description,
                tags=tags,
                metadata=metadata,
                session_input=session_input,
            )
        )

    def add(self, case: EvalCase) -> Self:
        """An already built case."""
        return self._append(case)

    def build(self) -> EvalSet:
        """The eval set of every case added so far."""
        return EvalSet(
            eval_set_id=self.eval_set_id,
            name=self.name,
            description=self.description,
            eval_cases=[case.model_copy(deep=True) for case in self._cases],
            metadata=dict(self.metadata),
        )

    def save(self, path: str | Path) -> EvalSet:
        """Build, write to ``path``, and return the eval set."""
        eval_set = self.build()
        eval_set.save(path)
        return eval_set

    @classmethod
    def quick(cls, *pairs: ConversationTurn, name: str = "quick") -> EvalSet:
        """An eval set of single-turn cases from ``(query, expected)`` pairs."""
        builder = cls(name)
        for index, pair in enumerate(pairs):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise ValueError(f"pair {index}: expected a (query, expected) pair, got {pair!r}")
            builder.add_case(query=pair[0], expected=pair[1])
        return builder.build()

    @classmethod
    def from_conversations(
        cls,
        conversations: Iterable[Mapping[str, Any] | Sequence[Mapping[str, Any] | ConversationTurn]],
        name: str = "",
    ) -> EvalSet:
        """An eval set from conversations: a ``{"user": ..., "assistant": ...}`` dict is one
        single-turn case; a list of such dicts, or of ``(user, expected reply)`` pairs as
        :meth:`add_multi_turn` takes, one case of that many turns. A dict may add
        ``"expected_tools"`` and ``"id"``."""
        builder = cls(name)
        for index, conv in enumerate(conversations):
            turns = [conv] if isinstance(conv, Mapping) else list(conv)
            pairs: list[ConversationTurn] = []
            tools: list[ToolCall | str] = []
            case_id = conv.get("id") if isinstance(conv, Mapping) else None
            for turn_index, turn in enumerate(turns):
                where = f"conversations[{index}]" + ("" if isinstance(conv, Mapping) else f"[{turn_index}]")
                if isinstance(turn, (tuple, list)) and len(turn) == 2:
                    pairs.append((turn[0], turn[1]))
                    continue
                if not isinstance(turn, Mapping) or "user" not in turn:
                    raise ValueError(f"{where}: expected a dict with 'user' and 'assistant' or a "
                                     f"(user, expected reply) pair, got {turn!r}")
                pairs.append((turn["user"], turn.get("assistant")))
                tools.extend(turn.get("expected_tools") or [])
                case_id = case_id or turn.get("id")
            if not pairs:
                raise ValueError(f"conversations[{index}]: an empty conversation")
            if len(pairs) == 1:
                builder.add_case(query=pairs[0][0], expected=pairs[0][1], expected_tools=tools,
                                 case_id=case_id)
            else:
                builder.add_multi_turn(pairs, expected_tools=tools, case_id=case_id)
        return builder.build()

    @classmethod
    def from_file(cls, path: str | Path) -> EvalSetBuilder:
        """A builder holding the cases of an eval-set file, to add more."""
        eval_set = EvalSet.load(path)
        builder = cls(eval_set.name, eval_set_id=eval_set.eval_set_id,
                      description=eval_set.description)
        builder.metadata = dict(eval_set.metadata)
        builder._cases = list(eval_set.eval_cases)
        return builder

    def __len__(self) -> int:
        return len(self._cases)
