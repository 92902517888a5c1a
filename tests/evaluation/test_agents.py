"""Calling the agent under evaluation: its reply as text, and loading it by name or file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agenteval_otel import EvalSetBuilder, evaluate
from agenteval_otel.evaluation._agents import load_agent, reply_text


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_a_reply_that_cannot_be_printed_still_has_a_text() -> None:
    assert reply_text({"response": "hi"}) == "hi"
    assert reply_text([1, "a"]) == '[1, "a"]'
    assert reply_text(_Unprintable()) == "<_Unprintable that could not be printed>"


def test_an_agent_file_named_like_a_standard_module_leaves_that_module_alone(tmp_path: Path) -> None:
    (tmp_path / "sibling_tools_for_agent.py").write_text("def shout(text):\n    return text.upper()\n")
    (tmp_path / "json.py").write_text(
        "from sibling_tools_for_agent import shout\n\n\ndef agent(query):\n    return shout(query)\n")
    loaded = load_agent(f"{tmp_path / 'json.py'}:agent")
    assert sys.modules["json"] is json and json.dumps([1]) == "[1]"
    assert loaded("hi") == "HI"
    assert loaded.__module__.startswith("agenteval_agent_")
    assert sys.modules[loaded.__module__].__file__ == str(tmp_path / "json.py")
    assert load_agent(f"{tmp_path / 'json.py'}:agent") is loaded  # the same file: the same module
    report = evaluate(EvalSetBuilder.quick(("hi", "HI")), loaded)
    report.assert_passed()
