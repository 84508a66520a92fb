"""Prediction-powered inference for a system's mean human score
(measures/ppi.py, issue 40): λ = 0 is the classical interval and λ = 1
plain PPI; PPI++'s λ; coverage ~95% over many simulated testbeds, and a
measure whose bias only the rectifier removes; the simulation against a
plain loop over trials with the same seeds; invariances."""

from __future__ import annotations

import math
import statistics
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import ppi
from qarla_spark.measures import resampling as rs

Z = statistics.NormalDist().inv_cdf(0.975)


def _sample(rng, rows, n, k, bias=0.5, noise=0.5):
    """rows × n summaries: y ~ N(mu, 1) with mu per row, f = y + bias +
    noise; the first k of each row judged."""
    mu = rng.normal(size=(rows, 1))
    y = mu + rng.normal(size=(rows, n))
    f = y + bias + noise * rng.normal(size=(rows, n))
    labeled = np.zeros((rows, n), dtype=bool)
    labeled[:, :k] = True
    return mu[:, 0], y, f, labeled, ~labeled


def test_lambda_zero_is_the_classical_interval():
    rng = np.random.default_rng(0)
    _, y, f, lab, unl = _sample(rng, 50, 40, 9)
    a = ppi.mean_interval(y, f, lab, unl, lam=0.0)
    b = ppi.classical_interval(y, lab)
    for name in ("estimate", "low", "high"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    # and the classical interval is the textbook one
    row = y[3, :9]
    assert b.estimate[3] == row.sum() / 9
    assert math.isclose(b.high[3] - b.low[3], 2 * Z * statistics.stdev(row) / 3, rel_tol=1e-12)


def test_lambda_one_is_plain_ppi():
    rng = np.random.default_rng(1)
    _, y, f, lab, unl = _sample(rng, 30, 25, 7)
    got = ppi.mean_interval(y, f, lab, unl, lam=1.0)
    for r in range(30):
        yl, fl, fu = y[r, :7], f[r, :7], f[r, 7:]
        theta = fu.mean() + (yl - fl).mean()
        se = math.sqrt(np.var(fu, ddof=1) / fu.size + np.var(yl - fl, ddof=1) / yl.size)
        assert math.isclose(got.estimate[r], theta, rel_tol=1e-12, abs_tol=1e-12)
        assert math.isclose(got.high[r] - got.low[r], 2 * Z * se, rel_tol=1e-12)


def test_ppi_plus_plus_lambda_by_hand():
    rng = np.random.default_rng(2)
    _, y, f, lab, unl = _sample(rng, 20, 30, 10, noise=1.0)
    f[0] = 5.0                                          # constant: λ = 0
    f[1] = -y[1]                                        # anti-correlated: λ = 0
    f[2] = 1e-3 * y[2]                                  # tiny scale: clipped at 1
    lam = ppi.tuned_lambda(y, f, lab, unl)
    assert lam[0] == 0.0 and lam[1] == 0.0 and lam[2] == 1.0
    for r in range(3, 20):
        cov = np.cov(y[r, :10], f[r, :10], ddof=1)[0, 1]
        want = cov / ((1 + 10 / 20) * np.var(f[r], ddof=1))
        assert math.isclose(lam[r], min(max(want, 0.0), 1.0), rel_tol=1e-12)
    tuned = ppi.mean_interval(y, f, lab, unl)
    fixed = ppi.mean_interval(y, f, lab, unl, lam=lam)
    assert np.array_equal(tuned.low, fixed.low) and np.array_equal(tuned.lam, lam)


def test_intervals_cover_the_mean_95_percent_over_many_testbeds():
    """4,000 simulated testbeds of 300 summaries, 30 judged, a measure with
    a bias of 0.5: the classical, PPI and PPI++ intervals cover the true
    mean ~95% of the time, PPI's are narrower than the classical; the
    measure's mean without the rectifier (the bias left in) almost never
    does — the test fails when the correction term is dropped."""
    rng = np.random.default_rng(3)
    mu, y, f, lab, unl = _sample(rng, 4000, 300, 30)
    widths = {}
    for name, res in (("classical", ppi.classical_interval(y, lab)),
                      ("ppi", ppi.mean_interval(y, f, lab, unl, lam=1.0)),
                      ("ppi++", ppi.mean_interval(y, f, lab, unl))):
        cover = np.mean((res.low <= mu) & (mu <= res.high))
        # (the CLT interval of 30 judgments: the t's 94%, not 95%)
        assert 0.93 <= cover <= 0.965, (name, cover)
        widths[name] = float(np.mean(res.width))
    assert widths["ppi"] < 0.75 * widths["classical"]
    assert widths["ppi++"] <= widths["ppi"] * 1.01
    # the same measure without the rectifier
    naive = np.where(unl, f, 0).sum(axis=1) / unl.sum(axis=1)
    half = Z * np.std(f, axis=1, ddof=1) / math.sqrt(270)
    assert np.mean(np.abs(naive - mu) <= half) < 0.05


def test_a_useless_measure_costs_ppi_plus_plus_little():
    """f pure noise: PPI++ tunes λ near 0 and keeps about the classical
    width; plain PPI pays for the noise."""
    rng = np.random.default_rng(4)
    mu, y, _, lab, unl = _sample(rng, 2000, 200, 20)
    f = rng.normal(size=y.shape) * 2
    classical = ppi.classical_interval(y, lab)
    plus = ppi.mean_interval(y, f, lab, unl)
    plain = ppi.mean_interval(y, f, lab, unl, lam=1.0)
    assert np.mean(plus.width) < 1.05 * np.mean(classical.width)
    assert np.mean(plain.width) > 1.5 * np.mean(classical.width)
    assert 0.93 <= np.mean((plus.low <= mu) & (mu <= plus.high)) <= 0.97


# ---------------------------------------------------------------------------
# the simulation
# ---------------------------------------------------------------------------

def _judged_testbed(seed=0, n_topics=15, n_systems=3):
    rng = np.random.default_rng(seed)
    human = rng.normal(size=(n_topics, 1)) + rng.normal(size=(1, n_systems)) \
        + rng.normal(size=(n_topics, n_systems))
    auto = 0.7 * human + 0.3 + 0.5 * rng.normal(size=human.shape)
    human[rng.random(human.shape) < 0.1] = np.nan
    auto[rng.random(auto.shape) < 0.05] = np.nan
    return human, auto


def _mean(values, n=None) -> float:
    """The exact mean of doubles over n (default: their count), rounded once
    (Fractions)."""
    return float(sum(map(Fraction, values), Fraction(0)) / (len(values) if n is None else n))


def _loop_simulation(human, auto, ks, trials, seed, task, criterion):
    """The simulation the obvious way: per trial its stream, per system its
    first k cells in that order, the three intervals from the textbook
    formulas; (covered, widths, lambdas) per (k, method, system)."""
    n_t, n_s = human.shape
    cells = np.isfinite(human) & np.isfinite(auto)
    full = [_mean(human[cells[:, s], s]) for s in range(n_s)]
    out = {}
    for k in ks:
        for s in range(n_s):
            cov, wid, lams = [0, 0, 0], [[], [], []], []
            for r in range(trials):
                u = rs.uniforms(seed, ("ppi", task, criterion, str(r)), n_t)
                order = sorted(range(n_t), key=lambda t: (u[t], t))
                mine = [t for t in order if cells[t, s]]
                lab, unl = sorted(mine[:k]), [t for t in range(n_t) if cells[t, s]
                                              and t not in mine[:k]]
                if len(lab) < 2 or len(unl) < 2:
                    break
                yl, fl, fu = human[lab, s], auto[lab, s], auto[unl, s]
                fa = auto[sorted(mine), s]
                c = np.cov(yl, fl, ddof=1)[0, 1]
                lam = c / ((1 + len(lab) / len(unl)) * np.var(fa, ddof=1))
                lam = 0.0 if not np.isfinite(lam) or np.var(fa) == 0 else min(max(lam, 0), 1)
                lams.append(lam)
                for m, la in enumerate((0.0, 1.0, lam)):
                    est = la * fu.mean() + (yl - la * fl).mean()
                    se = math.sqrt(la * la * np.var(fu, ddof=1) / len(unl)
                                   + np.var(yl - la * fl, ddof=1) / len(lab))
                    if m == 0:
                        est, se = yl.mean(), math.sqrt(np.var(yl, ddof=1) / len(lab))
                    cov[m] += est - Z * se <= full[s] <= est + Z * se
                    wid[m].append(2 * Z * se)
            out[k, s] = (cov, [_mean(w, trials) for w in wid], _mean(lams, trials))
    return full, out


def test_the_simulation_equals_a_loop_over_trials():
    human, auto = _judged_testbed()
    ks, trials = (2, 5, 11), 40
    sim = ppi.simulate(human, auto, ks, trials, 8, "task", "relevance")
    full, want = _loop_simulation(human, auto, ks, trials, 8, "task", "relevance")
    assert np.allclose(sim.full_mean, full, rtol=0, atol=0)
    for a, k in enumerate(ks):
        for s in range(3):
            if not sim.valid[a, s]:
                continue
            cov, wid, lam = want[k, s]
            assert sim.covered[a, :, s].tolist() == cov, (k, s)
            np.testing.assert_allclose(sim.width[a, :, s], wid, rtol=1e-12)
            assert math.isclose(sim.lam[a, s], lam, rel_tol=1e-12, abs_tol=1e-15)
    assert sim.valid[:, :].sum() == 3 * 3 - int(np.sum(
        [(np.isfinite(human) & np.isfinite(auto)).sum(axis=0) - k < 2 for k in ks]))


def test_judged_sets_are_nested_in_k_and_blocks_do_not_matter():
    human, auto = _judged_testbed(1, n_topics=30, n_systems=4)
    cells = np.isfinite(human) & np.isfinite(auto)
    small = ppi.judged_cells(5, "t", "c", cells, 4, 20)
    large = ppi.judged_cells(5, "t", "c", cells, 9, 20)
    assert not (small & ~large).any()
    assert (small.sum(axis=1) == np.minimum(4, cells.sum(axis=0))).all()
    assert np.array_equal(ppi.judged_cells(5, "t", "c", cells, 4, 8, first=12), small[12:])


def test_the_simulation_covers_the_full_data_mean():
    """30 simulated testbeds × 16 systems × 100 trials, 20 and 40 of 100
    summaries judged: every method covers the full-data mean at least ~95%
    — the papers' intervals are for the population mean, conservative for
    the full-data one, which holds the judged scores themselves: measured
    classical 96.0% and 98.5%, PPI 95.6% and 96.0%, PPI++ 99.2% and
    99.99% (its λ, tuned for the population, leaves the judged scores'
    share of the full-data mean in se²) — and PPI++ saves judgments with an
    informative measure."""
    covered, saved = [], []
    for seed in range(30):
        rng = np.random.default_rng(100 + seed)
        human = rng.normal(size=(100, 1)) + 0.3 * rng.normal(size=(1, 16)) \
            + rng.normal(size=(100, 16))
        auto = 2 * human + 1 + rng.normal(size=human.shape)
        sim = ppi.simulate(human, auto, (20, 40), 100, seed, "t", "c")
        covered.append(sim.coverage)
        saved.append(sim.saved[:, 2])
    coverage = np.mean(covered, axis=(0, 3))             # k × method
    assert (coverage >= 0.935).all(), coverage
    assert (coverage[:, 1] <= 0.975).all(), coverage
    assert np.mean(saved) > 0.3


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10 ** 6), st.randoms(use_true_random=False))
def test_permuting_topics_keeps_and_systems_permutes_the_simulation(seed, random):
    human, auto = _judged_testbed(seed, n_topics=12, n_systems=4)
    topics = [f"d{k}" for k in range(12)]
    systems = ["A", "B", "C", "D"]
    sim = ppi.simulate(human, auto, (3, 6), 15, seed, "t", "c", systems=systems, topics=topics)
    rows, cols = list(range(12)), list(range(4))
    random.shuffle(rows)
    random.shuffle(cols)
    moved = ppi.simulate(human[rows][:, cols], auto[rows][:, cols], (3, 6), 15, seed, "t", "c",
                         systems=[systems[c] for c in cols], topics=[topics[r] for r in rows])
    for name in ("covered", "width", "width2"):
        assert getattr(moved, name).tobytes() == getattr(sim, name)[:, :, cols].tobytes(), name
    assert moved.lam.tobytes() == sim.lam[:, cols].tobytes()
    assert moved.full_mean.tobytes() == sim.full_mean[cols].tobytes()
