"""Tests of the non-ROUGE kernels of SPEC §2: TVM.n, AVLS and GRAMSIM.

Expected values are computed by hand in the comments next to them (never by
calling the code under test). No Spark, no network, nothing read outside the
project. The ``pattern`` tagger tests need TextBlob (a project dependency);
the ``spacy`` adapter tests run only where spaCy is installed.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.errors import ConfigError
from qarla_spark.metrics import avls as avls_module
from qarla_spark.metrics import gramsim as gramsim_module
from qarla_spark.metrics import tagging
from qarla_spark.metrics import tvm as tvm_module
from qarla_spark.metrics.avls import avls, avls_topic, average_sentence_length
from qarla_spark.metrics.gramsim import (
    gramsim,
    gramsim_topic,
    summary_tags,
    tag_distributions,
    tag_summaries,
)
from qarla_spark.metrics.tagging import (
    DEFAULT_TAGGER,
    Tagger,
    get_tagger,
    is_word_tag,
    register_tagger,
    tagger_names,
    tagging_tokens,
)
from qarla_spark.metrics.tvm import (
    TVM_NAMES,
    TVM_SIZES,
    c_tokens,
    pairs_from_similarity,
    top_terms,
    topic_terms,
    tvm_pair,
    tvm_topic,
)
from qarla_spark.text.variants import prepare


def _c(text):
    return prepare(text).c


# ---------------------------------------------------------------------------
# TopicPairs
# ---------------------------------------------------------------------------


def test_pairs_are_all_ordered_pairs_row_major():
    sim = np.arange(9, dtype=float).reshape(1, 3, 3)
    tp = pairs_from_similarity(sim, ["X"])
    assert len(tp) == 6
    assert list(zip(tp.s.tolist(), tp.r.tolist())) == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
    assert tp.values[:, 0].tolist() == [1, 2, 3, 5, 6, 7]  # sim[i, j] = 3i + j
    cols = tp.columns(["a", "b", "c"])
    assert list(cols["s"]) == ["a", "a", "b", "b", "c", "c"]
    assert list(cols["r"]) == ["b", "c", "a", "c", "a", "b"]
    assert list(tp.rows(["a", "b", "c"]))[0] == ("a", "b", 1.0)
    # usable as a pandas frame (what an applyInPandas function returns)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(cols)
    assert frame.shape == (6, 3)


def test_topic_with_one_or_no_summary_has_no_pair():
    assert len(tvm_topic([_c("cat")], ["model"])) == 0
    assert len(avls_topic([])) == 0
    assert len(gramsim_topic([[]])) == 0


# ---------------------------------------------------------------------------
# TVM
# ---------------------------------------------------------------------------

SOURCE = "Cats and a dog . The cat , the dog and the sun !"
# c tokens of SOURCE: stop words (and, a, the) removed; "cats" (4 letters)
# stems to "cat": cat dog cat dog sun -> counts cat 2, dog 2, sun 1.
# Ranking: (-count, term): cat (2), dog (2, after cat by string), sun (1).


def test_source_terms_and_ranking_with_tie():
    assert Counter(c_tokens(_c(SOURCE))) == {"cat": 2, "dog": 2, "sun": 1}
    assert topic_terms([_c(SOURCE)]) == ("cat", "dog", "sun")
    # tie at the cut: cat and dog both 2, n = 1 keeps "cat" (string order)
    assert topic_terms([_c(SOURCE)], n=1) == ("cat",)
    assert top_terms({"b": 2, "a": 2, "c": 5, "d": 1}, 3) == ("c", "a", "b")
    assert top_terms({"b": 2, "a": 2, "c": 5, "d": 1}) == ("c", "a", "b", "d")


def test_tvm_golden_values():
    summaries = [
        _c("cat dog ."),        # 2 c tokens -> (cat, dog, sun) = (1/2, 1/2, 0)
        _c("cats cat sun red"),  # 4 c tokens (red counts in the length) -> (1/2, 0, 1/4)
        _c("the and of"),       # only stop words: no c token -> zero vector
    ]
    tp = tvm_topic(summaries, ["model", "peer", "peer"], [_c(SOURCE)])
    assert tp.names == TVM_NAMES
    got = tp.as_dict()
    # TVM.1 uses "cat" only: s0 = 1/2, s1 = 1/2, s2 = 0
    #   d(0,1) = 0 -> 1; d(0,2) = d(1,2) = 1/2 -> 1/(1+1/2) = 2/3
    assert got[(0, 1)]["TVM.1"] == 1.0
    assert got[(0, 2)]["TVM.1"] == pytest.approx(2 / 3, rel=1e-15)
    assert got[(1, 2)]["TVM.1"] == pytest.approx(2 / 3, rel=1e-15)
    # TVM.4 .. TVM.512: only 3 distinct terms, all used.
    #   d(0,1) = sqrt(0^2 + (1/2)^2 + (1/4)^2) = sqrt(5/16) = sqrt(5)/4 -> 4/(4+sqrt 5)
    #   d(0,2) = sqrt(1/4 + 1/4) = sqrt(1/2)                        -> 1/(1+sqrt(1/2))
    #   d(1,2) = sqrt(1/4 + 1/16) = sqrt(5)/4                        -> 4/(4+sqrt 5)
    for n in TVM_SIZES[1:]:
        name = f"TVM.{n}"
        assert got[(0, 1)][name] == pytest.approx(4 / (4 + math.sqrt(5)), rel=1e-14)
        assert got[(0, 2)][name] == pytest.approx(1 / (1 + math.sqrt(0.5)), rel=1e-14)
        assert got[(1, 2)][name] == pytest.approx(4 / (4 + math.sqrt(5)), rel=1e-14)
    # symmetric: (j, i) has the very same floats as (i, j)
    for (i, j), vals in got.items():
        assert vals == got[(j, i)]
    # pairwise API agrees
    terms = topic_terms([_c(SOURCE)])
    assert tvm_pair(summaries[0], summaries[1], terms) == got[(0, 1)]


def test_tvm_tie_at_the_cut_decides_by_term_string():
    # sources: cat 2, dog 2, ant 1 -> TVM.1 term is "cat" (tie with "dog").
    sources = [_c("cat dog ant dog cat")]
    x = _c("dog ant")           # (cat, dog, ant) = (0, 1/2, 1/2)
    y = _c("cat dog dog ant")   # (1/4, 1/2, 1/4)
    got = tvm_topic([x, y], None, sources).as_dict()
    # TVM.1 on "cat": |0 - 1/4| = 1/4 -> 1/(1+1/4) = 0.8   (on "dog" it would be 1)
    assert got[(0, 1)]["TVM.1"] == pytest.approx(0.8, rel=1e-15)
    # TVM.4 (all 3): d = sqrt(1/16 + 0 + 1/16) = sqrt(2)/4 -> 4/(4+sqrt 2)
    assert got[(0, 1)]["TVM.4"] == pytest.approx(4 / (4 + math.sqrt(2)), rel=1e-14)


def test_tvm_without_sources_uses_pooled_models():
    texts = ["owl owl fox .", "owl hen .", "fox fox fox fox ."]
    roles = ["model", "model", "peer"]
    summaries = [_c(t) for t in texts]
    # pooled models: owl 3, fox 1, hen 1 -> ranking owl, fox, hen (the peer's
    # four "fox" do not count). TVM.1 on "owl":
    #   s0 = 2/3, s1 = 1/2, s2 = 0
    #   (0,1): 1/(1+1/6) = 6/7; (0,2): 1/(1+2/3) = 3/5; (1,2): 1/(1+1/2) = 2/3
    for sources in (None, [], [_c("the of .")]):  # absent, empty, or no c token
        got = tvm_topic(summaries, roles, sources).as_dict()
        assert got[(0, 1)]["TVM.1"] == pytest.approx(6 / 7, rel=1e-15)
        assert got[(0, 2)]["TVM.1"] == pytest.approx(3 / 5, rel=1e-15)
        assert got[(1, 2)]["TVM.1"] == pytest.approx(2 / 3, rel=1e-15)
    # TVM.4, terms (owl, fox, hen): s0 = (2/3, 1/3, 0), s1 = (1/2, 0, 1/2), s2 = (0, 1, 0)
    #   d(0,2)^2 = 4/9 + 4/9 + 0 = 8/9 -> 1/(1 + sqrt(8)/3) = 3/(3 + 2 sqrt 2)
    got = tvm_topic(summaries, roles).as_dict()
    assert got[(0, 2)]["TVM.4"] == pytest.approx(3 / (3 + 2 * math.sqrt(2)), rel=1e-14)
    # with a source, the source decides: "fox" is its only term
    got = tvm_topic(summaries, roles, [_c("fox")]).as_dict()
    # TVM.1 on "fox": s0 = 1/3, s1 = 0, s2 = 1 -> (0,1): 1/(1+1/3) = 3/4
    assert got[(0, 1)]["TVM.1"] == pytest.approx(3 / 4, rel=1e-15)


def test_tvm_no_term_at_all_scores_one_and_roles_are_needed_without_sources():
    got = tvm_topic([_c("cat"), _c("dog")], ["peer", "peer"], None)
    assert np.all(got.values == 1.0)  # no source, no model: empty vector space
    with pytest.raises(ValueError, match="roles"):
        tvm_topic([_c("cat"), _c("dog")], None, None)
    with pytest.raises(ValueError, match="roles"):
        tvm_topic([_c("cat"), _c("dog")], ["model"], None)


def test_tvm_accepts_flat_nested_and_prepared_tokens():
    p = prepare("Cats sleep. Dogs bark!")
    assert c_tokens(p) == c_tokens(p.c) == c_tokens([t for s in p.c for t in s])
    assert c_tokens(None) == [] and c_tokens([]) == []
    with pytest.raises(TypeError):
        c_tokens("cat dog")
    a = tvm_topic([p, _c("dog")], ["model", "model"]).values
    b = tvm_topic([p.c, [list(s) for s in _c("dog")]], ["model", "model"]).values
    assert np.array_equal(a, b)


def test_tvm_custom_sizes_and_bad_sizes():
    tp = tvm_topic([_c("cat dog"), _c("dog")], None, [_c("dog cat dog")], sizes=(1, 2))
    assert tp.names == ("TVM.1", "TVM.2")
    # terms dog (2), cat (1). TVM.1: 1/2 vs 1 -> 2/3; TVM.2: d = sqrt(1/4 + 1/4)
    assert tp.as_dict()[(0, 1)]["TVM.1"] == pytest.approx(2 / 3, rel=1e-15)
    assert tp.as_dict()[(0, 1)]["TVM.2"] == pytest.approx(1 / (1 + math.sqrt(0.5)), rel=1e-14)
    with pytest.raises(ValueError):
        tvm_topic([_c("cat")], None, [_c("cat")], sizes=(0,))


def _naive_tvm(texts_tokens, source_tokens, n):
    """Independent straightforward reference: lists and math only."""
    counts = Counter(t for doc in source_tokens for t in doc)
    terms = [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][:n]

    def vec(tokens):
        return [tokens.count(t) / len(tokens) if tokens else 0.0 for t in terms]

    vs = [vec(list(t)) for t in texts_tokens]
    return {(i, j): 1 / (1 + math.sqrt(sum((a - b) ** 2 for a, b in zip(vs[i], vs[j]))))
            for i in range(len(vs)) for j in range(len(vs)) if i != j}


_word = st.sampled_from(["cat", "dog", "sun", "owl", "fox", "hen", "bee", "ant", "the"])
_tokens = st.lists(_word, max_size=12)
_topic = st.lists(_tokens, min_size=2, max_size=6)


@settings(max_examples=150, deadline=None)
@given(_topic, st.lists(_tokens, min_size=1, max_size=3))
def test_tvm_properties(summary_tokens, source_tokens):
    # the tokens here are used directly as c tokens (the kernel does not re-process)
    tp = tvm_topic(summary_tokens, None if any(source_tokens) else ["model"] * len(summary_tokens),
                   source_tokens)
    m = len(summary_tokens)
    assert len(tp) == m * (m - 1)
    assert np.all(tp.values > 0) and np.all(tp.values <= 1)
    got = tp.as_dict()
    for (i, j), vals in got.items():
        assert vals == got[(j, i)]  # exactly symmetric
        if summary_tokens[i] == summary_tokens[j]:
            assert all(v == 1.0 for v in vals.values())
        seq = [vals[name] for name in TVM_NAMES]
        assert all(a >= b for a, b in zip(seq, seq[1:]))  # more terms, larger distance
    pool = source_tokens if any(source_tokens) else summary_tokens
    for k, n in enumerate(TVM_SIZES[:4]):
        ref = _naive_tvm(summary_tokens, pool, n)
        for (i, j), v in ref.items():
            assert got[(i, j)][TVM_NAMES[k]] == pytest.approx(v, rel=1e-12, abs=1e-15)


def test_tvm_large_topic_blocks_match_small():
    # more rows than one block: forces the blocked distance computation
    import qarla_spark.metrics.tvm as tvm
    rng = np.random.default_rng(0)
    words = [f"w{k}" for k in range(600)]
    summaries = [list(rng.choice(words, size=30)) for _ in range(40)]
    sources = [list(rng.choice(words, size=2000))]
    whole = tvm_topic(summaries, None, sources).values
    old = tvm._BLOCK_FLOATS
    try:
        tvm._BLOCK_FLOATS = 1000
        blocked = tvm_topic(summaries, None, sources).values
    finally:
        tvm._BLOCK_FLOATS = old
    assert np.array_equal(whole, blocked)


# ---------------------------------------------------------------------------
# AVLS
# ---------------------------------------------------------------------------


def test_avls_golden_values():
    # "The cat sat." -> 3 a tokens; "It ran away quickly!" -> 4: mean 3.5
    s = prepare("The cat sat. It ran away quickly!").a
    # one sentence of 6 tokens: mean 6
    r = prepare("One two three four five six").a
    assert average_sentence_length(s) == 3.5
    assert average_sentence_length(r) == 6.0
    assert avls(s, r) == pytest.approx(1 / (1 + 2.5), rel=1e-15)  # = 2/7
    # a sentence with no a token ("-- .") is not a sentence: "Hello world." -> 2
    assert average_sentence_length(prepare("-- . Hello world.").a) == 2.0
    # with newlines, each non-blank line is a sentence: (3 + 2) / 2 = 2.5
    assert average_sentence_length(prepare("a b c\n\n d e \n").a) == 2.5
    # empty summary: average 0 -> against mean 2: 1/(1+2) = 1/3
    assert average_sentence_length(prepare("").a) == 0.0
    assert average_sentence_length(prepare(" ... !").a) == 0.0
    assert avls(prepare("").a, prepare("x y.").a) == pytest.approx(1 / 3, rel=1e-15)
    # PreparedSummary accepted (its a variant)
    assert average_sentence_length(prepare("The cat sat. It ran away quickly!")) == 3.5
    with pytest.raises(TypeError):
        average_sentence_length(["a sentence as a str"])


def test_avls_topic_golden():
    texts = ["a b. c d.", "a b c d e f.", ""]  # means 2, 6, 0
    tp = avls_topic([prepare(t).a for t in texts])
    got = tp.as_dict()
    assert tp.names == ("AVLS",)
    assert got[(0, 1)]["AVLS"] == pytest.approx(1 / 5, rel=1e-15)  # |2-6| = 4
    assert got[(0, 2)]["AVLS"] == pytest.approx(1 / 3, rel=1e-15)  # |2-0| = 2
    assert got[(2, 1)]["AVLS"] == pytest.approx(1 / 7, rel=1e-15)  # |0-6| = 6


_sentences = st.lists(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=8), max_size=5)


@settings(max_examples=200, deadline=None)
@given(st.lists(_sentences, min_size=2, max_size=6), st.randoms(use_true_random=False))
def test_avls_properties(summaries, rnd):
    tp = avls_topic(summaries)
    assert np.all(tp.values > 0) and np.all(tp.values <= 1)
    got = tp.as_dict()
    for (i, j), vals in got.items():
        assert vals == got[(j, i)]
        assert vals["AVLS"] == avls(summaries[i], summaries[j])
        if summaries[i] == summaries[j]:
            assert vals["AVLS"] == 1.0
    # invariance to token content: replace every token, keep sentence lengths
    renamed = [[[rnd.choice(["x", "y", "zz"]) for _ in s] for s in summ] for summ in summaries]
    assert np.array_equal(avls_topic(renamed).values, tp.values)


# ---------------------------------------------------------------------------
# Tagging
# ---------------------------------------------------------------------------


def test_tagging_tokens():
    # already PTB-tokenized (SummEval style): unchanged, except a glued opening quote
    assert tagging_tokens("Townsend 's draw , did n't he ?") == \
        ["Townsend", "'s", "draw", ",", "did", "n't", "he", "?"]
    assert tagging_tokens("'We are ready' he said .") == ["'", "We", "are", "ready", "'", "he", "said", "."]
    # raw text: punctuation, clitics, curly quotes; abbreviations keep their period
    assert tagging_tokens("\u201cDon't go,\u201d Mr. Smith said in the U.S. today.") == \
        ['"', "Do", "n't", "go", ",", '"', "Mr.", "Smith", "said", "in", "the", "U.S.",
         "today", "."]
    # only the last token loses a final period; runs of dots always split
    assert tagging_tokens("etc. and so on...") == ["etc.", "and", "so", "on", "..."]
    assert tagging_tokens("He lives in the U.S.") == ["He", "lives", "in", "the", "U.S."]
    assert tagging_tokens("Plan B.") == ["Plan", "B", "."]  # one letter: not an abbreviation
    assert tagging_tokens("(see 'the '90s')") == ["(", "see", "'", "the", "'90s", "'", ")"]
    assert tagging_tokens("-- . !") == ["--", ".", "!"]
    assert tagging_tokens("   ") == []


_chars = st.text(alphabet=st.sampled_from(list("ab1 .,;:!?'\"()`-\u201c\u201dn't")), max_size=40)


@settings(max_examples=300, deadline=None)
@given(_chars)
def test_tagging_tokens_only_split(sentence):
    toks = tagging_tokens(sentence)
    assert all(toks) and all(not any(ch.isspace() for ch in t) for t in toks)
    normalised = sentence.translate(str.maketrans("\u201c\u201d", '""'))
    assert "".join(toks) == "".join(normalised.split())


def test_is_word_tag():
    assert all(is_word_tag(t) for t in ["NN", "NNP", "VBD", "PRP$", "WP$", "CD", "SYM", "POS"])
    assert not any(is_word_tag(t) for t in [".", ",", ":", "``", "''", "(", ")", "#", "$",
                                            "-LRB-", "-RRB-", "HYPH", "NFP", "_SP", "\u00a3"])


def test_tagger_registry_rejects_unknown_names():
    assert DEFAULT_TAGGER == "pattern"
    assert {"pattern", "spacy"} <= set(tagger_names())
    with pytest.raises(ConfigError) as err:
        get_tagger("treetagger")
    assert "treetagger" in str(err.value)
    assert "pattern" in str(err.value) and "spacy" in str(err.value)
    with pytest.raises(ValueError):
        register_tagger("pattern", tagging.PatternTagger)  # no silent override


def test_missing_packages_give_one_clear_sentence(monkeypatch):
    monkeypatch.setitem(sys.modules, "textblob", None)  # import textblob -> ImportError
    monkeypatch.setitem(sys.modules, "textblob.en", None)
    with pytest.raises(ConfigError, match=r"pip install 'textblob"):
        tagging.PatternTagger()
    monkeypatch.setitem(sys.modules, "spacy", None)
    monkeypatch.setitem(sys.modules, "spacy.tokens", None)
    with pytest.raises(ConfigError, match=r"pip install 'spacy"):
        tagging.SpacyTagger()


class _UpperTagger(Tagger):
    """Test tagger: a word's tag is the word upper-cased; punctuation gets '.'."""

    name = "test-upper"

    def tag_sentences(self, sentences):
        return [[t.upper() if t.isalnum() else "." for t in tagging._as_tokens(s)]
                for s in sentences]


