"""Interrupts (issue 12, part 4): SIGINT to the process group of a running
``qarla run`` (Ctrl-C in a terminal), or SIGTERM, ends it within 5 s with
one line and no traceback, removes the staging folder, writes no ``--out``,
and leaves no Spark JVM behind. So does a SIGINT while Spark starts (the
JVM launching, the SparkContext being made).

Each test starts ``qarla run`` on the bundled SummEval in a session of its
own, waits until a stage has started (Spark is up and working), finds the
JVM among the run's descendants, sends the signal, and watches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

STARTUP_TIMEOUT = 240    # JVM start and validation, on a loaded machine
EXIT_WITHIN = 5.0        # the bound, from the signal to the exit


def qarla_cmd():
    script = Path(sys.executable).with_name("qarla")
    return [str(script)] if script.exists() else [sys.executable, "-m", "qarla_spark.cli"]


def _children() -> dict:
    """pid -> parent pid of every process (Linux /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: fields follow the last ')'
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def descendants(pid: int) -> set:
    parents = _children()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def is_java(pid: int) -> bool:
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return False
    return os.path.basename(exe) == "java"


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class Lines:
    """Collects a stream's lines with the time each arrived."""

    def __init__(self, stream):
        self.lines = []
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for raw in iter(stream.readline, b""):
            self.lines.append((time.monotonic(), raw.decode("utf-8", "replace").rstrip("\n")))

    def after(self, moment):
        return [text for at, text in self.lines if at >= moment]

    def wait_for(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(predicate(text) for _, text in self.lines):
                return True
            time.sleep(0.1)
        return False


def interrupt_a_run(tmp_path, signum, whole_group=True):
    out = tmp_path / "out"
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    proc = subprocess.Popen(qarla_cmd() + ["run", "--out", str(out)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    err, stdout = Lines(proc.stderr), Lines(proc.stdout)
    try:
        # past Spark's start and inside a stage that runs Spark jobs
        assert err.wait_for(lambda t: t.endswith(" similarities ..."), STARTUP_TIMEOUT), \
            (err.lines, stdout.lines)
        time.sleep(2)
        jvms = {p for p in descendants(proc.pid) if is_java(p)}
        assert jvms, "no JVM among the run's processes"
        staging = list(tmp_path.glob("out.incomplete-*"))
        assert staging, "no staging folder while the run runs"

        sent = time.monotonic()
        if whole_group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        code = proc.wait(timeout=30)
        took = time.monotonic() - sent
        err.thread.join(5)
        said = err.after(sent)
        time.sleep(5)
        left = {p for p in jvms if alive(p)}
        return code, took, said, staging, out, left
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _check(result, code, line):
    got, took, said, staging, out, left = result
    assert got == code, said
    assert took <= EXIT_WITHIN, (took, said)
    assert len(said) <= 3 and said[-1] == line, said
    assert not any("Traceback" in s or "Exception" in s or "py4j" in s for s in said), said
    assert not any(p.exists() for p in staging), "the staging folder was left behind"
    assert not out.exists()
    assert not left, f"JVM(s) {left} still running 5 s after the run ended"


def test_sigint_to_the_process_group_ends_the_run_quietly(tmp_path):
    """Ctrl-C in a terminal: every process of the foreground group gets SIGINT."""
    _check(interrupt_a_run(tmp_path, signal.SIGINT), 130, "qarla: interrupted")


def test_sigterm_ends_the_run_quietly(tmp_path):
    _check(interrupt_a_run(tmp_path, signal.SIGTERM, whole_group=False), 143,
           "qarla: terminated")


def interrupt_the_start(tmp_path, when):
    """SIGINT to the qarla process alone while Spark starts: ``"launch"`` as
    soon as a Java process appears among its descendants (spark-class's
    launcher, then the JVM itself), ``"context"`` once the JVM has been up
    for a second (the SparkContext is being made)."""
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    proc = subprocess.Popen(qarla_cmd() + ["run", "--out", str(tmp_path / "out")],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    err = Lines(proc.stderr)
    try:
        assert err.wait_for(lambda t: t.endswith(" spark session ..."), STARTUP_TIMEOUT), err.lines
        deadline, seen = time.monotonic() + STARTUP_TIMEOUT, set()
        while time.monotonic() < deadline and not any(is_java(p) for p in seen):
            seen |= descendants(proc.pid)
            time.sleep(0.02)
        assert any(is_java(p) for p in seen), "no Java process while Spark starts"
        if when == "context":
            time.sleep(1.0)
        assert not err.wait_for(lambda t: "spark session done" in t, 0), \
            "Spark had started already: nothing left to test"
        seen |= descendants(proc.pid)
        sent = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=30)
        took = time.monotonic() - sent
        err.thread.join(5)
        time.sleep(5)
        return code, took, err.after(sent), {p for p in seen if alive(p)}
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.parametrize("when", ["launch", "context"])
def test_sigint_while_spark_starts_ends_the_run_quietly(tmp_path, when):
    code, took, said, left = interrupt_the_start(tmp_path, when)
    assert code == 130, said
    assert took <= EXIT_WITHIN, (took, said)
    said = [s for s in said if "incubator modules" not in s]   # the JVM's first line
    assert said == ["qarla: interrupted"], said
    assert not left, f"process(es) {left} still running 5 s after the run ended"
