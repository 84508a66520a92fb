"""A run's Spark settings: the profiles in ``conf/`` and how they combine.

Precedence, highest first:

1. settings already given to Spark from outside: ``spark-submit --master
   ... --conf k=v --properties-file F`` (the JVM is up before Python runs);
2. ``master`` and ``conf`` passed to the session
   (:func:`qarla_spark.spark.session.build_session`: ``qarla --master``,
   ``--conf``);
3. the profile file (``conf/local.conf`` by default, spark-defaults format).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Dict, Mapping, Optional

from qarla_spark.errors import ConfigError

PROFILES = ("local", "cluster")

#: Settings every run needs whatever its profile and master (a profile,
#: ``--conf`` or spark-submit setting wins). A run persists the frames it
#: reuses, and adaptive execution leaves the shuffle partitions of a cached
#: plan as they are unless allowed to coalesce them: on a cluster, Spark's
#: default of 200 shuffle partitions then made ~4,200 tasks of a run that
#: needs ~650 (docs/DECISIONS.md, "Shuffle partitions of cached plans").
#: Tables partitioned by task are written by one open file per task a Spark
#: task meets (up to 16, then Spark sorts the rest) instead of sorting every
#: row by task first: the similarity table's 4.1 M rows of SummEval were
#: sorted on one value (docs/DECISIONS.md, "Writing the similarity table").
LIBRARY_DEFAULTS = {"spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": "true",
                    "spark.sql.optimizer.plannedWrite.enabled": "false",
                    "spark.sql.maxConcurrentOutputFileWriters": "16"}


#: Spark's setting of the partitions of a shuffle (set from the cores unless
#: given)
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


def _conf_dir():
    return resources.files("qarla_spark.conf")


def profile_path(profile: str):
    """A profile name (``local``, ``cluster``) or a path to a
    spark-defaults-style file."""
    if profile in PROFILES:
        return _conf_dir() / f"{profile}.conf"
    path = Path(profile)
    if not path.is_file():
        raise ConfigError(f"Spark profile '{profile}' is neither one of {', '.join(PROFILES)} "
                          "nor an existing file (spark-defaults format: 'key value' per line)")
    return path


def read_profile(profile: str) -> Dict[str, str]:
    """Parse a spark-defaults-format file: ``key value`` (or ``key=value``)
    per line, ``#`` comments, blank lines ignored."""
    path = profile_path(profile)
    settings: Dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1) if "=" not in line.split(None, 1)[0] else line.split("=", 1)
        if len(parts) != 2 or not parts[1].strip():
            raise ConfigError(f"{path}, line {number}: expected 'key value', found {raw!r}")
        settings[parts[0].strip()] = parts[1].strip()
    return settings


def _log4j_option() -> str:
    path = _conf_dir() / "log4j2.properties"
    return f"-Dlog4j2.configurationFile=file:{Path(str(path)).resolve()}"


#: qarla_spark's own profile keys (Spark ignores them): the Java options of
#: the driver and of the executors for a testbed of at most
#: ``SMALL_SUMMARIES`` summaries, used instead of Spark's
#: ``spark.{driver,executor}.defaultJavaOptions`` when the summaries are
#: counted before Spark starts (``qarla run`` and ``jobs/qarla_run.py`` on
#: small local inputs; DECISIONS.md "The JVM's flags and class archive")
SMALL_JAVA_OPTIONS = "spark.qarla.smallTestbed.driverJavaOptions"
SMALL_EXECUTOR_OPTIONS = "spark.qarla.smallTestbed.executorJavaOptions"
SMALL_SUMMARIES = "spark.qarla.smallTestbed.maxSummaries"
#: which of Spark's settings each of them replaces
SMALL_REPLACES = {SMALL_JAVA_OPTIONS: "spark.driver.defaultJavaOptions",
                  SMALL_EXECUTOR_OPTIONS: "spark.executor.defaultJavaOptions"}


def small_testbed_settings(declared: Mapping[str, str], given: Mapping[str, str],
                           summaries: Optional[int]) -> Dict[str, str]:
    """Spark's default Java options (driver's, executors') for a small
    testbed: those ``declared`` (the profile, ``--conf``, spark-submit's
    properties) when ``summaries`` is known and at most the declared bound,
    except where ``given`` (qarla's ``--conf``, the run file's
    ``spark_conf``) sets Spark's key itself."""
    wanted = {spark_key: declared[key] for key, spark_key in SMALL_REPLACES.items()
              if declared.get(key) and spark_key not in given}
    if summaries is None or not wanted:
        return {}
    bound = declared.get(SMALL_SUMMARIES, "0")
    try:
        limit = int(bound)
    except ValueError:
        raise ConfigError(f"{SMALL_SUMMARIES} must be a whole number of summaries, "
                          f"not {bound!r}") from None
    return wanted if summaries <= limit else {}


def resolve_settings(profile: str, master: Optional[str],
                     conf: Optional[Mapping[str, str]],
                     external: Mapping[str, str],
                     summaries: Optional[int] = None) -> Dict[str, str]:
    """The settings to give Spark (pure: testable without Spark).

    ``summaries``: the testbed's size when it is known before Spark starts;
    a testbed of at most ``spark.qarla.smallTestbed.maxSummaries`` summaries
    gets the Java options ``spark.qarla.smallTestbed.driverJavaOptions`` and
    ``...executorJavaOptions`` where they are declared (the profiles: C1
    only, DECISIONS.md "The JVM's flags and class archive"), unless ``conf``
    sets Spark's ``spark.driver/executor.defaultJavaOptions`` itself.

    ``external`` are settings Spark already has (spark-submit); they are
    never overridden, so they are not in the result, with one exception:
    the executors' small-testbed options, declared in spark-submit's
    properties, replace its ``spark.executor.defaultJavaOptions`` (executors
    start after the session; the driver's JVM already runs).

    The ``local`` profile (the default) is for ``local[...]`` masters only:
    when the master (spark-submit's, ``master`` or ``conf``'s) is not local,
    none of its settings is applied (its loopback driver address, disabled
    UI and driver memory would break or mislead a cluster run); the
    ``cluster`` profile or a profile file still is.
    """
    given = external.get("spark.master") or master or (conf or {}).get("spark.master")
    on_cluster = bool(given) and not given.startswith("local")
    wanted = {} if (profile == "local" and on_cluster) else dict(read_profile(profile))
    wanted.update(conf or {})
    if master:
        wanted["spark.master"] = master
    wanted.setdefault("spark.master", "local[*]")
    for key, value in LIBRARY_DEFAULTS.items():
        wanted.setdefault(key, value)
    # (spark-submit's own properties win over the profile and --conf here too)
    small = small_testbed_settings({**wanted, **external}, conf or {}, summaries)
    wanted.update(small)
    log_opt = _log4j_option()
    extra = wanted.get("spark.driver.extraJavaOptions", "")
    if "log4j2.configurationFile" not in extra:
        wanted["spark.driver.extraJavaOptions"] = (extra + " " + log_opt).strip()
    # the executors start after the session: their small-testbed options
    # replace spark-submit's default ones (the driver's JVM runs already)
    return {k: v for k, v in wanted.items()
            if k not in external or (k == "spark.executor.defaultJavaOptions" and k in small)}
