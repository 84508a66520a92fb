"""QUEEN, KING, ORANGE, JACK on Spark equal the brute-force reference
(tests/reference_qarla.py, plain loops from SPEC §3-5) on generated testbeds."""

from __future__ import annotations

import numpy as np
import pytest

import reference_qarla as ref
from qarla_spark.measures.jack import peer_orders
from qarla_spark.measures.masks import topic_sample_masks
from testbeds import evaluate, make_similarities, spark_frames

pytestmark = pytest.mark.spark

METRICS = ("x1", "x2", "x3")
SETS = [["x1", "x2"], ["x1", "x2", "x3"]]


def run(spark, sims, summaries, triples="standard", n_orders=3, seed=5):
    s_df, m_df = spark_frames(spark, sims, summaries)
    return evaluate(s_df, m_df, METRICS, SETS, triples=triples, seed=seed, n_orders=n_orders)


SHAPES = [
    dict(n_topics=3, n_models=4, n_peers=3, seed=1),
    dict(n_topics=2, n_models=[3, 5], n_peers=4, seed=2),           # |M| = 3: no KING there
    dict(n_topics=3, n_models=4, n_peers=3, seed=3, ties=True),     # frequent ties
    dict(n_topics=2, n_models=4, n_peers=3, seed=4, peer_equal_to_model=True),
]


@pytest.fixture(scope="module", params=range(len(SHAPES)), ids=lambda i: f"shape{i}")
def case(request, spark):
    shape = SHAPES[request.param]
    sims, roles, summaries = make_similarities(metrics=list(METRICS), **shape)
    return sims, roles, summaries, run(spark, sims, summaries)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_queen_table_equals_reference(case):
    sims, roles, summaries, res = case
    got = res.queen.toPandas()
    for name, X in [("x2", ["x2"]), ("x1,x2", ["x1", "x2"]), ("x1,x2,x3", METRICS)]:
        expected = {(r["task"], r["topic"], r["summarizer"], r["holdout"]): r["queen"]
                    for r in ref.queen_table(sims, roles, list(X))}
        mine = got[got.metric_set == name]
        actual = {(r.task, r.topic, r.summarizer, None if r.holdout is None else r.holdout): r.queen
                  for r in mine.itertuples()}
        assert actual.keys() == expected.keys()
        for key, value in expected.items():
            assert actual[key] == pytest.approx(value, abs=1e-12), (name, key)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_king_orange_jack_equal_reference(case):
    sims, roles, summaries, res = case
    king = res.king.toPandas().set_index("metric_set")
    orange = res.orange.toPandas().set_index("metric_set")
    jack = res.jack.toPandas().set_index("metric_set")
    for name, X in [("x1", ["x1"]), ("x1,x2", ["x1", "x2"]), ("x1,x2,x3", METRICS)]:
        (k, n), = ref.king(sims, roles, list(X)).values()
        assert king.loc[name, "king"] == pytest.approx(k, abs=1e-12)
        assert king.loc[name, "n_cases"] == n
        assert king.loc[name, "ci_low"] <= k <= king.loc[name, "ci_high"]
        (o, n_o), = ref.orange(sims, roles, list(X)).values()
        assert orange.loc[name, "orange"] == pytest.approx(o, abs=1e-12)
        assert orange.loc[name, "n_cases"] == n_o
        (j,) = ref.jack(sims, roles, list(X)).values()
        assert jack.loc[name, "jack"] == pytest.approx(j, abs=1e-12)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_system_scores_equal_reference(case):
    sims, roles, summaries, res = case
    got = res.systems.toPandas()
    got = got[got.metric_set == "x1,x2"].set_index("summarizer")
    expected = ref.system_scores(sims, roles, ["x1", "x2"])
    for (task, who), row in expected.items():
        for col in ("queen", "queen_full"):
            if row[col] is None:
                assert who not in got.index or np.isnan(got.loc[who, col]) or got.loc[who, col] is None
            else:
                assert got.loc[who, col] == pytest.approx(row[col], abs=1e-12), (who, col)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_jack_curve_equals_reference_with_the_same_orders(case):
    sims, roles, summaries, res = case
    peers = sorted(summaries[summaries.role == "peer"].summarizer.unique())
    orders = peer_orders(peers, 3, 5)
    expected = ref.jack_curve(sims, roles, ["x1", "x2"], orders=orders)
    got = res.jack_curve.toPandas()
    got = got[got.metric_set == "x1,x2"].set_index("n_peers")["jack"]
    (curve,) = expected.values()
    assert sorted(got.index) == sorted(curve)
    for k, value in curve.items():
        assert got.loc[k] == pytest.approx(value, abs=1e-12), k
    assert list(got.sort_index()) == sorted(got)  # never decreases


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_distinct_triples(spark):
    sims, roles, summaries = make_similarities(n_topics=2, n_models=4, n_peers=3,
                                               metrics=list(METRICS), seed=9)
    res = run(spark, sims, summaries, triples="distinct")
    (k, n), = ref.king(sims, roles, ["x1", "x2"], triples="distinct").values()
    king = res.king.toPandas().set_index("metric_set")
    assert king.loc["x1,x2", "king"] == pytest.approx(k, abs=1e-12)
    got = res.queen.toPandas()
    expected = ref.queen_table(sims, roles, ["x3"], triples="distinct")
    mine = got[got.metric_set == "x3"]
    assert len(mine) == len(expected)


