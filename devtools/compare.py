"""Compare the tables of two run directories bit for bit (local paths,
read with pandas): the check behind "the same input and seed give
bit-identical tables under any master, partition count or executor loss"
(``devtools/determinism.py``, ``tests/test_determinism.py``)."""

from __future__ import annotations

import os
from typing import Dict, List

import numpy as np


def read_sorted(path: str):
    """A Parquet table as a pandas frame in a canonical row order (sorted by
    its non-float columns, then its float columns, as text). A map column's
    entries are put in key order: a Parquet map has no order (Spark writes
    one from a Java hash map's, the driver in key order)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    table = pq.read_table(path)
    frame = table.to_pandas()
    for field in table.schema:
        if pa.types.is_map(field.type):
            frame[field.name] = [None if v is None else sorted(v) for v in frame[field.name]]
    for c in frame.columns:
        if isinstance(frame[c].dtype, pd.CategoricalDtype):   # partition columns
            frame[c] = frame[c].astype(str)
    frame = frame[sorted(frame.columns)]
    keys = [c for c in frame.columns if frame[c].dtype.kind != "f"] + \
        [c for c in frame.columns if frame[c].dtype.kind == "f"]
    text = frame.astype(str)
    order = np.lexsort([text[c].to_numpy() for c in reversed(keys)]) if keys else []
    return frame.iloc[order].reset_index(drop=True)


def table_names(run_dir: str) -> List[str]:
    """The run's tables: its folders but the report's pages."""
    from qarla_spark.report import PAGES_DIR
    return sorted(d for d in os.listdir(run_dir)
                  if os.path.isdir(os.path.join(run_dir, d)) and d != PAGES_DIR)


def differences(a, b) -> List[str]:
    """What differs between two frames from :func:`read_sorted`: columns,
    row counts, then each column whose values differ (floats compared bit
    for bit, NaN equal to NaN only with the same bits)."""
    if list(a.columns) != list(b.columns):
        return [f"columns {list(a.columns)} vs {list(b.columns)}"]
    if len(a) != len(b):
        return [f"{len(a)} rows vs {len(b)}"]
    return _column_differences(a, b, f"of {len(a)} rows")


def _column_differences(a, b, of: str) -> List[str]:
    """Each column whose values differ, row by row (floats bit for bit, NaN
    equal to NaN only with the same bits; other values as text)."""
    out = []
    for c in a.columns:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        if a[c].dtype.kind == "f" and b[c].dtype.kind == "f":
            differ = x.astype(np.float64).view(np.int64) != y.astype(np.float64).view(np.int64)
        else:
            differ = np.array([str(u) != str(v) for u, v in zip(x, y)], dtype=bool)
        if differ.any():
            out.append(f"{c}: {int(differ.sum())} {of}")
    return out


def compare_runs(first: str, second: str) -> Dict[str, List[str]]:
    """Per table of either run directory, what differs (empty: identical).
    Both must be finished runs (``run.json`` says ``complete``), or
    :class:`~qarla_spark.report.data.ReportError`."""
    from qarla_spark.paths import local_path
    from qarla_spark.report.data import read_local_run_json
    for run_dir in (first, second):
        read_local_run_json(run_dir)
    first, second = local_path(first) or first, local_path(second) or second
    names = sorted(set(table_names(first)) | set(table_names(second)))
    out: Dict[str, List[str]] = {}
    for name in names:
        pa, pb = os.path.join(first, name), os.path.join(second, name)
        if not os.path.isdir(pa) or not os.path.isdir(pb):
            out[name] = [f"only in {first if os.path.isdir(pa) else second}"]
        else:
            out[name] = compare_table(pa, pb)
    return out


def partitions(table: str) -> List[str]:
    """The partition folders (``task=...``) of a table written
    partitioned; none for a table of files."""
    return sorted(d for d in os.listdir(table)
                  if "=" in d and os.path.isdir(os.path.join(table, d)))


def compare_table(first: str, second: str) -> List[str]:
    """What differs between two copies of a table: partition by partition
    when both are partitioned (one partition in memory at a time: a
    1,000-topic similarity table whole, 41 M rows, does not fit), else
    whole."""
    parts = partitions(first), partitions(second)
    if not parts[0] or not parts[1]:
        return differences(read_sorted(first), read_sorted(second))
    out = []
    for name in sorted(set(parts[0]) | set(parts[1])):
        if name not in parts[0] or name not in parts[1]:
            out.append(f"{name} only in {first if name in parts[0] else second}")
        else:
            out += [f"{name}: {d}" for d in differences(read_sorted(os.path.join(first, name)),
                                                        read_sorted(os.path.join(second, name)))]
    return out


def common_differences(a, b) -> List[str]:
    """What differs between two frames from :func:`read_sorted` on the rows
    both have: rows are identified by their string columns (task, set,
    criterion, measure, ...), the other columns compared bit for bit on the
    rows whose identity both frames hold (a table whose string columns do
    not identify its rows is compared as sets of whole rows: the rows of the
    smaller must be rows of the larger). Says how many rows each frame has
    only for itself."""
    if list(a.columns) != list(b.columns):
        return [f"columns {list(a.columns)} vs {list(b.columns)}"]
    a, b = a.copy(), b.copy()
    for frame in (a, b):            # lists (a set's metric mask) compared as text
        for c in frame.columns:
            if frame[c].dtype.kind == "O" and any(isinstance(v, (list, np.ndarray))
                                                  for v in frame[c].head(50)):
                frame[c] = frame[c].astype(str)
    keys = [c for c in a.columns if a[c].dtype.kind == "O"]
    unique = keys and not a.duplicated(keys).any() and not b.duplicated(keys).any()
    if not unique:
        ta = set(map(tuple, a.astype(str).to_numpy().tolist()))
        tb = set(map(tuple, b.astype(str).to_numpy().tolist()))
        small, large = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
        missing = len(small - large)
        return [f"{missing} of {len(small)} rows of the smaller not in the larger"] \
            if missing else []
    left, right = a.set_index(keys), b.set_index(keys)
    both = left.index.intersection(right.index)
    out = []
    if len(left) - len(both) or len(right) - len(both):
        out.append(f"(rows only in the first: {len(left) - len(both)}, only in the second: "
                   f"{len(right) - len(both)})")
    left, right = left.loc[both], right.loc[both]
    return out + _column_differences(left, right, f"of {len(both)} common rows")


def compare_common(first: str, second: str) -> Dict[str, List[str]]:
    """:func:`common_differences` of every table both runs wrote (whole
    tables, read with pandas: for runs of a few hundred topics)."""
    names = sorted(set(table_names(first)) & set(table_names(second)))
    return {name: common_differences(read_sorted(os.path.join(first, name)),
                                     read_sorted(os.path.join(second, name)))
            for name in names}