@pytest.fixture
def upper_tagger():
    register_tagger("test-upper", _UpperTagger, replace=True)
    yield get_tagger("test-upper")
    tagging._REGISTRY.pop("test-upper", None)  # leave the registry as it was
    tagging._cached_tagger.cache_clear()


def test_gramsim_golden_with_a_stub_tagger(upper_tagger):
    # "a b a." -> tokens a b a . -> tags A B A . -> kept A B A: (A, B) = (2/3, 1/3)
    s = summary_tags("a b a.", upper_tagger)
    # "b, b" -> tokens b , b -> tags B . B -> kept B B: (A, B) = (0, 1)
    r = summary_tags("b, b", "test-upper")
    assert s == ["A", "B", "A"] and r == ["B", "B"]
    # d = sqrt((2/3)^2 + (1/3 - 1)^2) = sqrt(8/9) = 2 sqrt(2) / 3 -> 3 / (3 + 2 sqrt 2)
    assert gramsim(s, r) == pytest.approx(3 / (3 + 2 * math.sqrt(2)), rel=1e-14)
    # an empty summary (no text, or punctuation only) has the zero vector:
    # against s, d = sqrt(4/9 + 1/9) = sqrt(5)/3 -> 3 / (3 + sqrt 5)
    empty = summary_tags("-- . !", upper_tagger)
    assert empty == [] and summary_tags("", upper_tagger) == [] and summary_tags(None) == []
    assert gramsim(s, empty) == pytest.approx(3 / (3 + math.sqrt(5)), rel=1e-14)
    assert gramsim(empty, []) == 1.0
    tp = gramsim_topic([s, r, empty])
    got = tp.as_dict()
    assert tp.names == ("GRAMSIM",)
    assert got[(0, 1)]["GRAMSIM"] == got[(1, 0)]["GRAMSIM"] == gramsim(s, r)
    # r vs empty: d = 1 -> 1/2
    assert got[(1, 2)]["GRAMSIM"] == pytest.approx(0.5, rel=1e-15)
    # batching over texts gives the same tags as one text at a time
    texts = ["a b a.", "b, b", "", "c. d e!"]
    assert tag_summaries(texts, upper_tagger) == [summary_tags(t, upper_tagger) for t in texts]


