"""What the report reads: ``run.json`` and the run's Parquet tables, with
pandas (no Spark). A table the run did not write is ``None``; the big
tables (summaries, similarities, QUEEN of every summary, HBR of every
summary) are never read, and a table with a ``task`` column is read one
task at a time (:meth:`Run.of_task`, :meth:`Run.forget`), so that what the
report holds does not grow with the run's tasks."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import pandas as pd

from qarla_spark.errors import QarlaError
from qarla_spark.names import RUN_JSON, unfinished
from qarla_spark.paths import local_path


#: the rows of a table the report reads, where it does not read them all:
#: (column, value); the AUC of every topic and kind of pair is for users'
#: own analysis, the report shows the AUC over all pairs
READ_ROWS: Dict[str, Tuple[str, str]] = {"auc": ("scope", "all")}


class ReportError(QarlaError):
    """The report cannot be built (not a run directory, no run.json)."""


@dataclass
class Run:
    """A run directory: its ``run.json`` and tables read on demand. A table
    is read once, into Arrow (compact: its strings are not Python objects);
    the pandas frames made from it (the whole table, or the rows of one
    task) are kept until :meth:`forget`."""

    path: str
    info: Dict[str, Any]
    _arrow: Dict[str, Any] = field(default_factory=dict)
    _frames: Dict[Tuple[str, Optional[str]], Optional[pd.DataFrame]] = field(default_factory=dict)

    def table(self, name: str) -> Optional[pd.DataFrame]:
        """The whole table ``name`` (``None``: the run did not write it)."""
        if (name, None) not in self._frames:
            arrow = self._read(name)
            self._frames[(name, None)] = None if arrow is None else arrow.to_pandas()
        return self._frames[(name, None)]

    def of_task(self, name: str, task: str) -> Optional[pd.DataFrame]:
        """The rows of one task (``None`` when the table is missing or the
        task has none; a table without a ``task`` column whole)."""
        arrow = self._read(name)
        if arrow is None or "task" not in arrow.column_names:
            return self.table(name)
        if (name, task) not in self._frames:
            import pyarrow.compute as pc
            rows = arrow.filter(pc.equal(arrow["task"], task))
            self._frames[(name, task)] = rows.to_pandas() if rows.num_rows else None
        return self._frames[(name, task)]

    def forget(self, task: str) -> None:
        """Drop the frames of ``task`` made so far."""
        for key in [k for k in self._frames if k[1] == task]:
            del self._frames[key]

    def _read(self, name: str):
        if name not in self._arrow:
            self._arrow[name] = read_arrow(os.path.join(self.path, name), READ_ROWS.get(name))
        return self._arrow[name]

    def tasks(self) -> List[str]:
        """Every task the run describes, in name order."""
        names = {t.get("task") for t in self.info.get("testbed") or []}
        names |= set((self.info.get("qarla") or {}).get("tasks", {}))
        for name in ("testbed", "king", "auc"):
            names |= column_values(os.path.join(self.path, name), "task")
        return sorted(n for n in names if n is not None)

    def stage(self, name: str) -> Dict[str, Any]:
        return self.info.get(name) or {}


def column_values(folder: str, column: str) -> set:
    """The distinct values of one column of a Parquet folder (empty when
    it does not exist), reading that column only: the driver drawing on
    the executors lists a run's tasks without holding its tables (100
    tasks: king/ alone is 100,000 rows)."""
    if not os.path.isdir(folder):
        return set()
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    values = pq.read_table(folder, columns=[column], pre_buffer=False)[column]
    return set(pc.unique(values).to_pylist()) if len(values) else set()


def read_arrow(folder: str, rows: Optional[Tuple[str, str]] = None):
    """A Parquet folder as an Arrow table (partition columns, which Arrow
    reads dictionary-encoded, decoded to strings), or ``None`` when it does
    not exist; ``rows``: (column, value), only the rows with that value."""
    if not os.path.isdir(folder):
        return None
    import pyarrow as pa
    import pyarrow.parquet as pq
    # pre_buffer (coalesced reads for object stores) kept ~10 MB more after ten
    # tasks' tables were read; the report reads local files
    table = pq.read_table(folder, filters=None if rows is None else [(rows[0], "=", rows[1])],
                          pre_buffer=False)
    return table.cast(pa.schema([pa.field(f.name, f.type.value_type)
                                 if pa.types.is_dictionary(f.type) else f
                                 for f in table.schema]))


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
    (:func:`qarla_spark.names.unfinished`)."""
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
