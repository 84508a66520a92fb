"""Read inputs into Spark: files -> raw records (one file per task).

An *input* is a file or a folder (searched recursively; names starting with
``.`` or ``_`` are skipped, as Spark does). Each file is parsed on an
executor by :func:`qarla_spark.io.parsers.parse_file`; the driver only lists
paths. The bundled SummEval testbed is read from the package.

Files are read whole (Spark's ``binaryFile`` source, at most 2 GB a file):
split larger inputs into several files, which also lets them be parsed in
parallel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Iterable, List, Optional, Sequence

from qarla_spark.errors import ConfigError, InputError, Problem
from qarla_spark.io.parsers import KINDS, parse_file
from qarla_spark.io.schemas import RAW_FIELDS, RAW_SCHEMA

#: name shown for the bundled testbed's files
BUNDLED_PREFIX = "bundled:"
BUNDLED_TESTBED = "summeval"

_TASK_PREFIX = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)=(.+)$")


@dataclass(frozen=True)
class InputSpec:
    """One input: a path, what it holds, and the task for records without one."""

    path: str
    kind: str = "summaries"
    task: Optional[str] = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ConfigError(f"unknown input kind {self.kind!r} (expected one of {KINDS})")


def parse_input_arg(arg: str, kind: str = "summaries", default_task: Optional[str] = None,
                    exists=None) -> InputSpec:
    """``PATH`` or ``TASK=PATH`` (the task for records that carry none).

    ``TASK=PATH`` is only read that way when ``arg`` itself is not an
    existing path (``exists`` decides; default: local file system).
    """
    if exists is None:
        import os
        exists = os.path.exists
    match = _TASK_PREFIX.match(arg)
    if match and not exists(arg):
        return InputSpec(match.group(2), kind, match.group(1))
    return InputSpec(arg, kind, default_task)


def bundled_inputs(task: Optional[str] = None) -> List[InputSpec]:
    """The bundled SummEval testbed: summaries (with judgments) and sources."""
    return [InputSpec(f"{BUNDLED_PREFIX}{BUNDLED_TESTBED}/summaries.jsonl.gz", "summaries", task),
            InputSpec(f"{BUNDLED_PREFIX}{BUNDLED_TESTBED}/sources.jsonl.gz", "sources", task)]


def _bundled_bytes(path: str) -> bytes:
    name = path[len(BUNDLED_PREFIX):]
    return (resources.files("qarla_spark") / "data" / name).read_bytes()


def display_path(path: str, cwd: Optional[str] = None) -> str:
    """Paths as the user would write them: ``file:/x`` -> ``/x``, and
    relative to ``cwd`` (the driver's working directory) when under it."""
    if path.startswith("file://"):
        path = path[len("file://"):]
    elif path.startswith("file:"):
        path = path[len("file:"):]
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def _hadoop_fs(spark, path: str):
    jvm = spark.sparkContext._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hpath


def check_inputs_exist(spark, specs: Sequence[InputSpec]) -> None:
    """Every input path exists and holds at least one file (on any file
    system Hadoop knows: local, HDFS, S3...)."""
    problems = []
    for spec in specs:
        if spec.path.startswith(BUNDLED_PREFIX):
            continue
        fs, hpath = _hadoop_fs(spark, spec.path)
        what = {"summaries": "input", "judgments": "judgments", "sources": "sources"}[spec.kind]
        if not fs.exists(hpath):
            problems.append(Problem("error", spec.path, None, None,
                                    f"{what} not found: no such file or directory"))
        elif fs.getFileStatus(hpath).isDirectory() and not fs.listFiles(hpath, True).hasNext():
            problems.append(Problem("error", spec.path, None, None,
                                    f"{what} folder holds no files"))
    if problems:
        raise InputError(problems, header="cannot read the input")


def _to_rows(path: str, content: bytes, kind: str, task: Optional[str], cwd: Optional[str]):
    shown = display_path(path, cwd)
    for rec in parse_file(shown, bytes(content), kind, task):
        yield tuple(rec[f] for f in RAW_FIELDS)


def read_raw(spark, specs: Iterable[InputSpec]):
    """All inputs as one DataFrame of raw records (:data:`RAW_SCHEMA`)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType, StringType, StructField, StructType

    specs = list(specs)
    if not specs:
        raise ConfigError("no input given")
    check_inputs_exist(spark, specs)
    file_schema = StructType([
        StructField("path", StringType(), False),
        StructField("content", BinaryType(), False),
        StructField("kind", StringType(), False),
        StructField("task", StringType(), True),
    ])
    frames = []
    for spec in specs:
        if spec.path.startswith(BUNDLED_PREFIX):
            frames.append(spark.createDataFrame(
                [(spec.path, bytearray(_bundled_bytes(spec.path)), spec.kind, spec.task)],
                file_schema))
        else:
            files = (spark.read.format("binaryFile").option("recursiveFileLookup", "true")
                     .load(spec.path))
            frames.append(files.select(
                "path", "content", F.lit(spec.kind).alias("kind"),
                F.lit(spec.task).cast("string").alias("task")))
    files = frames[0]
    for frame in frames[1:]:
        files = files.unionByName(frame)
    import os
    cwd = os.getcwd()
    rdd = files.rdd.flatMap(lambda r: _to_rows(r.path, r.content, r.kind, r.task, cwd))
    return spark.createDataFrame(rdd, RAW_SCHEMA)