def test_tag_distributions_fixed_tagset_is_equivalent():
    lists = [["NN", "DT", "NN"], ["VB"], []]
    tags, mat = tag_distributions(lists)
    assert tags == ("DT", "NN", "VB")
    assert mat.tolist() == [[1 / 3, 2 / 3, 0], [0, 0, 1], [0, 0, 0]]
    penn = ("CC", "DT", "IN", "JJ", "NN", "NNS", "VB", "VBD")
    _, wide = tag_distributions(lists, penn)
    for i in range(3):
        for j in range(3):
            assert np.linalg.norm(mat[i] - mat[j]) == np.linalg.norm(wide[i] - wide[j])
    with pytest.raises(ValueError):
        tag_distributions([["XX"]], penn)


class _BrokenTagger(Tagger):
    name = "test-broken"

    def tag_sentences(self, sentences):
        return [["NN"] for _ in sentences]  # one tag whatever the length


def test_tagger_output_is_checked():
    with pytest.raises(ValueError, match="tags"):
        summary_tags("two words", _BrokenTagger())


# ---------------------------------------------------------------------------
# The default tagger (TextBlob's Pattern tagger, a project dependency)
# ---------------------------------------------------------------------------


def test_pattern_tagger_golden():
    pytest.importorskip("textblob")
    tagger = get_tagger("pattern")
    assert tagger is get_tagger() and tagger.name == "pattern"
    assert tagger.signature.startswith("pattern (textblob ")
    assert tagger.tag_sentences([["The", "cat", "sat", "on", "the", "mat", "."], "It was agreed .", []]) \
        == [["DT", "NN", "VBD", "IN", "DT", "NN", "."], ["PRP", "VBD", "VBD", "."], []]
    # s: kept tags DT NN VBD IN DT NN -> DT 2/6, NN 2/6, VBD 1/6, IN 1/6
    # r: kept tags PRP VBD VBD        -> PRP 1/3, VBD 2/3
    # d^2 = (1/3)^2 + (1/3)^2 + (1/6 - 2/3)^2 + (1/6)^2 + (1/3)^2
    #     = 4/36 + 4/36 + 9/36 + 1/36 + 4/36 = 22/36 -> GRAMSIM = 6 / (6 + sqrt 22)
    s = summary_tags("The cat sat on the mat.")
    r = summary_tags("It was agreed.")
    assert s == ["DT", "NN", "VBD", "IN", "DT", "NN"] and r == ["PRP", "VBD", "VBD"]
    assert gramsim(s, r) == pytest.approx(6 / (6 + math.sqrt(22)), rel=1e-14)


