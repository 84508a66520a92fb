"""The one place that builds the SparkSession (its settings:
:mod:`qarla_spark.spark.profiles`), starts the JVM and ends it.

In local mode the driver is bound to loopback (``SPARK_LOCAL_IP=127.0.0.1``)
and Spark's logging is quieted with ``conf/log4j2.properties``.

Interrupts: :mod:`qarla_spark.spark.interrupts` (the JVM is started here in
a session of its own so that they can be handled there).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from typing import Dict, Mapping, Optional, Tuple

from qarla_spark.spark import class_archive
from qarla_spark.spark.java import check_java, find_java
from qarla_spark.spark.profiles import SHUFFLE_PARTITIONS, resolve_settings

def check_can_start() -> None:
    """Java is there when this process will have to start a JVM (not under
    spark-submit, no session yet): said before anything else is done."""
    from pyspark.sql import SparkSession
    if SparkSession.getActiveSession() is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        check_java()


def _start_off_main(start):
    """Call ``start`` (the JVM, the SparkContext) on a thread of its own and
    wait for it. Off the main thread PySpark's SparkContext installs no
    SIGINT handler of its own (that handler calls the JVM from inside a
    py4j call and prints a traceback); a Ctrl-C ends the wait at once, and
    the JVM, once its process exists, is ended (:func:`end_after_interrupt`,
    or the starting thread itself, see :func:`_launch_gateway`)."""
    global _STARTER
    if threading.current_thread() is not threading.main_thread():
        return start()
    outcome: Dict[str, object] = {}
    done = threading.Event()

    def run():
        try:
            outcome["value"] = start()
        except BaseException as exc:   # handed to the waiting thread
            outcome["error"] = exc
        finally:
            done.set()

    _ABANDONED.clear()
    _STARTER = (threading.Thread(target=run, name="qarla-spark-start", daemon=True), done)
    _STARTER[0].start()
    try:
        # an Event, not Thread.join: before Python 3.13 a join cut short by
        # an exception from a signal handler can mark the thread as ended
        done.wait()
    except BaseException:
        _ABANDONED.set()
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


_STARTER: Optional[Tuple[threading.Thread, threading.Event]] = None
_ABANDONED = threading.Event()


def build_session(profile: str = "local", master: Optional[str] = None,
                  conf: Optional[Mapping[str, str]] = None, verbose: bool = False,
                  summaries: Optional[int] = None, warm: bool = True):
    """Create (or return the active) SparkSession for qarla_spark
    (``summaries``: the testbed's size, when known, see
    :func:`resolve_settings`; ``warm``: start every core's Python worker in
    the background, :mod:`qarla_spark.spark.warmup` — not for a command
    that only reads)."""
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
    settings = resolve_settings(profile, master, conf, external, summaries)
    effective_master = external.get("spark.master", settings.get("spark.master", ""))
    if effective_master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # Python workers run on this machine: use this interpreter (and its
        # packages), not whatever `python3` is first on the PATH.
        if not (os.environ.get("PYSPARK_PYTHON") or "spark.pyspark.python" in external
                or "spark.pyspark.python" in settings):
            os.environ["PYSPARK_PYTHON"] = sys.executable

    archive = class_archive.Plan("")
    if not under_submit and SparkContext._gateway is None:
        # this process starts the JVM: map the setup's class archive, or
        # have the JVM write it when it ends (qarla_spark.spark.class_archive)
        options = settings.get("spark.driver.extraJavaOptions", "")
        archive = class_archive.for_launch(
            find_java(), f"{settings.get('spark.driver.defaultJavaOptions', '')} {options}")
        if archive.options:
            settings["spark.driver.extraJavaOptions"] = f"{options} {archive.options}".strip()
    spark_conf = SparkConf()
    for key, value in settings.items():
        spark_conf.set(key, value)

    def start():
        if not under_submit and SparkContext._gateway is None:
            SparkContext._ensure_initialized(gateway=_launch_gateway(spark_conf, archive))
        return SparkSession.builder.config(conf=spark_conf).getOrCreate()

    spark = _start_off_main(start)
    if SHUFFLE_PARTITIONS not in settings and SHUFFLE_PARTITIONS not in external:
        # the plan follows the cores: as many shuffle partitions as per-topic
        # partitions (two per core), not a number fixed for one machine
        from qarla_spark.spark.partitioning import SHUFFLE_FOLLOWS_CONF, topic_partitions
        spark.conf.set(SHUFFLE_PARTITIONS, str(topic_partitions(spark)))
        spark.conf.set(SHUFFLE_FOLLOWS_CONF, "true")
    if not effective_master.startswith("local"):
        # executors may not have qarla_spark installed: ship it (not when
        # spark-submit --py-files already does)
        from qarla_spark.spark.packaging import ship
        ship(spark)
    # Spark's own ERROR lines (a failed task's Java stack, once per attempt)
    # repeat what the driver receives as an exception, which the qarla
    # command says in one sentence (qarla_spark.errors.executor_failure)
    spark.sparkContext.setLogLevel("INFO" if verbose else "FATAL")
    if not verbose:
        # PySpark logs analysis errors as JSON to stderr before raising them;
        # qarla reports its errors itself.
        logging.getLogger("DataFrameQueryContextLogger").setLevel(logging.CRITICAL)
    # the Python workers start while the driver starts the run (in the
    # background; once per application)
    if warm:
        from qarla_spark.spark.warmup import warm_workers
        warm_workers(spark)
    return spark


class _ErrorCopier:
    """Copies the JVM's standard error (its own lines and those of Spark's
    Python workers) to file descriptor 2 as it comes, until muted."""

    def __init__(self, stream):
        self.stream = stream
        self.muted = threading.Event()
        self.thread = threading.Thread(target=self._copy, name="qarla-jvm-stderr", daemon=True)
        self.thread.start()

    def _copy(self) -> None:
        read = getattr(self.stream, "read1", self.stream.read)
        while True:
            try:
                chunk = read(65536)
            except Exception:
                return
            if not chunk:
                return
            if not self.muted.is_set():
                try:
                    os.write(2, chunk)
                except OSError:
                    pass   # keep reading: a JVM writing to a full pipe would block


_COPIER: Optional[_ErrorCopier] = None


def _launch_gateway(spark_conf, archive: class_archive.Plan = class_archive.Plan("")):
    """Start the JVM as PySpark does, in its own session, its standard error
    copied by an :class:`_ErrorCopier` (see the module's docstring); when
    ``archive`` has the JVM write a class archive, it is waited for at exit."""
    global _COPIER, _PROC
    from pyspark.java_gateway import launch_gateway
    if _ABANDONED.is_set():
        raise KeyboardInterrupt
    gateway = launch_gateway(spark_conf, popen_kwargs={"start_new_session": True,
                                                       "stderr": subprocess.PIPE})
    _COPIER = _ErrorCopier(gateway.proc.stderr)
    _PROC = gateway.proc
    class_archive.finish_at_exit(archive, gateway.proc, stop=_stop_context)
    if _ABANDONED.is_set():   # interrupted while the JVM started
        from qarla_spark.spark.interrupts import end_after_interrupt
        end_after_interrupt()
        raise KeyboardInterrupt
    return gateway


def _stop_context() -> None:
    """Stop the active SparkContext, if any (its accumulator server first:
    it would report the JVM's end as an error)."""
    from pyspark import SparkContext
    sc = SparkContext._active_spark_context
    if sc is not None:
        sc.stop()


def jvm_process():
    """The ``Popen`` of the JVM this process started (``None`` under
    spark-submit or before Spark starts)."""
    from pyspark import SparkContext
    return getattr(SparkContext._gateway, "proc", None) or _PROC


_PROC: Optional[subprocess.Popen] = None


def session_info(spark) -> Tuple[str, str, int]:
    """(Spark version, master, default parallelism) for run.json."""
    sc = spark.sparkContext
    return spark.version, sc.master, sc.defaultParallelism
