"""Every table a run writes, declared once: name, stage, columns, what its
rows are, one line of help.

The writer checks each table against its declaration (a stage that returns
an undeclared table or other columns fails loudly), ``qarla run --help``
prints :func:`help_text`, ``run.json`` records the declared descriptions,
and the README's table of outputs is :func:`markdown` (a test keeps them
equal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Sequence, Tuple

from qarla_spark.meta_statistics import PRIMARY, interval_note, level_note, statistic_note
from qarla_spark.names import CHANCE, HBR, HUMAN, queen_of


@dataclass(frozen=True)
class Column:
    name: str
    type: str                  # Spark DDL type: string, double, int, long, boolean, ...
    note: str = ""             # short, shown after the type (e.g. the values it takes)

    @property
    def spark_type(self) -> str:
        """The type as Spark's ``DataType.simpleString()`` prints it."""
        return (self.type.replace(" ", "").replace("long", "bigint"))


@dataclass(frozen=True)
class Table:
    name: str
    stage: str                 # the stage that writes it (config.STAGES)
    help: str                  # one line: --help, run.json
    columns: Tuple[Column, ...]
    rows: str                  # what one row is (README)
    partition_by: Tuple[str, ...] = ()
    #: columns written without Parquet min/max statistics: those whose
    #: values span the whole range in every row group (every metric, every
    #: summary of a topic), where the statistics never let a reader skip
    #: anything and cost a comparison per value to compute
    no_statistics: Tuple[str, ...] = ()

    @property
    def parquet_options(self) -> Dict[str, str]:
        """The Parquet writer's options of this table (parquet-mr's
        per-column ``key#column`` form)."""
        return {f"parquet.column.statistics.enabled#{c}": "false" for c in self.no_statistics}

    @property
    def column_names(self) -> Tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def ddl(self) -> str:
        return ", ".join(f"{c.name} {c.type}" for c in self.columns)

    def arrow_schema(self):
        """The declared columns as a pyarrow schema (every column nullable, as
        Spark writes them)."""
        import pyarrow as pa
        return pa.schema([pa.field(c.name, arrow_type(c.type)) for c in self.columns])

    def check(self, schema) -> None:
        """Raise ``ValueError`` unless a Spark ``StructType`` has exactly the
        declared columns and types, in order."""
        got = [(f.name, f.dataType.simpleString()) for f in schema.fields]
        want = [(c.name, c.spark_type) for c in self.columns]
        if got != want:
            raise ValueError(f"table {self.name}: the stage produced columns {got}, "
                             f"its declaration says {want}")

    def column_text(self) -> str:
        """``task, topic: string, score: double`` (consecutive columns of one
        type share it)."""
        parts, group = [], []
        for i, c in enumerate(self.columns):
            group.append(c.name)
            nxt = self.columns[i + 1] if i + 1 < len(self.columns) else None
            if c.note or nxt is None or nxt.type != c.type:
                note = f" ({c.note})" if c.note else ""
                parts.append(f"{', '.join(group)}: {c.type}{note}")
                group = []
        return ", ".join(parts)


_ARROW_TYPES = {"string": "string", "double": "float64", "int": "int32", "long": "int64",
                "boolean": "bool_"}


def arrow_type(ddl: str):
    """A Spark DDL type (``string``, ``double``, ``int``, ``long``, ``boolean``,
    ``array<...>``) as a pyarrow type."""
    import pyarrow as pa
    ddl = ddl.strip()
    if ddl.startswith("array<") and ddl.endswith(">"):
        return pa.list_(arrow_type(ddl[len("array<"):-1]))
    if ddl.startswith("map<") and ddl.endswith(">"):
        inner, depth = ddl[len("map<"):-1], 0
        for i, ch in enumerate(inner):
            depth += (ch == "<") - (ch == ">")
            if ch == "," and depth == 0:
                return pa.map_(arrow_type(inner[:i]), arrow_type(inner[i + 1:]))
    return getattr(pa, _ARROW_TYPES[ddl])()


def _cols(spec: str, **notes: str) -> Tuple[Column, ...]:
    out = []
    for part in spec.split(", "):
        name, typ = part.split(" ", 1)
        out.append(Column(name, typ, notes.get(name, "")))
    return tuple(out)