def test_pattern_tagger_needs_no_download(tmp_path):
    pytest.importorskip("textblob")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NLTK")}
    env["HOME"] = str(tmp_path)
    code = ("from qarla_spark.metrics.gramsim import summary_tags;"
            "print(' '.join(summary_tags('Dogs bark loudly.', 'pattern')))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, timeout=120)
    assert out.stdout.split() == ["NNS", "NN", "RB"]
    assert list(tmp_path.iterdir()) == []  # nothing written (no corpus fetched)


def test_pattern_tagger_loads_without_nltk_and_leaves_textblob_importable():
    """The tagger loads TextBlob's parser alone (not NLTK and scipy, 0.6 s
    per process) and leaves no stand-in behind: TextBlob imported afterwards
    is the real package and tags alike."""
    pytest.importorskip("textblob")
    code = "\n".join([
        "import sys",
        "from qarla_spark.metrics.tagging import get_tagger",
        "ours = get_tagger('pattern').tag_sentences(['Dogs bark loudly .'])[0]",
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('nltk', 'scipy', 'textblob')))",
        "import textblob, textblob.en",
        "theirs = [t for _, t in textblob.en.parser.find_tags('Dogs bark loudly .'.split())]",
        "print(ours == theirs, ours, hasattr(textblob, 'TextBlob'), 'nltk' in sys.modules)",
    ])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    loaded, same = out.stdout.splitlines()
    assert loaded == "[]"
    assert same == "True ['NNS', 'NN', 'RB', '.'] True True"


