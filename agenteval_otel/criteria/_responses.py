"""Criteria on the final response: ``response_match`` (ROUGE-1), ``exact_match`` and
``contains_keywords``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._registry import Score, criterion
from agenteval_otel.criteria._rouge import rouge1_f
from agenteval_otel.evalsets import Invocation

__all__ = ["ExactMatchSettings", "KeywordSettings", "contains_keywords", "exact_match", "response_match"]


def _expected_text(expected: Invocation | None) -> str | None:
    if expected is None or expected.expected_final_response is None:
        return None
    return expected.expected_final_response.get_text()


@criterion("response_match", aliases=("rouge_match",), default_threshold=0.7)
def response_match(ctx: CriterionContext) -> Score | None:
    """ROUGE-1 F-measure of the final response against the expected one (Google ADK's
    ``response_match_score`` has its own criterion). Does not apply to a turn with no expected
    response."""
    want = _expected_text(ctx.expected)
    if want is None:
        return None
    got = ctx.actual.final_response or ""
    score = rouge1_f(want, got)
    return Score(score, f"ROUGE-1 F {score:.3f} against the expected response",
                 {"expected": want, "actual": got})


def _normalised(text: str, case_sensitive: bool) -> str:
    text = " ".join(text.split())
    return text if case_sensitive else text.casefold()


class ExactMatchSettings(BaseModel):
    """``exact_match`` params: ``case_sensitive`` (default true)."""

    model_config = ConfigDict(extra="forbid")

    case_sensitive: bool = True


class KeywordSettings(BaseModel):
    """``contains_keywords`` params: the ``keywords`` to look for (else the invocation's
    ``metadata["keywords"]``)."""

    model_config = ConfigDict(extra="forbid")

    keywords: list[str] = []


@criterion("exact_match", default_threshold=1.0, settings=ExactMatchSettings)
def exact_match(ctx: CriterionContext) -> Score | None:
    """1 when the final response equals the expected one (white space folded; case-insensitive
    with ``params={"case_sensitive": False}``), else 0."""
    want = _expected_text(ctx.expected)
    if want is None:
        return None
    got = ctx.actual.final_response or ""
    case_sensitive = ctx.settings_as(ExactMatchSettings).case_sensitive
    equal = _normalised(want, case_sensitive) == _normalised(got, case_sensitive)
    return Score(1.0 if equal else 0.0,
                 "response equals the expected one" if equal
                 else f"expected {want!r}, got {got!r}",
                 {"expected": want, "actual": got})


@criterion("contains_keywords", default_threshold=1.0, settings=KeywordSettings)
def contains_keywords(ctx: CriterionContext) -> Score | None:
    """The share of keywords found in the final response (case-insensitive).

    Keywords come from ``params={"keywords": [...]}`` or the invocation's
    ``metadata["keywords"]``; a turn with neither is not scored.
    """
    keywords = (ctx.expected.metadata.get("keywords") if ctx.expected is not None else None) \
        or ctx.settings_as(KeywordSettings).keywords
    if not keywords:
        return None
    if isinstance(keywords, str) or not all(isinstance(k, str) for k in keywords):
        raise ValueError(f"keywords must be a list of strings, got {keywords!r}")
    text = (ctx.actual.final_response or "").casefold()
    missing = [k for k in keywords if k.casefold() not in text]
    found = len(keywords) - len(missing)
    reason = f"{found}/{len(keywords)} keyword(s) found" + (
        f"; missing: {', '.join(missing)}" if missing else "")
    return Score(found / len(keywords), reason, {"keywords": list(keywords), "missing": missing})
