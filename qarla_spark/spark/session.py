"""The one place that builds the SparkSession (its settings:
:mod:`qarla_spark.spark.profiles`), starts the JVM and ends it.

In local mode the driver is bound to loopback (``SPARK_LOCAL_IP=127.0.0.1``)
and Spark's logging is quieted with ``conf/log4j2.properties``.

Interrupts: :mod:`qarla_spark.spark.interrupts` (the JVM is started here in
a session of its own so that they can be handled there).

The JVM's standard error and output are held while Spark starts
(:class:`_ErrorCopier`): should it fail, its reason and the setting that
caused it are said in one message (:func:`start_failure`); Java's start-up
warning is dropped unless ``--verbose`` or ``--debug``.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from typing import Dict, List, Mapping, Optional, Tuple

from qarla_spark.spark import class_archive
from qarla_spark.spark import jvm
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

    jvm.ABANDONED.clear()
    jvm.STARTER = (threading.Thread(target=run, name="qarla-spark-start", daemon=True), done)
    jvm.STARTER[0].start()
    try:
        # an Event, not Thread.join: before Python 3.13 a join cut short by
        # an exception from a signal handler can mark the thread as ended
        done.wait()
    except BaseException:
        jvm.ABANDONED.set()
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]



def build_session(profile: str = "local", master: Optional[str] = None,
                  conf: Optional[Mapping[str, str]] = None, verbose: bool = False,
                  summaries: Optional[int] = None, warm: bool = True, debug: bool = False):
    """Create (or return the active) SparkSession for qarla_spark
    (``summaries``: the testbed's size, when known, see
    :func:`resolve_settings`; ``warm``: start every core's Python worker in
    the background, :mod:`qarla_spark.spark.warmup` — not for a command
    that only reads; ``debug``: ``--debug``, like ``verbose`` for the JVM's
    standard error). Spark failing to start raises
    :class:`~qarla_spark.errors.SparkStartError` (:func:`start_failure`)."""
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

    show_all = verbose or debug
    given = _given_settings(master, conf)

    def start():
        if not under_submit and SparkContext._gateway is None:
            try:
                gateway = _launch_gateway(spark_conf, archive, show_all)
            except _GatewayExited as exc:
                raise start_failure(jvm_reason(exc.stderr), given, settings) from None
            SparkContext._ensure_initialized(gateway=gateway)
        try:
            session = SparkSession.builder.config(conf=spark_conf).getOrCreate()
        except Exception as exc:
            if jvm.ABANDONED.is_set():
                raise
            error = start_failure(_java_reason(exc), given, settings)
            _end_failed_jvm()
            raise error from (exc if debug else None)
        for copier in jvm.COPIERS:
            copier.release()
        return session

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


#: the JVM's start-up lines that say nothing to a qarla user, dropped from
#: its standard error unless ``--verbose`` or ``--debug``
START_NOISE = (re.compile(r"^WARNING: Using incubator modules: "),)


class _ErrorCopier:
    """Copies the JVM's standard error (its own lines and those of Spark's
    Python workers) to file descriptor 2 (``target``; its standard output:
    1), line by line, until muted; reads it to its end, so the JVM never
    blocks on it.

    While Spark starts the lines are held (not with ``show_all``): should it
    fail, they hold the JVM's reason (:func:`start_failure`), said in one
    sentence instead; once it has started (:meth:`release`) they are copied,
    and every later line as it comes. Unless ``show_all`` (``--verbose``,
    ``--debug``), :data:`START_NOISE` is dropped."""

    def __init__(self, fd: int, show_all: bool = False, target: int = 2,
                 muted: Optional[threading.Event] = None):
        self.show_all = show_all
        self.target = target
        self.muted = muted or threading.Event()
        self._lock = threading.Lock()
        self._held: Optional[List[bytes]] = None if show_all else []
        self._stream = os.fdopen(fd, "rb", buffering=0)
        self.thread = threading.Thread(target=self._copy, name="qarla-jvm-stderr", daemon=True)
        self.thread.start()

    def _copy(self) -> None:
        partial = b""
        try:
            while True:
                try:
                    chunk = self._stream.read(65536)
                except Exception:
                    chunk = b""
                if not chunk:
                    break
                *lines, partial = (partial + chunk).split(b"\n")
                for line in lines:
                    self._line(line + b"\n")
            if partial:
                self._line(partial)
        finally:
            self._stream.close()

    def _line(self, line: bytes) -> None:
        with self._lock:
            if self._held is not None:
                self._held.append(line)
                return
        self._write(line)

    def _write(self, line: bytes) -> None:
        if self.muted.is_set() or (not self.show_all and _is_noise(line)):
            return
        try:
            os.write(self.target, line)
        except OSError:
            pass   # keep reading: a JVM writing to a full pipe would block

    def release(self) -> None:
        """Spark has started: copy the held lines, then every line as it comes."""
        with self._lock:
            held, self._held = self._held or [], None
            for line in held:    # under the lock: before any later line
                self._write(line)

    def held_text(self, wait: float) -> str:
        """The lines held so far, once the JVM's standard error has ended
        (waiting up to ``wait`` seconds for it: the JVM has exited)."""
        self.thread.join(wait)
        with self._lock:
            return b"".join(self._held or []).decode("utf-8", "replace")


def _is_noise(line: bytes) -> bool:
    text = line.decode("utf-8", "replace")
    return any(p.search(text) for p in START_NOISE)



def _launch_gateway(spark_conf, archive: class_archive.Plan = class_archive.Plan(""),
                    show_all: bool = False):
    """Start the JVM as PySpark does, in its own session, its standard error
    a pipe read by an :class:`_ErrorCopier` (see the module's docstring;
    ``show_all``: ``--verbose``/``--debug``, nothing held or dropped); when
    ``archive`` has the JVM write a class archive, it is waited for at exit.
    A JVM that exits before it answers raises :class:`_GatewayExited` with
    its standard error."""
    from pyspark.java_gateway import launch_gateway
    if jvm.ABANDONED.is_set():
        raise KeyboardInterrupt
    # the JVM's standard error and output (Java writes some of its reasons
    # for not starting there), each a pipe of its own
    err_read, err_write = os.pipe()
    out_read, out_write = os.pipe()
    err_copier = _ErrorCopier(err_read, show_all)
    out_copier = _ErrorCopier(out_read, show_all, target=1, muted=err_copier.muted)
    jvm.COPIERS[:] = [err_copier, out_copier]
    try:
        gateway = launch_gateway(spark_conf, popen_kwargs={
            "start_new_session": True, "stderr": err_write, "stdout": out_write})
    except Exception as exc:
        if "JAVA_GATEWAY_EXITED" not in str(exc):
            raise
        # the JVM has exited: its output ends (bounded, should a process of
        # its own still hold it)
        os.close(err_write)
        os.close(out_write)
        err_write = out_write = -1
        raise _GatewayExited(err_copier.held_text(wait=10.0)
                             + out_copier.held_text(wait=10.0)) from exc
    finally:
        for fd in (err_write, out_write):   # the JVM holds its own copies
            if fd >= 0:
                os.close(fd)
    jvm.PROC = gateway.proc
    class_archive.finish_at_exit(archive, gateway.proc, stop=_stop_context)
    if jvm.ABANDONED.is_set():   # interrupted while the JVM started
        from qarla_spark.spark.interrupts import end_after_interrupt
        end_after_interrupt()
        raise KeyboardInterrupt
    return gateway


class _GatewayExited(Exception):
    """The JVM exited before PySpark could talk to it; ``stderr``: what it
    wrote."""

    def __init__(self, stderr: str):
        super().__init__("Java gateway process exited before sending its port number")
        self.stderr = stderr


# --- Spark failing to start ---------------------------------------------------

#: what the JVM says around its reason for not starting
_BOILERPLATE = re.compile(
    r"^(Error: Could not create the Java Virtual Machine\.|Error: A fatal exception has occurred"
    r"|Error occurred during initialization of (VM|boot layer)|\s+at |\s*\.\.\. \d+ more"
    r"|Caused by: |Using Spark's default log4j profile|Setting default log level"
    r"|To adjust logging level|\d\d[:/]\d\d[:/]\d\d[ :])")
#: ``java.net.BindException: `` (and ``Exception in thread "main" ``) before a reason
_EXCEPTION_PREFIX = re.compile(
    r'^(?:Exception in thread "[^"]*" )?(?:[a-z_][\w$]*\.)+[A-Z][\w$]*: ')
#: the settings a reason points at, when it does not quote one's value
_POINTS_AT = (
    (re.compile(r"[Ee]xecutor memory|executor.*memory"), ("spark.executor.memory",)),
    (re.compile(r"[Dd]river memory|heap|-Xm[sx]|[Ii]nsufficient memory|OutOfMemory"),
     ("spark.driver.memory", "spark.driver.extraJavaOptions")),
    (re.compile(r"[Mm]aster"), ("spark.master",)),
    (re.compile(r"sparkDriver|bind|[Aa]ddress already in use|assign requested address"),
     ("spark.driver.port", "spark.driver.bindAddress", "spark.driver.host",
      "spark.port.maxRetries")),
    (re.compile(r"VM option|Unrecognized option|Java Virtual Machine|boot layer|"
                r"stack size|[Mm]odule .* not found"),
     ("spark.driver.extraJavaOptions", "spark.driver.defaultJavaOptions")),
)


def _given_settings(master: Optional[str], conf: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """The Spark settings the user gave (``--master``, ``--conf``, the run
    file's ``spark_conf``)."""
    given = {str(k): str(v) for k, v in (conf or {}).items()}
    if master:
        given["spark.master"] = master
    return given


def jvm_reason(stderr: str) -> str:
    """The JVM's (or spark-submit's) reason for not starting, from its
    standard error: its exception's message, or its first line that is not
    start-up noise or boilerplate (Java's "Could not create the Java Virtual
    Machine", stack frames, log lines)."""
    lines = [line.rstrip() for line in stderr.splitlines()]
    lines = [line for line in lines if line.strip() and not _is_noise(line.encode())]
    for line in lines:
        if _EXCEPTION_PREFIX.match(line):
            return _EXCEPTION_PREFIX.sub("", line)
    useful = [line.strip() for line in lines if not _BOILERPLATE.match(line)]
    if useful:
        return useful[0]
    return lines[-1].strip() if lines else "the JVM exited without saying why"


def _java_reason(exc: BaseException) -> str:
    """The reason of an error raised while the SparkContext was created:
    its Java exception's text when it has one (a Py4J error), else its own
    first line."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return _EXCEPTION_PREFIX.sub("", str(java.toString()).strip())
        except Exception:  # the JVM may be gone
            pass
    return _EXCEPTION_PREFIX.sub("", (str(exc).strip().splitlines() or [type(exc).__name__])[0])


def _culprits(reason: str, given: Mapping[str, str], settings: Mapping[str, str]):
    """(the given settings that caused ``reason``, the settings it points at
    that were not given): a given setting whose value or name the reason
    quotes, else the given settings of the kind the reason is about."""
    quoted = [k for k, v in given.items() if (len(v) > 1 and v in reason) or k in reason]
    if quoted:
        return quoted, []
    kinds = [keys for pattern, keys in _POINTS_AT if pattern.search(reason)]
    pointed = [k for keys in kinds for k in keys]
    chosen = [k for k in pointed if k in given]
    if chosen:
        return chosen, []
    return [], [k for k in pointed if k in settings][:1] or pointed[:1]


def start_failure(reason: str, given: Mapping[str, str], settings: Mapping[str, str]):
    """The :class:`~qarla_spark.errors.SparkStartError` for Spark failing to
    start with ``reason`` (the JVM's or Spark's own words), naming the
    setting that caused it (``given``: the user's settings, ``settings``:
    every setting qarla passed)."""
    from qarla_spark.errors import SparkStartError
    # (netty's words before Java's: "bind(..) failed with error(-98): ")
    reason = re.sub(r"^bind\(\.\.\) failed with error\(-?\d+\): ", "", reason.strip()).rstrip(".")
    if len(reason) > 300:
        reason = reason[:297] + "..."
    chosen, pointed = _culprits(reason, given, settings)
    if chosen:
        named = ", ".join(f"{k}={given[k]}" for k in chosen)
        fix = "change it" if len(chosen) == 1 else "change them"
        return SparkStartError(f"Spark cannot start with {named}: {reason}.\n"
                               f"{fix[0].upper()}{fix[1:]} (--master, --conf or the run file's "
                               "spark_conf) and run again; --debug shows Spark's own output.")
    about = f" (the setting involved: {pointed[0]})" if pointed else ""
    return SparkStartError(f"Spark cannot start{about}: {reason}.\n"
                           "Check the Spark settings (--master, --conf, --profile) and the "
                           "machine's free memory and ports; --debug shows Spark's own output.")


def _end_failed_jvm() -> None:
    """End the JVM this process started when its SparkContext could not be
    created (nothing of it is left, no class archive written from it)."""
    from pyspark import SparkContext

    from qarla_spark.spark.interrupts import end_jvm
    if jvm.PROC is None or jvm.PROC.poll() is not None:
        return
    end_jvm(grace=5.0)
    SparkContext._gateway = None
    SparkContext._jvm = None
    for copier in jvm.COPIERS:
        copier.thread.join(5.0)


def _stop_context() -> None:
    """Stop the active SparkContext, if any (its accumulator server first:
    it would report the JVM's end as an error)."""
    from pyspark import SparkContext
    sc = SparkContext._active_spark_context
    if sc is not None:
        sc.stop()


#: the JVM this process started (its state: :mod:`qarla_spark.spark.jvm`)
jvm_process = jvm.jvm_process


def session_info(spark) -> Tuple[str, str, int]:
    """(Spark version, master, default parallelism) for run.json."""
    sc = spark.sparkContext
    return spark.version, sc.master, sc.defaultParallelism
