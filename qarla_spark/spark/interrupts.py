"""Interrupts, in one place: SIGINT (Ctrl-C) and SIGTERM end a run with one
line, Spark's jobs cancelled, the run's staging folder removed and the JVM
ended within seconds.

When :mod:`qarla_spark.spark.session` starts the JVM (not under
spark-submit) it starts it in a session of its own (what it records of the
JVM's process: :mod:`qarla_spark.spark.jvm`, read here), with its standard
error read by a thread that copies it to ours: Ctrl-C in a terminal (SIGINT to the
foreground process group) then reaches only the Python driver, not the JVM
nor Spark's Python workers (which print a traceback each on SIGINT), and
once the run is interrupted :func:`end_after_interrupt` mutes what the JVM
and its workers still say and ends the JVM within seconds. A driver killed
outright still takes the JVM with it: the JVM exits when its standard input
(a pipe from the driver) closes.

What happens, in order: the handler (:func:`handle_signals`, installed by
the launcher) mutes what may still speak and raises :class:`Interrupted` in
the main thread; the pipeline cancels Spark's jobs
(:func:`cancel_after_interrupt`) and removes its staging folder; the
launcher ends the JVM and says one line (:func:`end_interrupted`), then the
:func:`after_jvm_end` callbacks run.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, List

from qarla_spark.spark import jvm


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived (``signum`` says which)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


#: the signal received (``received``) and what :func:`_on_signal` replaced
_SIGNALS: dict = {"received": None}


def reset() -> None:
    """A command starts: no signal received yet."""
    _SIGNALS.update(received=None, stderr=None, excepthook=None)


def received():
    """The signal received since :func:`reset`, or None."""
    return _SIGNALS["received"]


class _Mute:
    """Where Python's standard error goes once a run is interrupted: threads
    of PySpark (its accumulator server) and py4j print tracebacks when the
    JVM goes away."""

    def write(self, text):
        return len(text)

    def flush(self):
        pass


def _on_signal(signum, frame):
    """The first SIGINT/SIGTERM interrupts the main thread, and from then on
    only qarla speaks; later signals are ignored while the run ends (which
    takes seconds)."""
    if _SIGNALS["received"] is None:
        _SIGNALS["received"] = signum
        _SIGNALS["stderr"], _SIGNALS["excepthook"] = sys.stderr, threading.excepthook
        quiet_after_interrupt()
        sys.stderr = _Mute()
        threading.excepthook = lambda args: None
        raise Interrupted(signum)


def handle_signals() -> None:
    """SIGINT and SIGTERM interrupt the main thread (:func:`_on_signal`);
    installed again after PySpark, which installs its own."""
    if threading_main():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _on_signal)


def end_interrupted(exc: KeyboardInterrupt) -> int:
    """End the JVM, say one line, and give the exit status (130 for SIGINT,
    143 for SIGTERM)."""
    if threading_main():   # a second signal changes nothing now
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)
    end_after_interrupt()
    signum = getattr(exc, "signum", signal.SIGINT)
    print("qarla: terminated" if signum == signal.SIGTERM else "qarla: interrupted",
          file=_SIGNALS.get("stderr") or sys.stderr, flush=True)
    return 128 + int(signum)


def threading_main() -> bool:
    return threading.current_thread() is threading.main_thread()


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
    for copier in jvm.COPIERS:
        copier.muted.set()
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
        end_jvm(grace)
    finally:
        _run_after_end()


def end_jvm(grace: float) -> None:
    """End the JVM this process started: SIGTERM to its process group,
    SIGKILL after ``grace`` seconds (a JVM still starting on another
    thread is waited for first)."""
    proc = jvm.jvm_process()
    starter = jvm.STARTER
    if proc is None and starter is not None and starter[0] is not threading.current_thread():
        # the JVM may be starting: the starting thread ends it once it exists
        starter[1].wait(grace + 8.0)
        proc = jvm.jvm_process()
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
