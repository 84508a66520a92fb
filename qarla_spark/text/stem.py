"""ROUGE-1.5.5's ``-m`` stemming: WordNet 2.0 exceptions, then its own Porter.

ROUGE-1.5.5 (``createNGram``/``tokenizeText_LCS`` with ``-m``) stems only
the tokens longer than 3 characters, with ``MorphStem``:

1. look the token up in the WordNet 2.0 exception DB
   (``WordNet-2.0.exc.db``, built by ``buildExeptionDB.pl`` from
   ``adj.exc``, ``adv.exc``, ``noun.exc``, ``verb.exc``: the first word of
   each line maps to the second, a later line wins); a hit replaces the
   token and Porter is not applied;
2. otherwise apply ROUGE-1.5.5's Porter stemmer (sub ``stem``).

The DB file is not shipped here: the four text lists are (see
``data/README.md``), loaded in the order adj, adv, noun, verb (SPEC §2: a
later list wins for a repeated word, which is what the originally
distributed DB holds; ``buildExeptionDB.pl`` itself reads the files in
directory order). Only the first base form of a line is used, as in
``buildExeptionDB.pl``.

ROUGE-1.5.5's Porter stemmer is Martin Porter's algorithm with one change by
Chin-Yew Lin (dated 02/14/2004 in the script): in step 4 the ``-ement``
suffix is in the first rule list while ``-ment`` and ``-ent`` are tested
afterwards as separate rules, so one word can lose two of them
(agreement → agreem, argument → argum, statement → statem). Standard Porter
(and NLTK's implementations) stop after the first step-4 rule. This module
reimplements the ROUGE variant from its description in the script; the
regular expressions below are the ones the script uses (both Perl and
Python pick the leftmost match), so the output is identical word for word.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Dict

__all__ = [
    "EXCEPTION_FILES",
    "exceptions",
    "porter_stem",
    "stem_token",
]

#: The WordNet 2.0 exception lists, in loading order (a later file wins).
EXCEPTION_FILES = ("adj.exc", "adv.exc", "noun.exc", "verb.exc")

# --- Porter's measure conditions (ROUGE-1.5.5 sub ``initialise``) ----------
_c = "[^aeiou]"  # consonant
_v = "[aeiouy]"  # vowel
_C = _c + "[^aeiouy]*"  # consonant sequence
_V = _v + "[aeiou]*"  # vowel sequence
_MGR0 = re.compile("^(" + _C + ")?" + _V + _C)  # [C]VC...       m > 0
_MEQ1 = re.compile("^(" + _C + ")?" + _V + _C + "(" + _V + r")?\Z")  # m = 1
_MGR1 = re.compile("^(" + _C + ")?" + _V + _C + _V + _C)  # [C]VCVC...  m > 1
_HAS_VOWEL = re.compile("^(" + _C + ")?" + _v)  # vowel in stem
_CVC = re.compile("^" + _C + _v + r"[^aeiouwxy]\Z")  # short syllable *o

_STEP1A = re.compile(r"(ss|i)es\Z")
_STEP1A_S = re.compile(r"([^s])s\Z")
_STEP1B = re.compile(r"(ed|ing)\Z")
_STEP1B_E = re.compile(r"(at|bl|iz)\Z")
_DOUBLE = re.compile(r"([^aeiouylsz])\1\Z")

_STEP2 = {
    "ational": "ate", "tional": "tion", "enci": "ence", "anci": "ance",
    "izer": "ize", "bli": "ble", "alli": "al", "entli": "ent", "eli": "e",
    "ousli": "ous", "ization": "ize", "ation": "ate", "ator": "ate",
    "alism": "al", "iveness": "ive", "fulness": "ful", "ousness": "ous",
    "aliti": "al", "iviti": "ive", "biliti": "ble", "logi": "log",
}  # fmt: skip
# As in Perl, the search picks the leftmost match, i.e. the longest listed
# suffix the word ends with (ization before ation, ational before tional).
_STEP2_RE = re.compile(
    "(ational|tional|enci|anci|izer|bli|alli|entli|eli|ousli|ization|ation"
    r"|ator|alism|iveness|fulness|ousness|aliti|iviti|biliti|logi)\Z"
)
_STEP3 = {
    "icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic",
    "ful": "", "ness": "",
}  # fmt: skip
_STEP3_RE = re.compile(r"(icate|ative|alize|iciti|ical|ful|ness)\Z")
# ROUGE-1.5.5's step 4: "ment" and "ent" are not in this list (see below).
_STEP4_RE = re.compile(
    r"(al|ance|ence|er|ic|able|ible|ant|ement|ou|ism|ate|iti|ous|ive|ize)\Z"
)
_STEP4_ION = re.compile(r"(s|t)(ion)\Z")


def porter_stem(word: str) -> str:
    """ROUGE-1.5.5's Porter stemmer (its sub ``stem``) on a lower-case word.

    Departs from standard Porter exactly where ROUGE-1.5.5 does (step 4, see
    the module docstring). Words shorter than 3 characters are returned
    unchanged, as in the script.

    >>> porter_stem("agreement"), porter_stem("running"), porter_stem("play")
    ('agreem', 'run', 'plai')
    """
    if len(word) < 3:
        return word
    w = word
    # An initial y is a consonant: upper-case it so the patterns skip it.
    initial_y = w[0] == "y"
    if initial_y:
        w = "Y" + w[1:]

    # Step 1a
    m = _STEP1A.search(w)
    if m:
        w = w[: m.start()] + m.group(1)
    else:
        m = _STEP1A_S.search(w)
        if m:
            w = w[: m.start()] + m.group(1)

    # Step 1b (an -eed word never falls through to the -ed/-ing rule)
    if w.endswith("eed"):
        if _MGR0.search(w[:-3]):
            w = w[:-1]
    else:
        m = _STEP1B.search(w)
        if m:
            stem = w[: m.start()]
            if _HAS_VOWEL.search(stem):
                w = stem
                if _STEP1B_E.search(w):
                    w += "e"
                elif _DOUBLE.search(w):
                    w = w[:-1]
                elif _CVC.search(w):
                    w += "e"

    # Step 1c
    if w.endswith("y"):
        stem = w[:-1]
        if _HAS_VOWEL.search(stem):
            w = stem + "i"

    # Step 2
    m = _STEP2_RE.search(w)
    if m:
        stem = w[: m.start()]
        if _MGR0.search(stem):
            w = stem + _STEP2[m.group(1)]

    # Step 3
    m = _STEP3_RE.search(w)
    if m:
        stem = w[: m.start()]
        if _MGR0.search(stem):
            w = stem + _STEP3[m.group(1)]

    # Step 4 -- ROUGE-1.5.5 variant: three independent tests, so e.g.
    # "agreement" keeps "agreem" (-ement fails m>1, -ment fails, -ent fires).
    m = _STEP4_RE.search(w)
    if m:
        stem = w[: m.start()]
        if _MGR1.search(stem):
            w = stem
    if w.endswith("ment"):
        stem = w[:-4]
        if _MGR1.search(stem):
            w = stem
    if w.endswith("ent"):
        stem = w[:-3]
        if _MGR1.search(stem):
            w = stem
    else:
        m = _STEP4_ION.search(w)
        if m:
            stem = w[: m.start()] + m.group(1)
            if _MGR1.search(stem):
                w = stem

    # Step 5
    if w.endswith("e"):
        stem = w[:-1]
        if _MGR1.search(stem) or (_MEQ1.search(stem) and not _CVC.search(stem)):
            w = stem
    if w.endswith("ll") and _MGR1.search(w):
        w = w[:-1]

    if initial_y:
        w = w[0].lower() + w[1:]
    return w


def _load_exceptions() -> Dict[str, str]:
    table: Dict[str, str] = {}
    data = resources.files("qarla_spark.text") / "data"
    for name in EXCEPTION_FILES:
        with (data / name).open("r", encoding="ascii") as fh:
            for line in fh:
                fields = line.split()
                if len(fields) >= 2:
                    table[fields[0]] = fields[1]
    return table


_EXCEPTIONS: Dict[str, str] | None = None


def exceptions() -> Dict[str, str]:
    """The merged WordNet 2.0 exception table (inflected form → base form)."""
    global _EXCEPTIONS
    if _EXCEPTIONS is None:
        _EXCEPTIONS = _load_exceptions()
    return _EXCEPTIONS


@lru_cache(maxsize=1 << 18)
def stem_token(token: str) -> str:
    """Stem one ROUGE token as ROUGE-1.5.5's ``-m`` does.

    Tokens of at most 3 characters are returned unchanged; longer ones are
    replaced by their WordNet 2.0 exception entry if there is one, else by
    :func:`porter_stem`.

    >>> [stem_token(t) for t in ("was", "were", "found", "children", "agreement")]
    ['was', 'be', 'find', 'child', 'agreem']
    """
    if len(token) <= 3:
        return token
    base = exceptions().get(token)
    if base is not None:
        return base
    return porter_stem(token)
