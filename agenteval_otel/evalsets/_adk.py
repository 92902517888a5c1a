"""Google ADK eval-set files, read as they are in the wild, turned into our eval-set data.

Forms read:

- the current ``EvalSet`` JSON: ``eval_cases[].conversation[]`` with ``user_content.parts``,
  ``final_response`` and ``intermediate_data`` (``tool_uses``/``tool_responses``/
  ``intermediate_responses``, or ``invocation_events`` as ADK 2.x writes it), snake_case or
  camelCase keys, and ``conversation_scenario`` cases;
- the legacy list of turns, one conversation: ``[{query, expected_tool_use[{tool_name,
  tool_input}], reference}]``;
- the legacy list of sessions: ``[{name, data: [turns...], initial_session | initial_state}]``.

Our own format passes through unchanged. An eval set read from an ADK file is marked in its
``metadata`` (``source_format``: ``google-adk``), so a run with no config uses ADK's default
criteria. ADK session dumps are refused with a clear message. Functions here work on plain JSON
data and never import the models.
"""

from __future__ import annotations

import functools
import itertools
import re
from pathlib import Path
from typing import Any

from agenteval_otel.errors import EvalSetLoadError

__all__ = ["ADK_SOURCE_FORMAT", "eval_set_data", "file_stem", "is_adk_eval_set"]

SOURCE_FORMAT_KEY = "source_format"
ADK_SOURCE_FORMAT = "google-adk"


def is_adk_eval_set(metadata: dict[str, Any]) -> bool:
    """Whether an eval set's ``metadata`` says it was read from a Google ADK file."""
    return metadata.get(SOURCE_FORMAT_KEY) == ADK_SOURCE_FORMAT


def _adk_marked(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "metadata": {**(data.get("metadata") or {}), SOURCE_FORMAT_KEY: ADK_SOURCE_FORMAT}}


def _looks_adk(data: dict[str, Any]) -> bool:
    """Whether an ``eval_cases`` object (snake_case keys) is in ADK's shape rather than ours:
    ADK's turn fields (``final_response``, ``intermediate_data``, ``parts``) or timestamps."""
    if "creation_timestamp" in data:
        return True
    for case in data.get("eval_cases") or []:
        if not isinstance(case, dict):
            continue
        if "creation_timestamp" in case or "conversation_scenario" in case and not case.get("conversation"):
            return True
        for inv in case.get("conversation") or []:
            if isinstance(inv, dict) and (
                    "final_response" in inv or "intermediate_data" in inv
                    or isinstance(inv.get("user_content"), dict) and "parts" in inv["user_content"]):
                return True
    return False

# Values under these keys are user data: their keys are never renamed.
_OPAQUE_KEYS = frozenset(
    {"args", "state", "initial_state", "config", "metadata", "response", "tool_input",
     "final_session_state", "persona", "user_persona"}
)
_CAMEL = re.compile(r"^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$")
# Fields ADK has that we keep in ``metadata``; any other unknown field stays an error.
_ADK_CASE_EXTRAS = {"creation_timestamp", "rubrics", "final_session_state"}
_ADK_INVOCATION_EXTRAS = {
    "creation_timestamp", "rubrics", "app_details", "duration", "inference_call_count",
}
_ADK_EVAL_SET_EXTRAS = {"creation_timestamp"}


@functools.lru_cache(maxsize=4096)
def _snake(key: str) -> str:
    if not _CAMEL.match(key):
        return key
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def snake_keys(value: Any) -> Any:
    """Rename camelCase keys to snake_case, leaving user data (arguments, state) as it is.

    A dict or list with nothing to rename is returned as it is, not copied.
    """
    if isinstance(value, dict):
        out: dict[Any, Any] | None = None
        for index, (key, item) in enumerate(value.items()):
            name = _snake(key) if isinstance(key, str) else key
            renamed = item if name in _OPAQUE_KEYS else snake_keys(item)
            if out is None and (name != key or renamed is not item):
                out = dict(itertools.islice(value.items(), index))
            if out is not None:
                out[name] = renamed
        return value if out is None else out
    if isinstance(value, list):
        items = [snake_keys(item) for item in value]
        return value if all(new is old for new, old in zip(items, value)) else items
    return value


