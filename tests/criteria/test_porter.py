"""Our Porter stemmer returns what NLTK's ``PorterStemmer()`` returns, word for word."""

from __future__ import annotations

import os
import random
import re
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenteval_otel.criteria._porter import stem
from tests.shared_data import REPO_ROOT, SHARED_DATA

NLTK_MISSING = "nltk is not installed (it is in the test extra): no stemmer to compare with"

# Every suffix a rule of the algorithm looks at, to put each word through rules its own text may miss.
SUFFIXES = ("s", "es", "ies", "sses", "ss", "ed", "ied", "eed", "ing", "y", "ly", "ational", "tional",
            "enci", "anci", "izer", "bli", "alli", "entli", "eli", "ousli", "ization", "ation", "ator",
            "alism", "iveness", "fulness", "ousness", "aliti", "iviti", "biliti", "fulli", "logi",
            "icate", "ative", "alize", "iciti", "ical", "ful", "ness", "al", "ance", "ence", "er", "ic",
            "able", "ible", "ant", "ement", "ment", "ent", "sion", "tion", "ion", "ou", "ism", "ate",
            "iti", "ous", "ive", "ize", "e", "ll", "at", "bl", "iz")
ODD = ["", "y", "yy", "y" * 60, "ay" * 30, "sky", "SKIES", "Dying", "İstanbul", "Straße", "ǅungla",
       "x*ded", "ba*ded", "o*ding", "*d", "1990s", "e-mail", "ies", "ied", "eed", "tied", "pies", "dies",
       "spied", "feed", "bleed", "geology", "theology", "archaeology", "controlling", "hopping", "filing"]


@pytest.mark.parametrize(
    ("word", "expected"),
    [("caresses", "caress"), ("ponies", "poni"), ("ties", "tie"), ("cats", "cat"), ("feed", "feed"),
     ("agreed", "agre"), ("plastered", "plaster"), ("motoring", "motor"), ("sing", "sing"),
     ("conflated", "conflat"), ("hopping", "hop"), ("falling", "fall"), ("filing", "file"),
     ("happy", "happi"), ("enjoy", "enjoy"), ("relational", "relat"), ("generously", "gener"),
     ("triplicate", "triplic"), ("adjustment", "adjust"), ("adoption", "adopt"), ("controll", "control"),
     ("dying", "die"), ("skies", "sky"), ("news", "news"), ("Running", "run"), ("is", "is")],
)
def test_known_stems(word: str, expected: str) -> None:
    assert stem(word) == expected


def _files(root: Path, suffixes: tuple[str, ...] = ()) -> Iterator[Path]:
    """The files under ``root`` (with one of ``suffixes``, when given), hidden folders (such as a
    virtual environment's) and installed packages left out."""
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [name for name in subfolders if not name.startswith(".") and name != "site-packages"]
        for name in names:
            if not suffixes or name.endswith(suffixes):
                yield Path(folder, name)


def _words_in(paths: Iterator[Path], pattern: str = r"\w+") -> set[str]:
    words: set[str] = set()
    for path in paths:
        try:
            words.update(re.findall(pattern, path.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return words


def _word_list() -> list[str]:
    """Every distinct word of the repository's .py and .md files and of the third-party data
    (when present), and every word of letters in the Python standard library's sources (English
    prose of docstrings and comments), lower-cased; then a sample of them with each suffix of the
    algorithm, and odd strings (long runs of y, non-ASCII, NLTK's literal ``*d``)."""
    words = _words_in(_files(REPO_ROOT, (".py", ".md")))
    if SHARED_DATA.is_dir():
        words |= _words_in(_files(SHARED_DATA))
    stdlib = _files(Path(sysconfig.get_path("stdlib")), (".py",))
    words |= {word.lower() for word in _words_in(stdlib, r"\b[A-Za-z]+\b")}
    alphabetic = sorted(w.lower() for w in words if w.isalpha() and w.isascii())
    sample = random.Random(5).sample(alphabetic, min(1000, len(alphabetic)))
    words |= {word + suffix for word in sample for suffix in SUFFIXES}
    return sorted(words | set(ODD))


def test_same_stems_as_nltk_over_a_large_word_list() -> None:
    porter = pytest.importorskip("nltk.stem.porter", reason=NLTK_MISSING)
    nltk_stemmer = porter.PorterStemmer()  # its default mode, NLTK_EXTENSIONS
    words = _word_list()
    assert len(words) > 50_000
    differ = [(word, ours, theirs) for word in words
              if (ours := stem(word)) != (theirs := nltk_stemmer.stem(word))]
    assert differ == []
