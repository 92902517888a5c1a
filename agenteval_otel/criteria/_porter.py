"""The Porter stemmer as NLTK's ``PorterStemmer()`` runs it by default (``NLTK_EXTENSIONS``).

Porter's 1980 algorithm with Martin Porter's later changes and NLTK's own: a table of irregular
forms (``dying`` → ``die``, ``skies`` → ``sky``), ``ies``/``ied`` on four-letter words kept as
``ie``, ``y`` → ``i`` only after a consonant that is not the first letter, ``alli`` handled before
the other step-2 suffixes, ``fulli`` and ``logi`` in step 2, and words of one or two characters
left alone. Every rule, its order and its condition follow ``nltk.stem.porter``, so
:func:`stem` returns what NLTK returns for any string (the test suite compares them over more than
100,000 words when NLTK is installed).

>>> [stem(w) for w in ("running", "caresses", "generously", "happily", "dying", "agreed", "sky")]
['run', 'caress', 'gener', 'happili', 'die', 'agre', 'sky']
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["stem"]

_VOWELS = frozenset("aeiou")
_IRREGULAR = {
    "sky": "sky", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie", "news": "news",
    "innings": "inning", "inning": "inning", "outings": "outing", "outing": "outing",
    "cannings": "canning", "canning": "canning", "howe": "howe", "proceed": "proceed",
    "exceed": "exceed", "succeed": "succeed",
}

Rule = tuple[str, str, Callable[[str], bool]]


def _consonants(word: str) -> list[bool]:
    """Per letter, whether it is a consonant: not a vowel, and a ``y`` only first or after a vowel."""
    flags: list[bool] = []
    for i, char in enumerate(word):
        flags.append(char not in _VOWELS and (char != "y" or i == 0 or not flags[-1]))
    return flags


def _measure(stem: str) -> int:
    """Porter's *m*: the number of vowel-run → consonant-run changes in ``stem``."""
    return "".join("c" if c else "v" for c in _consonants(stem)).count("vc")


def _m_above(n: int) -> Callable[[str], bool]:
    return lambda stem: _measure(stem) > n


def _contains_vowel(stem: str) -> bool:
    return not all(_consonants(stem))


def _ends_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonants(word)[-1]


def _ends_cvc(word: str) -> bool:
    """Porter's *o (consonant, vowel, consonant other than w, x, y), or NLTK's vowel + consonant."""
    flags = _consonants(word)
    if len(word) >= 3:
        return flags[-3] and not flags[-2] and flags[-1] and word[-1] not in "wxy"
    return len(word) == 2 and not flags[0] and flags[1]


def _apply(word: str, rules: list[Rule]) -> str:
    """The first rule whose suffix ends ``word`` decides: replaced if its condition holds on the
    stem, else ``word`` unchanged (no later rule is tried)."""
    for suffix, replacement, condition in rules:
        if word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            return stem + replacement if condition(stem) else word
    return word


def _step1a(word: str) -> str:
    if len(word) == 4 and word.endswith("ies"):
        return word[0] + "ie"
    for suffix, replacement in (("sses", "ss"), ("ies", "i"), ("ss", "ss"), ("s", "")):
        if word.endswith(suffix):
            return word[: len(word) - len(suffix)] + replacement
    return word


def _step1b(word: str) -> str:
    if word.endswith("ied"):
        return word[:-3] + ("ie" if len(word) == 4 else "i")
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _contains_vowel(word[: -len(suffix)]):
            stem = word[: -len(suffix)]
            break
    else:
        return word
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if _ends_double_consonant(stem):
        return stem[:-1] if stem[-1] not in "lsz" else stem
    if stem.endswith("*d"):  # NLTK writes the rule above as the suffix "*d": a literal "*d" takes it too
        return stem[:-2] + "d"
    return stem + "e" if _measure(stem) == 1 and _ends_cvc(stem) else stem


def _step1c(word: str) -> str:
    if word.endswith("y") and len(word) > 2 and _consonants(word[:-1])[-1]:
        return word[:-1] + "i"
    return word


_STEP2: list[Rule] = [
    (suffix, replacement, _m_above(0)) for suffix, replacement in (
        ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
        ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
        ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
        ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
        ("fulli", "ful"),
    )
] + [("logi", "log", lambda stem: _measure(stem + "l") > 0)]
_STEP3: list[Rule] = [
    (suffix, replacement, _m_above(0)) for suffix, replacement in (
        ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""),
        ("ness", ""),
    )
]
_STEP4: list[Rule] = [
    (suffix, "", _m_above(1)) for suffix in (
        "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    )
] + [("ion", "", lambda stem: _measure(stem) > 1 and stem[-1] in "st")] + [
    (suffix, "", _m_above(1)) for suffix in ("ou", "ism", "ate", "iti", "ous", "ive", "ize")
]


def _step2(word: str) -> str:
    if word.endswith("alli") and _measure(word[:-4]) > 0:
        return _step2(word[:-2])
    return _apply(word, _STEP2)


def _step5(word: str) -> str:
    if word.endswith("e"):
        m = _measure(word[:-1])
        if m > 1 or (m == 1 and not _ends_cvc(word[:-1])):
            word = word[:-1]
    if word.endswith("ll") and _measure(word[:-1]) > 1:
        return word[:-1]
    return word


def stem(word: str) -> str:
    """``word`` lower-cased and stemmed, as ``nltk.stem.porter.PorterStemmer().stem(word)``."""
    lowered = word.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if len(word) <= 2:
        return lowered
    for step in (_step1a, _step1b, _step1c, _step2):
        lowered = step(lowered)
    return _step5(_apply(_apply(lowered, _STEP3), _STEP4))
