"""Per-pair ROUGE (test reference): the 48 R and Rpre values of SPEC §2 for
one ordered pair at a time.

Each pair is counted on its own, from its two profiles
(:func:`qarla_spark.metrics.rouge_profiles.profile`): n-gram, S4 and SU4
hits by Counter intersection, L and W hits by the pure-Python per-pair
function of production (:func:`qarla_spark.metrics.rouge_lcs.pair_lcs`),
scores with plain Python floats. The topic kernel of production
(:func:`qarla_spark.metrics.rouge.topic_counts`, the battery, the Spark
stage, with either LCS backend) must give the same numbers bit for bit
(tests/test_battery.py, tests/test_similarities.py); this reference and the
production counts are both checked against ROUGE-1.5.5 in
tests/test_rouge_kernels.py.
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from qarla_spark.metrics.rouge_lcs import pair_lcs
from qarla_spark.metrics.rouge_profiles import (SKIP_DISTANCE, W_WEIGHT, RougeProfile, profile,
                                               weights)
from qarla_spark.text.variants import VARIANTS, PreparedSummary, Sentences

#: The 8 ROUGE kinds of SPEC §2, in the order of every output here.
KINDS: Tuple[str, ...] = ("1", "2", "3", "4", "S4", "SU4", "L", "W-1.2")
#: The 4 statistics per kind returned by :func:`pair_counts`, in order:
#: hits and denominator of R(s, r) (units of r), then of R(r, s) (units of s).
COUNT_FIELDS: Tuple[str, ...] = ("hit_sr", "den_r", "hit_rs", "den_s")


def metric_names(variants: Sequence[str] = VARIANTS) -> Tuple[str, ...]:
    """Metric names in output order: variant, kind, then ``R`` before ``Rpre``."""
    return tuple(f"{d}-{kind}.{v}" for v in variants for kind in KINDS for d in ("R", "Rpre"))


#: The 48 ROUGE metric names of SPEC §2 (8 kinds × 3 variants × 2 directions).
METRIC_NAMES: Tuple[str, ...] = metric_names()


def profiles(prepared: PreparedSummary) -> Tuple[RougeProfile, ...]:
    """Profiles of the ``a``, ``b`` and ``c`` variants of a prepared summary."""
    return tuple(profile(prepared.variant(v)) for v in VARIANTS)


def gram_counters(tokens: Sequence[str]) -> Tuple[Counter, ...]:
    """Counters of the 1-, 2-, 3-, 4-grams and S4 skip-bigrams of ``tokens``
    (ROUGE-1.5.5's ``createNGram`` and ``createSkipBigram`` with ``-2 4``:
    each token paired with each of the next five)."""
    tokens = tuple(tokens)
    skip = Counter(zip(tokens, tokens[1:]))
    for gap in range(2, SKIP_DISTANCE + 2):
        skip.update(zip(tokens, tokens[gap:]))
    return tuple(Counter(zip(*(tokens[k:] for k in range(n)))) for n in range(1, 5)) + (skip,)


def pair_counts(ps: RougeProfile, pr: RougeProfile) -> Tuple[float, ...]:
    """Sufficient statistics of one variant of the pair (s, r), both directions:
    for each kind of :data:`KINDS`, the fields of :data:`COUNT_FIELDS`."""
    out: List[float] = []
    grams_s, grams_r = gram_counters(ps.tokens), gram_counters(pr.tokens)
    for g in range(5):  # 1, 2, 3, 4, S4: symmetric hits
        h = sum((grams_s[g] & grams_r[g]).values())
        out += (h, pr.units[g], h, ps.units[g])
    h1, hs4 = out[0], out[16]
    out += (hs4 + h1, pr.units[4] + pr.units[0], hs4 + h1, ps.units[4] + ps.units[0])
    f = weights(max(ps.max_len, pr.max_len) + 1)
    l_sr, l_rs, w_sr, w_rs = pair_lcs(ps, pr, f)
    out += (l_sr, pr.n_tokens, l_rs, ps.n_tokens)
    out += (w_sr, pr.w_base, w_rs, ps.w_base)
    return tuple(out)


def scores_from_counts(counts: Sequence[float]) -> Tuple[float, ...]:
    """``(R, Rpre)`` for each kind of :data:`KINDS` from :func:`pair_counts`:
    hit / den (0 when den = 0); for W, f⁻¹ of that, f⁻¹(x) = x ** (1 / 1.2)."""
    out: List[float] = []
    for k, kind in enumerate(KINDS):
        h_sr, d_r, h_rs, d_s = counts[4 * k : 4 * k + 4]
        r = h_sr / d_r if d_r else 0.0
        p = h_rs / d_s if d_s else 0.0
        if kind == "W-1.2":
            r = r ** (1.0 / W_WEIGHT)
            p = p ** (1.0 / W_WEIGHT)
        out += (r, p)
    return tuple(out)


def pair_scores(ps: RougeProfile, pr: RougeProfile) -> Tuple[float, ...]:
    """``(R(s, r), Rpre(s, r))`` for each kind, for one variant."""
    return scores_from_counts(pair_counts(ps, pr))


def rouge_pair(s: Sentences, r: Sentences) -> Dict[str, float]:
    """``{"R-<kind>": ..., "Rpre-<kind>": ...}`` for one variant's sentences."""
    vals = pair_scores(profile(s), profile(r))
    out: Dict[str, float] = {}
    for i, kind in enumerate(KINDS):
        out[f"R-{kind}"] = vals[2 * i]
        out[f"Rpre-{kind}"] = vals[2 * i + 1]
    return out


def rouge_scores(s: PreparedSummary, r: PreparedSummary) -> Dict[str, float]:
    """All 48 ROUGE values of SPEC §2 for the ordered pair (s, r)."""
    vals: List[float] = []
    for v in VARIANTS:
        vals += pair_scores(profile(s.variant(v)), profile(r.variant(v)))
    return dict(zip(METRIC_NAMES, vals))


def rouge_all_pairs(
    prepared: Sequence[PreparedSummary],
    profiled: Optional[Sequence[Tuple[RougeProfile, ...]]] = None,
) -> Iterator[Tuple[int, int, Tuple[float, ...]]]:
    """``(i, j, values)`` for every ordered pair i ≠ j, values in
    :data:`METRIC_NAMES` order; (j, i) reuses the counts of (i, j)."""
    profs = list(profiled) if profiled is not None else [profiles(p) for p in prepared]
    n = len(profs)
    for i in range(n):
        for j in range(i + 1, n):
            fwd: List[float] = []
            bwd: List[float] = []
            for v in range(len(VARIANTS)):
                vals = pair_scores(profs[i][v], profs[j][v])
                fwd += vals
                # (R, Rpre) of (j, i) is (Rpre, R) of (i, j)
                for k in range(0, len(vals), 2):
                    bwd += (vals[k + 1], vals[k])
            yield i, j, tuple(fwd)
            yield j, i, tuple(bwd)
