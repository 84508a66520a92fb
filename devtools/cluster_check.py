"""The cluster check: a standalone Spark cluster on this machine, the job
submitted as the README says, the same tables as a local run, and an
executor killed mid-run (``make cluster-check``; tests/test_cluster.py).

    python -m devtools.cluster_check [--workdir DIR] [--topics N] [--keep]

What it does, stopping everything it started whatever happens:

1. starts a standalone Master and two Workers (one core, 2 GB each) on
   127.0.0.1 with ``spark-daemon.sh`` from the pip-installed pyspark, on free
   ports, with their pid, log and work folders under ``--workdir``;
2. makes a Python for the executors that has every dependency but *not*
   qarla_spark (the package must be shipped) and the zip of ``qarla
   package``;
3. writes a text testbed of ``--topics`` SummEval topics and runs the job
   (``jobs/qarla_run.py``) with spark-submit in ``local[2]``
   (``--properties-file conf/local.conf``, as the README's spark-submit
   section does) and on the
   cluster (``--properties-file conf/cluster.conf --py-files ZIP``, an
   absolute ``PYSPARK_PYTHON``; ``--out`` a ``file://`` URI), prints the
   cluster run's time over the local one's (the same cores), and compares
   every table of the two runs bit for bit;
4. submits it to the cluster again and ``kill -9``s one executor once the
   similarity stage runs; the job must still finish with the same tables;
5. stops the Workers and the Master and checks that no process of theirs
   (nor any executor) is left.

Prints one line per step and ``cluster check: passed`` (exit 0) or what
failed (exit 1). ``devtools/benchmark_scale.py`` (part (f)) runs steps 1-3
and 5 through :func:`check` and prints the ratio with its other figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

if __name__ == "__main__" and not __package__:
    # run as `python devtools/NAME.py` or by spark-submit: the repository root
    # on sys.path, for `devtools.*` (`python -m devtools.NAME` needs none)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
JOB = ROOT / "jobs" / "qarla_run.py"
MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


def say(text: str) -> None:
    print(f"cluster check: {text}", flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> Path:
    import pyspark
    return Path(pyspark.__file__).parent


def bare_python(folder: Path) -> str:
    """A Python with every dependency of this one but not qarla_spark: a
    venv whose one ``.pth`` line adds this interpreter's site-packages (the
    ``.pth`` files there, qarla_spark's editable finder among them, are not
    read)."""
    env = folder / "executor-python"
    if not (env / "bin" / "python").exists():
        base = Path(sys.base_prefix) / "bin" / "python3"
        subprocess.run([str(base), "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    site = subprocess.run([str(python), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return str(python)


def alive(pid: int) -> bool:
    """``pid`` is a running process (not gone, not a zombie waiting for a
    parent that never reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


class Cluster:
    """A standalone Master and Workers started with spark-daemon.sh; their
    pid, log and work folders under ``folder``."""

    def __init__(self, folder: Path, workers: int = 2, memory: str = "2g"):
        self.folder = folder
        self.workers = workers
        self.memory = memory
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.env = dict(os.environ, SPARK_HOME=str(spark_home()),
                        SPARK_PID_DIR=str(folder / "pids"), SPARK_LOG_DIR=str(folder / "logs"),
                        SPARK_WORKER_DIR=str(folder / "work"), SPARK_LOCAL_IP="127.0.0.1",
                        SPARK_IDENT_STRING="qarla-check")
        for name in ("pids", "logs", "work"):
            (folder / name).mkdir(parents=True, exist_ok=True)
        #: the daemons' pids, read from their pid files once they started
        #: (``spark-daemon.sh stop`` deletes a pid file as soon as it has
        #: sent SIGTERM, while the JVM may take seconds to exit)
        self.daemons: List[int] = []

    def _daemon(self, action: str, cls: str, instance: int, *args: str) -> None:
        script = spark_home() / "sbin" / "spark-daemon.sh"
        subprocess.run(["bash", str(script), action, cls, str(instance), *args], env=self.env,
                       check=action == "start", capture_output=True, text=True, timeout=120)

    def _log(self, cls: str, instance: int) -> str:
        logs = sorted((self.folder / "logs").glob(f"*{cls}-{instance}*.out"))
        return logs[-1].read_text(errors="replace") if logs else ""

    def start(self, timeout: float = 120) -> None:
        self._daemon("start", MASTER, 1, "--host", "127.0.0.1", "--port", str(self.port),
                     "--webui-port", str(free_port()))
        for n in range(1, self.workers + 1):
            self._daemon("start", WORKER, n, "--cores", "1", "--memory", self.memory,
                         "--host", "127.0.0.1", "--webui-port", str(free_port()), self.url)
        for pid_file in (self.folder / "pids").glob("*.pid"):
            try:
                self.daemons.append(int(pid_file.read_text().strip()))
            except ValueError:
                pass
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self._log(MASTER, 1).count("Registering worker") >= self.workers:
                return
            time.sleep(1)
        raise RuntimeError(f"the workers did not register with the master in {timeout:.0f} s "
                           f"(logs in {self.folder / 'logs'})")

    def pids(self) -> List[int]:
        """Processes of this cluster still alive: the daemons it started
        and the executors (working in its work folder)."""
        return sorted({pid for pid in self.daemons if alive(pid)} | set(self.executors()))

    def executors(self) -> List[int]:
        work = str((self.folder / "work").resolve())
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                cmdline = (proc / "cmdline").read_bytes()
                if b"CoarseGrainedExecutorBackend" in cmdline and \
                        os.readlink(proc / "cwd").startswith(work) and alive(int(proc.name)):
                    found.append(int(proc.name))
            except OSError:
                continue
        return found

    def executor_commands(self) -> List[str]:
        """The command lines of the last application's executors (the
        first line of each one's stderr in the work folder)."""
        apps = sorted((self.folder / "work").glob("app-*"))
        lines = []
        for log in sorted(apps[-1].glob("*/stderr")) if apps else ():
            with open(log, errors="replace") as f:
                first = f.readline()
            if first.startswith("Spark Executor Command:"):
                lines.append(first)
        return lines

    def stop(self) -> List[int]:
        """Stop the Workers and the Master; the pids still alive after 20 s
        (killed then)."""
        for n in range(1, self.workers + 1):
            self._daemon("stop", WORKER, n)
        self._daemon("stop", MASTER, 1)
        deadline = time.time() + 20
        while time.time() < deadline and self.pids():
            time.sleep(0.5)
        left = self.pids()
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return left


def submit(out: Path, config: Path, master: str, env: Dict[str, str], extra=(),
           background: bool = False, uri: bool = False):
    """spark-submit the job, as the README's cluster section does (``uri``:
    ``--out`` as a ``file://`` URI)."""
    command = [str(Path(sys.executable).parent / "spark-submit"), "--master", master, *extra,
               str(JOB), "--config", str(config), "--out",
               f"file://{out}" if uri else str(out), "--overwrite"]
    log = open(out.parent / f"{out.name}.log", "w")
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                            cwd=out.parent)
    if background:
        return proc, out.parent / f"{out.name}.log"
    code = proc.wait(timeout=1800)
    log.close()
    return code, out.parent / f"{out.name}.log"


