"""Tests of qarla_spark.text: ROUGE-1.5.5 tokens, SPEC sentences, stop words,
stemming and the a/b/c variants (SPEC §2).

The stemmer is checked word by word against ROUGE-1.5.5's own Perl subs
(``tests/golden/rouge155_stems.tsv.gz``, see ``tests/golden/README.md``).
No Spark, Perl or ../shared is needed.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.text.stem import EXCEPTION_FILES, exceptions, porter_stem, stem_token
from qarla_spark.text.tokenize import split_sentences, tokenize, tokenize_sentences
from qarla_spark.text.variants import VARIANTS, PreparedSummary, prepare, stopwords

GOLDEN = Path(__file__).parent / "golden"
DATA = resources.files("qarla_spark.text") / "data"

DATA_MD5 = {
    "smart_common_words.txt": "a45fbbb50a2fd45ef502a006f0f70129",
    "adj.exc": "ef3e1c35234edb8d7394c75f4b344c70",
    "adv.exc": "c0d9112ae92a3ce3a149541c16c0386a",
    "noun.exc": "bf8515bf49fcbfb5404812146a572c5d",
    "verb.exc": "33a77a8eae6751c87adb52ec98313114",
}


# --- data files ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(DATA_MD5))
def test_data_file_is_verbatim_copy(name):
    assert hashlib.md5((DATA / name).read_bytes()).hexdigest() == DATA_MD5[name]


def test_data_readme_has_provenance_and_wordnet_licence():
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for name, digest in DATA_MD5.items():
        assert name in readme and digest in readme
    assert "WordNet 2.0 Copyright 2003 by Princeton University.  All rights reserved." in readme
    assert "Permission to use, copy, modify and distribute this software" in readme


def test_stopwords():
    stop = stopwords()
    assert len(stop) == 596  # 598 lines, "may" and "would" twice
    assert {"reuters", "ap", "the", "a", "may", "would", "best", "better"} <= stop
    assert all(w == w.lower() and w.strip() == w for w in stop)


def test_exception_table_order_later_file_wins():
    assert EXCEPTION_FILES == ("adj.exc", "adv.exc", "noun.exc", "verb.exc")
    table = exceptions()
    assert table["better"] == "well"  # adj.exc: better good well; adv.exc: better well
    assert table["best"] == "well"
    assert table["testes"] == "testes"  # noun.exc: testis; verb.exc: testes
    assert table["is"] == "be"
    assert table["offer"] == "offer"  # adj.exc lists it twice: off, then offer
    assert table["found"] == "find" and table["children"] == "child"


# --- tokens -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("", []),
        ("   \n\t", []),
        ("... !!! -- - ,;:", []),
        ("Hello", ["hello"]),
        ("NASA Launches", ["nasa", "launches"]),
        ("call-up state-of-the-art", ["call", "up", "state", "of", "the", "art"]),
        ("Merson's don't", ["merson", "s", "don", "t"]),
        ("3-2, 1st of 10,000 paid $5.50", ["3", "2", "1st", "of", "10", "000", "paid", "5", "50"]),
        # non-ASCII letters separate tokens (ROUGE-1.5.5 reads bytes)
        ("Café naïve Zürich", ["caf", "na", "ve", "z", "rich"]),
        ("“quoted” — dash", ["quoted", "dash"]),
        # characters whose Unicode lower-case is ASCII stay separators
        ("\u212aelvin \u0130stanbul", ["elvin", "stanbul"]),
        ("tab\tseparated\r\nwords", ["tab", "separated", "words"]),
        ("under_score", ["under", "score"]),
    ],
)
def test_tokenize(text, tokens):
    assert tokenize(text) == tokens


def _rouge_tokenize_literal(text: str):
    """ROUGE-1.5.5 readText + tokenizeText, transcribed step by step (bytes)."""
    data = text.encode("utf-8")
    data = bytes(c + 32 if 65 <= c <= 90 else c for c in data)  # tr/A-Z/a-z/
    data = data.replace(b"-", b" - ")
    data = re.sub(rb"[^A-Za-z0-9\-]", b" ", data)
    data = re.sub(rb"\s+", b" ", data.strip())
    words = data.split(b" ") if data else []
    return [w.decode("ascii") for w in words if re.match(rb"^[a-z0-9\$]", w)]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_tokenize_matches_literal_rouge_procedure(text):
    assert tokenize(text) == _rouge_tokenize_literal(text)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_tokens_are_ascii_alnum_and_sentences_partition_them(text):
    tokens = tokenize(text)
    assert all(re.fullmatch(r"[a-z0-9]+", t) for t in tokens)
    assert [t for s in tokenize_sentences(text) for t in s] == tokens
    assert list(prepare(text).tokens("a")) == tokens


# --- sentences --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, sentences",
    [
        ("", []),
        ("  \n \n", []),
        ("One sentence", ["One sentence"]),
        ("One. Two! Three? rest", ["One.", "Two!", "Three?", "rest"]),
        ("Tokenized text . With spaces !", ["Tokenized text .", "With spaces !"]),
        (
            "U.S. officials said. The U.S.A. is big",
            ["U.S.", "officials said.", "The U.S.A.", "is big"],
        ),
        ("end.Next word", ["end.Next word"]),  # no whitespace after the period
        ("quoted.\" next", ["quoted.\" next"]),  # the token ends with a quote
        ("  spaced   out.  text  ", ["spaced out.", "text"]),
        # with newlines: each non-blank line, no punctuation split
        ("first line. still first\n\nsecond line\n", ["first line. still first", "second line"]),
        ("a\r\nb\r\n", ["a", "b"]),
        ("a\rb", ["a", "b"]),
        ("only one line\n", ["only one line"]),
    ],
)
def test_split_sentences(text, sentences):
    assert split_sentences(text) == sentences


# --- stemming -----------------------------------------------------------------------


def _golden_stems():
    with gzip.open(GOLDEN / "rouge155_stems.tsv.gz", "rt", encoding="utf-8") as fh:
        return [line.rstrip("\n").split("\t") for line in fh if not line.startswith("#")]


def test_stems_match_rouge155_perl_subs():
    rows = _golden_stems()
    assert len(rows) > 7000
    bad_porter = [(w, porter_stem(w), p) for w, _, p in rows if porter_stem(w) != p]
    assert not bad_porter[:10]
    bad_morph = [(w, stem_token(w), m) for w, m, _ in rows if len(w) > 3 and stem_token(w) != m]
    assert not bad_morph[:10]
    # the exception lists matter on this vocabulary
    assert sum(1 for w, m, p in rows if len(w) > 3 and m != p) > 100


@pytest.mark.parametrize(
    "word, stem",
    [
        ("agreement", "agreem"),  # ROUGE's step 4: -ement, then -ent
        ("argument", "argum"),
        ("statement", "statem"),
        ("play", "plai"),  # longer than 3 chars: stemmed (y -> i after a vowel)
        ("cat", "cat"),  # 3 chars: untouched
        ("plays", "plai"),
        ("running", "run"),
        ("generalization", "gener"),
        ("was", "was"),  # <= 3 chars: untouched
        ("were", "be"),  # exception list
        ("found", "find"),
        ("children", "child"),
        ("told", "tell"),
        ("better", "well"),
        ("yelling", "yell"),
        ("yearly", "yearli"),
    ],
)
def test_stem_token(word, stem):
    assert stem_token(word) == stem


def test_porter_differs_from_standard_only_as_rouge_does():
    assert porter_stem("play") == "plai"
    assert porter_stem("agreement") == "agreem"  # standard Porter: "agreement"
    assert porter_stem("at") == "at"  # < 3 characters


# --- variants -------------------------------------------------------------------------


def test_prepare_variants():
    p = prepare("The agreements were signed. Nothing else!\n")
    assert p.a == (("the", "agreements", "were", "signed", "nothing", "else"),)  # one line
    p = prepare("The agreements were signed. Nothing else!")
    assert p.a == (("the", "agreements", "were", "signed"), ("nothing", "else"))
    assert p.b == (("agreements", "signed"),)  # second sentence: only stop words
    assert p.c == (("agreem", "sign"),)
    assert p.variant("c") is p.c
    assert p.tokens("b") == ("agreements", "signed")


def test_prepare_empty_and_stop_only():
    assert prepare("") == PreparedSummary((), (), ())
    assert prepare("... --- !!!") == PreparedSummary((), (), ())
    p = prepare("The of and a. It is what it was!")
    assert p.a and not p.b and not p.c


def test_stop_words_removed_before_stemming():
    # "best"/"better" are stop words: removed in b, never stemmed in c
    p = prepare("best better players")
    assert p.b == (("players",),) and p.c == (("player",),)


def test_prepared_round_trip_and_errors():
    p = prepare("One two three. Four five!\nSix")
    assert PreparedSummary.from_lists(p.to_lists()) == p
    with pytest.raises(ValueError):
        p.variant("d")
    with pytest.raises(ValueError):
        PreparedSummary.from_lists([[]])
    assert VARIANTS == ("a", "b", "c")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcdefghij THEthe.!?\n-'é0")), max_size=80))
def test_variant_structure(text):
    p = prepare(text)
    stop = stopwords()
    kept = [t for t in p.tokens("a") if t not in stop]
    assert list(p.tokens("b")) == kept
    assert [len(s) for s in p.b] == [len(s) for s in p.c]
    assert list(p.tokens("c")) == [stem_token(t) for t in kept]
    assert all(len(s) > 0 for v in VARIANTS for s in p.variant(v))