TABLES: Tuple[Table, ...] = (
    # -- testbed ---------------------------------------------------------------
    Table("summaries", "testbed", "validated summaries",
          _cols("task string, topic string, summarizer string, role string, text string",
                role="`model`\\|`peer`"),
          "one per summary; folders `task=<name>/`", ("task",)),
    Table("judgments", "testbed", "human judgments in long form, each rater's",
          _cols("task string, topic string, summarizer string, criterion string, "
                "rater string, score double", rater="null: one anonymous rater"),
          "one per (summary, criterion, rater); a summary's score is the mean over its "
          "raters; folders by task", ("task",)),
    Table("sources", "testbed", "source documents per topic",
          _cols("task string, topic string, documents array<string>"),
          "one per topic with sources; folders by task", ("task",)),
    Table("testbed", "testbed", "one row per task: what the testbed holds",
          _cols("task string, n_topics long, models_min long, models_median double, "
                "models_max long, n_model_summarizers long, n_peer_systems long, "
                "n_summaries long, n_model_summaries long, n_peer_summaries long, "
                "n_topics_with_sources long, judgments map<string,long>",
                judgments="criterion → judged summaries"),
          "one per task"),
    Table("problems", "testbed", "every warning found in the input (errors stop the run)",
          _cols("severity string, file string, line long, unit string, field string, "
                "message string", unit="`line`\\|`row`"),
          "every warning (errors stop the run)"),
    # -- similarities ----------------------------------------------------------
    Table("similarities", "similarities",
          "every metric on every ordered same-topic pair (s, r); r is the reference",
          _cols("task string, topic string, summarizer_s string, summarizer_r string, "
                "metric string, value double"),
          "one per ordered pair (s, r), s ≠ r, of summaries of a topic, and metric; `r` is "
          "the reference; folders by task", ("task",),
          no_statistics=("summarizer_s", "summarizer_r", "metric", "value")),
    # -- QARLA -----------------------------------------------------------------
    Table("king", "qarla",
          "KING of every single metric, every subset of representatives, requested sets",
          _cols("task string, metric_set string, n_metrics int, king double, ci_low double, "
                "ci_high double, n_cases long"),
          "every single metric, every subset of the representatives, every `--metric-set`; "
          "95% Wilson interval over the (topic, held-out model) cases"),
    Table("king_topics", "qarla",
          "KING's cases per topic of every subset of the representatives (`qarla plan`)",
          _cols("task string, topic string, metric_set string, n_metrics int, wins long, "
                "models long"),
          "one per topic where KING is defined and subset of the task's representatives "
          "(`king/`'s subsets): `wins` of the topic's `models` held-out models ranked "
          "strictly above every peer; the subset's KING is the mean over topics of "
          "wins / models (SPEC §4), what the plan's `best_set` question redraws (SPEC §12)"),
    Table("orange", "qarla",
          "ORANGE of the same sets (score QUEEN) and of each metric's plain score "
          "(score plain)",
          _cols("task string, metric_set string, n_metrics int, score string, orange double, "
                "n_cases long", score="`QUEEN`\\|`plain`"),
          "`QUEEN`: the same sets as `king/`; `plain`: each single metric's plain score (mean "
          "similarity to M∖{h}), the baseline; pooled over (topic, held-out model, peer) of "
          "the topics KING uses"),
    Table("king_pearson", "qarla",
          "KING and system-level Pearson with each criterion of every evaluated set "
          "(paper 000, Fig. 5)",
          _cols("task string, metric_set string, n_metrics int, king double, criterion string, "
                "pearson double"),
          "every set of `king/` × human criterion (tasks with judgments): KING against the "
          "system-level Pearson of its system scores with the mean human score (paper 000, "
          "Fig. 5); null when a side is constant"),
    Table("clusters", "qarla", "metric clusters, their representatives and each metric's KING",
          _cols("task string, metric string, cluster int, representative boolean, king double"),
          "one per metric"),
    Table("queen", "qarla",
          "QUEEN of every summary (holdout null: all models; else that model held out)",
          _cols("task string, topic string, summarizer string, role string, metric_set string, "
                "holdout string, queen double"),
          "the task's best set, representatives, requested sets; `holdout` null: QUEEN of a "
          "peer with "
          "all models; else QUEEN with that model held out (of every peer and of the model "
          "itself)"),
    Table("systems", "qarla",
          "system scores: models and peers ranked together (jackknifed); queen_full for peers "
          "with all models",
          _cols("task string, summarizer string, role string, metric_set string, queen double, "
                "queen_full double"),
          "models and systems ranked together (a model: mean over topics of its jackknifed "
          "QUEEN; a system: mean over topics and held-out models); `queen_full`: a system's "
          "mean QUEEN with all models"),
    Table("jack", "qarla", "JACK of the best set, the representatives and requested sets",
          _cols("task string, metric_set string, jack double"),
          "the task's best set, representatives, requested sets"),
    Table("jack_curve", "qarla", "JACK as systems are added, mean over seeded random orders",
          _cols("task string, metric_set string, n_peers int, jack double"),
          "JACK with the first n systems, mean over `--jack-orders` seeded random orders"),
    Table("correlations", "qarla",
          "Pearson, Spearman, Kendall with each human criterion, system and summary level",
          _cols("task string, metric_set string, criterion string, level string, "
                "pearson double, spearman double, kendall double",
                level="`system`\\|`summary`"),
          "the task's detailed sets × human criteria (tasks with judgments); system level: "
          "peers' system "
          "scores (all models) vs mean human score; summary level: per topic, averaged over "
          "topics where both vary"),
    Table("human_test", "qarla",
          "does each held-out model rank above every system (paper 004, Table 1)",
          _cols("task string, measure string, held_out_model string, ranked_first boolean",
                measure=f"`{queen_of('<set>')}` or a ROUGE baseline such as `R-1.a`"),
          "each model held out, scored as a peer with M∖{h} over the topics KING uses (≥ 4 "
          "models and a peer): does it rank strictly above every system? (means compared "
          "exactly)"),
    # -- HBR -------------------------------------------------------------------
    Table("hbr", "hbr", "HBR of every scored summary (peers; models with --hbr-models)",
          _cols("task string, topic string, summarizer string, measure_set string, hbr double, "
                "std_error double"),
          "every scored summary (peers; models with `--hbr-models`); std_error: the mean of "
          "the standard errors of the H it averages (a bound; 0 when exact)"),
    Table("hbr_systems", "hbr", "HBR system scores: mean over topics",
          _cols("task string, summarizer string, role string, measure_set string, hbr double"),
          "mean HBR over topics"),
    Table("heterogeneity", "hbr",
          "H of every measure set HBR needs, its standard error and sample size",
          _cols("task string, measure_set string, h double, std_error double, n_pairs long, "
                "exact boolean"),
          "every measure set HBR needs ({x: x(s) ≥ x(s')} of some pair); std_error "
          "sqrt(h(1−h)/n), 0 when exact"),
    Table("auc", "hbr",
          "AUC of every measure and of HBR per human criterion: all topics pooled, "
          "consistent / inconsistent topics, and per topic",
          _cols("task string, criterion string, measure string, scope string, auc double, "
                "n_pairs long"),
          "every HBR measure and `HBR` × criterion; scope `all` (pooled), `consistent` / "
          "`inconsistent` (topics where every single measure has AUC > 0.5, and the others, "
          "pooled), or a topic id"),
    Table("robustness", "hbr", "mean scaled AUC rank over each measure's worst 10% topics",
          _cols("task string, criterion string, measure string, worst10_rank double"),
          "mean scaled AUC rank (1 = best) over the measure's worst 10% topics"),
    Table("hetero_curve", "hbr",
          "pairs in 100 equal bins of heterogeneity: mean H and P(quality increase)",
          _cols("task string, criterion string, bin int, mean_h double, "
                "p_quality_increase double"),
          "judged peer pairs sorted by H({x: x(s) ≥ x(s')}), 100 equal bins: mean H, "
          "P(Q(s) ≥ Q(s'))"),
    Table("hbr_correlations", "hbr",
          "system-level Pearson, Spearman, Kendall of HBR with each criterion",
          _cols("task string, measure_set string, criterion string, level string, "
                "pearson double, spearman double, kendall double", level="`system`"),
          "HBR system scores vs mean human score per system"),
    # -- statistics ------------------------------------------------------------
    Table("king_ci", "statistics", "bootstrap intervals of KING over topics",
          _cols("task string, metric_set string, n_metrics int, king double, method string, "
                "ci_low double, ci_high double, n_resamples int, unit string",
                method="`percentile`\\|`bca`\\|`chance`"),
          "every set of `king/` × method: 95% interval from `--bootstrap` Poisson replicates "
          "over topics (`unit`); `chance`: KING of a random metric, mean and 95% band over "
          "draws"),
    Table("jack_ci", "statistics", "bootstrap intervals of JACK over topics",
          _cols("task string, metric_set string, jack double, method string, ci_low double, "
                "ci_high double, n_resamples int, unit string"),
          "every set of `jack/` × method (`percentile`, `bca`)"),
    Table("auc_ci", "statistics", "bootstrap intervals of the pooled AUC over topics",
          _cols("task string, criterion string, measure string, auc double, method string, "
                "ci_low double, ci_high double, n_resamples int, unit string"),
          "every measure and `HBR` × criterion × method: the pooled AUC of `auc/` (scope "
          "`all`) with its 95% interval"),
    Table("correlation_ci", "statistics", "bootstrap intervals of the correlations with humans",
          _cols("task string, score string, metric_set string, criterion string, "
                "level string, correlation string, value double, method string, "
                "ci_low double, ci_high double, n_resamples int, unit string",
                score="`QUEEN`\\|`HBR`"),
          "the correlations of `correlations/` of each task's best set (QUEEN, system and "
          "summary level) and `hbr_correlations/`, each kind (`pearson`, `spearman`, "
          "`kendall`) with its 95% interval; system level resampled over `topics`, `systems` "
          "and `both` (`unit`), and `raters` (a criterion with ≥ 2 named raters: the raters "
          "drawn too, SPEC §11), summary level over topics (every measure: `metric_eval/`)"),
    Table("comparisons", "statistics", "paired tests of the comparisons the run prints",
          _cols("task string, family string, criterion string, a string, b string, "
                "value_a double, value_b double, difference double, ci_low double, "
                "ci_high double, p_value double, p_adjusted double, significant boolean, "
                "method string, n_resamples int, unit string"),
          "a − b for: the best set vs the best single metric, vs each representative, vs "
          "every other subset of the representatives (KING); HBR vs the best and the median "
          "single measure per criterion (AUC); the difference's 95% bootstrap interval, the "
          "mid-p-value of a paired sign-flip test over topics and its max-T adjustment within "
          "the family; significant: adjusted p < 0.05"),
    Table("metric_eval", "statistics",
          "judge-based meta-evaluation: every measure's agreement with each criterion",
          _cols("task string, criterion string, measure string, level string, "
                "statistic string, value double, ci_low double, ci_high double, "
                "interval string, epsilon double, n_topics int, n_systems int, "
                "n_resamples int, unit string",
                measure=f"a metric, `{queen_of('<set>')}`, `{HBR}`, `{CHANCE}` or `{HUMAN}`",
                interval=interval_note(),
                level=level_note(),
                statistic=statistic_note()),
          "every HBR measure, the QUEEN of each of the task's detailed sets and HBR × "
          "criterion × statistic "
          "(SPEC §11): system level (a system's score: the mean over topics of its summaries' "
          "scores) Pearson, Spearman, Kendall, pairwise accuracy, soft pairwise accuracy, "
          "pairwise accuracy with human ties counted (`pairwise_accuracy_wmt`, WMT's); "
          "summary level acc_eq with its tie threshold `epsilon`, Pearson, Spearman, "
          "Kendall per topic averaged over the topics where both vary, and Pairwise "
          "Difference Pearson (`pdp`); 95% interval over "
          "topics (`interval`: system level recentred on the value, summary level "
          "percentile); `chance`: "
          "random scores, mean and 95% band over draws (`unit`); `human` (named raters): "
          "each rater against the mean of the others, averaged over the raters; a criterion "
          "with ≥ 2 named raters: each statistic with an interval again, unit `raters` (the "
          "raters drawn with the topics, SPEC §11)"),
    Table("metric_ranks", "statistics",
          "significance clusters of the measures by KING and by pairwise accuracy",
          _cols("task string, criterion string, basis string, measure string, value double, "
                "rank int", basis=f"`king`\\|`{PRIMARY}`"),
          "per task, the sets KING ranks (every single metric, requested sets, the best set; "
          "criterion null) and, per criterion, the measures of `metric_eval/`; rank 1: the "
          "top cluster (no member significantly better, paired bootstrap, "
          "Benjamini-Hochberg)"),
    Table("rater_agreement", "statistics",
          "agreement among the raters: Krippendorff's alpha per criterion",
          _cols("task string, criterion string, alpha double, ci_low double, ci_high double, "
                "interval string, n_units long, n_ratings long, n_raters int, "
                "n_resamples int, unit string", interval="`percentile`"),
          "task × criterion with two or more raters of a judged summary (issue 39): "
          "Krippendorff's alpha, interval metric, over the summaries rated twice or more "
          "(`n_units`, their `n_ratings`); 95% percentile interval over topics"),
    Table("king_vs_judges", "statistics",
          "does judge-free KING order the metrics as the judges do: Kendall's tau",
          _cols("task string, criterion string, statistic string, n_measures int, "
                "kendall double, ci_low double, ci_high double, interval string, "
                "n_resamples int, unit string"),
          "task × criterion × judge-based statistic: Kendall's tau-b between the sets' KING "
          "and the statistic of their QUEEN (a metric is its own set), 95% interval "
          "(recentred)"),
    Table("across", "statistics",
          "across tasks: each measure per task and pooled, best or tied in how many tasks",
          _cols("basis string, criterion string, measure string, scope string, value double, "
                "ci_low double, ci_high double, interval string, rank int, best_or_tied int, "
                "n_tasks int",
                basis="`king`\\|`pairwise_accuracy`", scope="`pooled`, `mean` or a task"),
          "runs of ≥ 2 tasks: per basis (KING of every single metric and requested set; "
          "pairwise accuracy per criterion of HBR's measures, the requested sets' QUEEN and "
          "HBR) and measure, the pooled value over all topics of all tasks (bootstrap "
          "stratified by task; KING's interval percentile, pairwise accuracy's recentred) "
          "with its cluster rank and the tasks it is best or tied in "
          "(rank 1 there), the equal-weight mean over tasks (`mean`, as WMT24/25) with its "
          "own interval and rank, and each task's value and rank"),
    # -- plan (issue 40: `qarla plan`, `qarla run --plan`) -----------------------
    Table("power", "plan", "power and sample size: each question per number of topics",
          _cols("task string, question string, measure string, a string, b string, "
                "adjacent boolean, n_topics int, testbed_topics int, extrapolated boolean, "
                "trials int, p_same_order double, p_significant double, ci_width double, "
                "n_needed double, needed_at_most boolean",
                question="`pair`\\|`ranking`\\|`best_set`\\|`best_vs_single`\\|"
                         "`pairwise_accuracy`"),
          "task × question × measure (QUEEN of the best set and of the best single metric, "
          "HBR, each criterion; `KING` for the best set's questions) × pair × size: over "
          "`trials` seeded draws of `n_topics` topics (`extrapolated`: with replacement, "
          "beyond the testbed) the probability the testbed's order holds, the paired "
          "t-test's power at 5%, the mean 95% interval width; `ranking`: two disjoint halves "
          "agree on every pair (p_significant: on every test's conclusion); "
          "`pairwise_accuracy`: the width of the 95% interval of the measure's pairwise "
          "accuracy against criterion `a` (draws with replacement); `n_needed`: the "
          "smallest n from which the curve stays ≥ 80% (SPEC §12)"),
    Table("ppi", "plan", "fewer judgments: prediction-powered intervals, simulated",
          _cols("task string, criterion string, measure string, method string, "
                "system string, k int, n_cells int, trials int, coverage double, width double, "
                "classical_width double, k_equivalent double, judgments_saved double, "
                "lam double", method="`classical`\\|`ppi`\\|`ppi++`"),
          "task × criterion × method × system × k judged summaries per system (the rest "
          "scored by `measure` only): coverage of the system's mean over all its judgments, "
          "mean width, the classical judgments giving that width (`k_equivalent`) and "
          "1 − k/k_equivalent saved; `lam`: the λ (PPI++: its mean; 0 and 1 for the others; SPEC §12)"),
)

