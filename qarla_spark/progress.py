"""What a run says while it runs: the testbed description first, then one
line per stage as it starts and as it ends (with its time), and on a
terminal a live line for the long stages.

The pipeline only *calls* a :class:`Progress` (``testbed``,
``stage_started``, ``stage_finished``); it never prints. Library use and
tests get :class:`NullProgress`; ``qarla run`` gives a
:class:`TerminalProgress` (``--quiet``: a ``NullProgress``).

Where the text goes: the testbed description to ``stdout`` (it is part of
what the run reports; the final summary then leaves it out), the stage
lines and the live line to ``stderr``. On a terminal the live line, redrawn
in place (``\\r``) twice a second by a daemon thread, says how far Spark
is: the jobs the stage has finished and, of the Spark stages running, the
tasks done over their total (``sparkContext.statusTracker()``). When
``stderr`` is not a terminal (CI, a log file) the same words come as a
plain line every ``plain_every`` seconds instead (none for short stages).

The formatting functions are pure (:func:`clock`, :func:`started_line`,
:func:`finished_line`, :func:`spark_line`); :class:`SparkCounter` reads
Spark's status tracker; :class:`TerminalProgress` puts them together.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, Optional, Protocol, TextIO, runtime_checkable


@runtime_checkable
class Progress(Protocol):
    """What the pipeline tells whoever watches a run."""

    def testbed(self, text: str) -> None:
        """The inputs are read and valid: ``text`` describes the testbed."""

    def stage_started(self, name: str) -> None:
        """Stage ``name`` (e.g. ``similarities``) starts."""

    def stage_finished(self, name: str, seconds: float) -> None:
        """Stage ``name`` ended after ``seconds``."""


class NullProgress:
    """Says nothing (library use, tests, ``--quiet``)."""

    def testbed(self, text: str) -> None:
        pass

    def stage_started(self, name: str) -> None:
        pass

    def stage_finished(self, name: str, seconds: float) -> None:
        pass


@contextmanager
def stage(progress: Progress, name: str, timings: Optional[Dict[str, float]] = None,
          key: Optional[str] = None) -> Iterator[None]:
    """Tell ``progress`` that stage ``name`` starts and, when the block ends
    without an error, that it ended; its seconds go to ``timings[key]``
    (``key`` default ``<name>_s``) too. An interrupted or failed stage is
    not reported as finished."""
    progress.stage_started(name)
    t0 = time.time()
    yield
    seconds = time.time() - t0
    if timings is not None:
        timings[key or f"{name.replace(' ', '_')}_s"] = round(seconds, 3)
    progress.stage_finished(name, seconds)


# --- the words (pure) ------------------------------------------------------

def clock(seconds: float) -> str:
    """``0:07``, ``12:34``, ``1:02:03``."""
    s = int(max(seconds, 0))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def started_line(name: str, since_start: float) -> str:
    return f"qarla [{clock(since_start)}] {name} ..."


def finished_line(name: str, seconds: float, since_start: float) -> str:
    took = f"{seconds:.1f} s" if seconds < 60 else clock(seconds)
    return f"qarla [{clock(since_start)}] {name} done in {took}"


@dataclass(frozen=True)
class SparkSnapshot:
    """How far Spark is with the jobs started since a stage began."""

    jobs_done: int = 0
    jobs_running: int = 0
    tasks_done: int = 0      # of the Spark stages running now
    tasks_total: int = 0


def spark_line(name: str, since_start: float, stage_seconds: float,
               snap: Optional[SparkSnapshot]) -> str:
    """The live line: ``qarla [1:02] similarities 0:48 · Spark jobs 3 done,
    1 running · tasks 34/200``."""
    text = f"qarla [{clock(since_start)}] {name} {clock(stage_seconds)}"
    if snap is not None and (snap.jobs_done or snap.jobs_running):
        text += f" · Spark jobs {snap.jobs_done} done, {snap.jobs_running} running"
        if snap.tasks_total:
            text += f" · tasks {snap.tasks_done}/{snap.tasks_total}"
    return text


# --- counting (Spark) -------------------------------------------------------

class SparkCounter:
    """Counts, with Spark's status tracker, the jobs started after
    :meth:`mark` and the tasks of the Spark stages running now. Every call
    is best effort: when Spark is gone (the run is ending) it says
    ``None``."""

    def __init__(self, spark_context):
        self.sc = spark_context
        self.baseline = -1

    def _job_ids(self, tracker):
        return set(tracker.getJobIdsForGroup(None)) | set(tracker.getActiveJobsIds())

    def mark(self) -> None:
        """Jobs from now on belong to the stage starting."""
        try:
            self.baseline = max(self._job_ids(self.sc.statusTracker()), default=-1)
        except Exception:
            pass

    def snapshot(self) -> Optional[SparkSnapshot]:
        try:
            tracker = self.sc.statusTracker()
            done = running = 0
            for job in self._job_ids(tracker):
                if job <= self.baseline:
                    continue
                info = tracker.getJobInfo(job)
                status = str(info.status) if info is not None else ""
                if status == "SUCCEEDED":
                    done += 1
                elif status == "RUNNING":
                    running += 1
            tasks_done = tasks_total = 0
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    tasks_done += info.numCompletedTasks
                    tasks_total += info.numTasks
            return SparkSnapshot(done, running, tasks_done, tasks_total)
        except Exception:
            return None


# --- the terminal -----------------------------------------------------------

class TerminalProgress:
    """Progress for ``qarla run``: see the module's docstring.

    ``counter``: a :class:`SparkCounter` (or anything with ``mark()`` and
    ``snapshot()``), or ``None`` for the elapsed time alone. ``tty``:
    whether ``err`` is a terminal (default: ask it).
    """

    def __init__(self, out: TextIO = None, err: TextIO = None, counter=None,
                 tty: Optional[bool] = None, interval: float = 0.5,
                 plain_every: float = 60.0, now: Callable[[], float] = time.time):
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.counter = counter
        self.tty = self._isatty(self.err) if tty is None else tty
        self.interval = interval
        self.plain_every = plain_every
        self.now = now
        self.started = now()
        self.printed_testbed = False
        self._lock = threading.Lock()
        self._live_width = 0
        self._stage: Optional[str] = None
        self._stage_t0 = 0.0
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    @staticmethod
    def _isatty(stream) -> bool:
        try:
            return stream.isatty()
        except Exception:
            return False

    # Progress
    def testbed(self, text: str) -> None:
        with self._lock:
            self._clear_live()
            print(text, file=self.out, flush=True)
        self.printed_testbed = True

    def stage_started(self, name: str) -> None:
        self._stop_ticker()
        if self.counter is not None:
            self.counter.mark()
        with self._lock:
            self._stage, self._stage_t0 = name, self.now()
            self._clear_live()
            self._line(started_line(name, self._stage_t0 - self.started))
        self._start_ticker()

    def stage_finished(self, name: str, seconds: float) -> None:
        self._stop_ticker()
        with self._lock:
            self._stage = None
            self._clear_live()
            self._line(finished_line(name, seconds, self.now() - self.started))

    # also for the CLI
    def message(self, text: str) -> None:
        """A line (a warning) printed without tearing the live line."""
        with self._lock:
            self._clear_live()
            self._line(text)

    def close(self) -> None:
        """Stop the live line and erase it (the run ended, or was
        interrupted)."""
        self._stop_ticker()
        with self._lock:
            self._clear_live()

    # internals
    def _line(self, text: str) -> None:
        try:
            print(text, file=self.err, flush=True)
        except Exception:
            pass

    def _clear_live(self) -> None:
        if self._live_width:
            try:
                self.err.write("\r" + " " * self._live_width + "\r")
                self.err.flush()
            except Exception:
                pass
            self._live_width = 0

    def _columns(self) -> int:
        try:
            return os.get_terminal_size(self.err.fileno()).columns
        except Exception:
            return 80

    def _start_ticker(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, args=(self._stop,),
                                        name="qarla-progress", daemon=True)
        self._thread.start()

    def _stop_ticker(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=2)
            self._thread = None

    def _tick(self, stop: threading.Event) -> None:
        last_plain = self.now()
        while not stop.wait(self.interval):
            snap = self.counter.snapshot() if self.counter is not None else None
            if stop.is_set():
                return
            with self._lock:
                if self._stage is None:
                    return
                now = self.now()
                text = spark_line(self._stage, now - self.started, now - self._stage_t0, snap)
                if self.tty:
                    text = text[:self._columns() - 1]
                    width = max(self._live_width, len(text))
                    try:
                        self.err.write("\r" + text.ljust(width))
                        self.err.flush()
                    except Exception:
                        return
                    self._live_width = width
                elif now - last_plain >= self.plain_every:
                    last_plain = now
                    self._line(text)
