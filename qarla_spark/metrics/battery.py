"""One topic's similarity battery (pure: no Spark).

:func:`topic_similarities` takes the summaries of one topic (and its source
documents, if any), prepares each summary once (tokens, sentences, the
``a``/``b``/``c`` variants of SPEC §2), then computes the requested metrics
for every ordered pair (s, r), s ≠ r. Each family does its own per-topic
work once: ROUGE profiles per summary and one count per unordered pair
(n-grams, S4, SU4 give both directions; L and W are computed both ways), TVM
term lists per topic, AVLS lengths and GRAMSIM tag vectors per summary.

The Spark stage (:mod:`qarla_spark.stages.similarity_plan`) calls it once per
topic on the executors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from qarla_spark.errors import ConfigError
from qarla_spark.metrics import registry
from qarla_spark.metrics.registry import UserMetric
from qarla_spark.text.variants import VARIANTS, PreparedSummary, prepare


@dataclass
class TopicResult:
    """All ordered pairs of one topic: ``s[k]``, ``r[k]`` index the topic's
    summaries, ``values[k, m]`` is metric ``metrics[m]`` of that pair."""

    s: np.ndarray
    r: np.ndarray
    metrics: Tuple[str, ...]
    values: np.ndarray
    info: Dict[str, object] = field(default_factory=dict)


def ordered_pairs(n: int) -> Tuple[np.ndarray, np.ndarray]:
    """(s, r) index arrays of every ordered pair s ≠ r, s-major."""
    s, r = np.divmod(np.arange(n * n), n)
    keep = s != r
    return s[keep], r[keep]


def _rouge_columns(prepared: Sequence[PreparedSummary], metrics: Sequence[str],
                   s_idx: np.ndarray, r_idx: np.ndarray) -> Dict[str, np.ndarray]:
    """R, Rpre and F columns for the requested metrics: per variant, the
    counts of the whole topic (:func:`rouge.topic_counts`, each unordered
    pair once), then the scores of every ordered pair (:func:`rouge.recall`)."""
    wanted = [m for m in metrics if m in registry.BUILTIN
              and registry.BUILTIN[m].family in ("rouge", "f")]
    if not wanted:
        return {}
    from qarla_spark.metrics import rouge  # loads numba: only when ROUGE is asked for
    from qarla_spark.metrics.rouge_profiles import profile

    needed_variants = {registry.BUILTIN[m].variant for m in wanted}
    needed_kinds = {registry.BUILTIN[m].kind for m in wanted}
    cols: Dict[str, np.ndarray] = {}
    for v in (v for v in VARIANTS if v in needed_variants):
        counts = rouge.topic_counts([profile(p.variant(v)) for p in prepared], needed_kinds)
        for kind in counts.hits:
            cols[f"R-{kind}.{v}"] = rouge.recall(counts, kind, s_idx, r_idx)
            cols[f"Rpre-{kind}.{v}"] = rouge.recall(counts, kind, r_idx, s_idx)
    out = {}
    for m in wanted:
        info = registry.BUILTIN[m]
        if info.family == "f":
            rec = cols[f"R-{info.kind}.{info.variant}"]
            pre = cols[f"Rpre-{info.kind}.{info.variant}"]
            total = rec + pre
            out[m] = np.where(total > 0, 2 * rec * pre / np.where(total > 0, total, 1), 0.0)
        else:
            out[m] = cols[m]
    return out


def _user_columns(prepared: Sequence[PreparedSummary], metrics: Sequence[str],
                  user: Mapping[str, UserMetric], s_idx: np.ndarray, r_idx: np.ndarray,
                  where: str) -> Dict[str, np.ndarray]:
    out = {}
    for m in metrics:
        if m not in user:
            continue
        um = user[m]
        if um.sentences:
            args = [[list(s) for s in p.variant(um.variant)] for p in prepared]
        else:
            args = [list(p.tokens(um.variant)) for p in prepared]
        col = np.empty(len(s_idx))
        for k, (i, j) in enumerate(zip(s_idx, r_idx)):
            try:
                value = float(um.func(args[i], args[j]))
            except Exception as exc:  # report which metric and pair failed
                raise ValueError(f"metric {m!r} failed on {where}, pair #{k}: "
                                 f"{type(exc).__name__}: {exc}") from exc
            if not np.isfinite(value):
                raise ValueError(f"metric {m!r} returned {value} on {where}, pair #{k}: "
                                 "metrics must return finite numbers")
            col[k] = value
        out[m] = col
    return out


#: families computed by other modules, each exposing ``family_kernel(prepared,
#: texts, sources, roles, metrics, s_idx, r_idx, options) -> ({metric:
#: column}, info)``; imported when first needed (GRAMSIM loads a tagger).
FAMILY_MODULES: Dict[str, str] = {
    "tvm": "qarla_spark.metrics.tvm",
    "avls": "qarla_spark.metrics.avls",
    "gramsim": "qarla_spark.metrics.gramsim",
}


def family_kernel(family: str) -> Callable:
    import importlib
    if family not in FAMILY_MODULES:
        raise ConfigError(f"no kernel for the {family} metrics")
    return importlib.import_module(FAMILY_MODULES[family]).family_kernel


def topic_similarities(texts: Sequence[str], metrics: Sequence[str],
                       sources: Optional[Sequence[str]] = None,
                       roles: Optional[Sequence[str]] = None,
                       user: Optional[Mapping[str, UserMetric]] = None,
                       options: Optional[Mapping[str, object]] = None,
                       where: str = "topic", language: str = "en") -> TopicResult:
    """Every requested metric for every ordered pair of ``texts`` (one topic).

    ``roles`` (``model``/``peer`` per text) is needed by TVM when the topic
    has no sources (it then pools the model summaries). ``user`` maps names
    of registered Python metrics to their :class:`UserMetric`.
    ``language``: the topic's task's language
    (:mod:`qarla_spark.text.languages`; ``en``: ROUGE-1.5.5's processing);
    the texts and sources are prepared in it, once per summary.
    """
    metrics = tuple(metrics)
    user = dict(user or {})
    options = {**dict(options or {}), "language": language}
    prepared = [prepare(t, language) for t in texts]
    if language != "en" and sources:
        sources = [prepare(d, language) if isinstance(d, str) else d for d in sources]
    s_idx, r_idx = ordered_pairs(len(texts))
    columns: Dict[str, np.ndarray] = {}
    info: Dict[str, object] = {}
    columns.update(_rouge_columns(prepared, metrics, s_idx, r_idx))
    families = {registry.BUILTIN[m].family for m in metrics if m in registry.BUILTIN}
    for family in sorted(families - {"rouge", "f"}):
        kernel = family_kernel(family)
        cols, finfo = kernel(prepared=prepared, texts=texts, sources=sources, roles=roles,
                             metrics=metrics, s_idx=s_idx, r_idx=r_idx, options=options)
        columns.update(cols)
        info.update(finfo)
    columns.update(_user_columns(prepared, metrics, user, s_idx, r_idx, where))
    missing = [m for m in metrics if m not in columns]
    if missing:
        raise ConfigError(f"metrics without a kernel: {', '.join(missing)}")
    values = (np.column_stack([columns[m] for m in metrics]) if metrics
              else np.empty((len(s_idx), 0)))
    return TopicResult(s_idx, r_idx, metrics, values, info)