def test_topic_sample_masks_by_hand():
    """3 models (0, 1, 2) and a peer (3), one metric: the peer's samples are
    the 3 * 3 * 2 = 18 standard triples; a model's are the 2 * 2 * 1 = 4 over
    the other two (written out by hand below)."""
    v = np.zeros((4, 4, 1))
    v[3, :, 0] = [0.5, 0.2, 0.9, 0]      # peer against each model
    v[0, 1, 0], v[1, 0, 0] = 0.4, 0.6    # model pairs
    v[0, 2, 0], v[2, 0, 0] = 0.3, 0.1
    v[1, 2, 0], v[2, 1, 0] = 0.8, 0.7
    e, m, m1, m2, words = topic_sample_masks(["model", "model", "model", "peer"], v)
    peer = e == 3
    assert peer.sum() == 18 and (~peer).sum() == 3 * 4
    # peer vs model 0 (0.5) passes against 0.4, 0.3, 0.1 (3 of the 6 model pairs)
    assert words[peer & (m == 0), 0].sum() == 3
    assert set(np.unique(words)) <= {0, 1}


def test_mask_words_pack_and_unpack_across_words():
    """pack() puts column 63·w + b in bit b of word w (bit 63 unused, words
    non-negative); unpack() inverts pack(), set_indices() inverts set_words();
    130 columns = 3 words."""
    from qarla_spark.measures.masks import pack, packed_u64, set_indices, set_words, unpack
    bits = np.zeros((3, 130), dtype=bool)
    bits[0, [0, 62]] = True           # word 0: 1 + 2**62
    bits[1, [63, 125]] = True         # word 1 bit 0, word 1 bit 62
    bits[2, [126, 129]] = True        # word 2: bits 0 and 3
    assert pack(bits).tolist() == [[1 + 2 ** 62, 0, 0], [0, 1 + 2 ** 62, 0], [0, 0, 1 + 8]]
    assert pack(bits[:, :0]).tolist() == [[0], [0], [0]]
    sets = [[0, 62], [63, 125], [126, 129], [], list(range(130))]
    words = [set_words(x, 130) for x in sets]
    assert set_indices(words) == sets
    assert pack(np.eye(130, dtype=bool)[[5, 70]]).tolist() == [set_words([5], 130),
                                                             set_words([70], 130)]
    assert set_indices(np.zeros((0, 3), dtype=np.int64)) == []
    assert unpack(pack(bits), 130).tolist() == bits.tolist()
    assert unpack(np.zeros((0, 3), dtype=np.int64), 130).shape == (0, 130)
    # packed_u64: 64 bits a word (no spare bit), zero padding
    assert packed_u64(bits[:, :65]).tolist() == [[1 + 2 ** 62, 0], [2 ** 63, 0], [0, 0]]
    assert packed_u64(bits[:, :0]).shape == (3, 0)


