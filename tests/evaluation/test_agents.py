"""Calling the agent under evaluation: its reply as text, and loading it by name or file."""

from __future__ import annotations

from agenteval_otel.evaluation.agents import reply_text


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_a_reply_that_cannot_be_printed_still_has_a_text() -> None:
    assert reply_text({"response": "hi"}) == "hi"
    assert reply_text([1, "a"]) == '[1, "a"]'
    assert reply_text(_Unprintable()) == "<_Unprintable that could not be printed>"
