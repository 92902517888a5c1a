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

import re
from pathlib import Path
from typing import Any

from agenteval_otel.errors import EvalSetLoadError

__all__ = ["ADK_SOURCE_FORMAT", "eval_set_data", "is_adk_eval_set"]

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


def _snake(key: str) -> str:
    if not _CAMEL.match(key):
        return key
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def snake_keys(value: Any) -> Any:
    """Rename camelCase keys to snake_case, leaving user data (arguments, state) as it is."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            name = _snake(key) if isinstance(key, str) else key
            out[name] = item if name in _OPAQUE_KEYS else snake_keys(item)
        return out
    if isinstance(value, list):
        return [snake_keys(item) for item in value]
    return value


def _parts(parts: Any) -> list[dict[str, Any]]:
    """ADK parts without their null fields; parts left empty are dropped."""
    cleaned = []
    for part in parts or []:
        if isinstance(part, dict):
            kept = {k: v for k, v in part.items() if v is not None}
            if kept:
                cleaned.append(kept)
        else:
            cleaned.append(part)
    return cleaned


def _message(content: Any, role: str, *, keep_empty: bool) -> Any:
    """An ADK ``Content`` (``{parts, role}``) as our message; others pass through."""
    if not isinstance(content, dict) or "parts" not in content or "content" in content:
        return content
    parts = _parts(content.get("parts"))
    if not parts and not keep_empty:
        return None
    return {"role": content.get("role") or role, "content": parts}


def _tool_call(call: Any) -> Any:
    if not isinstance(call, dict) or "tool_name" in call:
        if isinstance(call, dict):
            return {"name": call.get("tool_name"), "args": call.get("tool_input") or {}}
        return call
    out: dict[str, Any] = {"name": call.get("name"), "args": call.get("args") or {}}
    if call.get("id") is not None:
        out["call_id"] = call["id"]
    return out


def _attach_results(calls: list[Any], responses: list[Any]) -> None:
    by_id = {r.get("id"): r.get("response") for r in responses if isinstance(r, dict)}
    for call in calls:
        if isinstance(call, dict) and call.get("call_id") in by_id:
            call["result"] = by_id[call["call_id"]]


def _intermediate(data: Any) -> tuple[list[Any], list[Any]]:
    """Expected tool calls and intermediate responses from ADK ``intermediate_data``."""
    if not isinstance(data, dict):
        return [], []
    if "invocation_events" in data:
        calls, responses, texts = [], [], []
        for event in data.get("invocation_events") or []:
            content = (event or {}).get("content") or {}
            author = (event or {}).get("author")
            for part in content.get("parts") or []:
                if not isinstance(part, dict):
                    continue
                if part.get("function_call"):
                    calls.append(_tool_call(part["function_call"]))
                elif part.get("function_response"):
                    responses.append(part["function_response"])
                elif isinstance(part.get("text"), str) and not part.get("thought"):
                    texts.append({"role": "assistant", "content": part["text"],
                                  "metadata": {"author": author} if author else {}})
        _attach_results(calls, responses)
        return calls, texts
    calls = [_tool_call(call) for call in data.get("tool_uses") or []]
    _attach_results(calls, data.get("tool_responses") or [])
    texts = []
    for item in data.get("intermediate_responses") or []:
        if isinstance(item, (list, tuple)) and len(item) == 2:
            author, parts = item
            texts.append({"role": "assistant", "content": _parts(parts),
                          "metadata": {"author": author} if author else {}})
        else:
            texts.append(item)
    return calls, texts


def _invocation(inv: Any) -> Any:
    if not isinstance(inv, dict):
        return inv
    out = {k: v for k, v in inv.items()
           if k not in _ADK_INVOCATION_EXTRAS | {"final_response", "intermediate_data"}}
    extra = {k: v for k, v in inv.items() if k in _ADK_INVOCATION_EXTRAS and v is not None}
    if not out.get("invocation_id"):
        out.pop("invocation_id", None)
    if "user_content" in out:
        out["user_content"] = _message(out["user_content"], "user", keep_empty=True)
    if "final_response" in inv and "expected_final_response" not in inv:
        out["expected_final_response"] = _message(inv["final_response"], "assistant",
                                                  keep_empty=False)
    elif "expected_final_response" in out:
        out["expected_final_response"] = _message(out["expected_final_response"], "assistant",
                                                  keep_empty=False)
    if "intermediate_data" in inv:
        calls, texts = _intermediate(inv["intermediate_data"])
        out.setdefault("expected_tool_trajectory", calls)
        out.setdefault("expected_intermediate_responses", texts)
    if extra:
        out["metadata"] = {**extra, **(out.get("metadata") or {})}
    return out


def _session_input(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not None}
    return value


def _case(case: Any) -> Any:
    if not isinstance(case, dict):
        return case
    out = {k: v for k, v in case.items() if k not in _ADK_CASE_EXTRAS and v is not None}
    extra = {k: v for k, v in case.items() if k in _ADK_CASE_EXTRAS and v is not None}
    if isinstance(out.get("conversation"), list):
        out["conversation"] = [_invocation(inv) for inv in out["conversation"]]
    if "session_input" in out:
        out["session_input"] = _session_input(out["session_input"])
    if extra:
        out["metadata"] = {**extra, **(out.get("metadata") or {})}
    return out


def _legacy_turn(row: dict[str, Any]) -> dict[str, Any]:
    turn: dict[str, Any] = {
        "user_content": row.get("query"),
        "expected_tool_trajectory": [_tool_call(t) for t in row.get("expected_tool_use") or []],
        "expected_intermediate_responses": [
            {"role": "assistant", "content": r.get("text") or "",
             "metadata": {"author": r["author"]} if r.get("author") else {}}
            if isinstance(r, dict) else r
            for r in row.get("expected_intermediate_agent_responses") or []
        ],
    }
    if row.get("reference") is not None:
        turn["expected_final_response"] = row["reference"]
    return turn


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".json", ".evalset", ".test"):
        name = name.removesuffix(suffix)
    return name


def _legacy_session(item: dict[str, Any], index: int, path: Path) -> dict[str, Any]:
    rows = item.get("data")
    if not isinstance(rows, list) or not rows:
        raise EvalSetLoadError(f"{path}: [{index}].data: expected a non-empty list of turns")
    case: dict[str, Any] = {
        "eval_id": str(item.get("name") or f"{_stem(path)}-{index}"),
        "conversation": [_legacy_turn(row) for row in rows],
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
            "eval_set_id": _stem(path),
            "name": _stem(path),
            "eval_cases": [{"eval_id": _stem(path),
                            "conversation": [_legacy_turn(row) for row in data]}],
        }
    if all("data" in item for item in data):
        return {
            "eval_set_id": _stem(path),
            "name": _stem(path),
            "eval_cases": [_legacy_session(item, i, path) for i, item in enumerate(data)],
        }
    bad = next(i for i, item in enumerate(data) if "query" not in item and "data" not in item)
    raise EvalSetLoadError(
        f"{path}: [{bad}]: expected a legacy ADK turn with 'query' (and 'expected_tool_use', "
        f"'reference') or a session with 'data'; found keys {sorted(data[bad])}"
    )


def eval_set_data(data: Any, path: Path) -> Any:
    """Eval-set JSON of any supported form as our eval-set data (still to be validated)."""
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
        out["eval_cases"] = [_case(case) for case in out["eval_cases"]]
    return _adk_marked(out) if adk else out
