"""Run configuration: one dataclass, filled from a TOML file and/or the
command line (the command line wins), validated before Spark starts.

Keys of a TOML run file (all optional; ``conf/summeval.toml`` is an example):

``inputs``     list of summary inputs (``PATH`` or ``TASK=PATH``); empty: the
               bundled SummEval testbed
``judgments``  list of judgment files/folders
``sources``    list of source-document files/folders
``task``       task name for records that carry none
``out``        the run directory to write
``overwrite``  replace an existing run directory
``seed``       the seed of every random choice (recorded in run.json)
``profile``    Spark profile: ``local``, ``cluster`` or a spark-defaults file
``master``     Spark master (overrides the profile)
``spark_conf`` table of extra Spark settings
``problem_limit``  how many problems of each severity to show
``metrics``    metrics to compute: names, patterns (``R-*.a``) or groups
               (``default``, ``rouge``, ``F``, ``all``); empty: the default 59
``user_metrics``   tables of user metric values (long schema), added as metrics
``metric_plugins`` Python files that register metric functions on import
``tagger``     part-of-speech tagger of GRAMSIM (``pattern`` or ``spacy``)
``stages``     the stages to run, in order (default: all of them)
``similarities``   reuse this similarity table (Parquet) instead of computing it
``metric_sets``    metric sets to evaluate explicitly, each "name,name,..."
``clusters``   number of metric clusters (default 10)
``triples``    QUEEN triples: ``standard`` or ``distinct``
``jack_orders``    random orders of the systems averaged in the JACK curve
``hbr_pairs``  same-topic pairs sampled to estimate heterogeneity (default 10,000)
``hbr_exact``  estimate heterogeneity on all pairs instead
``hbr_measures``   HBR's measures: names or patterns (default: R, Rpre, F and
               user metrics of the similarity table)
``hbr_models`` also score (and rank) the models, each against the others
``hbr_aggregate``  a summary's score over the models: ``mean`` or ``max``
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Dict, Mapping, Optional, Tuple

from qarla_spark.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

DEFAULT_SEED = 13
DEFAULT_OUT = "runs/latest"
#: stages of a run, in order (each writes the tables named in pipeline.py)
STAGES = ("testbed", "similarities", "qarla", "hbr")


@dataclass(frozen=True)
class RunConfig:
    inputs: Tuple[str, ...] = ()
    judgments: Tuple[str, ...] = ()
    sources: Tuple[str, ...] = ()
    task: Optional[str] = None
    out: str = DEFAULT_OUT
    overwrite: bool = False
    seed: int = DEFAULT_SEED
    profile: str = "local"
    master: Optional[str] = None
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    problem_limit: int = 50
    metrics: Tuple[str, ...] = ()
    user_metrics: Tuple[str, ...] = ()
    metric_plugins: Tuple[str, ...] = ()
    tagger: str = "pattern"
    stages: Tuple[str, ...] = STAGES
    similarities: Optional[str] = None
    metric_sets: Tuple[str, ...] = ()
    clusters: int = 10
    triples: str = "standard"
    jack_orders: int = 20
    hbr_pairs: int = 10_000
    hbr_exact: bool = False
    hbr_measures: Tuple[str, ...] = ()
    hbr_models: bool = False
    hbr_aggregate: str = "mean"

    def __post_init__(self):
        if isinstance(self.metrics, str):
            object.__setattr__(self, "metrics", (self.metrics,))
        for name in ("inputs", "judgments", "sources", "metrics", "user_metrics",
                     "metric_plugins", "stages", "metric_sets", "hbr_measures"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                raise ConfigError(f"'{name}' must be a list of paths, found {value!r}")
            object.__setattr__(self, name, tuple(value))
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ConfigError(f"'seed' must be a non-negative integer, found {self.seed!r}")
        if not isinstance(self.out, str) or not self.out.strip():
            raise ConfigError("'out' (the run directory) must be a non-empty path")
        if not isinstance(self.problem_limit, int) or self.problem_limit < 1:
            raise ConfigError(f"'problem_limit' must be a positive integer, found "
                              f"{self.problem_limit!r}")
        if self.task is not None and (not isinstance(self.task, str) or not self.task.strip()):
            raise ConfigError(f"'task' must be a non-empty name, found {self.task!r}")
        if not isinstance(self.spark_conf, Mapping):
            raise ConfigError("'spark_conf' must be a table of Spark settings")
        object.__setattr__(self, "spark_conf",
                           {str(k): str(v) for k, v in dict(self.spark_conf).items()})
        bad = [s for s in self.stages if s not in STAGES]
        if bad or not self.stages:
            raise ConfigError(f"'stages' must name some of {', '.join(STAGES)}, found "
                              f"{list(self.stages)!r}")
        if self.triples not in ("standard", "distinct"):
            raise ConfigError(f"'triples' must be standard or distinct, found {self.triples!r}")
        for name in ("hbr_exact", "hbr_models", "overwrite"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"'{name}' must be true or false, found {getattr(self, name)!r}")
        if self.hbr_aggregate not in ("mean", "max"):
            raise ConfigError(f"'hbr_aggregate' must be mean or max, found {self.hbr_aggregate!r}")
        for name in ("clusters", "jack_orders", "hbr_pairs"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"'{name}' must be a positive integer, found {value!r}")
        if not isinstance(self.tagger, str) or not self.tagger:
            raise ConfigError(f"'tagger' must be a tagger name, found {self.tagger!r}")

    @property
    def uses_bundled(self) -> bool:
        return not self.inputs

    def to_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        for k in ("inputs", "judgments", "sources", "metrics", "user_metrics", "metric_plugins",
                  "stages", "metric_sets", "hbr_measures"):
            d[k] = list(d[k])
        d["spark_conf"] = dict(self.spark_conf)
        return d

    def updated(self, **changes: Any) -> "RunConfig":
        """A copy with the given (non-None) values replaced."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


KEYS = tuple(f.name for f in fields(RunConfig))


def load_config(path: str) -> RunConfig:
    """Read a TOML run file; unknown keys are errors naming the closest key."""
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"run configuration {path} not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    for key in data:
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigError(f"{path}: unknown key '{key}'{hint}; valid keys: {', '.join(KEYS)}")
    try:
        return RunConfig(**data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except TypeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
