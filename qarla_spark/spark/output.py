"""Run directories that never look complete before they are.

A run directory is complete when its ``run.json`` says ``"status":
"complete"``; ``run.json`` is always the last thing a run writes, and every
reader of a run (:func:`read_run_json`, ``qarla report``,
:mod:`devtools.compare`, ``--similarities``) refuses a directory whose
``run.json`` is missing or says anything else (:func:`unfinished`).

Two ways of committing (the ``commit`` option, :func:`commit_mode`):

``rename`` (local and HDFS file systems)
    Everything is written into a staging folder beside the requested one,
    ``<out>.incomplete-<run id>``; then ``run.json``, then the staging folder
    is renamed to ``<out>``. A crash leaves only the staging folder, whose
    name says what it is; ``<out>`` either does not exist or is the previous
    complete run. With ``overwrite`` the previous run is moved aside and
    deleted only after the new one is in place. A rename is atomic here.

``in-place`` (object stores: S3, GCS, Azure blobs, ...)
    On an object store a rename copies every file, so the tables are
    written directly under ``<out>``. Before the first table, ``run.json``
    is written with ``"status": "incomplete"`` (on an object store one PUT
    replaces the previous run's ``run.json`` at once), and with
    ``overwrite`` every other entry of the previous run is then deleted;
    the final ``run.json`` replaces the marker last. A crash leaves
    ``<out>`` with the marker, which readers refuse; at no moment does
    ``<out>`` hold a complete ``run.json`` beside tables of another run. The
    price: with ``overwrite`` the previous run is gone once the new one
    starts writing (not before: a run that fails on its inputs leaves it).

File operations go through Hadoop's FileSystem API, so ``<out>`` may be a
local path, ``file://``, ``hdfs://``, ``s3a://`` or any store Spark is
configured for.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

from qarla_spark.errors import ConfigError

from qarla_spark.names import COMMIT_MODES, COMPLETE, INCOMPLETE, RUN_JSON, unfinished

#: file-system schemes of object stores, where a rename is a copy of every
#: file (S3, Google Cloud Storage, Azure Blob/Data Lake, Alibaba OSS,
#: Tencent COS, Huawei OBS, Oracle OCI): ``auto`` commits runs there in place
OBJECT_STORE_SCHEMES = frozenset({"s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs",
                                  "oss", "cos", "cosn", "obs", "oci"})


def commit_mode(scheme: Optional[str], setting: str = "auto") -> str:
    """``"rename"`` or ``"in-place"`` for a run directory on a file system
    of this URI ``scheme`` (``setting``: the ``commit`` option; ``auto``
    chooses in place on :data:`OBJECT_STORE_SCHEMES`)."""
    if setting not in COMMIT_MODES:
        raise ConfigError(f"commit must be one of {', '.join(COMMIT_MODES)}, found {setting!r}")
    if setting != "auto":
        return setting
    return "in-place" if (scheme or "").lower() in OBJECT_STORE_SCHEMES else "rename"


def parse_run_json(run_dir: str, text: Optional[str]) -> Dict[str, Any]:
    """``run.json``'s content, or :class:`ConfigError` (:func:`unfinished`)."""
    reason = unfinished(run_dir, text)
    if reason is not None:
        raise ConfigError(reason)
    return json.loads(text)


#: Spark's local property naming the jobs a thread starts
JOB_DESCRIPTION = "spark.job.description"

#: the characters Spark escapes (%XX) in a partition folder's value
#: (ExternalCatalogUtils.escapePathName), and its name for an empty value
_ESCAPED = frozenset([chr(c) for c in range(1, 32)] +
                     list('"#%\'*/:=?\\\x7f{[]^'))
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def partition_folder(column: str, value) -> str:
    """The folder Spark writes the rows of a partition value into
    (``task=<value>``, the value escaped as Spark escapes it)."""
    if value is None or value == "":
        return f"{column}={DEFAULT_PARTITION}"
    text = "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in str(value))
    return f"{column}={text}"


