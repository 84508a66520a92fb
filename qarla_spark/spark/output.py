"""Run directories that never look complete before they are.

A run writes everything into a staging folder beside the requested one,
``<out>.incomplete-<run id>``, then writes ``run.json`` (``"status":
"complete"``) last and renames the staging folder to ``<out>``. A crash
leaves only the staging folder, whose name says what it is; ``<out>`` either
does not exist or is the previous complete run. With ``overwrite`` the
previous run is moved aside and deleted only after the new one is in place.

File operations go through Hadoop's FileSystem API, so ``<out>`` may be a
local path, ``hdfs://...`` or any store Spark is configured for.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Dict, Optional

from qarla_spark.errors import ConfigError

RUN_JSON = "run.json"


class RunDirectory:
    def __init__(self, spark, out: str, overwrite: bool = False, run_id: Optional[str] = None):
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
        if self.fs.exists(self._out_path) and not overwrite:
            raise ConfigError(f"the output directory {self.out} already exists: choose another "
                              "--out or pass --overwrite to replace it")
        self.staging = f"{self.out}.incomplete-{self.run_id}"
        self._staging_path = self._Path(self.staging)
        if self.fs.exists(self._staging_path):
            self.fs.delete(self._staging_path, True)
        self.fs.mkdirs(self._staging_path)
        self.tables: Dict[str, Dict[str, Any]] = {}

    def path(self, name: str) -> str:
        return f"{self.staging}/{name}"

    def write_table(self, name: str, df, partition_by=None, description: str = "") -> None:
        """Write ``df`` as Parquet to ``<out>/<name>/`` (staged)."""
        writer = df.write.mode("errorifexists")
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        writer.parquet(self.path(name))
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

    def write(self, declared, df) -> None:
        """Write a declared table (:mod:`qarla_spark.tables`): its declared
        columns, in order, checked against the declaration."""
        df = df.select(*declared.column_names)
        declared.check(df.schema)
        self.write_table(declared.name, df, list(declared.partition_by) or None, declared.help)

    def write_text(self, name: str, text: str) -> None:
        stream = self.fs.create(self._Path(self.path(name)), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def commit(self, run_info: Dict[str, Any],
               before_move: Optional[Callable[[str], None]] = None) -> str:
        """Write run.json last, then move the run into place. Returns ``out``.
        ``before_move(staging)`` runs between the two (the report is written
        there, so that it appears with the run, never without it)."""
        info = dict(run_info)
        info["status"] = "complete"
        info["tables"] = self.ordered_tables()
        self.write_text(RUN_JSON, json.dumps(info, indent=2, sort_keys=False, default=str) + "\n")
        if before_move is not None:
            before_move(self.staging)
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

    def abort(self) -> None:
        """Remove the staging folder (after an error the run reported)."""
        try:
            if self.fs.exists(self._staging_path):
                self.fs.delete(self._staging_path, True)
        except Exception:  # best effort: the folder's name already says "incomplete"
            pass


def read_run_json(spark, out: str) -> Dict[str, Any]:
    """``run.json`` of a finished run (any Hadoop file system)."""
    text = spark.sparkContext.wholeTextFiles(f"{out.rstrip('/')}/{RUN_JSON}").collect()
    if not text:
        raise ConfigError(f"{out} has no {RUN_JSON}: it is not a finished qarla run")
    return json.loads(text[0][1])
