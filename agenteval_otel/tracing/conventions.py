"""Which semantic conventions our spans are written in: the GenAI ones always, OpenInference beside them.

Our steps always carry the OpenTelemetry GenAI keys and our own ``agenteval.*`` keys. Backends
that key on OpenInference instead (Phoenix, Arize) need ``openinference.span.kind``,
``input.value``/``output.value`` and the ``llm.*`` / ``tool.*`` keys to type a span and show its
input and output; ``configure(conventions=("gen_ai", "openinference"))`` or
``AGENTEVAL_CONVENTIONS=gen_ai,openinference`` makes every step carry those too. They are derived
from the step's GenAI attributes when it ends, so they say what those say, under the same
content policy: with content capture off there are no input or output values, only the kinds,
names, model and token counts.

>>> attributes = {"agenteval.step.type": "tool", "gen_ai.tool.name": "get_weather",
...               "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": '{"city":"Paris"}'}
>>> keys = openinference_attributes(attributes)
>>> keys["openinference.span.kind"], keys["tool.name"], keys["input.value"], keys["input.mime_type"]
('TOOL', 'get_weather', '{"city":"Paris"}', 'application/json')
>>> set_conventions(("gen_ai", "openinference")); active_conventions()
('gen_ai', 'openinference')
>>> set_conventions(conventions_from_env())
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from typing import Any, Final

import orjson

from agenteval_otel import semconv as attr
from agenteval_otel.tracing.content import active_policy

__all__ = [
    "CONVENTIONS",
    "CONVENTIONS_ENV",
    "GEN_AI",
    "OPENINFERENCE",
    "active_conventions",
    "conventions_from_env",
    "openinference_attributes",
    "set_conventions",
    "with_conventions",
]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())

GEN_AI: Final = "gen_ai"
OPENINFERENCE: Final = "openinference"
CONVENTIONS: Final = (GEN_AI, OPENINFERENCE)
"""The conventions we can write, in the order ``active_conventions()`` names them."""
CONVENTIONS_ENV: Final = "AGENTEVAL_CONVENTIONS"

_KINDS: Final = {
    attr.STEP_AGENT: attr.OI_KIND_AGENT,
    attr.STEP_NODE: attr.OI_KIND_CHAIN,
    attr.STEP_CONDITIONAL: attr.OI_KIND_CHAIN,
    attr.STEP_TOOL: attr.OI_KIND_TOOL,
    attr.STEP_MESSAGE: attr.OI_KIND_LLM,
}
_STATIC: Final = (  # GenAI key → OpenInference key, copied as they are
    (attr.GEN_AI_CONVERSATION_ID, attr.OI_SESSION_ID),
    (attr.GEN_AI_AGENT_NAME, attr.OI_AGENT_NAME),
    (attr.GEN_AI_TOOL_NAME, attr.OI_TOOL_NAME),
    (attr.GEN_AI_TOOL_DESCRIPTION, attr.OI_TOOL_DESCRIPTION),
    (attr.GEN_AI_TOOL_CALL_ID, attr.OI_TOOL_ID),
    (attr.GEN_AI_PROVIDER_NAME, attr.OI_LLM_PROVIDER),
    (attr.GEN_AI_PROVIDER_NAME, attr.OI_LLM_SYSTEM),
    (attr.GEN_AI_USAGE_INPUT_TOKENS, attr.OI_LLM_TOKEN_COUNT_PROMPT),
    (attr.GEN_AI_USAGE_OUTPUT_TOKENS, attr.OI_LLM_TOKEN_COUNT_COMPLETION),
)
_IO: Final[dict[str, tuple[str | None, str | None]]] = {  # step type → (input key, output key)
    attr.STEP_AGENT: (attr.AGENT_INPUT, attr.AGENT_OUTPUT),
    attr.STEP_NODE: (attr.NODE_INPUT, attr.NODE_OUTPUT),
    attr.STEP_TOOL: (attr.GEN_AI_TOOL_CALL_ARGUMENTS, attr.GEN_AI_TOOL_CALL_RESULT),
    attr.STEP_CONDITIONAL: (None, attr.CONDITION_BRANCH),
    attr.STEP_MESSAGE: (attr.GEN_AI_INPUT_MESSAGES, attr.MESSAGE_CONTENT),
}

_VERDICT: Final = (
    (attr.GEN_AI_EVALUATION_SCORE_VALUE, "score"),
    (attr.GEN_AI_EVALUATION_SCORE_LABEL, "label"),
    (attr.GEN_AI_EVALUATION_EXPLANATION, "explanation"),
)

openinference: bool = False
"""Whether OpenInference keys are written (read on every step end: one module attribute)."""


def _parse(names: Iterable[object], where: str) -> tuple[str, ...]:
    """The known conventions among ``names``, in our order; a ``ConfigError`` naming an unknown one."""
    found = set()
    for name in names:
        if not isinstance(name, str) or name.strip().lower() not in CONVENTIONS:
            from agenteval_otel.errors import ConfigError  # loaded only to raise: capture stays light

            raise ConfigError(f"{where}: unknown convention {name!r}; expected some of {', '.join(CONVENTIONS)}")
        found.add(name.strip().lower())
    return tuple(name for name in CONVENTIONS if name in found or name == GEN_AI)


def set_conventions(conventions: Iterable[str]) -> None:
    """Write the keys of ``conventions`` (``"gen_ai"``, ``"openinference"``) on every step from now on.

    The GenAI keys are always written (our readers and the evaluation rely on them), listed or
    not. A str or an unknown name is a ``ConfigError``."""
    global openinference
    if isinstance(conventions, str):
        from agenteval_otel.errors import ConfigError

        raise ConfigError(f"conventions must be a sequence of names such as ('gen_ai', 'openinference'), "
                          f"not the str {conventions!r}")
    openinference = OPENINFERENCE in _parse(conventions, "conventions")


def active_conventions() -> tuple[str, ...]:
    """The conventions our steps are written in now."""
    return CONVENTIONS if openinference else (GEN_AI,)


def conventions_from_env() -> tuple[str, ...]:
    """The conventions ``AGENTEVAL_CONVENTIONS`` names (comma-separated; default: GenAI only).
    An unknown name is logged and left out."""
    names = [name for name in os.environ.get(CONVENTIONS_ENV, "").split(",") if name.strip()]
    known = []
    for name in names:
        if name.strip().lower() in CONVENTIONS:
            known.append(name)
        else:
            _logger.warning("%s: unknown convention %r ignored; expected some of %s",
                            CONVENTIONS_ENV, name.strip(), ", ".join(CONVENTIONS))
    return _parse(known, CONVENTIONS_ENV)


def _mime(text: str) -> str:
    """JSON when ``text`` is a JSON object or array, else plain text."""
    if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
        try:
            orjson.loads(text)
        except orjson.JSONDecodeError:
            return attr.MIME_TEXT
        return attr.MIME_JSON
    return attr.MIME_TEXT


def _flatten_messages(prefix: str, text: object, out: dict[str, Any]) -> None:
    """GenAI messages JSON (``[{"role", "parts": [...]}]``) as OpenInference's flattened keys;
    nothing when it does not parse (a truncated value)."""
    if not isinstance(text, str):
        return
    try:
        messages = orjson.loads(text)
    except orjson.JSONDecodeError:
        return
    if not isinstance(messages, list):
        return
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        base = f"{prefix}.{i}."
        role = message.get("role")
        if isinstance(role, str):
            out[base + attr.OI_MESSAGE_ROLE] = role
        texts: list[str] = []
        calls = 0
        for part in message.get("parts") or ():
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("content"), str):
                texts.append(part["content"])
            elif kind == "tool_call":
                call = f"{base}{attr.OI_MESSAGE_TOOL_CALLS}.{calls}."
                calls += 1
                if part.get("id") is not None:
                    out[call + attr.OI_TOOL_CALL_ID] = str(part["id"])
                if isinstance(part.get("name"), str):
                    out[call + attr.OI_TOOL_CALL_FUNCTION_NAME] = part["name"]
                if "arguments" in part:
                    arguments = part["arguments"]
                    out[call + attr.OI_TOOL_CALL_FUNCTION_ARGUMENTS] = (
                        arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode())
            elif kind == "tool_call_response":
                if part.get("id") is not None:
                    out[base + attr.OI_MESSAGE_TOOL_CALL_ID] = str(part["id"])
                response = part.get("response")
                if response is not None:
                    texts.append(response if isinstance(response, str) else orjson.dumps(response).decode())
        if texts:
            out[base + attr.OI_MESSAGE_CONTENT] = "".join(texts)


def _evaluation(attributes: Mapping[str, Any], content: bool) -> dict[str, Any]:
    out: dict[str, Any] = {attr.OI_SPAN_KIND: attr.OI_KIND_EVALUATOR}
    name = attributes.get(attr.GEN_AI_EVALUATION_NAME)
    if content and isinstance(name, str):
        out[attr.OI_INPUT_VALUE] = name
        out[attr.OI_INPUT_MIME_TYPE] = attr.MIME_TEXT
        verdict = {field: attributes[key] for key, field in _VERDICT if key in attributes}
        out[attr.OI_OUTPUT_VALUE] = orjson.dumps(verdict).decode()
        out[attr.OI_OUTPUT_MIME_TYPE] = attr.MIME_JSON
    return out


_PLAIN: Final = frozenset({str, int, float, bool})
"""The value types the keys are copied with (any other value is left out)."""
_STATIC_BY_TYPE: Final = {
    step_type: tuple((source, target) for source, target in _STATIC if wanted(source))
    for step_type, wanted in (
        (attr.STEP_AGENT, lambda key: key in (attr.GEN_AI_CONVERSATION_ID, attr.GEN_AI_AGENT_NAME)),
        (attr.STEP_NODE, lambda key: key == attr.GEN_AI_CONVERSATION_ID),
        (attr.STEP_CONDITIONAL, lambda key: key == attr.GEN_AI_CONVERSATION_ID),
        (attr.STEP_TOOL, lambda key: key in (attr.GEN_AI_CONVERSATION_ID, attr.GEN_AI_TOOL_NAME,
                                             attr.GEN_AI_TOOL_DESCRIPTION, attr.GEN_AI_TOOL_CALL_ID)),
        (attr.STEP_MESSAGE, lambda key: key not in (attr.GEN_AI_AGENT_NAME, attr.GEN_AI_TOOL_NAME,
                                                    attr.GEN_AI_TOOL_DESCRIPTION, attr.GEN_AI_TOOL_CALL_ID)),
    )
}
"""The keys of ``_STATIC`` a step of each type can carry (the others are not looked up)."""


def openinference_attributes(attributes: Mapping[str, Any], *, content: bool = True) -> dict[str, Any]:
    """The OpenInference keys for a span carrying these GenAI and ``agenteval.*`` attributes: its
    kind, its input and output values (only with ``content``), session, agent, tool and model
    keys, token counts, and an LLM span's messages flattened. Empty for a span of no kind we know.
    Values are copied from ``attributes`` (plain values only), so they were cleaned by the content
    policy already."""
    step_type = attributes.get(attr.STEP_TYPE)
    kind = _KINDS.get(step_type) if isinstance(step_type, str) else None
    if kind is None or not isinstance(step_type, str):
        return _evaluation(attributes, content) if attributes.get(attr.EVALUATION_MARKER) else {}
    out: dict[str, Any] = {attr.OI_SPAN_KIND: kind}
    for source, target in _STATIC_BY_TYPE[step_type]:
        value = attributes.get(source)
        if value is not None and type(value) in _PLAIN:
            out[target] = value
    if step_type == attr.STEP_MESSAGE:
        model = attributes.get(attr.GEN_AI_RESPONSE_MODEL) or attributes.get(attr.GEN_AI_REQUEST_MODEL)
        if isinstance(model, str) and model:
            out[attr.OI_LLM_MODEL_NAME] = model
        prompt = out.get(attr.OI_LLM_TOKEN_COUNT_PROMPT)
        completion = out.get(attr.OI_LLM_TOKEN_COUNT_COMPLETION)
        if isinstance(prompt, int) and isinstance(completion, int):
            out[attr.OI_LLM_TOKEN_COUNT_TOTAL] = prompt + completion
    if not content:
        return out
    input_key, output_key = _IO[step_type]
    if input_key is not None and type(value := attributes.get(input_key)) is str:
        out[attr.OI_INPUT_VALUE] = value
        out[attr.OI_INPUT_MIME_TYPE] = attr.MIME_JSON if step_type == attr.STEP_TOOL else _mime(value)
    if output_key is not None and type(value := attributes.get(output_key)) is str:
        out[attr.OI_OUTPUT_VALUE] = value
        out[attr.OI_OUTPUT_MIME_TYPE] = attr.MIME_JSON if step_type == attr.STEP_TOOL else _mime(value)
    if step_type == attr.STEP_MESSAGE:
        _flatten_messages(attr.OI_LLM_INPUT_MESSAGES, attributes.get(attr.GEN_AI_INPUT_MESSAGES), out)
        _flatten_messages(attr.OI_LLM_OUTPUT_MESSAGES, attributes.get(attr.GEN_AI_OUTPUT_MESSAGES), out)
        if attr.OI_OUTPUT_VALUE not in out and isinstance(attributes.get(attr.GEN_AI_OUTPUT_MESSAGES), str):
            out[attr.OI_OUTPUT_VALUE] = attributes[attr.GEN_AI_OUTPUT_MESSAGES]
            out[attr.OI_OUTPUT_MIME_TYPE] = attr.MIME_JSON
    return out


def with_conventions(attributes: Mapping[str, Any], *, content: bool | None = None) -> dict[str, Any]:
    """``attributes`` with the keys of the other conventions in force added (a new dict): what a
    span of ours made outside the step lifecycle (an evaluation span) carries. ``content``:
    whether input and output values go in (default: the content policy in force)."""
    found = dict(attributes)
    if openinference:
        if content is None:
            content = bool(active_policy().capture)
        found.update(openinference_attributes(attributes, content=content))
    return found


openinference = OPENINFERENCE in conventions_from_env()