def rows_by_value(data, column: str):
    """(value, rows) of a pyarrow table for each value of ``column``, the
    values sorted (a missing value first), each value's rows in their order
    in ``data``, ``column`` dropped: the files of a table partitioned by
    ``column``. One pass over the rows, not a filter a value: the similarity
    table's 41 M rows of 100 tasks, filtered once a task in each writing
    task, took 17 s more of the cores than the same rows of one task
    (issue 36). Rows already grouped by value (consecutive) are sliced, not
    copied."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    values = data[column]
    rest = data.drop([column])
    keys = pc.unique(values)
    if len(keys) <= 1:
        return [(keys[0].as_py(), rest)] if len(keys) else []
    codes = pc.index_in(values, value_set=keys, skip_nulls=False)
    codes = np.asarray(codes.to_numpy(zero_copy_only=False) if isinstance(codes, pa.Array)
                       else codes.combine_chunks().to_numpy(zero_copy_only=False),
                       dtype=np.int64)
    counts = np.bincount(codes, minlength=len(keys))
    if not np.all(codes[1:] >= codes[:-1]):       # not grouped: a stable sort
        rest = rest.take(pa.array(np.argsort(codes, kind="stable")))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    named = keys.to_pylist()
    order = sorted(range(len(named)), key=lambda i: (named[i] is not None, named[i] or ""))
    return [(named[i], rest.slice(int(starts[i]), int(counts[i]))) for i in order]


#: the column :meth:`RunDirectory._write_by_executors` adds to a frame it
#: coalesces: the partition each row was in before (Spark's
#: ``spark_partition_id()``, evaluated under the coalesce)
PART_COLUMN = "_qarla_partition"

#: a Spark task that writes a table's rows of several partitions read one
#: after the other (:meth:`RunDirectory._write_by_executors`, ``by_core``)
#: writes them as one file until its rows reach this many bytes (Arrow's
#: buffers): a bounded run of rows held at a time, few files to open
FILE_BYTES = 64 << 20


def runs_of_parts(pdf, part: int):
    """(partition, rows) of a batch of rows: the whole batch as ``part``
    when it has no :data:`PART_COLUMN`, else each run of consecutive rows of
    one partition (a coalesced task reads its partitions one after the
    other; a batch may hold the end of one and the start of the next), the
    column dropped."""
    if PART_COLUMN not in pdf.columns:
        yield part, pdf
        return
    import numpy as np
    parts = pdf[PART_COLUMN].to_numpy()
    rows = pdf.drop(columns=[PART_COLUMN])
    if not len(parts):
        return
    starts = [0, *(np.flatnonzero(parts[1:] != parts[:-1]) + 1).tolist()]
    ends = [*starts[1:], len(parts)]
    for a, b in zip(starts, ends):
        yield int(parts[a]), rows if (a, b) == (0, len(parts)) else rows.iloc[a:b]


@dataclass(frozen=True)
class ExecutorTable:
    """A big table the executors write themselves, with pyarrow (a Spark job
    whose tasks each write their part of it), when they share the run's
    folder (a local master, a local folder): Spark's own Parquet writer
    takes ten times the CPU (measured: the similarity table's 4.1 M SummEval
    rows, 0.35 s with pyarrow against 3-5 s of 2 cores). Elsewhere the
    table is written by Spark from ``fallback``.

    ``frame``: the rows the table is made from; ``to_arrow(pdf)``: an Arrow
    batch of the frame (as pandas) to pyarrow tables with the declared
    columns (run on the executors); ``fallback()``: the table as a Spark
    DataFrame."""

    frame: Any
    to_arrow: Callable[[Any], Any]
    fallback: Callable[[], Any]


@dataclass(frozen=True)
class ExecutorTables:
    """Several tables the executors write in one Spark job
    (:meth:`RunDirectory.write_bundle`): ``frame`` has columns ``kind`` (the
    table's name) and ``data``; ``to_arrow(name)`` is the function (run on
    the executors) from a pandas batch of that table's rows of ``frame`` to
    pyarrow tables with its declared columns; ``fallback(name)``: the table
    as a Spark DataFrame (where the executors cannot write)."""

    frame: Any
    to_arrow: Callable[[str], Callable[[Any], Any]]
    fallback: Callable[[str], Any]


@dataclass(frozen=True)
class BundledTable:
    """The table ``name`` of ``bundle``: what a stage returns for it; the
    run's writer writes the tables of a bundle together."""

    bundle: ExecutorTables
    name: str

    def fallback(self):
        """The table as a Spark DataFrame."""
        return self.bundle.fallback(self.name)


