"""The three text variants of SPEC §2, computed once per summary.

- ``a``: ROUGE-1.5.5 tokens (:func:`qarla_spark.text.tokenize.tokenize`);
- ``b``: ``a`` without the SMART stop words (ROUGE-1.5.5 ``-s``);
- ``c``: ``b`` with every token longer than 3 characters stemmed
  (ROUGE-1.5.5 ``-s -m``, :func:`qarla_spark.text.stem.stem_token`).

As in ROUGE-1.5.5, the stop-word test is made on the unstemmed token and
stemming is applied after stop-word removal.

A prepared summary holds, for each variant, its sentences (SPEC §2 split,
:func:`qarla_spark.text.tokenize.split_sentences`) as tuples of tokens. A
sentence left without tokens in a variant is dropped from that variant: it
contributes nothing to any ROUGE kind (ROUGE-1.5.5 adds 0 to the LCS/WLCS
base for it and it can hold no hit). The n-gram kinds use the concatenation
of the sentences, which is ROUGE-1.5.5's token sequence of the whole text.

The ROUGE profiles (:mod:`qarla_spark.metrics.rouge_profiles`) take these
token sequences and never re-tokenize.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import FrozenSet, Iterable, List, NamedTuple, Sequence, Tuple

from qarla_spark.text.stem import stem_token
from qarla_spark.text.tokenize import split_sentences, tokenize

__all__ = [
    "VARIANTS",
    "Sentences",
    "PreparedSummary",
    "stopwords",
    "prepare",
    "prepare_language",
    "prepare_many",
]

#: Variant names, in the order used everywhere (SPEC §2).
VARIANTS: Tuple[str, ...] = ("a", "b", "c")

#: One variant of one summary: its sentences, each a tuple of tokens.
Sentences = Tuple[Tuple[str, ...], ...]

STOPWORDS_FILE = "smart_common_words.txt"


@lru_cache(maxsize=None)
def stopwords() -> FrozenSet[str]:
    """ROUGE-1.5.5's stop list (``smart_common_words.txt``, one word a line).

    Entries with an apostrophe (``'s``, ``can't``...) can never match a
    token, as in ROUGE-1.5.5; they are kept so the file stays a verbatim copy.
    """
    path = resources.files("qarla_spark.text") / "data" / STOPWORDS_FILE
    with path.open("r", encoding="ascii") as fh:
        return frozenset(line.rstrip("\n") for line in fh if line.rstrip("\n"))


class PreparedSummary(NamedTuple):
    """A summary in its three variants (each a tuple of token tuples)."""

    a: Sentences
    b: Sentences
    c: Sentences

    def variant(self, name: str) -> Sentences:
        """The sentences of variant ``name`` (``"a"``, ``"b"`` or ``"c"``)."""
        if name not in VARIANTS:
            raise ValueError(f"unknown variant {name!r}; expected one of {VARIANTS}")
        return getattr(self, name)

    def tokens(self, name: str) -> Tuple[str, ...]:
        """All tokens of variant ``name`` in text order."""
        return tuple(t for sentence in self.variant(name) for t in sentence)

    def to_lists(self) -> List[List[List[str]]]:
        """Plain nested lists ``[a, b, c]`` (e.g. for an Arrow/Spark column)."""
        return [[list(s) for s in getattr(self, v)] for v in VARIANTS]

    @classmethod
    def from_lists(cls, lists: Sequence[Sequence[Sequence[str]]]) -> "PreparedSummary":
        """Inverse of :meth:`to_lists`."""
        if len(lists) != len(VARIANTS):
            raise ValueError(f"expected {len(VARIANTS)} variants, got {len(lists)}")
        return cls(*(tuple(tuple(s) for s in v) for v in lists))


def prepare(text: str, language: str = "en") -> PreparedSummary:
    """Split, tokenize, remove stop words and stem ``text`` once, in
    ``language`` (default ``en``: ROUGE-1.5.5's processing; any other
    language: :func:`prepare_language`).

    >>> p = prepare("The agreements were signed. Nothing else!")
    >>> p.a
    (('the', 'agreements', 'were', 'signed'), ('nothing', 'else'))
    >>> p.b, p.c
    ((('agreements', 'signed'),), (('agreem', 'sign'),))
    """
    if language != "en":
        return prepare_language(text, language)
    return _variants((tokenize(sentence) for sentence in split_sentences(text)), stopwords(),
                     stem_token)


def _variants(sentences: Iterable[List[str]], stop, stem) -> PreparedSummary:
    """The three variants of a summary's sentences' tokens: ``a`` every
    non-empty sentence's tokens, ``b`` without the ``stop`` words (sentences
    left empty dropped), ``c`` those ``b`` tokens stemmed (``stem`` None:
    as they are)."""
    a: List[Tuple[str, ...]] = []
    b: List[Tuple[str, ...]] = []
    c: List[Tuple[str, ...]] = []
    for tokens in sentences:
        if not tokens:
            continue
        a.append(tuple(tokens))
        kept = [t for t in tokens if t not in stop]
        if kept:
            b.append(tuple(kept))
            c.append(tuple(stem(t) for t in kept) if stem is not None else tuple(kept))
    return PreparedSummary(tuple(a), tuple(b), tuple(c))


def prepare_language(text: str, language: str) -> PreparedSummary:
    """:func:`prepare` in a language other than English
    (:mod:`qarla_spark.text.languages`): Unicode sentences and tokens; ``b``
    without the language's stop words, ``c`` those stemmed by its Snowball
    stemmer. A language without a stop list has ``b`` equal to ``a``, one
    without a stemmer ``c`` equal to ``b``: the battery refuses the metrics of
    such a variant (:func:`~qarla_spark.text.languages.missing_variants`), and
    TVM's terms are then the language's most processed tokens.

    >>> prepare("Книги лежали на столе. Их никто не читал!", "ru").c
    (('книг', 'лежа', 'стол'), ('чита',))
    """
    from qarla_spark.text import languages as lang
    info = lang.language(language)
    stop = lang.stop_list(language) if info.stop_list else frozenset()
    stem = lang.stemmer(language) if "c" in info.variants else None
    return _variants((lang.tokens_of_normalised(sentence, language)
                      for sentence in lang.unicode_sentences(lang.normalise(text))), stop, stem)


def prepare_many(texts: Sequence[str], language: str = "en") -> List[PreparedSummary]:
    """:func:`prepare` applied to each text."""
    return [prepare(t, language) for t in texts]
