"""SPEC's thresholds, in one place: how many models and peers a topic needs
for each measure. Validation warnings, the topic cube, the kernels and the
skipped-topic warnings all read them from here (part of the floor,
:mod:`qarla_spark.names`: imports nothing of the project).
"""

from __future__ import annotations

#: SPEC §3: QUEEN's triples (m, m', m'') need m' ≠ m'', hence 3 models
#: (with ``triples = "distinct"`` too); fewer and the topic is skipped.
MIN_MODELS_QUEEN = 3

#: SPEC §3-4: a held-out model h leaves M∖{h}, which must hold the 3 models
#: QUEEN needs: jackknifed QUEEN, KING, ORANGE, the plain baselines and the
#: human-summariser test use topics with at least 4 models.
MIN_MODELS_JACKKNIFE = MIN_MODELS_QUEEN + 1

#: KING and ORANGE compare a held-out model with the topic's peers: a topic
#: without a peer is skipped ("beats every peer" would be vacuous there).
MIN_PEERS_KING = 1

#: JACK looks for a pair of distinct peers (a ≠ a'); a topic with fewer
#: counts 0 for each of its models.
MIN_PEERS_JACK = 2

#: HBR scores a summary against the models of its topic (SPEC §8): one is
#: enough. The topic cube holds every topic with this many models.
MIN_MODELS_HBR = 1


def queen_defined(n_models: int) -> bool:
    """QUEEN with all of a topic's models is defined."""
    return n_models >= MIN_MODELS_QUEEN


def king_defined(n_models: int, n_peers: int) -> bool:
    """The topic enters KING, ORANGE and the human-summariser test."""
    return n_models >= MIN_MODELS_JACKKNIFE and n_peers >= MIN_PEERS_KING


#: Issue 38: a task whose letters lie outside the scripts its language's
#: tokenizer reads (ROUGE-1.5.5's: ASCII letters) by this share or more is an
#: error (its metrics would be constant or meaningless) ...
SCRIPT_ERROR_SHARE = 0.2
#: ... and by this share or more a warning (a mixed-script task).
SCRIPT_WARNING_SHARE = 0.05
#: more than this share of a task's summaries yielding no token at all is an
#: error (fewer are warnings, each naming its summary).
EMPTY_ERROR_SHARE = 0.5
