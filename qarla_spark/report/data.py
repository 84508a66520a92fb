"""What the report reads: ``run.json`` and the run's Parquet tables, with
pyarrow (no Spark). A table the run did not write is ``None``; the big
tables (summaries, similarities, QUEEN of every summary, HBR of every
summary) are never read, and a table with a ``task`` column is read one
task at a time (:meth:`Run.columns`, :meth:`Run.of_task`,
:meth:`Run.forget`), so that what the report holds does not grow with the
run's tasks.

A table with a ``task`` column is held grouped by task (each task's rows in
the table's order) with where each task's rows start and end, found once
when the table is read: a task's rows are then a slice of it, not a filter
of the whole table per task (issue 36: 40 tasks filtered each of 22 tables
40 times). The sections read a task's rows as :class:`Columns` (numpy
arrays made per column on first use), not pandas frames (~0.5 ms each,
before any operation on them)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from qarla_spark.errors import QarlaError
from qarla_spark.names import RUN_JSON, unfinished
from qarla_spark.paths import local_path


#: the rows of a table the report reads, where it does not read them all:
#: (column, value); the AUC of every topic and kind of pair is for users'
#: own analysis, the report shows the AUC over all pairs
READ_ROWS: Dict[str, Tuple[str, str]] = {"auc": ("scope", "all")}

#: the string columns of few distinct values (no set names), read
#: dictionary-encoded as Parquet holds them: each chunk's values are
#: decoded once, not once per row (a group of tasks' read of every table
#: ~35% less CPU at 100 tasks); made plain again where pandas reads them
#: (:func:`decoded`), decoded per task by :func:`to_numpy`
DICTIONARY = ("task", "criterion", "measure", "scope", "method", "unit", "level", "statistic",
              "interval", "family", "basis", "score", "correlation", "role", "question")


class ReportError(QarlaError):
    """The report cannot be built (not a run directory, no run.json)."""


class Columns:
    """Rows of a table (a task's, or some of them), column by column: each
    column a numpy array made on its first use and kept, holding what
    pandas would (floats with NaN for missing values, integers with missing
    values as floats, strings and ``None`` in object arrays). Selections
    (:meth:`where`, :meth:`take`) are made of the columns they are asked."""

    __slots__ = ("_table", "_parent", "_rows", "_made", "_whole", "_start", "names", "n")

    def __init__(self, table=None, parent: Optional["Columns"] = None,
                 rows: Optional[np.ndarray] = None,
                 whole: Optional[Callable[[str], np.ndarray]] = None, start: int = 0):
        """``table``: Arrow rows, or ``parent`` and positions ``rows`` in
        it; ``whole(name)``: a dictionary column of the table ``table`` is
        a slice of, decoded whole; ``start``: where ``table`` starts in it."""
        self._table, self._parent, self._rows = table, parent, rows
        self._whole, self._start = whole, start
        self._made: Dict[str, np.ndarray] = {}
        if parent is not None:
            self.names: Tuple[str, ...] = parent.names
            self.n = len(rows)
        else:
            self.names = tuple(table.column_names)
            self.n = table.num_rows

    @classmethod
    def of(cls, columns: Dict[str, Any]) -> "Columns":
        """Columns of given arrays (all of one length)."""
        out = cls.__new__(cls)
        out._table = out._parent = out._rows = out._whole = None
        out._start = 0
        out._made = {k: np.asarray(v) for k, v in columns.items()}
        out.names = tuple(out._made)
        out.n = len(next(iter(out._made.values()))) if out._made else 0
        return out

    def __getitem__(self, name: str) -> np.ndarray:
        found = self._made.get(name)
        if found is None:
            if self._parent is not None:
                found = self._parent[name][self._rows]
            elif self._table is not None and name in self.names:
                column = self._table.column(name)
                if self._whole is not None and _is_dictionary(column.type):
                    # the rows' part of the table's column decoded once (a copy)
                    found = self._whole(name)[self._start:self._start + self.n].copy()
                else:
                    found = to_numpy(column)
            else:
                raise KeyError(name)
            self._made[name] = found
        return found

    def __len__(self) -> int:
        return self.n

    def __contains__(self, name: str) -> bool:
        return name in self.names

    def take(self, rows) -> "Columns":
        """The rows at positions ``rows`` (in that order)."""
        return Columns(parent=self, rows=np.asarray(rows, dtype=np.intp))

    def where(self, mask) -> "Columns":
        """The rows where ``mask`` (a boolean array) is true."""
        return self.take(np.flatnonzero(mask))

    def equal(self, name: str, value) -> "Columns":
        """The rows whose column ``name`` is ``value`` (none for ``None``,
        as pandas compares)."""
        return self.where(self.is_(name, value))

    def is_(self, name: str, value) -> np.ndarray:
        """Where column ``name`` is ``value``: pandas' ``==`` (all false
        for ``None``)."""
        if value is None:
            return np.zeros(self.n, dtype=bool)
        return np.asarray(self[name] == value, dtype=bool)

    def sorted(self, by: Sequence[str], ascending=True, kind: str = "quicksort") -> "Columns":
        """The rows in the order of pandas' ``sort_values(by, ascending=...,
        kind=...)`` (:func:`sort_order`)."""
        return self.take(sort_order([self[b] for b in by], ascending, kind))

    def values(self, name: str) -> list:
        """A column as Python values (floats, ints, strings, ``None``)."""
        return self[name].tolist()

    def rows(self, *names: str) -> Iterator[tuple]:
        """The rows as tuples of Python values of the columns ``names``."""
        return zip(*(self[n].tolist() for n in names))


@dataclass
class Run:
    """A run directory: its ``run.json`` and tables read on demand. A table
    is read once, into Arrow (compact: its strings are not Python objects),
    grouped by task when it has a task column (:func:`by_task`); what is
    made from it for a task (its rows as :class:`Columns` or a pandas frame,
    what its sections share: :meth:`memo`) is kept until :meth:`forget`."""

    path: str
    info: Dict[str, Any]
    #: the tasks whose rows are read (``None``: every task's): a group of
    #: tasks drawn on an executor holds its own tasks' rows only
    only: Optional[frozenset] = None
    _arrow: Dict[str, Any] = field(default_factory=dict)
    #: per table with a task column: task -> (first row, end) in ``_arrow``
    _spans: Dict[str, Dict[str, Tuple[int, int]]] = field(default_factory=dict)
    _frames: Dict[tuple, Any] = field(default_factory=dict)
    #: (table, column) -> a dictionary column of the table decoded whole
    #: (its tasks' columns are slices of it: decoded once, not per task),
    #: for a run loaded for some tasks (``only``)
    _decoded: Dict[Tuple[str, str], np.ndarray] = field(default_factory=dict)

    def table(self, name: str) -> Optional[pd.DataFrame]:
        """The whole table ``name`` (``None``: the run did not write it)."""
        if (name, None) not in self._frames:
            arrow = self._read(name)
            self._frames[(name, None)] = None if arrow is None else decoded(arrow).to_pandas()
        return self._frames[(name, None)]

    def of_task(self, name: str, task: str) -> Optional[pd.DataFrame]:
        """The rows of one task as a pandas frame (``None`` when the table
        is missing or the task has none; a table without a ``task`` column
        whole)."""
        rows = self._task_rows(name, task)
        if rows is None:
            return None
        if rows is self._arrow[name]:
            return self.table(name)
        if (name, task) not in self._frames:
            self._frames[(name, task)] = decoded(rows).to_pandas()
        return self._frames[(name, task)]

    def columns(self, name: str, task: str) -> Optional[Columns]:
        """The rows of one task as :class:`Columns` (``None`` when the table
        is missing or the task has none; a table without a ``task`` column
        whole)."""
        key = (name, task, "columns")
        if key not in self._frames:
            rows = self._task_rows(name, task)
            if rows is not None and rows is self._arrow[name]:
                key = (name, None, "columns")           # the whole table: not a task's
                if key in self._frames:
                    return self._frames[key]
            if rows is None:
                self._frames[key] = None
            else:
                # a group's tables: a dictionary column decoded once for its
                # tasks; a whole run's (the driver alone): per task, so that
                # what it holds does not grow with the run's tasks
                start = 0 if key[1] is None else self._spans[name][task][0]
                whole = None if self.only is None else (lambda c: self._whole(name, c))
                self._frames[key] = Columns(rows, whole=whole, start=start)
        return self._frames[key]

    def _whole(self, name: str, column: str) -> np.ndarray:
        """A dictionary column of table ``name`` decoded (:func:`to_numpy`),
        made once."""
        found = self._decoded.get((name, column))
        if found is None:
            found = self._decoded[(name, column)] = to_numpy(self._arrow[name].column(column))
        return found

    def _task_rows(self, name: str, task: str):
        """The Arrow rows of ``task`` (a slice of the table grouped by task),
        the whole table when it has no task column, ``None`` when it is
        missing or the task has no rows."""
        arrow = self._read(name)
        if arrow is None or "task" not in arrow.column_names:
            return arrow
        span = self._spans[name].get(task)
        return None if span is None else arrow.slice(span[0], span[1] - span[0])

    def memo(self, task: str, key: str, make: Callable[[], Any]) -> Any:
        """What ``make()`` returns, made once per task until :meth:`forget`
        (what several sections of a task ask)."""
        found = (key, task, "memo")
        if found not in self._frames:
            self._frames[found] = make()
        return self._frames[found]

    def forget(self, task: str) -> None:
        """Drop the frames and columns of ``task`` made so far."""
        for key in [k for k in self._frames if k[1] == task]:
            del self._frames[key]

    def _read(self, name: str):
        if name not in self._arrow:
            arrow = read_arrow(os.path.join(self.path, name), READ_ROWS.get(name))
            if arrow is not None and "task" in arrow.column_names:
                arrow, self._spans[name] = by_task(arrow, self.only)
            self._arrow[name] = arrow
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


def sort_order(keys: Sequence[np.ndarray], ascending=True, kind: str = "quicksort"
               ) -> np.ndarray:
    """The positions of rows in the order pandas' ``DataFrame.sort_values``
    gives them, sorted by the columns ``keys`` (``ascending``: one flag, or
    one per key), missing values (NaN, ``None``) last: one key as
    ``pandas.core.sorting.nargsort`` (numpy's ``argsort`` of ``kind``, the
    rows read backwards when descending), several as ``lexsort_indexer``
    (each key coded by its sorted distinct values; stable)."""
    keys = [np.asarray(k) for k in keys]
    flags = [ascending] * len(keys) if isinstance(ascending, bool) else list(ascending)
    if len(flags) != len(keys):
        raise ValueError(f"Length of ascending ({len(flags)}) != length of by ({len(keys)})")
    if len(keys) == 1:
        items, up = keys[0], flags[0]
        missing = np.asarray(pd.isna(items), dtype=bool)
        idx = np.arange(len(items))
        values, kept = items[~missing], idx[~missing]
        if not up:
            values, kept = values[::-1], kept[::-1]
        order = kept[values.argsort(kind=kind)]
        if not up:
            order = order[::-1]
        return np.concatenate([order, np.flatnonzero(missing)]).astype(np.intp)
    labels = []
    for items, up in zip(keys, flags):
        # pandas codes a key as an ordered Categorical: factorize(sort=True)
        codes, distinct = pd.factorize(items, sort=True)
        missing = codes == -1
        n = len(distinct)
        if missing.any():
            codes = np.where(missing, n, codes)
        if not up:
            codes = np.where(missing, codes, n - codes - 1)
        labels.append(codes)
    return np.lexsort(labels[::-1]).astype(np.intp)


def left_join(left: Sequence[tuple], right: Sequence[tuple]) -> Tuple[np.ndarray, np.ndarray]:
    """The rows of pandas' left merge of two tables on keys (``left`` and
    ``right``: each row's key): (left position, right position or -1), each
    left row in order with its matches in the right's order."""
    where: Dict[Any, List[int]] = {}
    for j, key in enumerate(right):
        where.setdefault(key, []).append(j)
    lefts: List[int] = []
    rights: List[int] = []
    for i, key in enumerate(left):
        found = where.get(key)
        if found is None:
            lefts.append(i)
            rights.append(-1)
        else:
            lefts.extend([i] * len(found))
            rights.extend(found)
    return np.asarray(lefts, dtype=np.intp), np.asarray(rights, dtype=np.intp)


