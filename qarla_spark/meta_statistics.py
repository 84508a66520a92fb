"""Every statistic of the judge-based meta-evaluation (``metric_eval/``),
declared once (issue 37), as :mod:`qarla_spark.options` declares options
and :mod:`qarla_spark.tables` tables.

A :class:`Statistic` holds all the project knows about one statistic: its
name (``metric_eval/``'s ``statistic``), its level, the range of its
values, whether it has bootstrap replicates and which interval they give,
the unit of that interval, whether it calibrates a tie threshold (the
``epsilon`` column), how the text and the report name it and the sentence
that explains it. From :data:`STATISTICS` derive

- the statistics ``metric_eval/`` holds, in its row order, their interval,
  unit and ``epsilon`` (:mod:`qarla_spark.stages.judges`), and which of
  them ``king_vs_judges/`` sets against KING (those with replicates);
- what :func:`~qarla_spark.measures.judge_statistics.meta_evaluations`
  computes: each statistic by its kernel
  (:data:`~qarla_spark.measures.judge_statistics.KERNELS`, one per name),
  its interval from :attr:`Statistic.bounds` when it has replicates, no
  interval when it has none (soft pairwise accuracy: its p-values are
  themselves resampled);
- the note of ``metric_eval/``'s ``statistic`` and ``interval`` columns
  (:mod:`qarla_spark.tables`, hence ``--help`` and the README);
- how the run says how they were computed (``run.json``'s
  ``meta_evaluation``, :func:`~qarla_spark.measures.judge_statistics.
  configuration`), the report's table of the judges (:data:`REPORTED`) and
  the statistic the measures are ranked by (:data:`PRIMARY`: the printed
  summary, ``metric_ranks/``, the report's order).

Adding a statistic is adding one :class:`Statistic` here and its kernel
to :data:`~qarla_spark.measures.judge_statistics.KERNELS`, keyed by
(level, name): a name may be declared at both levels (and a test;
``tests/test_contract.py`` adds a toy one through both). Like the rest of
the floor, this module imports nothing of the project but the floor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

#: the intervals of ``metric_eval/`` (the names
#: :func:`qarla_spark.measures.resampling.interval_method` gives): the
#: percentile interval recentred on the value within the statistic's range,
#: and the plain percentile interval
RECENTRED, PERCENTILE = "recentred", "percentile"
#: the chance rows' interval: the 2.5-97.5% band of the random measures
BAND = "band"
#: the levels of a statistic: system scores (a system's mean over topics),
#: or summaries within a topic
LEVELS = ("system", "summary")
#: the unit of a statistic's interval: Poisson replicates over topics
TOPICS = "topics"


@dataclass(frozen=True)
class Statistic:
    """One statistic of ``metric_eval/``: how well a measure agrees with a
    human criterion."""

    name: str                         # metric_eval/'s ``statistic``
    level: str                        # LEVELS: what it compares
    title: str                        # how the text names it
    #: the sentence that explains it (``run.json``'s ``meta_evaluation``);
    #: empty for the correlations, which share one line of their titles
    explains: str
    bounds: Tuple[float, float]       # the range of its values
    #: RECENTRED or PERCENTILE: the interval of its bootstrap replicates;
    #: None: it has no replicates (and no interval)
    interval: Optional[str]
    #: what its interval resamples (``metric_eval/``'s ``unit``); without
    #: replicates, what its value is computed over
    unit: str = TOPICS
    #: it calibrates a tie threshold (``metric_eval/``'s ``epsilon``)
    calibrated: bool = False
    #: the head of its column in the report's table of the judges
    short: str = ""
    #: the digits the report shows
    digits: int = 3
    #: ``king_vs_judges/`` sets it against KING (when it has replicates)
    against_king: bool = True

    @property
    def key(self) -> Tuple[str, str]:
        """(level, name): how a meta-evaluation keys its estimates."""
        return (self.level, self.name)

    @property
    def replicates(self) -> bool:
        """It has bootstrap replicates (and an interval; ``king_vs_judges/``
        sets it against KING's replicates)."""
        return self.interval is not None

    @property
    def recentred_within(self) -> Optional[Tuple[float, float]]:
        """The range a recentred interval stays within, None for a
        percentile interval (``resampling.bootstrap_columns``' ``bounds``)."""
        return self.bounds if self.interval == RECENTRED else None


#: every statistic of ``metric_eval/``, in its row order (a measure's rows)
STATISTICS: Tuple[Statistic, ...] = (
    Statistic("pearson", "system", "Pearson", "", (-1.0, 1.0), RECENTRED),
    Statistic("spearman", "system", "Spearman", "", (-1.0, 1.0), RECENTRED),
    Statistic("kendall", "system", "Kendall tau-b", "", (-1.0, 1.0), RECENTRED,
              short="Kendall τ", digits=2),
    Statistic("pairwise_accuracy", "system", "pairwise accuracy",
              "Kocmi et al. 2021: pairs of systems with unequal human scores ordered alike; "
              "a metric tie counts 1/2", (0.0, 1.0), RECENTRED, short="pairwise accuracy"),
    Statistic("soft_pairwise_accuracy", "system", "soft pairwise accuracy",
              "Thompson et al. 2024: 1 - mean |p_metric - p_human| over system pairs, "
              "one-sided p-values from the sign patterns of the paired tests (no interval)",
              (0.0, 1.0), None, unit="sign flips", short="soft PA"),
    Statistic("acc_eq", "summary", "acc_eq",
              "Deutsch et al. 2023: summary level, pairs within a topic, tie threshold "
              "epsilon calibrated once on all topics (the smallest of equal maxima), mean "
              "over topics", (0.0, 1.0), PERCENTILE, calibrated=True, short="acc_eq"),
    # summary level, as SummEval and SacreROUGE report them (issue 39, part 5)
    *(Statistic(name, "summary", f"summary-level {title}",
                f"summary level, as SacreROUGE's summary_level_corr: {title} over each "
                "topic's judged systems, the mean over the topics where both sides vary",
                (-1.0, 1.0), PERCENTILE, short=f"summary {title}", against_king=False)
      for name, title in (("pearson", "Pearson"), ("spearman", "Spearman"),
                          ("kendall", "Kendall tau-b"))),
    # the WMT conventions (issue 39, part 4)
    Statistic("pairwise_accuracy_wmt", "system", "pairwise accuracy (WMT)",
              "mt-metrics-eval's Agreement, the figure WMT publishes: every pair of systems, "
              "human ties counted; a pair agrees when the signs of its two differences are "
              "equal (both tie: agrees; one side ties: disagrees, no 1/2)",
              (0.0, 1.0), RECENTRED, short="PA (WMT)", against_king=False),
    Statistic("pdp", "summary", "Pairwise Difference Pearson",
              "DiIanni & Deutsch 2025 (mt-metrics-eval's pdp): Pearson between the metric's and "
              "the humans' differences of every pair of systems within a topic, pooled over "
              "the topics (both orders of a pair: the means are 0)",
              (-1.0, 1.0), PERCENTILE, short="PDP", against_king=False),
)

#: the statistic the measures are ranked by: the significance clusters of
#: ``metric_ranks/``, the report's order and the printed summary (and
#: KING against the judges' printed τ)
PRIMARY = "pairwise_accuracy"
#: the columns of the report's table of the judges, in order (the
#: calibrated statistic's tie threshold follows them)
REPORTED = ("pairwise_accuracy", "soft_pairwise_accuracy", "kendall", "acc_eq")


def by_name() -> Dict[str, Statistic]:
    """Every declared statistic by name, the first declared of a name (the
    system level's: a name may be declared at both levels), of
    :data:`STATISTICS` as it is now."""
    out: Dict[str, Statistic] = {}
    for s in STATISTICS:
        out.setdefault(s.name, s)
    return out


def statistic(name: str, level: Optional[str] = None) -> Statistic:
    """The declaration of ``name`` (at ``level``; without one, the first
    declared: :func:`by_name`); a ``KeyError`` names the known ones."""
    found = by_name() if level is None else {s.name: s for s in STATISTICS if s.level == level}
    try:
        return found[name]
    except KeyError:
        raise KeyError(f"no statistic {name!r} is declared in qarla_spark.meta_statistics "
                       f"(known: {', '.join(f'{s.level} {s.name}' for s in STATISTICS)})"
                       ) from None


def label(st: Statistic) -> str:
    """How ``run.json`` names a statistic: its name, with its level when
    the name is declared at both."""
    return st.name if sum(s.name == st.name for s in STATISTICS) == 1 \
        else f"{st.name} ({st.level})"


def statistic_note() -> str:
    """The note of ``metric_eval/``'s ``statistic`` column (README, --help)."""
    return "\\|".join(f"`{name}`" for name in dict.fromkeys(s.name for s in STATISTICS))


def interval_note() -> str:
    """The note of ``metric_eval/``'s ``interval`` column."""
    found = dict.fromkeys([*(s.interval for s in STATISTICS if s.interval), BAND])
    return "\\|".join(f"`{i}`" for i in found) + "; null: none"


def level_note() -> str:
    """The note of ``metric_eval/``'s ``level`` column."""
    return "\\|".join(f"`{level}`" for level in LEVELS
                      if any(s.level == level for s in STATISTICS))
