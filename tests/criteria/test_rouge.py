"""ROUGE-1 reproduces Google ADK's response_match_score numbers and reads every script; with
``rouge-score`` installed (the test extra), every score is compared with its ``RougeScorer``."""

from __future__ import annotations

import json
import random
from types import ModuleType
from typing import Any

import pytest

from agenteval_otel.criteria._rouge import (
    _AdkTokenizer,
    _rouge_score_tokens,
    _tokenizer,
    _UnicodeTokenizer,
    adk_rouge1_f,
    rouge1_f,
)
from tests.shared_data import REPO_ROOT

ROUGE_SCORE_MISSING = "rouge-score is not installed (it is in the test extra): no scorer to compare with"
UNICODE_WORDS = ("Погода sunny running 今天天气 café x1 the the of 42 runs é ｃａｆé ﬁne ❤️ Ⅻ ภาษาไทย "
                 "東京は晴れ").split()


def _rouge_score() -> tuple[ModuleType, ModuleType]:
    """``rouge_score``'s ``rouge_scorer`` and ``tokenizers``; the test is skipped without them."""
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer", reason=ROUGE_SCORE_MISSING)
    tokenizers = pytest.importorskip("rouge_score.tokenizers", reason=ROUGE_SCORE_MISSING)
    return rouge_scorer, tokenizers


def _sentences() -> list[str]:
    """Real sentences: every line of the README and of the ADK parity table's responses, the
    docstring and comment lines of the package."""
    lines = (REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    for path in sorted((REPO_ROOT / "agenteval_otel").rglob("*.py")):
        lines += path.read_text(encoding="utf-8").splitlines()
    table = json.loads((REPO_ROOT / "tests" / "data" / "adk_parity" / "adk_parity.json").read_text(encoding="utf-8"))
    lines += [row[key] for row in table["responses"] for key in ("reference", "candidate")]
    return sorted({line.strip() for line in lines if line.strip()})


def _pairs(count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` (reference, candidate) pairs: two sentences at random, or a sentence and a
    mangled copy of it (words dropped, repeated, re-cased, shuffled, Unicode words mixed in)."""
    rng = random.Random(seed)
    sentences = _sentences()
    pairs = []
    for _ in range(count):
        reference = rng.choice(sentences)
        if rng.random() < 0.3:
            pairs.append((reference, rng.choice(sentences)))
            continue
        words = [w.upper() if rng.random() < 0.1 else w for w in reference.split() if rng.random() < 0.8]
        words += rng.choices(words + UNICODE_WORDS, k=rng.randint(0, 4))
        rng.shuffle(words)
        pairs.append((reference, " ".join(words)))
    return pairs


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


def test_unicode_text_is_scored() -> None:
    assert rouge1_f("Погода в Москве хорошая", "погода в москве хорошая") == 1.0
    assert rouge1_f("Café à Paris", "café à paris") == 1.0
    assert rouge1_f("今天天气很好", "天气很好") == pytest.approx(0.8)
    assert rouge1_f("東京は晴れ", "大阪は雨") > 0.0


def test_identical_to_rouge_score_on_ascii_text() -> None:
    rouge_scorer, _ = _rouge_score()
    adk = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    words = ("the weather in london is sunny running runs ran dying lying skies news generously "
             "agreed hopping happily 42 x1 device_2 it's e-mail O.K.").split()
    rng = random.Random(7)
    for _ in range(500):
        a = " ".join(rng.choices(words, k=rng.randint(0, 10)))
        b = " ".join(rng.choices(words, k=rng.randint(0, 10)))
        assert rouge1_f(a, b) == adk.score(a, b)["rouge1"].fmeasure


def test_same_tokens_as_rouge_score_default_tokenizer() -> None:
    _, tokenizers = _rouge_score()
    theirs = tokenizers.DefaultTokenizer(use_stemmer=True)
    texts = [text for pair in _pairs(2000, 3) for text in pair]
    assert [_rouge_score_tokens(t) for t in texts] == [theirs.tokenize(t) for t in texts]


def test_same_floats_as_rouge_score_on_many_sentence_pairs() -> None:
    """``rouge1_f`` against ``RougeScorer`` with our Unicode tokenizer over NLTK's stemmer (what it
    computed before it needed neither package), and ``adk_rouge1_f`` against ``RougeScorer`` with
    ADK's tokenizer over ``rouge-score``'s ``DefaultTokenizer`` (as ADK scores)."""
    rouge_scorer, tokenizers = _rouge_score()
    from nltk.stem.porter import PorterStemmer

    nltk_stemmer = PorterStemmer()
    ours_before: Any = _UnicodeTokenizer(lambda token: str(nltk_stemmer.stem(token)))
    adk_tokenizer: Any = _AdkTokenizer(tokenizers.DefaultTokenizer(use_stemmer=True).tokenize)
    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=ours_before)
    adk = rouge_scorer.RougeScorer(["rouge1"], tokenizer=adk_tokenizer)
    pairs = _pairs(3000, 11)
    assert sum(0 < rouge1_f(a, b) < 1 for a, b in pairs) > 1500  # most pairs overlap in part
    for reference, candidate in pairs:
        assert rouge1_f(reference, candidate) == scorer.score(reference, candidate)["rouge1"].fmeasure
        assert adk_rouge1_f(reference, candidate) == adk.score(reference, candidate)["rouge1"].fmeasure


def test_our_tokenizer_under_rouge_score_gives_the_same_floats() -> None:
    rouge_scorer, _ = _rouge_score()
    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=_tokenizer())
    rng = random.Random(11)
    for _ in range(500):
        a = " ".join(rng.choices(UNICODE_WORDS, k=rng.randint(0, 12)))
        b = " ".join(rng.choices(UNICODE_WORDS, k=rng.randint(0, 12)))
        assert rouge1_f(a, b) == scorer.score(a, b)["rouge1"].fmeasure

