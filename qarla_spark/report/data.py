"""What the report reads: ``run.json`` and the run's Parquet tables, with
pandas (no Spark). A table the run did not write is ``None``; the big
tables (summaries, similarities, QUEEN of every summary, HBR of every
summary) are never read."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import pandas as pd

from qarla_spark.errors import QarlaError

RUN_JSON = "run.json"


class ReportError(QarlaError):
    """The report cannot be built (not a run directory, no run.json)."""


def local_path(path: str) -> Optional[str]:
    """A local file system path, or ``None`` for other stores (hdfs://...)."""
    path = str(path)
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    if "://" in path:
        return None
    return path


@dataclass
class Run:
    """A run directory: its ``run.json`` and tables read on demand."""

    path: str
    info: Dict[str, Any]
    _cache: Dict[str, Optional[pd.DataFrame]] = field(default_factory=dict)

    def table(self, name: str) -> Optional[pd.DataFrame]:
        if name not in self._cache:
            self._cache[name] = read_table(os.path.join(self.path, name))
        return self._cache[name]

    def of_task(self, name: str, task: str) -> Optional[pd.DataFrame]:
        """The rows of one task (``None`` when the table is missing or the
        task has none)."""
        frame = self.table(name)
        if frame is None or "task" not in frame.columns:
            return frame
        rows = frame[frame["task"] == task]
        return rows.reset_index(drop=True) if len(rows) else None

    def tasks(self) -> List[str]:
        """Every task the run describes, in name order."""
        names = {t.get("task") for t in self.info.get("testbed") or []}
        names |= set((self.info.get("qarla") or {}).get("tasks", {}))
        for name in ("testbed", "king", "auc"):
            frame = self.table(name)
            if frame is not None:
                names |= set(frame["task"])
        return sorted(n for n in names if n is not None)

    def stage(self, name: str) -> Dict[str, Any]:
        return self.info.get(name) or {}


def read_table(folder: str) -> Optional[pd.DataFrame]:
    """A Parquet folder as a DataFrame (partition columns as strings), or
    ``None`` when it does not exist."""
    if not os.path.isdir(folder):
        return None
    frame = pd.read_parquet(folder)
    for column in frame.columns:
        if isinstance(frame[column].dtype, pd.CategoricalDtype):
            frame[column] = frame[column].astype(str)
    return frame


def load_run(run_dir: str, info: Optional[Dict[str, Any]] = None) -> Run:
    """The run in ``run_dir`` (a local folder); ``info`` replaces its
    ``run.json`` when given."""
    path = local_path(run_dir)
    if path is None:
        raise ReportError(f"{run_dir} is not on the local file system: the report reads "
                          "local run directories only (copy the run here first)")
    if not os.path.isdir(path):
        raise ReportError(f"{run_dir} is not a directory: give the folder a qarla run wrote")
    if info is None:
        info = read_local_run_json(run_dir, path)
    return Run(path, info)


def read_local_run_json(run_dir: str, path: Optional[str] = None) -> Dict[str, Any]:
    """``run.json`` of the finished run in the local folder ``path``
    (default: ``run_dir``'s); :class:`ReportError` (one sentence) when it is
    missing or does not say ``"status": "complete"``
    (:func:`qarla_spark.spark.output.unfinished`)."""
    from qarla_spark.spark.output import unfinished
    path = path if path is not None else (local_path(run_dir) or run_dir)
    file = os.path.join(path, RUN_JSON)
    text = None
    if os.path.isfile(file):
        with open(file, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    reason = unfinished(str(run_dir).rstrip("/"), text)
    if reason is not None:
        raise ReportError(reason)
    return json.loads(text)
