"""Plain scores: a summary's mean similarity to the models, the baseline
QUEEN is compared with (SPEC §4 ORANGE's baseline, SPEC §7's human-summariser
test with plain ROUGE recall).

score_{M}(e, x) = mean over m ∈ M, m ≠ e of x(e, m) — one reference at a
time, averaged (not ROUGE's multi-reference pooling). Like QUEEN in KING and
ORANGE, it is jackknifed: with model h held out, every peer and h itself are
scored against M∖{h}.

A per-topic kernel (:func:`topic_plain`, pure numpy; run over the topic
cube by the QARLA stage) gives

- ``orange`` rows (topic, metric): n_le = (h, a) with
  score_{M∖{h}}(a) ≤ score_{M∖{h}}(h), n_peers = |M|·|A|, for every metric
  (ORANGE(plain x), pooled like ORANGE(QUEEN));
- ``score`` rows (topic, metric, holdout h, summarizer, role): the
  jackknifed plain score of each peer and of h, for the baseline metrics of
  the human-summariser test.

Topics: those where KING is defined (≥ 4 models and a peer), so that the
plain baselines and QUEEN are compared on the same cases. Sums run over the
models in the same order for every summary, so equal similarity values give
equal scores (ties stay ties).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from qarla_spark import thresholds


def topic_plain(names, roles, values, metrics: Sequence[str], baselines: Sequence[int]):
    """(orange, scores) of one topic (pure numpy): ``orange`` is
    (n_le, n_peers) per metric, n_le an int array over the metrics;
    ``scores`` maps a baseline metric index to (peer_scores |A|×|M|,
    model_scores |M|) with model h held out in column/entry h. None when the
    topic has fewer than 4 models or no peer."""
    roles = np.asarray(roles)
    peers = np.flatnonzero(roles == "peer")
    models = np.flatnonzero(roles == "model")
    if not thresholds.king_defined(len(models), len(peers)):
        return None
    n_m = len(models)
    k = values.shape[2]
    peer_s = np.empty((len(peers), n_m, k))
    model_s = np.empty((n_m, k))
    for j, h in enumerate(models):
        rest = np.delete(models, j)
        peer_s[:, j, :] = values[np.ix_(peers, rest)].sum(axis=1) / len(rest)
        model_s[j, :] = values[h, rest, :].sum(axis=0) / len(rest)
    n_le = (peer_s <= model_s[None, :, :]).sum(axis=(0, 1))
    scores = {i: (peer_s[:, :, i], model_s[:, i]) for i in baselines}
    return {"n_le": n_le.astype(np.int64), "n_peers": n_m * len(peers), "scores": scores,
            "peers": peers, "models": models}
