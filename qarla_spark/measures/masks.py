"""Bit masks of metric sets and QUEEN sample masks (SPEC §3, §6; pure numpy).

A *sample* is (e, m, m', m'') with m, m', m'' models of e's topic, m' ≠ m''
(``triples="standard"``: m may equal m' or m''; ``"distinct"``: all three
differ) and e not among them. Its *pass-mask* has bit i set when metric i
passes: x_i(e, m) ≥ x_i(m', m'') (a tie passes). QUEEN_X(e) is the share of
e's samples whose mask contains every bit of X, so any number of metric sets
is answered from the same masks.

Masks are arrays of 63-bit words (``array<long>``), so metric lists of any
length are supported (word w holds metrics 63·w .. 63·w+62).

Sizes: a topic with |M| models and |A| peers has (|A|·|M| + |M|·(|M|−1))
ordered (e, m) pairs times |M|(|M|−1) (m', m'') pairs of samples (standard
triples), e.g. 29,260 for SummEval's 11 models and 16 peers.
"""

from __future__ import annotations

from typing import Iterable, List, Sequence

import numpy as np

WORD_BITS = 63
TRIPLES = ("standard", "distinct")


def n_words(n_metrics: int) -> int:
    return max(1, -(-n_metrics // WORD_BITS))


def packed_u64(bits) -> np.ndarray:
    """Boolean (n × c) → (n × ⌈c/64⌉) uint64: column j is bit j % 64 of word
    j // 64 (little endian), padding bits 0."""
    bits = np.asarray(bits, dtype=bool)
    packed = np.packbits(bits, axis=1, bitorder="little")
    buffer = np.zeros((bits.shape[0], -(-bits.shape[1] // 64) * 8), dtype=np.uint8)
    buffer[:, :packed.shape[1]] = packed
    return buffer.view("<u8")


def pack(bits) -> np.ndarray:
    """Boolean (n × k) → (n × n_words(k)) int64 mask words: bit b of word w
    is column 63·w + b (bit 63 stays 0, so words are non-negative); the
    inverse of :func:`unpack`."""
    bits = np.asarray(bits, dtype=bool)
    n, k = bits.shape
    words = np.zeros((n, n_words(k)), dtype=np.int64)
    for w in range(-(-k // WORD_BITS)):
        words[:, w] = packed_u64(bits[:, w * WORD_BITS:(w + 1) * WORD_BITS])[:, 0]
    return words


def unpack(words, k: int) -> np.ndarray:
    """Mask words (n × words) → boolean (n × k): column i is bit i % 63 of
    word i // 63; the inverse of :func:`pack`."""
    words = np.asarray(words, dtype=np.int64)
    col = np.arange(k)
    return ((words[:, col // WORD_BITS] >> (col % WORD_BITS)) & 1).astype(bool)


def set_words(indices: Iterable[int], n_metrics: int) -> List[int]:
    """The mask words of a metric set given by metric indices."""
    words = [0] * n_words(n_metrics)
    for i in indices:
        words[i // WORD_BITS] |= 1 << (i % WORD_BITS)
    return words


def set_indices(words) -> List[List[int]]:
    """The metric indices (increasing) of each set given as a row of mask
    words: the inverse of :func:`set_words`."""
    words = np.asarray(words, dtype=np.int64)
    if not words.size:
        return [[] for _ in range(len(words))]
    words = words.reshape(len(words), -1)
    return [np.flatnonzero(row).tolist()
            for row in unpack(words, words.shape[1] * WORD_BITS)]


def topic_sample_masks(roles: Sequence[str], values: np.ndarray, triples: str = "standard"):
    """The QUEEN samples of one topic and their pass-masks (pure numpy).

    ``values[s, r, i]`` is metric i of the ordered pair (s, r) (the diagonal
    is ignored); ``roles[s]`` is ``model`` or ``peer``. Returns
    ``(e, m, m1, m2, words)``: index arrays of the samples (e, m, m', m'')
    and an (n_samples × n_words) int64 array of their masks, bit i of word
    w set when metric 63·w+i passes: values[e, m, i] ≥ values[m1, m2, i].
    """
    e, m, m1, m2, passes = _samples(roles, values, triples, np.arange(values.shape[0]))
    return e, m, m1, m2, pack(passes)


def topic_samples(roles: Sequence[str], values: np.ndarray, triples: str = "standard"):
    """The QUEEN samples of one topic with their pass bits unpacked:
    ``(e, m, m1, m2, passes)``, ``passes`` (samples × metrics) boolean — what
    :func:`topic_sample_masks` packs and :func:`peer_sample_bits` keeps the
    peers' rows of, computed once for both."""
    return _samples(roles, values, triples, np.arange(values.shape[0]))


def peer_sample_bits(roles: Sequence[str], values: np.ndarray,
                     triples: str = "standard") -> np.ndarray:
    """The pass bits of the peers' samples of one topic, (samples × metrics)
    boolean: the rows of :func:`topic_sample_masks` whose e is a peer,
    unpacked (what the metric clustering counts)."""
    peers = np.flatnonzero(np.asarray(roles) == "peer")
    return _samples(roles, values, triples, peers)[4]


def _samples(roles, values, triples: str, evaluated: np.ndarray):
    """(e, m, m1, m2, passes) of the samples whose e is in ``evaluated``."""
    roles = np.asarray(roles)
    k = values.shape[2]
    models = np.flatnonzero(roles == "model")
    e_idx, m_idx = np.meshgrid(evaluated, models, indexing="ij")
    keep = e_idx != m_idx
    e_idx, m_idx = e_idx[keep], m_idx[keep]
    m1, m2 = np.meshgrid(models, models, indexing="ij")
    keep = m1 != m2
    m1, m2 = m1[keep], m2[keep]
    ev = values[e_idx, m_idx].reshape(-1, k)          # |EM| × k
    mv = values[m1, m2].reshape(-1, k)                # |MM| × k
    valid = (e_idx[:, None] != m1[None, :]) & (e_idx[:, None] != m2[None, :])
    if triples == "distinct":
        valid &= (m_idx[:, None] != m1[None, :]) & (m_idx[:, None] != m2[None, :])
    a, b = np.nonzero(valid)
    # every (e, m) pair against every (m', m'') pair at once, then the valid
    # samples' rows in the same (row-major) order as (a, b): the same bits
    # as ev[a] >= mv[b] without gathering two samples × metrics float arrays
    return e_idx[a], m_idx[a], m1[b], m2[b], (ev[:, None, :] >= mv[None, :, :])[valid]