class _WrongType(Exception):
    """A value of the wrong type at a JSON path of the file being read."""

    def __init__(self, at: str, expected: str, value: Any) -> None:
        super().__init__(f"{at}: expected {expected}, got {_json_type(value)}")


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _list(value: Any, at: str) -> list[Any]:
    """``value`` as a list (``None``: empty); anything else, a string above all, is an error."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _WrongType(at, "a list", value)
    return value


def _object(value: Any, at: str) -> dict[str, Any]:
    """``value`` as an object (``None``: empty)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _WrongType(at, "an object", value)
    return value


def _string(value: Any, at: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _WrongType(at, "a string", value)
    return value


def _parts(parts: Any, at: str) -> list[dict[str, Any]]:
    """ADK parts without their null fields; parts left empty are dropped."""
    cleaned = []
    for index, part in enumerate(_list(parts, at)):
        if not isinstance(part, dict):
            raise _WrongType(f"{at}[{index}]", "an object (a part)", part)
        _string(part.get("text"), f"{at}[{index}].text")
        kept = {k: v for k, v in part.items() if v is not None}
        if kept:
            cleaned.append(kept)
    return cleaned


def _message(content: Any, role: str, at: str, *, keep_empty: bool) -> Any:
    """An ADK ``Content`` (``{parts, role}``) as our message; others pass through."""
    if not isinstance(content, dict) or "parts" not in content or "content" in content:
        return content
    parts = _parts(content.get("parts"), f"{at}.parts")
    if not parts and not keep_empty:
        return None
    return {"role": content.get("role") or role, "content": parts}


def _tool_call(call: Any, at: str) -> dict[str, Any]:
    """An ADK tool call (``{id, name, args}``, or legacy ``{tool_name, tool_input}``) as ours.
    A call with no arguments (absent or null: ADK's ``None``) is left without ``args``, so
    ``ToolCall.model_fields_set`` keeps it apart from ``{}``, as ADK's trajectory match does."""
    if not isinstance(call, dict):
        raise _WrongType(at, "an object (a tool call)", call)
    if "tool_name" in call:
        out: dict[str, Any] = {"name": _string(call["tool_name"], f"{at}.tool_name")}
        key = "tool_input"
    else:
        out = {"name": _string(call.get("name"), f"{at}.name")}
        key = "args"
        if call.get("id") is not None:
            out["call_id"] = call["id"]
    if call.get(key) is not None:
        out["args"] = _object(call[key], f"{at}.{key}")
    return out


def _attach_results(calls: list[dict[str, Any]], responses: list[dict[str, Any]]) -> None:
    by_id = {response.get("id"): response.get("response") for response in responses}
    for call in calls:
        if call.get("call_id") in by_id:
            call["result"] = by_id[call["call_id"]]


def _invocation_events(events: Any, at: str) -> tuple[list[Any], list[Any]]:
    """Expected tool calls and intermediate responses from ADK 2.x ``invocation_events``."""
    calls, responses, texts = [], [], []
    for index, event in enumerate(_list(events, at)):
        where = f"{at}[{index}]"
        event = _object(event, where)
        content = _object(event.get("content"), f"{where}.content")
        author = _string(event.get("author"), f"{where}.author")
        for number, part in enumerate(_list(content.get("parts"), f"{where}.content.parts")):
            part_at = f"{where}.content.parts[{number}]"
            part = _object(part, part_at)
            if part.get("function_call"):
                calls.append(_tool_call(part["function_call"], f"{part_at}.function_call"))
            elif part.get("function_response"):
                responses.append(_object(part["function_response"], f"{part_at}.function_response"))
            elif _string(part.get("text"), f"{part_at}.text") is not None and not part.get("thought"):
                texts.append({"role": "assistant", "content": part["text"],
                              "metadata": {"author": author} if author else {}})
    _attach_results(calls, responses)
    return calls, texts


def _intermediate(data: Any, at: str) -> tuple[list[Any], list[Any]]:
    """Expected tool calls and intermediate responses from ADK ``intermediate_data``."""
    data = _object(data, at)
    if "invocation_events" in data:
        return _invocation_events(data["invocation_events"], f"{at}.invocation_events")
    calls = [_tool_call(call, f"{at}.tool_uses[{i}]")
             for i, call in enumerate(_list(data.get("tool_uses"), f"{at}.tool_uses"))]
    _attach_results(calls, [_object(response, f"{at}.tool_responses[{i}]") for i, response
                            in enumerate(_list(data.get("tool_responses"), f"{at}.tool_responses"))])
    texts = []
    for index, item in enumerate(_list(data.get("intermediate_responses"), f"{at}.intermediate_responses")):
        where = f"{at}.intermediate_responses[{index}]"
        if isinstance(item, dict):  # already a message
            texts.append(item)
            continue
        if not isinstance(item, list) or len(item) != 2:
            raise _WrongType(where, "[author, parts]", item)
        author = _string(item[0], f"{where}[0]")
        texts.append({"role": "assistant", "content": _parts(item[1], f"{where}[1]"),
                      "metadata": {"author": author} if author else {}})
    return calls, texts


def _invocation(inv: Any, at: str) -> Any:
    if not isinstance(inv, dict):
        return inv
    out = {k: v for k, v in inv.items()
           if k not in _ADK_INVOCATION_EXTRAS | {"final_response", "intermediate_data"}}
    extra = {k: v for k, v in inv.items() if k in _ADK_INVOCATION_EXTRAS and v is not None}
    if not out.get("invocation_id"):
        out.pop("invocation_id", None)
    if "user_content" in out:
        out["user_content"] = _message(out["user_content"], "user", f"{at}.user_content", keep_empty=True)
    if "final_response" in inv and "expected_final_response" not in inv:
        out["expected_final_response"] = _message(inv["final_response"], "assistant",
                                                  f"{at}.final_response", keep_empty=False)
    elif "expected_final_response" in out:
        out["expected_final_response"] = _message(out["expected_final_response"], "assistant",
                                                  f"{at}.expected_final_response", keep_empty=False)
    if "intermediate_data" in inv:
        calls, texts = _intermediate(inv["intermediate_data"], f"{at}.intermediate_data")
        out.setdefault("expected_tool_trajectory", calls)
        out.setdefault("expected_intermediate_responses", texts)
    if extra:
        out["metadata"] = {**extra, **(out.get("metadata") or {})}
    return out


def _session_input(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not None}
    return value


def _case(case: Any, at: str) -> Any:
    if not isinstance(case, dict):
        return case
    out = {k: v for k, v in case.items() if k not in _ADK_CASE_EXTRAS and v is not None}
    extra = {k: v for k, v in case.items() if k in _ADK_CASE_EXTRAS and v is not None}
    if isinstance(out.get("conversation"), list):
        out["conversation"] = [_invocation(inv, f"{at}.conversation[{i}]")
                               for i, inv in enumerate(out["conversation"])]
    if "session_input" in out:
        out["session_input"] = _session_input(out["session_input"])
    if extra:
        out["metadata"] = {**extra, **(out.get("metadata") or {})}
    return out


def _legacy_turn(row: Any, at: str) -> dict[str, Any]:
    row = _object(row, at)
    responses = []
    for index, response in enumerate(_list(row.get("expected_intermediate_agent_responses"),
                                           f"{at}.expected_intermediate_agent_responses")):
        where = f"{at}.expected_intermediate_agent_responses[{index}]"
        response = _object(response, where)
        author = _string(response.get("author"), f"{where}.author")
        responses.append({"role": "assistant", "content": _string(response.get("text"), f"{where}.text") or "",
                          "metadata": {"author": author} if author else {}})
    turn: dict[str, Any] = {
        "user_content": _string(row.get("query"), f"{at}.query"),
        "expected_tool_trajectory": [
            _tool_call(call, f"{at}.expected_tool_use[{i}]")
            for i, call in enumerate(_list(row.get("expected_tool_use"), f"{at}.expected_tool_use"))],
        "expected_intermediate_responses": responses,
    }
    if _string(row.get("reference"), f"{at}.reference") is not None:
        turn["expected_final_response"] = row["reference"]
    return turn


def file_stem(path: Path) -> str:
    """The name of an eval-set file without its extensions (``weather.evalset.json`` or
    ``weather.evalset.yaml`` → ``weather``)."""
    name = path.name
    for suffix in (".json", ".yaml", ".yml", ".evalset", ".test"):
        name = name.removesuffix(suffix)
    return name


def _legacy_session(item: dict[str, Any], index: int, path: Path) -> dict[str, Any]:
    rows = item.get("data")
    if not isinstance(rows, list) or not rows:
        raise EvalSetLoadError(f"{path}: [{index}].data: expected a non-empty list of turns")
    case: dict[str, Any] = {
        "eval_id": str(item.get("name") or f"{file_stem(path)}-{index}"),
        "conversation": [_legacy_turn(row, f"[{index}].data[{number}]") for number, row in enumerate(rows)],
    }
    session = item.get("initial_session")
    if isinstance(session, dict):
        case["session_input"] = _session_input(session)
    elif isinstance(item.get("initial_state"), dict):
        case["session_input"] = {"initial_state": item["initial_state"]}
    return case


def _from_list(data: list[Any], path: Path) -> dict[str, Any]:
    if not data:
        raise EvalSetLoadError(
            f"{path}: the file holds an empty list; expected an eval set object with "
            "'eval_cases', or ADK's legacy list of turns"
        )
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            raise EvalSetLoadError(
                f"{path}: [{index}]: expected an object (a legacy ADK turn with 'query'), "
                f"got {type(item).__name__}"
            )
    if all("query" in item for item in data):
        return {
            "eval_set_id": file_stem(path),
            "name": file_stem(path),
            "eval_cases": [{"eval_id": file_stem(path),
                            "conversation": [_legacy_turn(row, f"[{i}]") for i, row in enumerate(data)]}],
        }
    if all("data" in item for item in data):
        return {
            "eval_set_id": file_stem(path),
            "name": file_stem(path),
            "eval_cases": [_legacy_session(item, i, path) for i, item in enumerate(data)],
        }
    bad = next(i for i, item in enumerate(data) if "query" not in item and "data" not in item)
    raise EvalSetLoadError(
        f"{path}: [{bad}]: expected a legacy ADK turn with 'query' (and 'expected_tool_use', "
        f"'reference') or a session with 'data'; found keys {sorted(data[bad])}"
    )


def eval_set_data(data: Any, path: Path) -> Any:
    """Eval-set JSON of any supported form as our eval-set data (still to be validated).

    An ADK value of the wrong type (a string where a list of tool calls belongs, a number as a
    part's text) raises ``EvalSetLoadError`` naming ``path`` and the JSON path.
    """
    try:
        return _converted(data, path)
    except _WrongType as exc:
        raise EvalSetLoadError(f"{path}: {exc}") from None


def _converted(data: Any, path: Path) -> Any:
    if isinstance(data, list):
        return _adk_marked(_from_list(data, path))
    if not isinstance(data, dict):
        raise EvalSetLoadError(
            f"{path}: expected a JSON object with 'eval_cases' (or ADK's legacy list), "
            f"got {type(data).__name__}"
        )
    camel = "evalCases" in data or "evalSetId" in data
    data = snake_keys(data)
    if "eval_cases" not in data:
        if "events" in data:
            raise EvalSetLoadError(
                f"{path}: this is an ADK session dump (keys {sorted(data)[:6]}), not an eval "
                "set; expected a JSON object with 'eval_cases'"
            )
        if "criteria" in data:
            raise EvalSetLoadError(
                f"{path}: this is a config (criteria), not an eval set; give it as the config "
                "(--config, EvalConfig.load)"
            )
        raise EvalSetLoadError(
            f"{path}: eval_cases: field missing; expected a JSON object with 'eval_cases' "
            f"(found keys {sorted(data)[:8]})"
        )
    adk = camel or _looks_adk(data)
    out = {k: v for k, v in data.items() if v is not None}
    extra = {k: out.pop(k) for k in list(out) if k in _ADK_EVAL_SET_EXTRAS}
    if extra:
        out["metadata"] = {**extra, **(out.get("metadata") or {})}
    if isinstance(out["eval_cases"], list):
        out["eval_cases"] = [_case(case, f"eval_cases[{i}]") for i, case in enumerate(out["eval_cases"])]
    return _adk_marked(out) if adk else out
