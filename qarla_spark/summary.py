"""The text a run prints: its stages' results made into sentences (the
output edge; nothing here counts or touches Spark)."""

from __future__ import annotations

import math
from typing import List, Optional, Sequence


def _num(value: Optional[float], digits: int = 3) -> str:
    """A number as printed, ``n/a`` when undefined (null or NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def describe_qarla(t) -> str:
    """What the QARLA stage found for one task
    (:class:`~qarla_spark.stages.qarla.TaskQarla`)."""
    beats = "beats" if t.best_king > t.best_single_king else "does not beat"
    lines = [f"task {t.task} (QARLA):",
             f"  best metric set: {t.best_set.label}  KING {t.best_king:.3f}",
             f"  best single metric: {t.best_single.label}  KING {t.best_single_king:.3f} "
             f"(the best set {beats} it)",
             f"  representatives of {len(t.clusters)} clusters: "
             + ", ".join(t.representatives),
             f"  JACK of the best set: {_num(t.jack)}"]
    if t.ranking:
        lines.append(f"  ranking under the best set: {t.models_above} of {t.n_models} models "
                     "rank above every system")
        lines.append("  top: " + "; ".join(f"{r.position}. {r.name} ({r.role}) {r.queen:.3f}"
                                           for r in t.ranking[:8]))
    if t.agreement:
        lines.append("  agreement of the best set with humans (system level, Pearson / "
                     "Spearman / Kendall): " + "; ".join(
                         f"{c} {_num(r, 2)} / {_num(rho, 2)} / {_num(tau, 2)}"
                         for c, (r, rho, tau) in sorted(t.agreement.items())))
    for reason, (count, names) in sorted(t.skipped.items()):
        more = f", ... ({count - len(names)} more)" if count > len(names) else ""
        lines.append(f"  skipped: {count} topic(s) {reason}: {', '.join(names)}{more}")
    if t.human_first:
        lines.append("  held-out references ranked first (human-summariser test): " + "; ".join(
            f"{m} {first} of {n}" for m, (first, n) in sorted(t.human_first.items())))
    return "\n".join(lines)


def describe_sample(sample) -> str:
    """How H was estimated for one task (:class:`~qarla_spark.stages.hbr.Sample`)."""
    if sample.exact:
        return f"all {sample.total:,} pairs (exact)"
    return f"{sample.n_pairs:,} sampled pairs of {sample.total:,}"


def describe_hbr(result, seed: int) -> str:
    """What the HBR stage found (:class:`~qarla_spark.stages.hbr.HbrResult`)."""
    lines: List[str] = [f"HBR over {len(result.measures)} measures (seed {seed})"]
    for task, sample in sorted(result.samples.items()):
        lines.append(f"  task {task}: heterogeneity from {describe_sample(sample)}")
        for criterion, a in sorted(result.auc.get(task, {}).items()):
            lines.append(f"  task {task}, {criterion}: AUC of HBR {a.hbr:.3f}; best single "
                         f"{a.best[0]} {a.best[1]:.3f}, worst {a.worst[0]} {a.worst[1]:.3f}")
    return "\n".join(lines)


def describe_run(report_text: str, stage_texts: Sequence[str], out: str, tables: Sequence[str],
                 signature: str) -> str:
    """The whole summary ``qarla run`` prints."""
    lines = [report_text, *[t for t in stage_texts if t],
             f"results: {out}/ (run.json, {', '.join(sorted(tables))})",
             f"signature: {signature}"]
    return "\n".join(lines)
