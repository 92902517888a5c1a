"""ROUGE-1 F-measure as ``rouge-score`` computes it, under two tokenizers, with no third-party package.

``rouge1_f`` (``response_match``): ``rouge-score``'s default tokenizer keeps only ``[a-z0-9]``
and so scores Chinese, Cyrillic or accented text as empty. Ours does what it does on ASCII text
— lower-case, split on anything that is not a letter or digit, Porter-stem ASCII tokens longer
than three characters — and keeps letters of every script, splitting ideographic scripts (which
use no spaces) into single characters.

``adk_rouge1_f`` (Google ADK's ``response_match_score``): ADK 2.x's tokenizer, rule for rule —
NFKC normalisation, then lower case; CJK ideographs, kana and Hangul syllables one token each;
Thai, Lao, Khmer and Myanmar split before every base character with their combining marks kept
on it; elsewhere a word is a run of letters, digits and combining marks (so ``U+FE0F`` after an
emoji is a token of its own); an all-ASCII word goes through ``rouge-score``'s default tokenizer.

Both reproduce ``rouge-score`` 0.1.2 (``RougeScorer(["rouge1"], use_stemmer=True)``) without it:
its ``DefaultTokenizer`` is ``_rouge_score_tokens``, NLTK's Porter stemmer is ``_porter.stem``
(rule for rule), and its n-gram count and F-measure are ``_unigram_f``; the test suite compares
the scores with ``rouge-score``'s when it is installed.

>>> rouge1_f("sunny", "sunny sunny sunny")
0.5
>>> rouge1_f("run", "running")
1.0
>>> adk_rouge1_f("ｃａｆé ﬁne", "café fine")
1.0
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from functools import cache, lru_cache

from agenteval_otel.criteria import _porter

__all__ = ["adk_rouge1_f", "adk_tokens", "rouge1_f"]

_WORD = re.compile(r"[^\W_]+")
_IDEOGRAPHIC = re.compile(
    r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0e7f])"
)
_ASCII_WORD = re.compile(r"^[a-z0-9]+$")
_NOT_ASCII_ALNUM = re.compile(r"[^a-z0-9]+")
_stem = lru_cache(maxsize=65536)(_porter.stem)


class _UnicodeTokenizer:
    """rouge-score's tokenizer interface: ``tokenize(text) -> list[str]``."""

    def __init__(self, stem: Callable[[str], str]) -> None:
        self._stem = stem

    def tokenize(self, text: str) -> list[str]:
        tokens: list[str] = []
        for word in _WORD.findall(text.lower()):
            for piece in _IDEOGRAPHIC.split(word):
                if not piece:
                    continue
                if len(piece) > 3 and _ASCII_WORD.match(piece):
                    piece = self._stem(piece)
                tokens.append(piece)
        return tokens


@cache
def _tokenizer() -> _UnicodeTokenizer:
    return _UnicodeTokenizer(_stem)


def _rouge_score_tokens(text: str) -> list[str]:
    """``rouge-score``'s ``DefaultTokenizer(use_stemmer=True)``: lower case, every run of
    characters other than ``[a-z0-9]`` a space, split, tokens longer than three characters stemmed.

    >>> _rouge_score_tokens("The skies were CLEARING, 42°C!")
    ['the', 'sky', 'were', 'clear', '42', 'c']
    """
    tokens = _NOT_ASCII_ALNUM.sub(" ", text.lower()).split()
    return [_stem(token) if len(token) > 3 else token for token in tokens]


def _unigram_f(reference: list[str], candidate: list[str]) -> float:
    """``rouge-score``'s ROUGE-1 F-measure over tokens, step for step (``_score_ngrams``, then
    ``scoring.fmeasure``), without its n-gram tuples and score objects."""
    want, got = Counter(reference), Counter(candidate)
    overlap = 0
    for token, count in want.items():
        overlap += min(count, got[token])
    precision = overlap / max(len(candidate), 1)
    recall = overlap / max(len(reference), 1)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def rouge1_f(reference: str, candidate: str) -> float:
    """ROUGE-1 F-measure of ``candidate`` against ``reference``."""
    tokenizer = _tokenizer()
    return _unigram_f(tokenizer.tokenize(reference), tokenizer.tokenize(candidate))


def _adk_split_alone(code: int) -> bool:
    """CJK Unified Ideographs, Hiragana, Katakana, Hangul syllables: one token per character."""
    return (0x4E00 <= code <= 0x9FFF or 0x3040 <= code <= 0x309F or 0x30A0 <= code <= 0x30FF
            or 0xAC00 <= code <= 0xD7AF)


def _adk_unspaced(code: int) -> bool:
    """Thai, Lao, Khmer, Myanmar: a token per base character with its combining marks."""
    return (0x0E00 <= code <= 0x0E7F or 0x0E80 <= code <= 0x0EFF or 0x1780 <= code <= 0x17FF
            or 0x1000 <= code <= 0x109F)


def _is_mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


class _AdkTokenizer:
    """Google ADK 2.x's ROUGE tokenizer (see the module docstring), ``rouge-score``'s interface."""

    def __init__(self, ascii_tokens: Callable[[str], list[str]]) -> None:
        self._ascii = ascii_tokens

    def tokenize(self, text: str) -> list[str]:
        spaced: list[str] = []
        for char in unicodedata.normalize("NFKC", text).lower():
            code = ord(char)
            if _adk_split_alone(code):
                spaced += [" ", char, " "]
            elif _adk_unspaced(code):
                spaced += [char] if _is_mark(char) else [" ", char]
            elif char.isalnum() or _is_mark(char):
                spaced.append(char)
            else:
                spaced.append(" ")
        tokens: list[str] = []
        for word in "".join(spaced).split():
            if word.isascii():
                tokens += self._ascii(word)
            else:
                tokens.append(word)
        return tokens


@cache
def _adk_tokenizer() -> _AdkTokenizer:
    return _AdkTokenizer(_rouge_score_tokens)


def adk_tokens(text: str) -> list[str]:
    """``text`` as Google ADK's ``response_match_score`` tokenizes it.

    >>> adk_tokens("Running Ⅻ ❤️") == ["run", "xii", "\ufe0f"]
    True
    """
    return _adk_tokenizer().tokenize(text)


def adk_rouge1_f(reference: str, candidate: str) -> float:
    """ROUGE-1 F-measure of ``candidate`` against ``reference``, tokenized as Google ADK does."""
    tokenizer = _adk_tokenizer()
    return _unigram_f(tokenizer.tokenize(reference), tokenizer.tokenize(candidate))