class RunDirectory:
    """Where a run writes its tables (:meth:`path`, :meth:`write`,
    :meth:`write_text`) and how it ends: :meth:`commit` or :meth:`abort`.
    ``commit``: the ``commit`` option (:func:`commit_mode`)."""

    def __init__(self, spark, out: str, overwrite: bool = False, run_id: Optional[str] = None,
                 commit: str = "auto"):
        if not out or not str(out).strip():
            raise ConfigError("the output directory (--out) is empty")
        self.spark = spark
        self.out = str(out).rstrip("/")
        self.overwrite = overwrite
        self.run_id = run_id or time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        jvm = spark.sparkContext._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        self._out_path = self._Path(self.out)
        self.fs = self._out_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
        self.fs.setWriteChecksum(False)  # no .run.json.crc beside run.json on local disks
        self.mode = commit_mode(self.fs.getUri().getScheme(), commit)
        if self.fs.exists(self._out_path) and not overwrite:
            raise ConfigError(f"the output directory {self.out} already exists"
                              f"{self._what_is_there()}: choose another --out or pass "
                              "--overwrite to replace it")
        self.tables: Dict[str, Dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._begun = False
        #: the folder :meth:`abort` removes, as a local path when it is on
        #: the local file system (for :meth:`remove_local`)
        self._local_target: Optional[str] = None
        #: False once a task of :meth:`write_on_executors` did not see the
        #: run's folder (a cluster without a shared file system)
        self._executors_share = True
        if self.mode == "rename":
            self.staging = f"{self.out}.incomplete-{self.run_id}"
            self._staging_path = self._Path(self.staging)
            if self.fs.exists(self._staging_path):
                self.fs.delete(self._staging_path, True)
            self.fs.mkdirs(self._staging_path)
        else:
            # nothing is touched before the first write: a run that fails on
            # its inputs leaves a previous run as it was
            self.staging = self.out
            self._staging_path = self._out_path
        if self.fs.getUri().getScheme() == "file":
            self._local_target = str(
                self.fs.makeQualified(self._staging_path).toUri().getPath())

    def _what_is_there(self) -> str:
        """`` (an unfinished run ...)`` when ``out`` holds an in-place run's
        marker."""
        try:
            text = self._read_text(RUN_JSON)
        except Exception:   # noqa: BLE001 - only a hint
            return ""
        if text is not None and unfinished(self.out, text) is not None:
            return " (an unfinished run: its run.json does not say status 'complete')"
        return ""

    def _read_text(self, name: str) -> Optional[str]:
        from qarla_spark.paths import read_hadoop_bytes
        try:
            return read_hadoop_bytes(f"{self.out}/{name}", self.spark).decode("utf-8")
        except FileNotFoundError:
            return None

    def _begin(self) -> None:
        """In place, before the first write: the marker, then (with
        ``overwrite``) the previous run's other entries are deleted."""
        if self.mode != "in-place" or self._begun:
            return
        with self._lock:
            if self._begun:
                return
            self.fs.mkdirs(self._out_path)
            marker = {"status": INCOMPLETE, "run_id": self.run_id,
                      "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                      "note": "this run is being written, or failed or was interrupted: "
                              "it is not a result"}
            self._create(RUN_JSON, json.dumps(marker, indent=2) + "\n")
            for status in self.fs.listStatus(self._out_path):
                if status.getPath().getName() != RUN_JSON:
                    self.fs.delete(status.getPath(), True)
            self._begun = True

    def path(self, name: str) -> str:
        self._begin()
        return f"{self.staging}/{name}"

    def write_table(self, name: str, df, partition_by=None, description: str = "",
                    options: Optional[Dict[str, str]] = None) -> None:
        """Write ``df`` as Parquet to ``<out>/<name>/`` (staged; ``options``:
        the Parquet writer's); its Spark jobs are described ``qarla: write
        <name>`` (UI, event log: a write in a background thread has no call
        site of its own), the thread's description restored afterwards."""
        writer = df.write.mode("errorifexists").options(**(options or {}))
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        sc = self.spark.sparkContext
        before = sc.getLocalProperty(JOB_DESCRIPTION)
        sc.setLocalProperty(JOB_DESCRIPTION, f"qarla: write {name}")
        try:
            writer.parquet(self.path(name))
        finally:
            sc.setLocalProperty(JOB_DESCRIPTION, before)
        self.tables[name] = {"format": "parquet", "path": f"{name}/",
                             "columns": [f"{f.name}: {f.dataType.simpleString()}"
                                         for f in df.schema.fields],
                             "description": description}

    def ordered_tables(self) -> Dict[str, Dict[str, Any]]:
        """The tables written, in the order of their declarations
        (:mod:`qarla_spark.tables`; a stage writes several at once), then
        any other in the order written."""
        from qarla_spark.tables import TABLES
        order = {t.name: i for i, t in enumerate(TABLES)}
        names = sorted(self.tables, key=lambda n: order.get(n, len(order)))
        return {n: self.tables[n] for n in names}

    def executors_write_here(self) -> bool:
        """Spark's executors may write into the run's folder with plain file
        I/O: a folder on the driver's file system, and a local master — or,
        on a cluster, a staging folder (named by the run's id) that every
        writing task checks it sees (a shared file system) before it writes
        (:meth:`write_on_executors`; a task that does not see it, or cannot
        write there, makes Spark write the table, and every later one)."""
        if self._local_target is None or not self._executors_share:
            return False
        if str(self.spark.sparkContext.master).startswith("local"):
            return True
        return self.mode == "rename"

    def folder_to_check(self) -> Optional[str]:
        """The folder a task of :meth:`write_on_executors` checks it sees
        before writing: the staging folder on a cluster, None with a local
        master (its executors are the driver's process)."""
        if str(self.spark.sparkContext.master).startswith("local"):
            return None
        return self._local_target

    def write_on_executors(self, declared, table: ExecutorTable) -> bool:
        """Write ``table`` (:class:`ExecutorTable`) by the executors: each
        Spark task writes the rows of its partition as one Parquet file (per
        partition value, for a table partitioned by ``task``) into the
        staging folder, through a temporary name renamed when complete (a
        retried task rewrites the same file); one Spark job. On a cluster a
        task first checks that it sees the staging folder; False (nothing
        left written) when one did not, or could not write there."""
        to_arrow, name = table.to_arrow, declared.name   # the closure ships these

        def split(pdf):
            return {name: to_arrow(pdf)}
        return self._write_by_executors([declared], table.frame, split)

    def write_bundle_on_executors(self, declared: Sequence[Any], bundle: "ExecutorTables") -> bool:
        """Write the tables ``declared`` of ``bundle`` (:class:`ExecutorTables`)
        by the executors in one Spark job, as :meth:`write_on_executors`
        writes one."""
        from pyspark.sql import functions as F
        names = [d.name for d in declared]
        converters = {n: bundle.to_arrow(n) for n in names}

        def split(pdf):
            return {n: convert(pdf[pdf["kind"] == n]) for n, convert in converters.items()}
        frame = bundle.frame.filter(F.col("kind").isin(names))
        return self._write_by_executors(list(declared), frame, split, by_core=True)

    def _write_by_executors(self, declared: Sequence[Any], frame,
                            split: Callable[[Any], Dict[str, List[Any]]],
                            by_core: bool = False) -> bool:
        """One Spark job over ``frame`` whose tasks each write, for every
        table of ``declared``, the rows ``split(batch)`` gives it (pyarrow
        tables per table name) as one Parquet file (per partition value)
        per partition of ``frame``.

        ``by_core``: ``frame`` is read from persisted records (nothing is
        computed again), so its partitions are read by at most one Spark
        task per core (:data:`PART_COLUMN`, :func:`runs_of_parts`): a
        statistics stage's records are in 20 partitions of a few records
        each, and a task's fixed cost (~50 ms of a core: its launch, the
        Python worker's round trip) was most of their write. A task's
        consecutive partitions go to one file a table (named by the first
        of them; a new file once the rows held reach :data:`FILE_BYTES`):
        the same rows in the same order as one file per partition read in
        the files' name order, in a few files (128 files of a few rows a
        table with the 16-core plan: each reader opened them one by one)."""
        import pandas as pd
        if by_core:
            from pyspark.sql import functions as F
            frame = frame.withColumn(PART_COLUMN, F.spark_partition_id()).coalesce(
                max(1, self.spark.sparkContext.defaultParallelism))
        check = self.folder_to_check()
        plans = [(d.name, d.arrow_schema(), list(d.partition_by),
                  [c for c in d.column_names if c not in d.no_statistics],
                  f"{self._local_target}/{d.name}") for d in declared]
        run_id = self.run_id
        file_bytes = FILE_BYTES
        failed = pd.DataFrame({"table": [""], "rows": [-1]})

        def write(batches):
            import os

            import pyarrow as pa
            import pyarrow.parquet as pq
            from pyspark import TaskContext

            from qarla_spark.spark.worker import worker_ready
            worker_ready()
            if check is not None and not os.path.isdir(check):
                yield failed                        # not the driver's file system
                return
            context = TaskContext.get()
            task_part = context.partitionId() if context is not None else 0
            attempt = context.attemptNumber() if context is not None else 0
            written = {name: 0 for name, *_ in plans}

            def flush(part, mine) -> bool:
                """Write a partition's rows of each table (False: the
                executors cannot write there)."""
                for name, schema, by, with_stats, folder in plans:
                    if not mine[name]:
                        continue
                    data = pa.concat_tables([t.select(list(schema.names)).cast(schema)
                                             for t in mine.pop(name)])
                    groups = rows_by_value(data, by[0]) if by else [(None, data)]
                    for key, rows in groups:
                        where = f"{folder}/{partition_folder(by[0], key)}" if by \
                            else folder
                        file = f"part-{part:05d}-{run_id}.snappy.parquet"
                        tmp = f"{where}/.{file}.{attempt}.tmp"
                        try:
                            os.makedirs(where, exist_ok=True)
                            pq.write_table(rows, tmp, compression="snappy",
                                           write_statistics=[c for c in with_stats
                                                             if c not in by])
                            os.replace(tmp, f"{where}/{file}")
                        except OSError:
                            if check is None:       # a local master: a real error
                                raise
                            return False            # Spark writes it instead
                        written[name] += rows.num_rows
                return True

            # the partitions of the frame this task reads (one, or the
            # several a coalesced task reads one after the other, in order):
            # a run of consecutive partitions written as one file a table,
            # named by its first partition, once its rows reach
            # FILE_BYTES (or the task's end) — not a file per partition: a
            # statistics stage's 128 partitions of a 16-core plan were
            # 128 files of a few rows each a table, which every reader of
            # the table (the report's groups) opens one by one
            first, part, mine, size = None, None, {}, 0
            for pdf in batches:
                for found_part, rows in runs_of_parts(pdf, task_part):
                    if found_part != part:
                        if first is not None and size >= file_bytes:
                            if not flush(first, mine):
                                yield failed
                                return
                            first = None
                        part = found_part
                        if first is None:
                            first, mine, size = part, {name: [] for name, *_ in plans}, 0
                    for name, found in split(rows).items():
                        kept = [t for t in found if t.num_rows]
                        mine[name] += kept
                        size += sum(t.nbytes for t in kept)
            if first is not None and not flush(first, mine):
                yield failed
                return
            yield pd.DataFrame({"table": list(written), "rows": list(written.values())})

        sc = self.spark.sparkContext
        before = sc.getLocalProperty(JOB_DESCRIPTION)
        sc.setLocalProperty(JOB_DESCRIPTION, f"qarla: write {', '.join(p[0] for p in plans)}")
        try:
            found = frame.mapInPandas(write, "table string, rows long").collect()
        finally:
            sc.setLocalProperty(JOB_DESCRIPTION, before)
        import os
        if any(r["rows"] < 0 for r in found):
            import shutil
            self._executors_share = False
            for *_, folder in plans:
                shutil.rmtree(folder, ignore_errors=True)
            return False
        totals = {name: 0 for name, *_ in plans}
        for r in found:
            totals[r["table"]] += r["rows"]
        for d, (name, schema, by, _, folder) in zip(declared, plans):
            os.makedirs(folder, exist_ok=True)
            if not totals[name] and not by:    # an empty table is still a readable table
                import pyarrow.parquet as pq
                pq.write_table(schema.empty_table(),
                               f"{folder}/part-00000-{run_id}.snappy.parquet")
            open(f"{folder}/_SUCCESS", "wb").close()
            self.tables[name] = {"format": "parquet", "path": f"{name}/",
                                 "columns": [f"{c.name}: {c.spark_type}" for c in d.columns],
                                 "description": d.help}
        return True

    def write_bundle(self, declared: Sequence[Any], bundle: "ExecutorTables") -> None:
        """Write the tables ``declared`` of ``bundle``: by the executors in
        one Spark job where they can, else each by Spark."""
        if self.executors_write_here() and self.write_bundle_on_executors(declared, bundle):
            return
        for d in declared:
            self.write(d, bundle.fallback(d.name))

    def write(self, declared, df) -> None:
        """Write a declared table (:mod:`qarla_spark.tables`): its declared
        columns, in order, checked against the declaration. A pyarrow table
        (held by the driver) is written without Spark (:meth:`write_arrow`);
        an :class:`ExecutorTable` by the executors when they can
        (:meth:`write_on_executors`), else by Spark."""
        if hasattr(df, "num_rows"):
            self.write_arrow(declared, df)
            return
        if isinstance(df, BundledTable):
            self.write_bundle([declared], df.bundle)
            return
        if isinstance(df, ExecutorTable):
            if self.executors_write_here() and self.write_on_executors(declared, df):
                return
            df = df.fallback()
        df = df.select(*declared.column_names)
        declared.check(df.schema)
        self.write_table(declared.name, df, list(declared.partition_by) or None, declared.help,
                         declared.parquet_options)

    def write_arrow(self, declared, data) -> None:
        """Write a declared table held by the driver (a pyarrow table with its
        declared columns, :meth:`~qarla_spark.tables.Table.arrow_schema`) as
        one Parquet file, without a Spark job: ``<out>/<name>/part-00000-
        <run id>.snappy.parquet`` and ``_SUCCESS``, read back by Spark and
        pandas like a table Spark wrote. For the small tables a run
        computes per task (KING, intervals, ...): a Spark job of its own
        costs far more than writing them."""
        import pyarrow as pa
        import pyarrow.parquet as pq
        schema = declared.arrow_schema()
        data = data.select(list(declared.column_names))
        if not data.schema.equals(schema):
            data = data.cast(schema)
        by = list(declared.partition_by)
        with_stats = [c for c in declared.column_names
                      if c not in declared.no_statistics and c not in by]
        files = []          # (folder under the table, bytes)
        if by:
            files += [(partition_folder(by[0], key), rows)
                      for key, rows in rows_by_value(data, by[0])]
        else:
            files.append(("", data))
        folder = self.path(declared.name)
        part = f"part-00000-{self.run_id}.snappy.parquet"
        for sub, rows in files:
            sink = pa.BufferOutputStream()
            pq.write_table(rows, sink, compression="snappy", write_statistics=with_stats)
            body = sink.getvalue().to_pybytes()
            where = f"{folder}/{sub}" if sub else folder
            self._put(where, part, body)
        self._put(folder, "_SUCCESS", b"")
        self.tables[declared.name] = {"format": "parquet", "path": f"{declared.name}/",
                                      "columns": [f"{c.name}: {c.spark_type}"
                                                  for c in declared.columns],
                                      "description": declared.help}

    def _put(self, folder: str, name: str, body: bytes) -> None:
        """Write a file of the run (a folder under the staging folder), with
        plain file I/O on the local file system, else through Hadoop's."""
        if self._local_target is not None:
            import os
            local = self._local_target + folder[len(self.staging):]
            os.makedirs(local, exist_ok=True)
            with open(os.path.join(local, name), "wb") as handle:
                handle.write(body)
            return
        self.fs.mkdirs(self._Path(folder))
        stream = self.fs.create(self._Path(f"{folder}/{name}"), True)
        try:
            if body:
                stream.write(bytearray(body))
        finally:
            stream.close()

    def _create(self, name: str, text: str) -> None:
        stream = self.fs.create(self._Path(f"{self.staging}/{name}"), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def write_text(self, name: str, text: str) -> None:
        """Write a small text file into the run (``run.json`` is
        :meth:`commit`'s)."""
        if name == RUN_JSON:
            raise ValueError("run.json is written by commit() only")
        self._begin()
        self._create(name, text)

    def commit(self, run_info: Dict[str, Any],
               before_move: Optional[Callable[..., None]] = None) -> str:
        """Write run.json last and (rename mode) move the run into place.
        Returns ``out``. ``before_move(folder, info)``, where ``info`` is
        what run.json says, writes into the run's folder before it is
        complete (the report, so that it appears with the run, never
        without it): the staging folder after run.json (rename mode), or
        ``out`` before run.json (in place)."""
        info = dict(run_info)
        info["status"] = COMPLETE
        info["tables"] = self.ordered_tables()
        text = json.dumps(info, indent=2, sort_keys=False, default=str) + "\n"
        if self.mode == "in-place":
            self._begin()
            if before_move is not None:
                before_move(self.staging, info)
            self._create(RUN_JSON, text)   # one PUT on an object store: last
            return self.out
        self._create(RUN_JSON, text)
        if before_move is not None:
            before_move(self.staging, info)
        old = None
        if self.fs.exists(self._out_path):
            old = self._Path(f"{self.out}.replaced-{self.run_id}")
            if not self.fs.rename(self._out_path, old):
                raise ConfigError(f"cannot move the previous run {self.out} aside")
        if not self.fs.rename(self._staging_path, self._out_path):
            raise ConfigError(f"cannot move the finished run {self.staging} to {self.out}")
        if old is not None:
            self.fs.delete(old, True)
        return self.out

    def _abort_removes_nothing(self) -> bool:
        """In place, ``out`` is the run's only once it began writing there
        (before, it may hold a previous run)."""
        return self.mode == "in-place" and not self._begun

    def abort(self) -> None:
        """Remove what the run wrote (after an error the run reported): the
        staging folder, or in place ``out`` once the run began writing
        there."""
        try:
            if self._abort_removes_nothing():
                return
            if self.fs.exists(self._staging_path):
                self.fs.delete(self._staging_path, True)
        except Exception:  # best effort: the folder's name or marker already says "incomplete"
            pass

    def remove_local(self) -> None:
        """What :meth:`abort` removes, again, with Python alone (no JVM):
        after an interrupt, once the JVM has ended, since a write whose
        Spark job began after the cancel may have recreated part of the
        folder. Only on the local file system; elsewhere the folder's name
        or ``run.json`` marker says the run is incomplete."""
        if self._local_target is None or self._abort_removes_nothing():
            return
        shutil.rmtree(self._local_target, ignore_errors=True)


def read_run_json(spark, out: str) -> Dict[str, Any]:
    """``run.json`` of a finished run (any Hadoop file system); a directory
    whose run.json is missing or not ``complete`` is refused
    (:class:`ConfigError`, one sentence)."""
    out = out.rstrip("/")
    from qarla_spark.paths import read_hadoop_bytes
    try:
        text = read_hadoop_bytes(f"{out}/{RUN_JSON}", spark).decode("utf-8", "replace")
    except FileNotFoundError:
        text = None
    return parse_run_json(out, text)


def check_reused_table(spark, path: str) -> None:
    """A table reused from an earlier run (``--similarities``) must come
    from a finished run: when the folder holding it is a run directory (it
    has a ``run.json``, or is a staging folder ``*.incomplete-*``), that run
    must be complete (:class:`ConfigError` otherwise). A table outside any
    run directory is taken as it is."""
    table = str(path).rstrip("/")
    parent = table.rsplit("/", 1)[0] if "/" in table else "."
    from qarla_spark.paths import read_hadoop_bytes
    try:
        text: Optional[str] = read_hadoop_bytes(f"{parent}/{RUN_JSON}", spark).decode(
            "utf-8", "replace")
    except FileNotFoundError:
        text = None
    except Exception:   # noqa: BLE001 - the table's own reading says what is wrong
        return
    if text is None and ".incomplete-" not in parent.rsplit("/", 1)[-1]:
        return
    reason = unfinished(parent, text)
    if reason is not None:
        raise ConfigError(f"--similarities {path}: {reason}")


def add_tables(spark, run_dir: str, tables: Dict[str, Any], entry: str,
               value: Dict[str, Any]) -> Dict[str, Any]:
    """Add declared tables (pyarrow tables, :meth:`RunDirectory.write_arrow`;
    or a stage's tables the executors write, :class:`BundledTable`, those of
    one bundle in one Spark job) and ``run.json``'s ``entry`` to a finished run (``qarla plan RUN_DIR``):
    the tables are written into a staging folder inside the run
    (``.<entry>.incomplete-<id>``, which no reader takes for a table), then
    each is moved into place (a previous table of its name moved aside
    first and deleted after), then ``run.json`` is replaced by a complete
    one listing them (written beside it and renamed over it: atomic on a
    local file system; on HDFS, whose rename does not replace, deleted and
    renamed). Returns the new ``run.json``."""
    from qarla_spark.tables import table
    run_dir = str(run_dir).rstrip("/")
    info = read_run_json(spark, run_dir)
    staged = RunDirectory(spark, f"{run_dir}/.{entry}", overwrite=True, commit="rename")
    fs, path = staged.fs, staged._Path
    try:
        # the tables of one bundle (the executors' records) in one Spark job
        groups: Dict[Any, List[str]] = {}
        for name, rows in tables.items():
            bundle = getattr(rows, "bundle", None)
            groups.setdefault(id(bundle) if bundle is not None else name, []).append(name)
        for names in groups.values():
            first = tables[names[0]]
            if getattr(first, "bundle", None) is not None:
                staged.write_bundle([table(n) for n in names], first.bundle)
            else:
                staged.write(table(names[0]), first)
        for name in tables:
            target = path(f"{run_dir}/{name}")
            old = None
            if fs.exists(target):
                old = path(f"{run_dir}/.{name}.replaced-{staged.run_id}")
                if not fs.rename(target, old):
                    raise ConfigError(f"cannot move the previous {name}/ of {run_dir} aside")
            if not fs.rename(path(f"{staged.staging}/{name}"), target):
                raise ConfigError(f"cannot move the new {name}/ into {run_dir}")
            if old is not None:
                fs.delete(old, True)
        listed = dict(info.get("tables") or {})
        listed.update(staged.tables)
        from qarla_spark.tables import TABLES
        order = {t.name: i for i, t in enumerate(TABLES)}
        info["tables"] = {n: listed[n] for n in sorted(listed, key=lambda n: order.get(
            n, len(order)))}
        info[entry] = value
        text = json.dumps(info, indent=2, sort_keys=False, default=str) + "\n"
        tmp = path(f"{run_dir}/.{RUN_JSON}.{staged.run_id}")
        stream = fs.create(tmp, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()
        final = path(f"{run_dir}/{RUN_JSON}")
        if not fs.rename(tmp, final):
            fs.delete(final, False)
            if not fs.rename(tmp, final):
                raise ConfigError(f"cannot replace {run_dir}/{RUN_JSON}")
    finally:
        staged.abort()
    return info
