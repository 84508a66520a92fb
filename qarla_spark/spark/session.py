"""The one place that builds the SparkSession, from a profile in ``conf/``.

Precedence, highest first:

1. settings already given to Spark from outside: ``spark-submit --master
   ... --conf k=v --properties-file F`` (the JVM is up before Python runs);
2. ``master`` and ``conf`` passed here (``qarla --master``, ``--conf``);
3. the profile file (``conf/local.conf`` by default, spark-defaults format).

In local mode the driver is bound to loopback (``SPARK_LOCAL_IP=127.0.0.1``)
and Spark's logging is quieted with ``conf/log4j2.properties``.
"""

from __future__ import annotations

import logging
import os
import sys
from importlib import resources
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

from qarla_spark.errors import ConfigError
from qarla_spark.spark.java import check_java

PROFILES = ("local", "cluster")


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


def parse_conf_pairs(pairs) -> Dict[str, str]:
    """``["k=v", ...]`` (the ``--conf`` option) to a dict."""
    out: Dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--conf expects KEY=VALUE, found {pair!r}")
        out[key.strip()] = value
    return out


def _log4j_option() -> str:
    path = _conf_dir() / "log4j2.properties"
    return f"-Dlog4j2.configurationFile=file:{Path(str(path)).resolve()}"


def resolve_settings(profile: str, master: Optional[str],
                     conf: Optional[Mapping[str, str]],
                     external: Mapping[str, str]) -> Dict[str, str]:
    """The settings to give Spark (pure: testable without Spark).

    ``external`` are settings Spark already has (spark-submit); they are
    never overridden, so they are not in the result.
    """
    wanted = dict(read_profile(profile))
    wanted.update(conf or {})
    if master:
        wanted["spark.master"] = master
    wanted.setdefault("spark.master", "local[*]")
    log_opt = _log4j_option()
    extra = wanted.get("spark.driver.extraJavaOptions", "")
    if "log4j2.configurationFile" not in extra:
        wanted["spark.driver.extraJavaOptions"] = (extra + " " + log_opt).strip()
    return {k: v for k, v in wanted.items() if k not in external}


def build_session(profile: str = "local", master: Optional[str] = None,
                  conf: Optional[Mapping[str, str]] = None, verbose: bool = False):
    """Create (or return the active) SparkSession for qarla_spark."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active

    external: Dict[str, str] = {}
    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ  # launched by spark-submit
    if under_submit:
        SparkContext._ensure_initialized()
        external = dict(SparkConf().getAll())
    else:
        check_java()
    settings = resolve_settings(profile, master, conf, external)
    effective_master = external.get("spark.master", settings.get("spark.master", ""))
    if effective_master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # Python workers run on this machine: use this interpreter (and its
        # packages), not whatever `python3` is first on the PATH.
        if not (os.environ.get("PYSPARK_PYTHON") or "spark.pyspark.python" in external
                or "spark.pyspark.python" in settings):
            os.environ["PYSPARK_PYTHON"] = sys.executable

    spark_conf = SparkConf()
    for key, value in settings.items():
        spark_conf.set(key, value)
    spark = SparkSession.builder.config(conf=spark_conf).getOrCreate()
    spark.sparkContext.setLogLevel("INFO" if verbose else "ERROR")
    if not verbose:
        # PySpark logs analysis errors as JSON to stderr before raising them;
        # qarla reports its errors itself.
        logging.getLogger("DataFrameQueryContextLogger").setLevel(logging.CRITICAL)
    return spark


def session_info(spark) -> Tuple[str, str, int]:
    """(Spark version, master, default parallelism) for run.json."""
    sc = spark.sparkContext
    return spark.version, sc.master, sc.defaultParallelism
