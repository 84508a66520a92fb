"""What the benchmark jobs share: the bundled SummEval testbed and its
similarity table (computed once, untimed, or reused with --similarities),
and a process's memory as /proc tells it."""

from __future__ import annotations

from typing import Dict, Optional


def summeval_similarities(spark, tmp: str, reuse=None):
    """(testbed, report, similarities, metric names) of the bundled SummEval:
    validated (errors raise), the similarity table of the default battery
    written under ``tmp`` (or read from ``reuse``) and read back."""
    from qarla_spark.io import bundled_inputs, load_testbed
    from qarla_spark.metrics import registry
    from qarla_spark.stages.similarity_plan import compute_similarities

    testbed, report = load_testbed(spark, bundled_inputs())
    report.raise_for_errors()
    path = reuse
    if not path:
        path = f"{tmp}/similarities"
        compute_similarities(testbed.summaries, registry.resolve_metrics("default"),
                             testbed.sources).write.parquet(path)
    sims = spark.read.parquet(path)
    metrics = sorted(r["metric"] for r in sims.select("metric").distinct().collect())
    return testbed, report, sims, metrics


def proc_status(pid: str = "self") -> Dict[str, int]:
    """VmRSS / VmHWM (kB) of a process, from /proc (empty when gone)."""
    found = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                key = line.split(":", 1)[0]
                if key in ("VmRSS", "VmHWM"):
                    found[key] = int(line.split()[1])
    except OSError:
        pass
    return found


def rss_mb(pid: str = "self") -> float:
    """Resident memory of a process (default: this driver), MB; NaN if unknown."""
    kb = proc_status(pid).get("VmRSS")
    return kb / 1024 if kb is not None else float("nan")


def peak_mb(pid: str = "self") -> Optional[float]:
    """Peak resident memory (VmHWM) of a process, MB; None if unknown."""
    kb = proc_status(pid).get("VmHWM")
    return kb / 1024 if kb is not None else None


def reset_peak(pid: str = "self") -> bool:
    """Reset a process's VmHWM to its current RSS (Linux >= 4.0:
    ``echo 5 > /proc/PID/clear_refs``); False if not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def load_average() -> str:
    """The machine's load average over 1, 5 and 15 minutes (/proc/loadavg)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as handle:
            return " ".join(handle.read().split()[:3])
    except OSError:
        return "?"
