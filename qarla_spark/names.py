"""The shared names of qarla_spark: the floor every layer may import.

What two layers must agree on is defined here, once: the rule of a metric
name, the ``run.json`` file and its statuses, the ways of committing a run,
the names of HBR, QUEEN (and of a set's QUEEN: made and read here) and the
chance baselines as measures, the families of paired comparisons, why QARLA
skips a topic, the warning class of skipped work, the name of the workers'
warm-up in Spark's event log. This module (and the other modules of the floor: ``errors``,
``thresholds``, ``paths``, ``tables``) imports nothing of the project but
each other; the import-linter contracts in ``.importlinter`` check it.
"""

from __future__ import annotations

import json
from typing import Optional

from qarla_spark.errors import ConfigError
from qarla_spark.thresholds import MIN_MODELS_QUEEN

# ------------------------------------------------------------ metric names

#: what separates metric names written in one string: a metric set
#: (``"R-1.a,TVM.512"``, :class:`qarla_spark.measures.metric_sets.MetricSet`)
#: or a selection (``--metrics "R-*.a,AVLS"``); no metric name contains it
SEPARATOR = ","


def check_metric_name(name: str, where: str = "") -> str:
    """``name`` if it can name a metric: a non-empty string without
    :data:`SEPARATOR` and without surrounding spaces; else a
    :class:`ConfigError` (``where`` says where the name came from)."""
    if not isinstance(name, str) or not name.strip() or SEPARATOR in name \
            or name != name.strip():
        place = f"{where}: " if where else ""
        raise ConfigError(f"{place}invalid metric name {name!r}: a metric name is non-empty, "
                          f"without '{SEPARATOR}' (it separates the metrics of a set) and "
                          "without surrounding spaces")
    return name


# ------------------------------------------------------------ records

#: the roles of a summary: a human reference (model) or a system's (peer)
ROLES = ("model", "peer")

#: kinds of raw records (one per parsed record or problem; SPEC §1)
SUMMARY, JUDGMENT, SOURCE, PROBLEM = "summary", "judgment", "source", "problem"
#: the checked rows of one rater's judgment (the ``judgments/`` table; a
#: ``judgment`` row of the checks is the mean over a summary's raters)
RATING = "rating"

#: the fields of a raw record, in the order of the raw schema
#: (:data:`qarla_spark.io.schemas.RAW_SCHEMA`)
RAW_FIELDS = (
    "kind", "file", "line", "unit", "task", "topic", "summarizer", "role", "text",
    "criterion", "rater", "score", "documents", "embedded", "severity", "field", "message",
)


# ------------------------------------------------------------ run.json

#: the file that makes a folder a run: written last (qarla_spark.spark.output)
RUN_JSON = "run.json"
#: ``run.json``'s status once the run is complete
COMPLETE = "complete"
#: the status of the marker an in-place run writes before its first table
INCOMPLETE = "incomplete"

#: the values of the ``commit`` option
COMMIT_MODES = ("auto", "rename", "in-place")


def unfinished(run_dir: str, text: Optional[str]) -> Optional[str]:
    """Why the run directory ``run_dir`` is not a finished run, given the
    text of its ``run.json`` (``None``: there is none) — one sentence — or
    ``None`` when it is finished."""
    if text is None:
        return f"{run_dir} has no {RUN_JSON}: it is not a finished qarla run"
    try:
        info = json.loads(text)
    except ValueError:
        return (f"{run_dir}/{RUN_JSON} is not valid JSON: the run is unfinished or damaged, "
                "not a result")
    status = info.get("status") if isinstance(info, dict) else None
    if status != COMPLETE:
        return (f"{run_dir} is not a finished qarla run: its {RUN_JSON} says status "
                f"{status!r}, not 'complete' (the run failed, was interrupted or is still "
                "being written)")
    return None


# ------------------------------------------------------------ QARLA, statistics

class QarlaWarning(UserWarning):
    """Work a stage leaves out and says so: topics QARLA skips (too few
    models, no peer), a report that could not be drawn."""


#: why a topic is left out of QARLA's measures (``qarla run``'s warnings,
#: ``problems/``, the report)
SKIP_REASONS = {
    "queen": f"with fewer than {MIN_MODELS_QUEEN} models (no QUEEN, KING, JACK)",
    "king": f"with {MIN_MODELS_QUEEN} models or no peer (QUEEN and JACK only; "
            "no KING, ORANGE, held-out scores)",
}

#: the measure name of HBR (``auc/``, ``auc_ci/``, ``comparisons/``,
#: ``metric_eval/``, ``across/``) and the score of its correlations
#: (``correlation_ci/``)
HBR = "HBR"
#: the score of QARLA's measure (``orange/``, ``correlation_ci/``); a set's
#: QUEEN as a measure is :func:`queen_of`
QUEEN = "QUEEN"
#: the measure (or metric set) name of the chance baselines' rows
#: (``metric_eval/``, ``king_ci/``)
CHANCE = "chance"
#: the measure name of the human ceiling's rows of ``metric_eval/`` (each
#: rater against the mean of the others; issue 39)
HUMAN = "human"
#: the ``unit`` of the intervals that draw the raters as well as the topics
#: (``correlation_ci/``, ``metric_eval/``; issue 39)
RATERS = "raters"


def queen_of(label: str) -> str:
    """The measure name of QUEEN of the metric set ``label`` (``human_test/``,
    ``metric_eval/``, ``across/``, the report): ``QUEEN(<label>)``; read back
    by :func:`queen_set`."""
    return f"{QUEEN}({label})"


def queen_set(measure: str) -> Optional[str]:
    """The metric set of a :func:`queen_of` name (``"QUEEN(R-1.a,AVLS)"`` →
    ``"R-1.a,AVLS"``); None for any other measure name."""
    head = f"{QUEEN}("
    if isinstance(measure, str) and measure.startswith(head) and measure.endswith(")"):
        return measure[len(head):-1]
    return None


#: the ``family`` values of ``comparisons/``: which pairs a paired test
#: compares (SPEC, "Is the difference real?")
FAMILIES = {
    "best_single": "best set vs best single metric",
    "representative": "best set vs each representative",
    "subset": "best set vs every other subset of the representatives",
    "hbr_best": "HBR vs best single measure",
    "hbr_median": "HBR vs median single measure",
}


# ------------------------------------------------------------ Spark

#: the Spark local property naming the qarla stage a job belongs to (set by
#: the run on the threads that start jobs; carried by each job's start event,
#: read by :mod:`qarla_spark.eventlog`)
STAGE_PROPERTY = "qarla.stage"
#: the stage name of the job that starts the Python workers while the
#: session starts (:mod:`qarla_spark.spark.warmup`), before the run's stages
WARM_STAGE = "starting workers"
