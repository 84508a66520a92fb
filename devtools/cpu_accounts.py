"""Whose CPU a run's stages spend (issue 36): the Python workers', the
JVM's compilers', the JVM's other threads' and the driver's — read from
``/proc`` while a fresh ``qarla run`` process runs, then cut by the run's
stage windows (``run.json``'s ``stage_windows``).

On 2 cores every stage of a SummEval-shaped run keeps both cores busy, so
a stage's time is its CPU seconds over the cores; which process spends
them says what a change can win. The benchmark of shapes
(:mod:`devtools.benchmark_tasks`) samples every run with :class:`Sampler`
(Linux only: elsewhere it samples nothing and the accounts are empty).

Kinds of CPU (:data:`KINDS`):

- ``python``: Spark's Python workers (``pyspark.daemon`` and its workers);
- ``jit``: the JVM's C1 and C2 compiler threads;
- ``jvm``: every other thread of the JVM (the executors' task threads,
  py4j's, the collector's, the scheduler's);
- ``driver``: the ``qarla`` process itself (its Python);
- ``other``: any other process of the run's tree.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

KINDS = ("python", "jit", "jvm", "driver", "other")
#: seconds between two readings of /proc
INTERVAL = 0.5


def parse_stat(text: str, ticks: float) -> Tuple[str, int, float]:
    """(command name, parent pid, CPU seconds: user + system) of a
    ``/proc/PID/stat`` or ``/proc/PID/task/TID/stat`` line (the name
    may hold spaces and parentheses: it ends at the last ``)``)."""
    name = text[text.find("(") + 1:text.rfind(")")]
    fields = text[text.rfind(")") + 2:].split()
    return name, int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks


def thread_kind(name: str) -> str:
    """A JVM thread's kind by its name (``C1 CompilerThre``, ``C2
    CompilerThre``: ``jit``; any other: ``jvm``)."""
    return "jit" if name.startswith(("C1 Compiler", "C2 Compiler")) else "jvm"


def process_kind(cmdline: str, pid: int, root: int) -> str:
    """A process's kind by its command line: the run's own process
    (``root``) ``driver``; Spark's Python daemon and workers ``python``;
    a ``java`` process ``jvm`` (its threads are counted one by one);
    anything else ``other``."""
    if pid == root:
        return "driver"
    if "pyspark.daemon" in cmdline or "pyspark.worker" in cmdline:
        return "python"
    first = cmdline.split("\0", 1)[0]
    if os.path.basename(first) == "java":
        return "jvm"
    return "other"


def descendants(parents: Mapping[int, int], root: int) -> List[int]:
    """``root`` and every process below it (``parents``: pid → parent
    pid), in no particular order."""
    children: Dict[int, List[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def parents(proc: str = "/proc") -> Dict[int, int]:
    """Every process's parent pid (pid → parent), as /proc tells them now;
    a process that ends while they are read is left out."""
    out: Dict[int, int] = {}
    for entry in os.listdir(proc):
        if entry.isdigit():
            try:
                with open(os.path.join(proc, entry, "stat"), encoding="utf-8",
                          errors="replace") as handle:
                    out[int(entry)] = parse_stat(handle.read(), 1.0)[1]
            except (OSError, ValueError, IndexError):
                continue
    return out


def read_tree(root: int, proc: str = "/proc", ticks: Optional[float] = None
              ) -> Dict[str, float]:
    """CPU seconds so far of each unit of ``root``'s process tree, keyed
    ``kind:pid`` (``kind:pid:tid`` for a JVM thread): one reading. A unit
    that ends between two readings keeps its last reading in the caller's
    (:meth:`Sampler.take`)."""
    ticks = ticks or os.sysconf("SC_CLK_TCK")
    out: Dict[str, float] = {}
    for pid in descendants(parents(proc), root):
        base = os.path.join(proc, str(pid))
        try:
            with open(os.path.join(base, "cmdline"), encoding="utf-8", errors="replace") as h:
                cmdline = h.read()
            kind = process_kind(cmdline, pid, root)
            if kind == "jvm":
                for tid in os.listdir(os.path.join(base, "task")):
                    with open(os.path.join(base, "task", tid, "stat"), encoding="utf-8",
                              errors="replace") as h:
                        name, _, cpu = parse_stat(h.read(), ticks)
                    out[f"{thread_kind(name)}:{pid}:{tid}"] = cpu
            else:
                with open(os.path.join(base, "stat"), encoding="utf-8", errors="replace") as h:
                    out[f"{kind}:{pid}"] = parse_stat(h.read(), ticks)[2]
        except (OSError, ValueError, IndexError):
            continue
    return out


def totals(reading: Mapping[str, float]) -> Dict[str, float]:
    """CPU seconds by kind (:data:`KINDS`) of one reading."""
    out = {k: 0.0 for k in KINDS}
    for unit, cpu in reading.items():
        out[unit.split(":", 1)[0]] += cpu
    return out


def at(samples: Sequence[Tuple[float, Dict[str, float]]], t: float) -> Dict[str, float]:
    """The CPU seconds by kind at time ``t``, linear between the two
    readings around it (the first or last outside them)."""
    if not samples:
        return {k: 0.0 for k in KINDS}
    if t <= samples[0][0]:
        return dict(samples[0][1])
    for (t0, a), (t1, b) in zip(samples, samples[1:]):
        if t <= t1:
            f = (t - t0) / (t1 - t0) if t1 > t0 else 1.0
            return {k: a[k] + f * (b[k] - a[k]) for k in KINDS}
    return dict(samples[-1][1])


def window_accounts(samples: Sequence[Tuple[float, Dict[str, float]]],
                    windows: Iterable[Mapping]) -> Dict[str, Dict[str, float]]:
    """CPU seconds by kind in each stage window (``{"stage", "start",
    "end"}``, epoch seconds; a window without an end is left out) of the
    readings ``samples`` ((time, totals by kind), in time order)."""
    out: Dict[str, Dict[str, float]] = {}
    for w in windows:
        if not w.get("end") or w.get("start") is None:
            continue
        a, b = at(samples, float(w["start"])), at(samples, float(w["end"]))
        out[w["stage"]] = {k: round(b[k] - a[k], 3) for k in KINDS}
    return out


class Sampler:
    """Reads ``root``'s process tree every :data:`INTERVAL` seconds in a
    thread until :meth:`stop`; :attr:`samples`: (time, CPU seconds by
    kind), each unit's last reading kept once it has ended (a Python
    worker or a thread that stops does not take its seconds back)."""

    def __init__(self, root: int, interval: float = INTERVAL):
        self.root, self.interval = root, interval
        self.samples: List[Tuple[float, Dict[str, float]]] = []
        self._last: Dict[str, float] = {}
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def take(self) -> None:
        try:
            reading = read_tree(self.root)
        except OSError:
            return
        self._last.update(reading)
        self.samples.append((time.time(), totals(self._last)))

    def start(self) -> "Sampler":
        if not os.path.isdir("/proc"):
            return self

        def run():
            while not self._stop.is_set():
                self.take()
                self._stop.wait(self.interval)

        self._thread = threading.Thread(target=run, name="cpu-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> List[Tuple[float, Dict[str, float]]]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return self.samples