def test_wilson_interval_known_value():
    """Wilson 95% interval of 50/100: 0.4038..0.5962 (textbook value)."""
    from qarla_spark.measures.king import king, wilson
    low, high = wilson(0.5, 100)
    assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)
    assert wilson(0.0, 10)[0] == 0.0
    # KING from cases grouped by models per topic: 2 topics of 4 models with
    # 1 and 3 wins, 1 topic of 5 models with 2 wins -> (1/4 + 3/4 + 2/5) / 3
    value, n, low, high = king([(4, 4, 2), (2, 5, 1)])
    assert value == 7 / 15 and n == 13         # exactly (1/4 + 3/4 + 2/5) / 3, rounded once
    assert (low, high) == wilson(value, 13)


def test_topics_with_three_models_and_no_detailed_sets(spark):
    """|M| = 3 everywhere: QUEEN exists but no KING case; with no detailed
    set the per-topic kernel returns nothing (a typed empty frame)."""
    sims, roles, summaries = make_similarities(n_topics=2, n_models=3, n_peers=2,
                                               metrics=list(METRICS), seed=6)
    s_df, m_df = spark_frames(spark, sims, summaries)
    res = evaluate(s_df, m_df, METRICS, detailed=[])
    assert res.king.count() == 0 and res.queen.count() == 0
    res = evaluate(s_df, m_df, METRICS)
    assert res.queen.filter("holdout is null").count() == 2 * 2 * len(METRICS)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_orange_of_plain_scores_equals_reference(case, spark):
    sims, roles, summaries, res = case
    got = res.orange_plain.toPandas().set_index("metric_set")
    for metric in METRICS:
        (o, n), = ref.orange_plain(sims, roles, metric).values()
        assert got.loc[metric, "orange"] == pytest.approx(o, abs=1e-12)
        assert got.loc[metric, "n_cases"] == n and got.loc[metric, "score"] == "plain"


def _topic_arrays(sims, summaries, task, topic):
    names = sorted(summaries[(summaries.task == task) & (summaries.topic == topic)].summarizer)
    pos = {n: i for i, n in enumerate(names)}
    values = np.full((len(names), len(names), len(METRICS)), np.nan)
    part = sims[(sims.task == task) & (sims.topic == topic)]
    for r in part.itertuples():
        values[pos[r.summarizer_s], pos[r.summarizer_r], METRICS.index(r.metric)] = r.value
    role = dict(zip(summaries.summarizer, summaries.role))
    return np.array([role[n] for n in names], dtype=object), values


@pytest.mark.parametrize("shape", range(len(SHAPES)))
@pytest.mark.parametrize("triples", ["standard", "distinct"])
def test_one_pass_zeta_counts_equal_direct_counts(shape, triples):
    """SPEC §6's one pass (counts per distinct mask, sums over supersets)
    gives exactly the counts of testing every sample against every set."""
    from itertools import combinations
    from qarla_spark.measures.masks import set_words
    from qarla_spark.measures.queen import topic_counts
    sims, roles, summaries = make_similarities(metrics=list(METRICS), **SHAPES[shape])
    all_sets = [set_words(c, 3) for r in (1, 2, 3) for c in combinations(range(3), r)]
    for (task, topic), _ in summaries.groupby(["task", "topic"]):
        roles_arr, values = _topic_arrays(sims, summaries, task, topic)
        direct = topic_counts(roles_arr, values, all_sets, triples, "direct")
        zeta = topic_counts(roles_arr, values, all_sets, triples, "zeta")
        for key in ("n_e", "pass_e", "n_eh", "pass_eh"):
            assert np.array_equal(direct[key], zeta[key]), key
        assert direct["pass_e"].sum() > 0