def taken(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``values`` at ``rows`` (-1: no row), missing as pandas fills a left
    merge: NaN, integers made floats and booleans objects when one is
    missing."""
    absent = rows < 0
    if not absent.any():
        return values[rows]
    out = np.full(len(rows), np.nan, dtype=float if values.dtype.kind in "iuf" else object)
    found = ~absent
    out[found] = values[rows[found]]
    return out


def by_task(table, only: Optional[frozenset] = None
            ) -> Tuple[Any, Dict[str, Tuple[int, int]]]:
    """An Arrow table grouped by its ``task`` column (a stable sort: each
    task's rows keep their order; the table itself when already grouped)
    and each task's (first row, end); ``only``: the rows of these tasks
    only (the others dropped before the sort: a group of 6 tasks of 100
    sorts and copies its own rows, not the table's)."""
    if not table.num_rows:
        return table, {}
    codes, names = _codes(table["task"])
    if only is not None:
        wanted = np.array([name in only for name in names], dtype=bool)
        if not wanted.all():
            rows = np.flatnonzero(wanted[codes])
            order = rows[np.argsort(codes[rows], kind="stable")]
            table, codes = table.take(order), codes[order]
            if not len(codes):
                return table, {}
    if (codes[1:] < codes[:-1]).any():         # not grouped: a stable sort by task
        order = np.argsort(codes, kind="stable")
        table, codes = table.take(order), codes[order]
    starts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    firsts = [0, *starts.tolist()]
    ends = [*starts.tolist(), len(codes)]
    return table, {names[codes[a]]: (a, b) for a, b in zip(firsts, ends)}


def _codes(column) -> Tuple[np.ndarray, list]:
    """Each row's code of its value in ``column`` (an Arrow column, plain
    or dictionary-encoded) and the value of each code (``None``: missing)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if pa.types.is_dictionary(column.type):
        column = pa.table({"c": column}).unify_dictionaries()["c"]     # one dictionary
        values = column.chunk(0).dictionary.to_pylist() if column.num_chunks else []
        codes = [c.indices.fill_null(len(values)).to_numpy(zero_copy_only=False)
                 for c in column.chunks]
        return np.concatenate(codes).astype(np.int64), [*values, None]
    distinct = pc.unique(column)                # in the order they first come
    return pc.index_in(column, value_set=distinct).to_numpy(), distinct.to_pylist()


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
                          pre_buffer=False, read_dictionary=DICTIONARY)
    # partition columns (Arrow reads them dictionary-encoded) and anything
    # but strings made plain
    return table.cast(pa.schema([pa.field(f.name, f.type.value_type)
                                 if pa.types.is_dictionary(f.type) and not (
                                     f.name in DICTIONARY and pa.types.is_string(
                                         f.type.value_type)) else f
                                 for f in table.schema]))


def decoded(table):
    """An Arrow table with its dictionary columns (:data:`DICTIONARY`) made
    plain again (what pandas is given: strings, not categoricals)."""
    import pyarrow as pa
    if not any(pa.types.is_dictionary(f.type) for f in table.schema):
        return table
    return table.cast(pa.schema([pa.field(f.name, f.type.value_type)
                                 if pa.types.is_dictionary(f.type) else f
                                 for f in table.schema]))


def _is_dictionary(kind) -> bool:
    import pyarrow as pa
    return pa.types.is_dictionary(kind)


def to_numpy(column) -> np.ndarray:
    """An Arrow column as pandas holds it (``to_numpy``); a dictionary
    column's values decoded once per chunk and taken by its indices, missing
    values ``None`` (an object array, as of a plain string column; Arrow's
    own ``to_numpy`` of a dictionary column loses its missing values)."""
    import pyarrow as pa
    if not pa.types.is_dictionary(column.type):
        return column.to_numpy()
    parts = []
    for chunk in column.chunks:
        values = chunk.dictionary.to_numpy(zero_copy_only=False)
        table = np.empty(len(values) + 1, dtype=object)     # its last: a missing value
        table[:-1] = values
        codes = chunk.indices.fill_null(len(values)).to_numpy(zero_copy_only=False)
        parts.append(table[codes])
    if not parts:
        return np.empty(0, dtype=object)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def load_run(run_dir: str, info: Optional[Dict[str, Any]] = None,
             tasks: Optional[Sequence[str]] = None) -> Run:
    """The run in ``run_dir`` (a local folder); ``info`` replaces its
    ``run.json`` when given; ``tasks``: only these tasks' rows are read
    of the tables with a task column (default: every task's)."""
    path = local_path(run_dir)
    if path is None:
        raise ReportError(f"{run_dir} is not on the local file system: the report reads "
                          "local run directories only (copy the run here first)")
    if not os.path.isdir(path):
        raise ReportError(f"{run_dir} is not a directory: give the folder a qarla run wrote")
    if info is None:
        info = read_local_run_json(run_dir, path)
    return Run(path, info, None if tasks is None else frozenset(tasks))


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