def test_pattern_tagger_falls_back_to_the_usual_import(monkeypatch):
    """When TextBlob's parser cannot be loaded under the stand-in (a
    release needing more of its package), it is imported the usual way."""
    pytest.importorskip("textblob")
    import importlib
    real = importlib.import_module
    calls = []

    def refuse_under_the_stand_in(name, *args):
        calls.append(name)
        package = sys.modules.get("textblob")
        if name == "textblob.en" and package is not None and not hasattr(package, "__file__"):
            raise ImportError("cannot import name 'Blobber' from 'textblob'")
        return real(name, *args)
    monkeypatch.delitem(sys.modules, "textblob", raising=False)
    monkeypatch.setattr(importlib, "import_module", refuse_under_the_stand_in)
    parser = tagging._pattern_parser()
    assert calls == ["textblob.en", "textblob.en"]
    assert [t for _, t in parser.find_tags(["Dogs", "bark"])] == ["NNS", "NN"]


_sentence_text = st.lists(
    st.sampled_from(["The", "cat", "dogs", "ran", "quickly", "and", "it", "was", "big", ",",
                     "Paul", "'s", "n't", "to", "42"]), max_size=10).map(" ".join)
_text = st.lists(_sentence_text, max_size=3).map(lambda ss: " . ".join(ss))


