"""The eval-set models: what an agent is asked and what it is expected to do.

``EvalSet`` ⊃ ``EvalCase`` ⊃ ``Invocation`` (one conversation turn) ⊃ ``MessageContent`` and
``ToolCall`` (the data shapes trajectories use too, from ``agenteval_otel.trajectory.messages``). Input from users is strict (unknown fields are errors); convenience constructors
accept plain strings where a message or a tool name is meant.

>>> case = EvalCase.single_turn(user_query="Weather in Tokyo?", expected_tools=["get_weather"])
>>> case.expected_tools[0].name
'get_weather'
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agenteval_otel.evalsets._adk import eval_set_data, file_stem
from agenteval_otel.loading import (
    Document,
    SchemaReferenced,
    read_document,
    validate_file_data,
    write_document,
)
from agenteval_otel.trajectory.messages import MessageContent, ToolCall

__all__ = [
    "ConversationScenario",
    "EvalCase",
    "EvalSet",
    "Invocation",
    "MessageContent",
    "SessionInput",
    "ToolCall",
]

def _new_id() -> str:
    return str(uuid.uuid4())


class _SharedFieldsSet(BaseModel):
    """A model whose set of explicitly given field names may be shared with other instances
    (loaded eval sets share them, see ``_share_fields_set``): an assignment that would add a
    name to it gives the instance a set of its own first."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self.__pydantic_fields_set__:
            object.__setattr__(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        super().__setattr__(name, value)


def _as_message(value: Any, role: str) -> Any:
    return {"role": role, "content": value} if isinstance(value, str) else value


def _as_tool_calls(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [{"name": item} if isinstance(item, str) else item for item in value]
    return value


class Invocation(_SharedFieldsSet):
    """One conversation turn: the user's message and what the agent should do in reply."""

    model_config = ConfigDict(extra="forbid")

    invocation_id: str = Field(default_factory=_new_id)
    user_content: MessageContent
    expected_tool_trajectory: list[ToolCall] = Field(default_factory=list)
    expected_intermediate_responses: list[MessageContent] = Field(default_factory=list)
    expected_final_response: MessageContent | None = None
    expected_node_order: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("user_content", mode="before", json_schema_input_type=str | MessageContent)
    @classmethod
    def _user_text(cls, value: Any) -> Any:
        return _as_message(value, "user")

    @field_validator("expected_final_response", mode="before",
                     json_schema_input_type=str | MessageContent | None)
    @classmethod
    def _assistant_text(cls, value: Any) -> Any:
        return _as_message(value, "assistant")

    @field_validator("expected_tool_trajectory", mode="before", json_schema_input_type=list[str | ToolCall])
    @classmethod
    def _tool_names(cls, value: Any) -> Any:
        return _as_tool_calls(value)


class SessionInput(_SharedFieldsSet):
    """How the agent's session starts. Accepts Google ADK's ``app_name``, ``user_id`` and
    ``state`` (read as ``initial_state``)."""

    model_config = ConfigDict(extra="forbid")

    thread_id: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    initial_state: dict[str, Any] = Field(default_factory=dict)
    app_name: str | None = None
    user_id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _adk_names(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            if "state" in data:
                if "initial_state" in data:
                    raise ValueError("give either 'state' or 'initial_state', not both")
                data["initial_state"] = data.pop("state")
            if "session_id" in data and "thread_id" not in data:
                data["thread_id"] = data.pop("session_id")
        return data


class ConversationScenario(_SharedFieldsSet):
    """A simulated-user case: the user starts with ``starting_prompt`` and follows the plan."""

    model_config = ConfigDict(extra="forbid")

    starting_prompt: str
    conversation_plan: str
    persona: str | dict[str, Any] | None = None
    goals: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _adk_persona(cls, data: Any) -> Any:
        if isinstance(data, dict) and "user_persona" in data:
            data = dict(data)
            data.setdefault("persona", data.pop("user_persona"))
        return data


ConversationTurn = tuple[str, Union[str, None]]


class EvalCase(_SharedFieldsSet):
    """One test scenario: a conversation of invocations, a simulated-user scenario, or both."""

    model_config = ConfigDict(extra="forbid")

    eval_id: str = Field(default_factory=_new_id)
    name: str = ""
    description: str = ""
    conversation: list[Invocation] = Field(default_factory=list)
    conversation_scenario: ConversationScenario | None = None
    session_input: SessionInput | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _has_something_to_run(self) -> EvalCase:
        if not self.conversation and self.conversation_scenario is None:
            raise ValueError(
                f"eval case {self.eval_id!r} needs a 'conversation' (at least one invocation) "
                "or a 'conversation_scenario'"
            )
        return self

    # --- views over the conversation -----------------------------------------------------
    @property
    def invocations(self) -> list[Invocation]:
        """The conversation turns."""
        return self.conversation

    @property
    def expected_response(self) -> str | None:
        """The text of the last turn's expected final response."""
        if not self.conversation or self.conversation[-1].expected_final_response is None:
            return None
        return self.conversation[-1].expected_final_response.get_text()

    @property
    def expected_tools(self) -> list[ToolCall]:
        """Every turn's expected tool calls, in order."""
        return [call for inv in self.conversation for call in inv.expected_tool_trajectory]

    @property
    def expected_node_order(self) -> list[str]:
        """Every turn's expected node visits, in order."""
        return [node for inv in self.conversation for node in inv.expected_node_order]

    # --- constructors ---------------------------------------------------------------------
    @classmethod
    def single_turn(
        cls,
        user_query: str,
        expected_response: str | None = None,
        expected_tools: Sequence[ToolCall | str] | None = None,
        expected_node_order: Sequence[str] | None = None,
        *,
        eval_id: str | None = None,
        name: str = "",
        description: str = "",
        tags: Sequence[str] = (),
        metadata: dict[str, Any] | None = None,
        session_input: SessionInput | None = None,
    ) -> EvalCase:
        """A case of one turn."""
        return cls.multi_turn(
            [(user_query, expected_response)],
            expected_tools,
            expected_node_order,
            eval_id=eval_id,
            name=name,
            description=description,
            tags=tags,
            metadata=metadata,
            session_input=session_input,
        )

    @classmethod
    def multi_turn(
        cls,
        conversation: Sequence[ConversationTurn],
        expected_tools: Sequence[ToolCall | str] | None = None,
        expected_node_order: Sequence[str] | None = None,
        *,
        eval_id: str | None = None,
        name: str = "",
        description: str = "",
        tags: Sequence[str] = (),
        metadata: dict[str, Any] | None = None,
        session_input: SessionInput | None = None,
    ) -> EvalCase:
        """A case of several ``(user, expected assistant reply)`` turns.

        The expected tools and node order belong to the last turn.
        """
        if not conversation:
            raise ValueError("a multi-turn case needs at least one (user, assistant) turn")
        turns = []
        for index, turn in enumerate(conversation):
            if not (isinstance(turn, (tuple, list)) and len(turn) == 2):
                raise ValueError(
                    f"conversation[{index}]: expected a (user, assistant) pair, got {turn!r}"
                )
            user, reply = turn
            last = index == len(conversation) - 1
            turns.append(
                Invocation(
                    user_content=MessageContent.user(user),
                    expected_final_response=(
                        None if reply is None else MessageContent.assistant(reply)
                    ),
                    expected_tool_trajectory=_as_tool_calls(list(expected_tools or [])) if last else [],
                    expected_node_order=list(expected_node_order or []) if last else [],
                )
            )
        return cls(
            eval_id=eval_id or _new_id(),
            name=name,
            description=description,
            conversation=turns,
            tags=list(tags),
            metadata=dict(metadata or {}),
            session_input=session_input,
        )


class EvalSet(SchemaReferenced):
    """A named collection of eval cases, stored as ``*.evalset.json`` (or ``.yaml``)."""

    model_config = ConfigDict(extra="forbid")

    eval_set_id: str = Field(default_factory=_new_id)
    """Generated when not given; :meth:`load` derives a missing one from the file's name."""
    name: str = ""
    description: str = ""
    eval_cases: list[EvalCase] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique_ids(self) -> EvalSet:
        first_index: dict[str, int] = {}
        for index, case in enumerate(self.eval_cases):
            if case.eval_id in first_index:
                raise ValueError(
                    f"eval_cases[{index}].eval_id: duplicate eval_id {case.eval_id!r} "
                    f"(already used by eval_cases[{first_index[case.eval_id]}]); "
                    "expected a unique eval_id per case"
                )
            first_index[case.eval_id] = index
        return self

    def get_case(self, eval_id: str) -> EvalCase:
        """The case with ``eval_id``; ``KeyError`` if there is none."""
        for case in self.eval_cases:
            if case.eval_id == eval_id:
                return case
        raise KeyError(eval_id)

    # --- files ----------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> EvalSet:
        """Load an eval set, JSON or YAML (``.yaml``/``.yml``): ours, or Google ADK's (current,
        camelCase, legacy list forms).

        Raises ``EvalSetLoadError`` naming the file, the JSON path or line, and what was
        expected.
        """
        document = read_document(path)
        file = document.path
        data = _with_stable_ids(eval_set_data(document.data, file), file)
        # The raw cases are freed one by one as they are validated: the document keeps only its lines.
        document = replace(document, data=None)
        return _validated_eval_set(cls, data, document)

    @classmethod
    def from_file(cls, path: str | Path) -> EvalSet:
        """Same as :meth:`load`."""
        return cls.load(path)

    def save(self, path: str | Path) -> Path:
        """Write the eval set as JSON, or YAML for ``.yaml``/``.yml``, with its ``$schema``
        (``agenteval schema evalset``); ``load`` of the file gives an equal object."""
        return write_document(path, self.model_dump(mode="json"), "evalset")

    def to_file(self, path: str | Path) -> Path:
        """Same as :meth:`save`."""
        return self.save(path)


def _with_stable_ids(data: Any, file: Path) -> Any:
    """Eval-set data whose missing ids are derived from the file, so that every load of it gives
    the same ids (a run file made for it is found again by ``--resume``): the eval set's is
    the file's name without its extensions, a case's ``case-`` and a hash of its content."""
    if not isinstance(data, dict):
        return data
    if not data.get("eval_set_id"):
        data["eval_set_id"] = file_stem(file)
    cases = data.get("eval_cases")
    if not isinstance(cases, list):
        return data
    taken = {case.get("eval_id") for case in cases if isinstance(case, dict)}
    for case in cases:
        if isinstance(case, dict) and not case.get("eval_id"):
            digest = hashlib.sha256(json.dumps(case, sort_keys=True, default=str).encode()).hexdigest()
            eval_id = base = f"case-{digest[:12]}"
            for number in itertools.count(2):
                if eval_id not in taken:
                    break
                eval_id = f"{base}-{number}"  # the same case twice
            case["eval_id"] = eval_id
            taken.add(eval_id)
    return data


def _validated_eval_set(cls: type[EvalSet], data: Any, document: Document) -> EvalSet:
    """Validate eval-set data one case at a time, each raw case freed once its model is built
    and held lean (``_held_lean``), so loading never holds every raw case and every model at
    once. ``data`` is consumed. Errors are pydantic's for the whole set, as one validation
    would give them: the cases that failed are validated again in place."""
    file = document.path
    raw_cases = data.get("eval_cases") if isinstance(data, dict) else None
    if not isinstance(raw_cases, list):
        return validate_file_data(cls, data, file, document=document)
    cases: list[Any] = []
    for index, raw in enumerate(raw_cases):
        raw_cases[index] = None
        try:
            cases.append(_held_lean(EvalCase.model_validate(raw)))
        except ValidationError:
            cases.append(raw)
    return validate_file_data(cls, {**data, "eval_cases": cases}, file, document=document)


_SHARED_FIELDS_SETS: dict[tuple[type[BaseModel], frozenset[str]], set[str]] = {}


def _share_fields_set(model: BaseModel) -> None:
    """Point a loaded model at one set of given field names shared by every model of its class
    given the same fields, instead of a set of its own. Pydantic only ever adds names to that
    set (on assignment; ``model_copy`` adds to its copy's own): a model given every field never
    changes the set by it, and our models copy the set before an assignment that would
    (``_SharedFieldsSet``), so the sharing is never observable."""
    names = model.__pydantic_fields_set__
    if isinstance(model, _SharedFieldsSet) or len(names) == len(type(model).model_fields):
        shared = _SHARED_FIELDS_SETS.setdefault((type(model), frozenset(names)), names)
        object.__setattr__(model, "__pydantic_fields_set__", shared)


def _held_lean(case: EvalCase) -> EvalCase:
    """A loaded case with its field-name sets shared, and its tool names and the repeated
    string values of its tool arguments held once (a case often calls one tool with one value
    many times)."""
    _share_fields_set(case)
    for part in (case.session_input, case.conversation_scenario):
        if part is not None:
            _share_fields_set(part)
    values: dict[str, str] = {}
    for turn in case.conversation:
        _share_fields_set(turn)
        for message in (turn.user_content, turn.expected_final_response, *turn.expected_intermediate_responses):
            if message is not None:
                _share_fields_set(message)
        for call in turn.expected_tool_trajectory:
            _share_fields_set(call)
            if type(call.name) is str:
                call.__dict__["name"] = sys.intern(call.name)
            args = call.args
            for key, value in args.items():
                if type(value) is str:
                    args[key] = values.setdefault(value, value)
    return case