def compare(a: Path, b: Path) -> List[str]:
    from devtools.compare import compare_runs
    return sorted(t for t, d in compare_runs(str(a), str(b)).items() if d)


def check_executor_options(commands: List[str], summaries: int) -> List[str]:
    """The executors' JVMs had the cluster profile's small-testbed options
    (qarla sets them after spark-submit started the driver: the testbed is
    small), said in a line; the failure if not."""
    from qarla_spark.spark.profiles import (SMALL_EXECUTOR_OPTIONS, read_profile,
                                            small_testbed_settings)
    small = small_testbed_settings(read_profile("cluster"), {}, summaries)
    wanted = small.get("spark.executor.defaultJavaOptions", "").split()
    if not wanted:
        return []
    missing = sorted({o for o in wanted for c in commands if f'"{o}"' not in c})
    if commands and not missing:
        say(f"{len(commands)} executor(s) ran with the small testbed's Java options "
            f"({' '.join(wanted)})")
        return []
    problem = f"missing {' '.join(missing)}" if commands else "no executor command line found"
    say(f"the executors' Java options: {problem}")
    return [f"the executors did not get {SMALL_EXECUTOR_OPTIONS} ({problem})"]


@dataclass
class CheckResult:
    """What the check found: its failures (empty: passed) and the wall
    times of the submissions (``None``: not run)."""

    failures: List[str] = field(default_factory=list)
    local_s: Optional[float] = None
    cluster_s: Optional[float] = None
    killed_s: Optional[float] = None
    #: every table of the cluster run equals the local run's
    equal: Optional[bool] = None

    @property
    def ratio(self) -> Optional[float]:
        """The cluster run's time over the local one's (the same cores)."""
        if self.local_s is None or self.cluster_s is None:
            return None
        return self.cluster_s / self.local_s