BY_NAME: Dict[str, Table] = {t.name: t for t in TABLES}


def table(name: str) -> Table:
    """The declaration of table ``name`` (a ``KeyError`` names the known ones)."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no table {name!r} is declared in qarla_spark.tables "
                       f"(known: {', '.join(BY_NAME)})") from None


def of_stage(stage: str) -> Tuple[Table, ...]:
    return tuple(t for t in TABLES if t.stage == stage)


def help_text(stages: Optional[Sequence[str]] = None, width: int = 16) -> str:
    """The outputs section of ``qarla run --help`` (of the tables of
    ``stages``; default: all)."""
    import textwrap
    lines = ["outputs (under --out):",
             f"  {'run.json':<{width}} configuration, seed, versions, timings, table schemas"]
    for t in TABLES:
        if stages is None or t.stage in stages:
            name = f"{t.name}/"
            cols = textwrap.wrap(", ".join(t.column_names), 78 - width - 3)
            if len(name) >= width:
                lines.append(f"  {name}")
                name = ""
            lines.append(f"  {name:<{width}} {cols[0]}")
            lines += [f"  {'':<{width}} {c}" for c in cols[1:]]
    return "\n".join(lines)


def markdown() -> str:
    """The README's table of outputs."""
    lines = ["| table (Parquet) | columns | rows |", "|---|---|---|"]
    for t in TABLES:
        lines.append(f"| `{t.name}/` | {t.column_text()} | {t.rows} |")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - used to refresh the README
    print(markdown())
