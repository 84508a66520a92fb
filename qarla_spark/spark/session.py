"""The one place that builds the SparkSession (its settings:
:mod:`qarla_spark.spark.profiles`), starts the JVM and ends it.

In local mode the driver is bound to loopback (``SPARK_LOCAL_IP=127.0.0.1``)
and Spark's logging is quieted with ``conf/log4j2.properties``.

Interrupts (issue 12). When this module starts the JVM (not under
spark-submit) it starts it in a session of its own, with its standard error
read by a thread that copies it to ours: Ctrl-C in a terminal (SIGINT to the
foreground process group) then reaches only the Python driver, not the JVM
nor Spark's Python workers (which print a traceback each on SIGINT), and
once the run is interrupted :func:`end_after_interrupt` mutes what the JVM
and its workers still say and ends the JVM within seconds. A driver killed
outright still takes the JVM with it: the JVM exits when its standard input
(a pipe from the driver) closes.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Dict, List, Mapping, Optional, Tuple

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


def _detach_py4j_connection() -> None:
    """Drop this thread's py4j connection: a call cut short by an interrupt
    leaves its answer unread there, and the next call would read it."""
    from pyspark import SparkContext
    client = getattr(SparkContext._gateway, "_gateway_client", None)
    get = getattr(client, "get_thread_connection", None)
    if get is None:
        return
    try:
        connection = get()
        if connection is not None:
            connection.close(reset=True)
    except Exception:
        pass


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is a ``KeyboardInterrupt`` or was raised while one
    was being handled (py4j, cleaning up a call cut short by Ctrl-C, can
    fail with an ``OSError`` of its own)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__context__ or exc.__cause__
    return False


def cancel_after_interrupt(spark, then=None, wait: float = 1.5) -> None:
    """After an interrupt in this (the main) thread: cancel every Spark job,
    wait up to ``wait`` seconds for them to end, then call ``then`` (e.g.
    remove a run's staging folder). Talks to Spark from a new thread (on a
    new py4j connection); returns within ``wait + 1`` seconds."""
    _detach_py4j_connection()

    def go():
        try:
            sc = spark.sparkContext
            sc.cancelAllJobs()
            deadline = time.time() + wait
            while time.time() < deadline and (sc.statusTracker().getActiveJobsIds()
                                              or sc.statusTracker().getActiveStageIds()):
                time.sleep(0.1)
        except Exception:
            pass
        if then is not None:
            try:
                then()
            except Exception:
                pass

    worker = threading.Thread(target=go, name="qarla-cancel", daemon=True)
    worker.start()
    worker.join(wait + 1.0)


def _not_an_interrupt(record: logging.LogRecord) -> bool:
    """py4j logs, on the root logger and with a traceback, the
    KeyboardInterrupt that cut one of its calls short and the broken
    connection of a call the ended JVM no longer answers."""
    if record.exc_info and isinstance(record.exc_info[1], KeyboardInterrupt):
        return False
    return os.path.basename(os.path.dirname(record.pathname)) not in ("py4j", "pyspark")


def quiet_after_interrupt() -> None:
    """Silence what may still speak once a run is interrupted: the JVM's and
    its workers' standard error, py4j's and PySpark's loggers, py4j's report
    of the interrupted call. Safe in a signal handler (no call to Spark)."""
    if _COPIER is not None:
        _COPIER.muted.set()
    for name in ("py4j", "pyspark"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    logging.getLogger().addFilter(_not_an_interrupt)


#: what to do once the JVM of an interrupted run has ended
#: (:func:`after_jvm_end`)
_AFTER_END: List[Callable[[], None]] = []


def after_jvm_end(callback: Callable[[], None]) -> None:
    """Call ``callback`` (no Spark in it) once :func:`end_after_interrupt`
    has ended the JVM: a Spark job that began between the cancel and the
    JVM's end may still have written files (e.g. a table's ``_temporary/``
    in a staging folder already removed)."""
    _AFTER_END.append(callback)


def _run_after_end() -> None:
    while _AFTER_END:
        callback = _AFTER_END.pop(0)
        try:
            callback()
        except Exception:  # best effort, like the rest of the clean-up
            pass


def end_after_interrupt(grace: float = 1.5) -> None:
    """End the JVM this process started (a run was interrupted): quiet it,
    ask it to stop (SIGTERM: Spark's shutdown hooks run), and kill it if it
    still runs after ``grace`` seconds; then the :func:`after_jvm_end`
    callbacks. Under spark-submit, or before Spark started, only quiets
    (and calls them)."""
    quiet_after_interrupt()
    try:
        _end_jvm(grace)
    finally:
        _run_after_end()


def _end_jvm(grace: float) -> None:
    proc = jvm_process()
    if proc is None and _STARTER is not None and _STARTER[0] is not threading.current_thread():
        # the JVM may be starting: the starting thread ends it once it exists
        _STARTER[1].wait(grace + 8.0)
        proc = jvm_process()
    if proc is None or proc.poll() is not None:
        return
    # the JVM leads a process group of its own (start_new_session): signal
    # the group, so that spark-class's launcher JVM, before it execs the
    # driver's, and Spark's Python workers end with it
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(proc, signal.SIGKILL)
    try:
        proc.wait(2.0)
    except subprocess.TimeoutExpired:
        pass


def _signal_group(proc: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(proc.pid, signum)
    except OSError:   # nothing left in the group
        pass


def session_info(spark) -> Tuple[str, str, int]:
    """(Spark version, master, default parallelism) for run.json."""
    sc = spark.sparkContext
    return spark.version, sc.master, sc.defaultParallelism