@settings(max_examples=80, deadline=None)
@given(st.lists(_text, min_size=2, max_size=5))
def test_gramsim_properties_with_pattern(texts):
    pytest.importorskip("textblob")
    tags = tag_summaries(texts)
    tp = gramsim_topic(tags)
    assert np.all(tp.values > 0) and np.all(tp.values <= 1)
    got = tp.as_dict()
    for (i, j), vals in got.items():
        assert vals == got[(j, i)]
        if texts[i] == texts[j]:
            assert vals["GRAMSIM"] == 1.0
        assert all(is_word_tag(t) for t in tags[i])


# ---------------------------------------------------------------------------
# The spaCy adapter (only where spaCy is installed)
# ---------------------------------------------------------------------------


def test_spacy_adapter_with_a_rule_pipeline(tmp_path):
    spacy = pytest.importorskip("spacy")
    from spacy.language import Language

    @Language.component("qarla_test_suffix_tagger")
    def _suffix_tagger(doc):  # pragma: no cover - runs inside spaCy
        for tok in doc:
            tok.tag_ = "VBD" if tok.text.endswith("ed") else ("." if tok.is_punct else "NN")
        return doc

    nlp = spacy.blank("en")
    nlp.add_pipe("qarla_test_suffix_tagger", name="tagger")
    nlp.add_pipe("sentencizer")  # disabled by the adapter: only the tagger runs
    path = tmp_path / "pipeline"
    nlp.to_disk(path)
    tagger = tagging.SpacyTagger(model=str(path))
    assert tagger.signature.startswith("spacy (spacy ")
    # tokens are given as they are (spaCy's tokenizer would split "can't")
    assert tagger.tag_sentences([["can't", "walked", "."], [], "he jumped"]) == \
        [["NN", "VBD", "."], [], ["NN", "VBD"]]
    # same tags through GRAMSIM, punctuation dropped
    assert summary_tags("He walked home.", tagger) == ["NN", "VBD", "NN"]


