"""The driver JVM's classes, saved once and mapped at every later start.

A Spark driver loads and verifies some 20,000 classes from Spark's jars at
every start, which took ~4 s of a SummEval run's session start and more
during its first jobs. Java's class-data sharing (CDS, a *dynamic archive*:
``-XX:ArchiveClassesAtExit`` when the JVM ends, ``-XX:SharedArchiveFile``
at later starts) maps them ready-made instead: the session starts in 2 s
instead of 4 and a first small job ends after 2.9 s instead of 6.2 s
(docs/DECISIONS.md, "The JVM's flags and class archive").

When this process starts the JVM itself (not under spark-submit), the first
run of a setup (a Java, a Spark and the JVM options) asks the JVM to write
the archive when it ends; at this process's exit the JVM is ended (its
standard input closed, as when Python exits) and waited for, which takes
~10 s once, and the archive is renamed into place only if the JVM ended
normally (exit status 0): an interrupted or failed dump never becomes an
archive. Later runs of the same setup map it. The JVM checks the archive
against its own build and class path and ignores one that does not match
(silently here: the ``cds`` log is off), so a stale archive only costs the
time it would have saved; a setup's key (:func:`setup_key`) makes a changed
Spark or Java write a new one.

Where: ``$QARLA_JVM_CACHE`` if set (``off`` disables the archive), else
``$XDG_CACHE_HOME/qarla_spark/jvm`` or ``~/.cache/qarla_spark/jvm``. An
archive is ~150-200 MB; the :data:`KEEP` most recently used are kept, and
the folder can be deleted at any time.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional

#: the environment variable naming the archives' folder (or ``off``)
ENV = "QARLA_JVM_CACHE"
#: archives kept (most recently used first); older ones are deleted when a
#: new one is saved
KEEP = 3
#: seconds the exiting process waits for the JVM to write the archive
DUMP_WAIT_S = 180.0
#: the JVM's ``cds`` log (class-sharing notes: a class it cannot archive, an
#: archive it does not use) stays off: none of it needs the user
QUIET = "-Xlog:cds*=off"
_OFF = {"off", "0", "no", "false", "none"}
_SUFFIX = ".jsa"


def cache_dir(environ=os.environ) -> Optional[Path]:
    """The archives' folder, or ``None`` when ``$QARLA_JVM_CACHE`` is
    ``off``."""
    value = environ.get(ENV, "").strip()
    if value.lower() in _OFF:
        return None
    if value:
        return Path(value).expanduser()
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "qarla_spark" / "jvm"


def _stat_line(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return f"{path}:-"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def setup_key(java: str, jars: Iterable[Path], options: str) -> str:
    """A short name for one setup: the Java (its real path, the binary's and
    ``libjvm``'s size and time), Spark's jars (name, size, time) and the
    JVM's options (some of them, e.g. compressed pointers, must match)."""
    real = Path(os.path.realpath(java))
    lines = [_stat_line(real)]
    home = real.parent.parent
    lines += [_stat_line(p) for p in sorted(home.glob("lib/*/libjvm.*"))]
    lines += [_stat_line(p) for p in sorted(jars)]
    lines.append(" ".join(options.split()))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Plan:
    """What the JVM is told: ``options`` to add to the driver's Java
    options, and, when it is to write the archive, the file it writes
    (``pending``) and where that goes once complete (``final``)."""

    options: str
    pending: Optional[Path] = None
    final: Optional[Path] = None


def plan(folder: Optional[Path], key: str, pid: int = 0) -> Plan:
    """Map the setup's archive if it is there, else write it at exit (to a
    file of this process, ``pid``); nothing when ``folder`` is ``None`` or
    cannot be created."""
    if folder is None:
        return Plan("")
    final = folder / f"{key}{_SUFFIX}"
    if final.is_file():
        try:
            os.utime(final)          # most recently used: kept longest
        except OSError:
            pass
        return Plan(f"-XX:SharedArchiveFile={final} {QUIET}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return Plan("")
    if not os.access(folder, os.W_OK):
        return Plan("")
    pending = folder / f"{key}{_SUFFIX}.{pid or os.getpid()}.part"
    return Plan(f"-XX:ArchiveClassesAtExit={pending} {QUIET}", pending, final)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def saved(folder: Path) -> list:
    """The archives in ``folder``, most recently used first."""
    return sorted(folder.glob(f"*{_SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True)


def prune(folder: Path, keep: int = KEEP) -> None:
    """Delete what a process that ended before its JVM's dump left
    (``*.part`` of a process no longer running) and all but the ``keep``
    most recently used archives."""
    for part in folder.glob(f"*{_SUFFIX}.*.part"):
        pid = part.name.rsplit(".", 2)[-2]
        if not pid.isdigit() or not _alive(int(pid)):
            part.unlink(missing_ok=True)
    for old in saved(folder)[keep:]:
        old.unlink(missing_ok=True)


def settle(chosen: Plan, returncode: Optional[int]) -> bool:
    """After the JVM ended with ``returncode`` (``None``: still running):
    the archive it wrote becomes the setup's archive when it ended normally;
    otherwise what it wrote is deleted. True when an archive was saved."""
    if chosen.pending is None or chosen.final is None:
        return False
    if returncode is None:      # still writing: a later run's prune deletes it
        return False
    if returncode != 0 or not chosen.pending.is_file() or chosen.pending.stat().st_size == 0:
        chosen.pending.unlink(missing_ok=True)
        return False
    os.replace(chosen.pending, chosen.final)
    prune(chosen.final.parent)
    return True


def spark_jars() -> list:
    """The jars of the Spark PySpark starts (``$SPARK_HOME/jars``)."""
    from pyspark.find_spark_home import _find_spark_home
    return sorted(Path(_find_spark_home(), "jars").glob("*.jar"))


def for_launch(java: Optional[str], options: str) -> Plan:
    """The plan for a JVM this process is about to start with ``options``
    (nothing when Java is not found or the cache is off)."""
    folder = cache_dir()
    if folder is None or java is None:
        return Plan("")
    try:
        return plan(folder, setup_key(java, spark_jars(), options))
    except OSError:
        return Plan("")


_SAY = [True]


def say_nothing() -> None:
    """Save the archive without the line that says so (``--quiet``)."""
    _SAY[0] = False


def finish(chosen: Plan, proc: subprocess.Popen, wait_s: float = DUMP_WAIT_S,
           stop: Optional[Callable[[], None]] = None) -> bool:
    """End the JVM ``proc`` as Python's exit would (its standard input
    closes; it exits normally and writes the archive), after ``stop``
    (Spark's context: its Python side would otherwise see the JVM go while
    it still listens), wait for it (``wait_s`` at most) and settle the
    plan. True when an archive was saved."""
    if chosen.pending is None:
        return False
    if proc.poll() is None:
        if _SAY[0]:
            print(f"qarla: saving the JVM's classes for faster starts (once per Java and "
                  f"Spark, ~10 s): {chosen.final}", file=sys.stderr, flush=True)
        if stop is not None:
            try:
                stop()
            except Exception:   # best effort: the JVM is ended next anyway
                pass
        try:
            proc.stdin.close()
        except (OSError, AttributeError, ValueError):
            pass
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            pass
    return settle(chosen, proc.poll())


def finish_at_exit(chosen: Plan, proc: subprocess.Popen,
                   stop: Optional[Callable[[], None]] = None) -> None:
    """:func:`finish` at this process's exit, when the plan writes an
    archive."""
    if chosen.pending is not None:
        atexit.register(finish, chosen, proc, DUMP_WAIT_S, stop)