def check(workdir: Path, topics: int, seed: int = 13, kill: bool = True) -> CheckResult:
    """Run the check (``kill``: also the submission with an executor
    killed); what it found."""
    result = CheckResult()
    result.failures = _check(workdir, topics, seed, kill, result)
    return result


def _check(workdir: Path, topics: int, seed: int, kill: bool, result: CheckResult) -> List[str]:
    from qarla_spark.spark.packaging import build_zip
    from devtools.testbeds import scale_testbed, write_testbed

    failures: List[str] = []
    testbed = scale_testbed(1, topics, seed)
    summaries, sources = write_testbed(testbed, str(workdir / "testbed"))
    config = workdir / "run.toml"
    config.write_text(f'inputs = ["{summaries}"]\nsources = ["{sources}"]\n'
                      f'seed = {seed}\nbootstrap = 100\n')
    executor_python = bare_python(workdir)
    package = build_zip(str(workdir / "dist"))
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_DRIVER_PYTHON=sys.executable)

    t0 = time.time()
    code, log = submit(workdir / "local", config, "local[2]",
                       dict(env, PYSPARK_PYTHON=sys.executable),
                       ("--properties-file", str(ROOT / "conf" / "local.conf")))
    local_s = time.time() - t0
    say(f"local[2] run: exit {code} in {local_s:.0f} s")
    if code != 0:
        return [f"the local run failed (see {log})"]
    result.local_s = local_s

    cluster = Cluster(workdir / "cluster")
    try:
        cluster.start()
        say(f"master {cluster.url} with {cluster.workers} workers (1 core each)")
        on_cluster = dict(env, PYSPARK_PYTHON=executor_python)
        extra = ("--properties-file", str(ROOT / "conf" / "cluster.conf"),
                 "--py-files", str(package))
        t0 = time.time()
        code, log = submit(workdir / "cluster-run", config, cluster.url, on_cluster, extra,
                           uri=True)
        cluster_s = time.time() - t0
        say(f"cluster run (--out a file:// URI): exit {code} in {cluster_s:.0f} s = "
            f"{cluster_s / local_s:.2f}x the local[2] run (same job, same cores)")
        if code != 0:
            failures.append(f"the cluster run failed (see {log})")
        else:
            result.cluster_s = cluster_s
            differing = compare(workdir / "local", workdir / "cluster-run")
            result.equal = not differing
            say(f"cluster run vs local: {len(differing)} table(s) differ")
            if differing:
                failures.append(f"tables differ from the local run: {', '.join(differing)}")
            failures += check_executor_options(cluster.executor_commands(),
                                               len(testbed.summaries))

        if not kill:
            return failures
        t0 = time.time()
        proc, log = submit(workdir / "killed-run", config, cluster.url, on_cluster, extra,
                           background=True)
        killed: Optional[int] = None
        deadline = time.time() + 900
        while killed is None and proc.poll() is None and time.time() < deadline:
            if "similarities ..." in log.read_text(errors="replace"):
                time.sleep(2)
                running = cluster.executors()
                if running:
                    killed = running[0]
                    os.kill(killed, signal.SIGKILL)
            time.sleep(0.5)
        code = proc.wait(timeout=1800)
        result.killed_s = time.time() - t0
        say(f"cluster run with executor {killed} killed mid-run: exit {code} "
            f"in {result.killed_s:.0f} s")
        if killed is None:
            failures.append("no executor was running during the similarity stage to kill")
        if code != 0:
            failures.append(f"the run with a killed executor failed (see {log})")
        elif killed is not None:
            differing = compare(workdir / "local", workdir / "killed-run")
            say(f"killed-executor run vs local: {len(differing)} table(s) differ")
            if differing:
                failures.append("tables differ after an executor was killed: "
                                + ", ".join(differing))
    finally:
        left = cluster.stop()
        say("master and workers stopped" + (f"; had to kill {left}" if left else ""))
        if left:
            failures.append(f"processes left after stopping the cluster: {left}")
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", default=None,
                        help="where the cluster, the testbed and the runs go (default: a "
                             "temporary folder, removed afterwards unless --keep)")
    parser.add_argument("--topics", type=int, default=6,
                        help="SummEval topics in the testbed (default 6)")
    parser.add_argument("--keep", action="store_true", help="keep --workdir afterwards")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="qarla-cluster-check-")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        failures = check(workdir, args.topics).failures
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    for failure in failures:
        say(f"FAILED: {failure}")
    say("passed" if not failures else f"{len(failures)} failure(s)")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