def test_superset_sums_by_hand():
    from qarla_spark.measures.queen import superset_sums
    hist = np.array([1, 2, 3, 4])           # masks 00, 01, 10, 11
    # F[S] = Σ over T ⊇ S: F[00] = 10, F[01] = 2 + 4, F[10] = 3 + 4, F[11] = 4
    assert superset_sums(hist).tolist() == [10, 6, 7, 4]
    assert hist.tolist() == [1, 2, 3, 4]    # input not mutated
    assert superset_sums(np.ones((2, 8), dtype=int))[:, 0].tolist() == [8, 8]


def test_sets_beyond_63_metrics_use_more_mask_words():
    """70 metrics: metric j is a copy of metric j % 3 of a 3-metric topic, so
    QUEEN of {0, 64, 68} (three mask words' worth of indices) must equal
    QUEEN of {0, 1, 2} on the 3-metric values (the issue: no cap at 63)."""
    from qarla_spark.measures.masks import set_words
    from qarla_spark.measures.queen import queen_counts
    sims, roles, summaries = make_similarities(n_topics=1, n_models=4, n_peers=3,
                                               metrics=list(METRICS), seed=12, ties=True)
    roles_arr, values = _topic_arrays(sims, summaries, "t", "t0")
    wide = values[:, :, [j % 3 for j in range(70)]]
    small = queen_counts(roles_arr, values, [set_words([0, 1, 2], 3)])
    big = queen_counts(roles_arr, wide, [set_words([0, 64, 68], 70), set_words([63], 70)])
    assert len(set_words([0, 64, 68], 70)) == 2
    assert np.array_equal(small.full_num[:, 0], big.full_num[:, 0])
    assert np.array_equal(small.full_den, big.full_den)
    assert np.array_equal(small.jk_num[:, :, 0], big.jk_num[:, :, 0])
    assert np.array_equal(small.jk_den, big.jk_den)
    single = queen_counts(roles_arr, values, [set_words([0], 3)])      # 63 % 3 == 0
    assert np.array_equal(single.full_num[:, 0], big.full_num[:, 1])


def test_hbr_measures_default_patterns_and_errors():
    from qarla_spark.errors import ConfigError
    from qarla_spark.stages.hbr import hbr_measures
    table = ["R-1.a", "Rpre-2.c", "TVM.8", "AVLS", "GRAMSIM", "F-1.a", "bertscore"]
    assert hbr_measures(table) == ["R-1.a", "Rpre-2.c", "F-1.a", "bertscore"]
    assert hbr_measures(table, "R*.?,AVLS") == ["R-1.a", "Rpre-2.c", "AVLS"]
    assert hbr_measures(table, ["R-*", "GRAMSIM,AVLS"]) == ["R-1.a", "GRAMSIM", "AVLS"]
    with pytest.raises(ConfigError, match="'BLEU' matches no metric"):
        hbr_measures(table, ["BLEU"])
    with pytest.raises(ConfigError, match="no HBR measure"):
        hbr_measures(["TVM.8", "AVLS"])


@pytest.mark.parametrize("seed", range(6))
def test_queen_counts_are_the_same_whatever_the_path(seed):
    """Sets of one metric (counted from the pass bits themselves), other
    sets (from the packed masks), the one-pass zeta method and samples made
    beforehand (the first round makes them once for QUEEN and the
    clustering) give the same counts, distinct triples with 3 models (a
    model without any sample) included."""
    from qarla_spark.measures.masks import set_words, topic_samples
    from qarla_spark.measures.queen import topic_counts
    rng = np.random.default_rng(seed)
    for _ in range(6):
        n_m, n_p, k = int(rng.integers(3, 7)), int(rng.integers(0, 5)), int(rng.integers(1, 8))
        roles = np.array(["model"] * n_m + ["peer"] * n_p)
        rng.shuffle(roles)
        values = rng.integers(0, 3, size=(len(roles), len(roles), k)).astype(float)
        singles = np.asarray([set_words([i], k) for i in range(k)], dtype=np.int64)
        mixed = np.asarray([set_words(list(rng.choice(k, size=int(rng.integers(1, k + 1)),
                                                      replace=False)), k) for _ in range(6)],
                           dtype=np.int64)
        for triples in ("standard", "distinct"):
            for sets in (singles, mixed):
                found = [topic_counts(roles, values, sets, triples, "zeta"),
                         topic_counts(roles, values, sets, triples, "direct"),
                         topic_counts(roles, values, sets, triples, "direct",
                                      topic_samples(roles, values, triples))]
                for key in ("n_e", "pass_e", "n_eh", "pass_eh"):
                    assert all(np.array_equal(found[0][key], f[key]) for f in found[1:]), key


