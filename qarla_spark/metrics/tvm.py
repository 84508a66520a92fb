"""TVM.n -- TruncatedVectModel similarities of SPEC §2 (pure Python + numpy).

Paper ``000`` §3.1 ("TruncatedVectModel"): "(1) obtaining the n most frequent
lemmas ignoring stopwords; (2) generating a vector with the relative
frequency of each term in the summary; (3) calculating the similarity
between two vectors as the inverse of the Euclidean distance", for
n = 1, 4, 8, 16, 32, 64, 128, 256, 512 (``002`` adds: the terms are the most
frequent ones of the source documents). SPEC §2 fixes the text processing
(variant ``c``) and the similarity 1 / (1 + distance).

Definition implemented here (decisions where SPEC §2 is silent are marked
**[decision]**; they are worded so they can be copied into the project's
DECISIONS doc):

- **Terms.** The terms of a text are its variant-``c`` tokens (SPEC §2:
  ROUGE-1.5.5 tokens, SMART stop words removed, ROUGE-1.5.5 ``-m``
  stemming), computed by :func:`qarla_spark.text.variants.prepare`; the
  source documents go through exactly the same processing as the summaries.
  **[decision]** Departs from ``000``, which speaks of *lemmas*: the ``c``
  stems stand in for lemmas so that TVM shares the ROUGE ``c`` processing.
- **Term frequency of a topic** **[decision]**: the number of occurrences of
  the term summed over all the topic's source documents (pooled counts, not
  document frequency). If the topic has no source document, or its
  documents hold no ``c`` token at all, the counts are summed over the
  topic's model summaries instead (SPEC §2: "the pooled model summaries").
- **The n terms** **[decision]**: the terms are ranked by decreasing
  frequency, ties broken by the term string in increasing code-point order
  (terms are ``[a-z0-9]+``, so this is plain ASCII order); TVM.n uses the
  first n. Ranks are a total order, so the term set of TVM.n is always a
  prefix of that of TVM.m for n < m, and a tie at the cut is decided the same
  way on every machine. **[decision]** A topic with fewer than n distinct
  terms uses all of them (so TVM.n = TVM.m for every n, m at least the
  number of distinct terms). A topic with no term at all (no source token and
  no model token) has an empty vector space: every pair then scores 1.
- **Vector of a summary** **[decision]**: component k = (occurrences of term
  k among the summary's ``c`` tokens) / (number of the summary's ``c``
  tokens, all of them, not only those among the n terms). A summary with no
  ``c`` token has the zero vector (so two such summaries score 1 with each
  other, and an empty summary scores 1 / (1 + ‖v‖) against a summary with
  vector v).
- **Similarity**: TVM.n(s, r) = 1 / (1 + ‖v_n(s) − v_n(r)‖₂) ∈ (0, 1],
  1 exactly when the two vectors are equal (identical summaries score
  exactly 1.0). **Departs from ``000``** ("the inverse of the Euclidean
  distance", 1/d, infinite for d = 0) as SPEC §2 does; 1/(1+d) is a strictly
  decreasing function of d like 1/d, so the order of values, which is all
  QARLA uses, is the same. TVM is **symmetric**: TVM.n(s, r) = TVM.n(r, s),
  bit for bit (the difference vectors of (s, r) and (r, s) are exact
  negatives of each other, so both ordered pairs get the very same float).

Work per topic is done once: terms ranked once, one vector per summary
(the vectors of all n are prefixes of the vector over the largest n), then
all pairwise distances with numpy (cumulative sums of squared differences
along the ranked terms give every prefix length in one pass).

The per-topic entry point :func:`tvm_topic` takes the ``c`` tokens of the
summaries of one topic, their roles and the ``c`` tokens of the topic's
source documents, and returns a :class:`TopicPairs` with the 9 values of
every ordered pair (i, j), i ≠ j -- what a Spark per-topic
``applyInPandas`` needs (``TopicPairs.columns(ids)`` gives plain columns).
:class:`TopicPairs` and :func:`pairs_from_similarity` are shared by
:mod:`~qarla_spark.metrics.avls` and :mod:`~qarla_spark.metrics.gramsim`.
Each of the three modules also has a ``family_kernel`` adapter (keyword
arguments ``prepared``, ``texts``, ``sources``, ``roles``, ``metrics``,
``s_idx``, ``r_idx``, ``options``; returns ``({metric: column}, info)``)
for a per-topic battery that computes the pairs it is given.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain
from typing import (
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
)

import numpy as np

from qarla_spark.text.variants import PreparedSummary, prepare

__all__ = [
    "TVM_SIZES",
    "TVM_NAMES",
    "MODEL_ROLE",
    "TopicPairs",
    "pairs_from_similarity",
    "c_tokens",
    "term_counts",
    "top_terms",
    "topic_terms",
    "tvm_vectors",
    "tvm_pair",
    "tvm_topic",
    "family_kernel",
]

#: The n of TVM.n (SPEC §2, paper ``000``), in output order.
TVM_SIZES: Tuple[int, ...] = (1, 4, 8, 16, 32, 64, 128, 256, 512)
#: Metric names in output order: ``TVM.1`` ... ``TVM.512``.
TVM_NAMES: Tuple[str, ...] = tuple(f"TVM.{n}" for n in TVM_SIZES)
#: The role whose summaries stand in for missing sources (SPEC §1).
MODEL_ROLE = "model"

# Rows of the (rows x m x terms) difference block built at once: keeps the
# temporary arrays near 32 MB whatever the topic size.
_BLOCK_FLOATS = 4_000_000


# --------------------------------------------------------------------------
# Per-topic pair table (shared with avls and gramsim)
# --------------------------------------------------------------------------


class TopicPairs(NamedTuple):
    """Values of some metrics for every ordered pair (i, j), i ≠ j, of a topic.

    ``s[p]`` and ``r[p]`` are the positions (in the input order of the
    topic's summaries) of the summary in the role of ``s`` and of ``r`` in
    row ``p``; ``values[p, k]`` is metric ``names[k]`` of that pair. Rows
    are ordered by ``s`` then ``r`` (row-major over the ``m × m`` matrix,
    diagonal left out), so a topic of m summaries has m(m − 1) rows.
    """

    s: np.ndarray
    r: np.ndarray
    values: np.ndarray
    names: Tuple[str, ...]

    def __len__(self) -> int:  # number of pairs, not of fields
        return int(self.s.shape[0])

    def columns(self, ids: Optional[Sequence[Any]] = None) -> Dict[str, Any]:
        """Plain columns: ``s``, ``r`` (positions, or ``ids[position]``) and
        one float64 array per metric name (e.g. for ``pandas.DataFrame``)."""
        if ids is None:
            s, r = self.s, self.r
        else:
            id_arr = np.asarray(list(ids), dtype=object)
            s, r = id_arr[self.s], id_arr[self.r]
        out: Dict[str, Any] = {"s": s, "r": r}
        for k, name in enumerate(self.names):
            out[name] = self.values[:, k]
        return out

    def rows(self, ids: Optional[Sequence[Any]] = None) -> Iterator[Tuple[Any, ...]]:
        """``(s, r, value_1, ..., value_K)`` tuples of Python objects."""
        keys_s = self.s.tolist() if ids is None else [ids[i] for i in self.s.tolist()]
        keys_r = self.r.tolist() if ids is None else [ids[i] for i in self.r.tolist()]
        for a, b, vals in zip(keys_s, keys_r, self.values.tolist()):
            yield (a, b, *vals)

    def as_dict(self) -> Dict[Tuple[int, int], Dict[str, float]]:
        """``{(i, j): {name: value}}`` (convenient in tests, slow for big topics)."""
        return {
            (a, b): dict(zip(self.names, vals))
            for a, b, vals in zip(self.s.tolist(), self.r.tolist(), self.values.tolist())
        }


def pairs_from_similarity(sim: np.ndarray, names: Sequence[str]) -> TopicPairs:
    """A :class:`TopicPairs` from ``K`` similarity matrices ``sim[k, i, j]``.

    ``sim`` has shape ``(K, m, m)`` (or ``(m, m)`` for one metric); its
    diagonal is ignored.
    """
    sim = np.asarray(sim, dtype=np.float64)
    if sim.ndim == 2:
        sim = sim[None]
    k, m, m2 = sim.shape
    if m != m2 or k != len(names):
        raise ValueError(f"expected shape ({len(names)}, m, m), got {sim.shape}")
    off = ~np.eye(m, dtype=bool)
    s_idx, r_idx = np.nonzero(off)
    values = np.ascontiguousarray(sim[:, off].T) if m else np.zeros((0, k))
    return TopicPairs(s_idx.astype(np.int64), r_idx.astype(np.int64), values, tuple(names))


# --------------------------------------------------------------------------
# Terms
# --------------------------------------------------------------------------


def c_tokens(tokens: Any) -> List[str]:
    """The ``c`` tokens of one text as a flat list.

    Accepts a :class:`~qarla_spark.text.variants.PreparedSummary` (its ``c``
    variant), a flat sequence of tokens, or a sequence of sentences (each a
    sequence of tokens, e.g. ``PreparedSummary.c`` or the nested lists an
    Arrow/Spark column gives). ``None`` is an empty text.
    """
    if tokens is None:
        return []
    if isinstance(tokens, PreparedSummary):
        return list(tokens.tokens("c"))
    if isinstance(tokens, str):
        raise TypeError("expected tokens, got a str: prepare the text first")
    seq = list(tokens)
    if not seq:
        return []
    if isinstance(seq[0], str):
        return seq
    return list(chain.from_iterable(seq))


def term_counts(texts: Iterable[Any]) -> Counter:
    """Occurrences of each term summed over ``texts`` (each as :func:`c_tokens`)."""
    counts: Counter = Counter()
    for text in texts:
        counts.update(c_tokens(text))
    return counts


def top_terms(counts: Dict[str, int], n: Optional[int] = None) -> Tuple[str, ...]:
    """Terms ranked by decreasing count, ties by increasing term string; first n.

    >>> top_terms({"b": 2, "a": 2, "c": 5, "d": 1}, 3)
    ('c', 'a', 'b')
    """
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if n is not None:
        ranked = ranked[:n]
    return tuple(term for term, _ in ranked)


def topic_terms(
    sources: Optional[Iterable[Any]],
    models: Iterable[Any] = (),
    n: int = max(TVM_SIZES),
) -> Tuple[str, ...]:
    """The ranked terms of a topic (at most ``n``): from the source documents
    when they hold any ``c`` token, else from the pooled ``models``."""
    counts = term_counts(sources or ())
    if not counts:
        counts = term_counts(models)
    return top_terms(counts, n)


# --------------------------------------------------------------------------
# Vectors and distances
# --------------------------------------------------------------------------


def tvm_vectors(terms: Sequence[str], summaries: Sequence[Any]) -> np.ndarray:
    """Relative-frequency vectors: ``out[i, k]`` = occurrences of ``terms[k]``
    in summary i / number of ``c`` tokens of summary i (0 for an empty one).

    Shape ``(len(summaries), len(terms))``; the vector for TVM.n is the
    first ``min(n, len(terms))`` columns when ``terms`` is ranked.
    """
    index = {t: k for k, t in enumerate(terms)}
    out = np.zeros((len(summaries), len(terms)), dtype=np.float64)
    for i, summary in enumerate(summaries):
        toks = c_tokens(summary)
        if not toks:
            continue
        row = out[i]
        for tok in toks:
            k = index.get(tok)
            if k is not None:
                row[k] += 1.0
        row /= len(toks)
    return out


def _prefix_sq_distances(x: np.ndarray, cuts: Sequence[int]) -> np.ndarray:
    """``out[c, i, j]`` = Σ_{k < cuts[c]} (x[i, k] − x[j, k])², exactly symmetric."""
    m, t = x.shape
    out = np.zeros((len(cuts), m, m), dtype=np.float64)
    if m == 0 or t == 0:
        return out
    idx = np.asarray(cuts, dtype=np.int64) - 1  # cut 0 -> -1, fixed below
    step = max(1, _BLOCK_FLOATS // max(1, m * t))
    for start in range(0, m, step):
        stop = min(m, start + step)
        diff = x[start:stop, None, :] - x[None, :, :]
        np.square(diff, out=diff)
        np.cumsum(diff, axis=2, out=diff)
        block = diff[:, :, np.maximum(idx, 0)]  # (rows, m, cuts)
        block[:, :, idx < 0] = 0.0
        out[:, start:stop, :] = np.moveaxis(block, 2, 0)
    return out


def _similarities(x: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    cuts = [min(n, x.shape[1]) for n in sizes]
    d2 = _prefix_sq_distances(x, cuts)
    return 1.0 / (1.0 + np.sqrt(d2))


def tvm_pair(s: Any, r: Any, terms: Sequence[str], sizes: Sequence[int] = TVM_SIZES) -> Dict[str, float]:
    """TVM.n(s, r) for each n in ``sizes``, given the topic's ranked ``terms``
    (from :func:`topic_terms`); ``s`` and ``r`` as :func:`c_tokens`."""
    sim = _similarities(tvm_vectors(terms, [s, r]), sizes)
    return {f"TVM.{n}": float(sim[k, 0, 1]) for k, n in enumerate(sizes)}


def _topic_similarity(
    summaries: Sequence[Any],
    roles: Optional[Sequence[str]],
    sources: Optional[Sequence[Any]],
    sizes: Sequence[int],
) -> Tuple[np.ndarray, str]:
    """``(sim, basis)``: ``sim[k, i, j]`` = TVM.sizes[k] of (i, j); ``basis``
    says where the terms came from: ``"sources"``, ``"models"`` or ``"none"``."""
    if not sizes or min(sizes) < 1:
        raise ValueError(f"TVM sizes must be positive integers, got {tuple(sizes)}")
    counts = term_counts(sources or ())
    basis = "sources"
    if not counts:
        if roles is None:
            raise ValueError(
                "the topic has no source token: pass the summaries' roles so that "
                "TVM can use the pooled model summaries")
        if len(roles) != len(summaries):
            raise ValueError(f"{len(roles)} roles for {len(summaries)} summaries")
        counts = term_counts(x for x, role in zip(summaries, roles) if role == MODEL_ROLE)
        basis = "models" if counts else "none"
    terms = top_terms(counts, max(sizes))
    return _similarities(tvm_vectors(terms, summaries), sizes), basis


def tvm_topic(
    summaries: Sequence[Any],
    roles: Optional[Sequence[str]] = None,
    sources: Optional[Sequence[Any]] = None,
    sizes: Sequence[int] = TVM_SIZES,
) -> TopicPairs:
    """TVM.n of every ordered pair (i, j), i ≠ j, of one topic's summaries.

    ``summaries``: the ``c`` tokens of each summary of the topic (see
    :func:`c_tokens` for the accepted shapes); ``roles``: their roles
    (``"model"`` / ``"peer"``), needed only when the topic has no source
    token; ``sources``: the ``c`` tokens of each source document of the topic
    (``None`` or empty when the topic has none). Returns the values in
    ``sizes`` order (names ``TVM.<n>``).
    """
    sizes = tuple(int(n) for n in sizes)
    summaries = list(summaries)
    sim, _ = _topic_similarity(summaries, roles, sources, sizes)
    return pairs_from_similarity(sim, [f"TVM.{n}" for n in sizes])


def family_kernel(
    *,
    prepared: Sequence[PreparedSummary],
    s_idx: np.ndarray,
    r_idx: np.ndarray,
    metrics: Sequence[str] = TVM_NAMES,
    sources: Optional[Sequence[Any]] = None,
    roles: Optional[Sequence[str]] = None,
    **_: Any,
) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
    """Adapter for a per-topic battery: the requested ``TVM.<n>`` columns for
    the pairs ``(s_idx[p], r_idx[p])`` of the topic's ``prepared`` summaries.

    ``sources``: the topic's documents as texts (prepared here with
    :func:`~qarla_spark.text.variants.prepare`) or as ``c`` tokens. Returns
    ``({metric: column}, {"tvm_basis": "sources" | "models" | "none"})``.
    """
    wanted = [m for m in metrics if m.startswith("TVM.")]
    if not wanted:
        return {}, {}
    try:
        sizes = [int(m[4:]) for m in wanted]
    except ValueError:
        raise ValueError(f"bad TVM metric name among {wanted}") from None
    docs = [prepare(d) if isinstance(d, str) else d for d in (sources or ())]
    sim, basis = _topic_similarity([p.c for p in prepared], roles, docs, sizes)
    s_idx = np.asarray(s_idx, dtype=np.int64)
    r_idx = np.asarray(r_idx, dtype=np.int64)
    return {m: sim[k, s_idx, r_idx] for k, m in enumerate(wanted)}, {"tvm_basis": basis}