def test_spacy_adapter_errors(tmp_path):
    spacy = pytest.importorskip("spacy")
    with pytest.raises(ConfigError, match="cannot load"):
        tagging.SpacyTagger(model="qarla_no_such_spacy_model")
    path = tmp_path / "blank"
    spacy.blank("en").to_disk(path)
    with pytest.raises(ConfigError, match="no 'tagger'"):
        tagging.SpacyTagger(model=str(path))


def test_spacy_official_small_model_if_installed():
    pytest.importorskip("spacy")
    pytest.importorskip("en_core_web_sm")
    tagger = get_tagger("spacy")
    tags = tagger.tag_sentences(["The cat sat on the mat ."])[0]
    assert tags[:3] == ["DT", "NN", "VBD"] and tags[-1] == "."


# ---------------------------------------------------------------------------
# Battery adapters: the same values for the pairs they are given
# ---------------------------------------------------------------------------


def test_family_kernels_match_topic_functions(upper_tagger):
    texts = ["Cats sleep. Dogs bark!", "The cat , a dog .", "owl", "cat cat cat dog sun ."]
    roles = ["model", "model", "peer", "peer"]
    prepared = [prepare(t) for t in texts]
    s_idx = np.array([0, 3, 1, 2, 0])
    r_idx = np.array([1, 0, 3, 1, 2])
    common = dict(prepared=prepared, texts=texts, roles=roles, s_idx=s_idx, r_idx=r_idx)

    cols, info = tvm_module.family_kernel(sources=[SOURCE], metrics=["AVLS", "TVM.8", "TVM.1"],
                                          **common)
    assert set(cols) == {"TVM.8", "TVM.1"} and info == {"tvm_basis": "sources"}
    ref = tvm_topic([p.c for p in prepared], roles, [_c(SOURCE)]).as_dict()
    for k, (i, j) in enumerate(zip(s_idx, r_idx)):
        assert cols["TVM.1"][k] == ref[(i, j)]["TVM.1"]
        assert cols["TVM.8"][k] == ref[(i, j)]["TVM.8"]
    cols, info = tvm_module.family_kernel(sources=None, metrics=TVM_NAMES, **common)
    assert info == {"tvm_basis": "models"}
    ref = tvm_topic([p.c for p in prepared], roles).as_dict()
    assert cols["TVM.512"].tolist() == [ref[(i, j)]["TVM.512"] for i, j in zip(s_idx, r_idx)]
    assert tvm_module.family_kernel(metrics=["AVLS"], **common) == ({}, {})

    cols, _ = avls_module.family_kernel(metrics=["AVLS"], **common)
    ref = avls_topic([p.a for p in prepared]).as_dict()
    assert cols["AVLS"].tolist() == [ref[(i, j)]["AVLS"] for i, j in zip(s_idx, r_idx)]

    cols, info = gramsim_module.family_kernel(metrics=["GRAMSIM"], options={"tagger": "test-upper"},
                                              **common)
    assert info == {"gramsim_tagger": "test-upper"}
    ref = gramsim_topic([summary_tags(t, upper_tagger) for t in texts]).as_dict()
    assert cols["GRAMSIM"].tolist() == [ref[(i, j)]["GRAMSIM"] for i, j in zip(s_idx, r_idx)]
