"""ROUGE-1 reproduces Google ADK's response_match_score numbers and reads every script."""

from __future__ import annotations

import random

import pytest
from rouge_score import rouge_scorer

from agenteval_otel.criteria._rouge import rouge1_f


@pytest.mark.parametrize(
    ("reference", "candidate", "score"),
    [
        ("sunny", "sunny sunny sunny", 0.5),
        ("running", "run", 1.0),
        ("The weather is sunny.", "the WEATHER is sunny!", 1.0),
        ("", "", 0.0),
        ("cat", "dog", 0.0),
    ],
)
def test_adk_numbers(reference: str, candidate: str, score: float) -> None:
    assert rouge1_f(reference, candidate) == pytest.approx(score)


def test_identical_to_adk_scorer_on_ascii_text() -> None:
    adk = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    words = ("the weather in london is sunny running runs ran dying lying skies news generously "
             "agreed hopping happily 42 x1 device_2 it's e-mail O.K.").split()
    rng = random.Random(7)
    for _ in range(500):
        a = " ".join(rng.choices(words, k=rng.randint(0, 10)))
        b = " ".join(rng.choices(words, k=rng.randint(0, 10)))
        assert rouge1_f(a, b) == pytest.approx(adk.score(a, b)["rouge1"].fmeasure, abs=1e-12)


def test_unicode_text_is_scored() -> None:
    assert rouge1_f("Погода в Москве хорошая", "погода в москве хорошая") == 1.0
    assert rouge1_f("Café à Paris", "café à paris") == 1.0
    assert rouge1_f("今天天气很好", "天气很好") == pytest.approx(0.8)
    assert rouge1_f("東京は晴れ", "大阪は雨") > 0.0


def test_same_floats_as_rouge_score_under_our_tokenizer() -> None:
    from agenteval_otel.criteria._rouge import _tokenizer

    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=_tokenizer())
    words = "Погода sunny running 今天天气 café x1 the the of 42 runs é".split()
    rng = random.Random(11)
    for _ in range(500):
        a = " ".join(rng.choices(words, k=rng.randint(0, 12)))
        b = " ".join(rng.choices(words, k=rng.randint(0, 12)))
        assert rouge1_f(a, b) == scorer.score(a, b)["rouge1"].fmeasure