@pytest.mark.parametrize("triples", ["standard", "distinct"])
def test_topic_samples_are_every_valid_triple_in_order_with_their_pass_bits(triples):
    """The samples (e, m, m', m'') of a topic, by e then m then (m', m''),
    and their pass bits x_i(e, m) ≥ x_i(m', m''), against a loop over every
    quadruple (the grid comparison must keep the samples' order)."""
    from qarla_spark.measures.masks import topic_samples
    rng = np.random.default_rng(7)
    roles = np.array(["model", "peer", "model", "model", "peer", "model"])
    values = rng.integers(0, 3, size=(6, 6, 4)).astype(float)
    models = [i for i, r in enumerate(roles) if r == "model"]
    want_idx, want_bits = [], []
    for e in range(6):
        for m in models:
            if m == e:
                continue
            for m1 in models:
                for m2 in models:
                    if m1 == m2 or e in (m1, m2):
                        continue
                    if triples == "distinct" and m in (m1, m2):
                        continue
                    want_idx.append((e, m, m1, m2))
                    want_bits.append(values[e, m] >= values[m1, m2])
    e, m, m1, m2, passes = topic_samples(roles, values, triples)
    assert list(zip(e.tolist(), m.tolist(), m1.tolist(), m2.tolist())) == want_idx
    assert passes.dtype == bool and np.array_equal(passes, np.asarray(want_bits))


def test_first_cover_is_the_smallest_k_of_a_covering_pair():
    """JACK's first cover per order and model against a loop over the pairs
    (no covering pair: the largest int64)."""
    from qarla_spark.measures.jack import first_cover
    rng = np.random.default_rng(3)
    big = np.iinfo(np.int64).max
    for density in (0.0, 0.05, 0.4):
        good = rng.random((5, 5, 3)) < density
        good &= np.triu(np.ones((5, 5), dtype=bool), 1)[:, :, None]
        ranks = np.asarray([rng.permutation(7)[:5] + 1 for _ in range(4)], dtype=np.int64)
        want = np.full((4, 3), big, dtype=np.int64)
        for o in range(4):
            for a in range(5):
                for b in range(5):
                    for m in range(3):
                        if good[a, b, m]:
                            want[o, m] = min(want[o, m], max(ranks[o, a], ranks[o, b]))
        assert np.array_equal(first_cover(good, ranks), want)


def _old_model_sample_counts(e, contains, n):
    """queen.topic_counts' n_eh before issue 36's round 2 (kept as the
    reference): a bincount of e per model."""
    return np.stack([np.bincount(e[c], minlength=n) for c in contains], axis=1)


def test_model_sample_counts_as_a_bincount_per_model():
    """queen._model_sample_counts (one segment sum per summary when the
    samples come by summary) gives the integers of a bincount per model:
    summaries without samples (first, inner, last), one sample, unsorted
    samples (topic_counts asks only with a model)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from qarla_spark.measures.queen import _model_sample_counts

    @settings(max_examples=300, deadline=None)
    @given(st.integers(1, 9), st.integers(1, 5), st.integers(0, 60), st.booleans(),
           st.integers(0, 2 ** 32 - 1))
    def check(n, n_models, n_samples, ordered, seed):
        rng = np.random.default_rng(seed)
        e = rng.integers(0, n, n_samples).astype(np.int64)
        if ordered:
            e = np.sort(e)
        contains = rng.random((n_models, n_samples)) < 0.4
        got = _model_sample_counts(e, contains, n)
        want = _old_model_sample_counts(e, contains, n)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert (got == want).all()

    check()
