"""Read inputs into Spark: files -> raw records (a file, or a piece of a
large JSON-lines file, per task).

An *input* is a file or a folder (searched recursively; names starting with
``.`` or ``_`` are skipped, as Spark does). Each file is parsed on an
executor by :func:`qarla_spark.io.parsers.parse_file`; the driver only lists
paths. The bundled SummEval testbed is read from the package.

Files are read whole (Spark's ``binaryFile`` source, at most 2 GB a file:
split larger inputs into several files); a JSON-lines file of more than
:data:`PIECE_BYTES` is parsed in pieces of whole lines, in parallel
(:func:`file_pieces`), and every record keeps its place in the order the
driver reads them (:data:`ORDER_COLUMNS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Iterable, Iterator, List, Optional, Sequence

from qarla_spark.errors import ConfigError, InputError, Problem
from qarla_spark.io.parsers import KINDS, detect_format, parse_file, parse_jsonl_lines
from qarla_spark.io.schemas import RAW_SCHEMA
from qarla_spark.paths import local_path

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


def _probe_hadoop(spark):
    """What :func:`missing_inputs` asks of a path, through Hadoop's FileSystem."""
    def probe(path: str) -> Optional[str]:
        fs, hpath = _hadoop_fs(spark, path)
        if not fs.exists(hpath):
            return "missing"
        status = fs.getFileStatus(hpath)
        if not status.isDirectory():
            return "blank" if status.getLen() == 0 else None
        files = fs.listFiles(hpath, True)
        if not files.hasNext():
            return "empty"
        while files.hasNext():      # the first file with bytes ends the walk
            found = files.next()
            if found.getLen() > 0 and not _hidden(found.getPath().getName()):
                return None
        return "blank"
    return probe


def local_probe(path: str) -> Optional[str]:
    """:func:`_probe_hadoop` on the local file system."""
    import os
    local = local_path(path)
    if not os.path.exists(local):
        return "missing"
    if os.path.isdir(local) and not any(True for _ in os.walk(local) for _ in _[2]):
        return "empty"
    return None


def not_found(path: str, what: str) -> Problem:
    """The error of a path that does not exist (``what``: how the run uses it)."""
    return Problem("error", path, None, None, f"{what} not found: no such file or directory")


def yields_nothing(path: str, kind: str) -> Problem:
    """The error of an input that yields no record (Hadoop's probe: only
    files of 0 bytes; the driver: no record and no problem)."""
    return Problem("error", path, None, None,
                   f"this input ({kind}) yields no record: an empty file, or a folder or "
                   "glob of empty files?")


def missing_inputs(specs: Sequence[InputSpec], probe) -> None:
    """Every input path exists and holds at least one file (``probe`` says
    of a path: ``"missing"``, ``"empty"`` (a folder without files),
    ``"blank"`` (only files of 0 bytes: Hadoop's probe; the driver counts
    the records instead) or ``None``)."""
    problems = []
    for spec in specs:
        if spec.path.startswith(BUNDLED_PREFIX):
            continue
        what = {"summaries": "input", "judgments": "judgments", "sources": "sources"}[spec.kind]
        state = probe(spec.path)
        if state == "missing":
            problems.append(not_found(spec.path, what))
        elif state == "empty":
            problems.append(Problem("error", spec.path, None, None,
                                    f"{what} folder holds no files"))
        elif state == "blank":
            problems.append(yields_nothing(spec.path, spec.kind))
    if problems:
        raise InputError(problems, header="cannot read the input")


def check_inputs_exist(spark, specs: Sequence[InputSpec]) -> None:
    """Every input path exists and holds at least one file (on any file
    system Hadoop knows: local, HDFS, S3...)."""
    missing_inputs(specs, _probe_hadoop(spark))


# ---------------------------------------------------------------------------
# small local inputs: read in the driver
# ---------------------------------------------------------------------------

def _hidden(name: str) -> bool:
    """Names Spark's file sources skip (``.x``, ``_x``)."""
    return name.startswith(".") or name.startswith("_")


def local_files(path: str) -> List[str]:
    """The files of a local input (itself, or its folder's files
    recursively, skipping hidden names as Spark does), absolute, sorted."""
    import os
    root = os.path.abspath(local_path(path))
    if not os.path.isdir(root):
        return [root]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not _hidden(d)]
        found += [os.path.join(folder, f) for f in files if not _hidden(f)]
    return sorted(found)


def driver_input_bytes(specs: Sequence[InputSpec]) -> Optional[int]:
    """The size of the inputs when every one is on the local file system
    (or bundled); ``None`` otherwise (Spark reads them). A missing plain
    path may be on the cluster's default file system (``fs.defaultFS``):
    ``None`` too, and Hadoop says whether it exists; a missing ``file:``
    path counts 0 (:func:`read_records` says it is missing)."""
    import os
    total = 0
    for spec in specs:
        if spec.path.startswith(BUNDLED_PREFIX):
            total += len(_bundled_bytes(spec.path))
            continue
        local = local_path(spec.path)
        if local is None or not (os.path.exists(local) or spec.path.startswith("file:")):
            return None
        if os.path.exists(local):
            total += sum(os.path.getsize(f) for f in local_files(spec.path))
    return total


def read_records(specs: Sequence[InputSpec], counts: Optional[List[int]] = None
                 ) -> Iterator[dict]:
    """The raw records of local inputs, parsed in the driver (the same
    parsers and the same names of files as :func:`read_raw`), file by file
    as they are consumed (the caller keeps what it needs; nothing holds a
    second reference). Missing inputs are refused at once. ``counts``, if
    given (one 0 per input): how many records (problems too) each input
    yielded, filled as they are consumed."""
    import os
    specs = list(specs)
    if not specs:
        raise ConfigError("no input given")
    missing_inputs(specs, local_probe)
    return _parsed(specs, os.getcwd(), counts)


def _parsed(specs: Sequence[InputSpec], cwd: str, counts=None) -> Iterator[dict]:
    for k, spec in enumerate(specs):
        for rec in _parsed_one(spec, cwd):
            if counts is not None:
                counts[k] += 1
            yield rec


def _parsed_one(spec: InputSpec, cwd: str) -> Iterator[dict]:
    if spec.path.startswith(BUNDLED_PREFIX):
        yield from parse_file(spec.path, _bundled_bytes(spec.path), spec.kind, spec.task)
        return
    for path in local_files(spec.path):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise InputError([Problem("error", display_path(path, cwd), None, None,
                                      f"cannot read this file ({exc.strerror})")],
                             header="cannot read the input") from None
        yield from parse_file(display_path(path, cwd), data, spec.kind, spec.task)


#: a JSON-lines file larger than this is parsed in pieces of about this many
#: bytes (whole lines), spread over the Spark tasks: one 120 MB file was one
#: task of 22 s while the other core idled (issue 36)
PIECE_BYTES = 1 << 20
#: the columns :func:`read_raw` adds to the raw records: the input's number,
#: the piece of its file, the record's number in the piece — with ``file``,
#: the order :func:`read_records` reads them in (the checks of a topic see
#: its records in that order, whatever the partitioning)
ORDER_COLUMNS = ("_spec", "_piece", "_seq")
#: what sorts a topic's raw records into that order
READ_ORDER = ("_spec", "file", "_piece", "_seq")


def file_pieces(path: str, data: bytes, max_bytes: int = PIECE_BYTES):
    """(piece, first line, bytes) of a file: a plain JSON-lines file larger
    than ``max_bytes`` in pieces of whole lines of about that size (line
    numbers from 1), any other whole (first line ``None``)."""
    if detect_format(path) != "jsonl" or path.endswith(".gz") or len(data) <= max_bytes:
        yield 0, None, data
        return
    start, line, piece = 0, 1, 0
    while start < len(data):
        end = data.find(b"\n", start + max_bytes)
        end = len(data) if end < 0 else end + 1
        yield piece, line, data[start:end]
        line += data.count(b"\n", start, end)
        start, piece = end, piece + 1


def _pieces(spec: int, path: str, content: bytes, kind: str, task: Optional[str],
            cwd: Optional[str], max_bytes: int = PIECE_BYTES):
    shown = display_path(path, cwd)
    for piece, first_line, data in file_pieces(shown, bytes(content), max_bytes):
        yield spec, shown, bytearray(data), kind, task, piece, first_line


def parse_piece(path: str, data: bytes, kind: str, task: Optional[str],
                first_line: Optional[int]) -> Iterator[dict]:
    """The raw records of a piece of :func:`file_pieces` (``first_line``
    ``None``: a whole file)."""
    if first_line is None:
        return parse_file(path, data, kind, task)
    return parse_jsonl_lines(path, data, kind, task, first_line)


def _parse_pieces(batches):
    """The executors' side of :func:`read_raw`: each piece's raw records,
    numbered, as Arrow batches of :func:`raw_schema`."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    from qarla_spark.spark.worker import worker_ready
    worker_ready()
    schema = to_arrow_schema(raw_schema())
    for batch in batches:
        for p in batch.to_pylist():
            out = []
            for seq, rec in enumerate(parse_piece(p["path"], p["data"], p["kind"], p["task"],
                                                  p["first_line"])):
                rec.update(_spec=p["spec"], _piece=p["piece"], _seq=seq)
                out.append(rec)
                if len(out) == 10_000:
                    yield pa.RecordBatch.from_pylist(out, schema=schema)
                    out = []
            if out:
                yield pa.RecordBatch.from_pylist(out, schema=schema)


def raw_schema():
    """:data:`RAW_SCHEMA` and the :data:`ORDER_COLUMNS`."""
    from pyspark.sql.types import IntegerType, LongType, StructField, StructType
    return StructType(list(RAW_SCHEMA.fields)
                      + [StructField("_spec", IntegerType(), False),
                         StructField("_piece", IntegerType(), False),
                         StructField("_seq", LongType(), False)])


def read_raw(spark, specs: Iterable[InputSpec], piece_bytes: int = PIECE_BYTES):
    """All inputs as one DataFrame of raw records (:func:`raw_schema`:
    :data:`RAW_SCHEMA` and the :data:`ORDER_COLUMNS`). Each file is read
    whole by one task; large JSON-lines files are parsed in pieces
    (:func:`file_pieces` of ``piece_bytes``) spread over
    :func:`~qarla_spark.spark.partitioning.topic_partitions` tasks."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import (
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    from qarla_spark.spark.partitioning import topic_partitions

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
    for number, spec in enumerate(specs):
        if spec.path.startswith(BUNDLED_PREFIX):
            frames.append(spark.createDataFrame(
                [(spec.path, bytearray(_bundled_bytes(spec.path)), spec.kind, spec.task)],
                file_schema).withColumn("spec", F.lit(number)))
        else:
            files = (spark.read.format("binaryFile").option("recursiveFileLookup", "true")
                     .load(spec.path))
            frames.append(files.select(
                "path", "content", F.lit(spec.kind).alias("kind"),
                F.lit(spec.task).cast("string").alias("task"), F.lit(number).alias("spec")))
    files = frames[0]
    for frame in frames[1:]:
        files = files.unionByName(frame)
    import os
    cwd = os.getcwd()
    piece_schema = StructType([
        StructField("spec", IntegerType(), False),
        StructField("path", StringType(), False),
        StructField("data", BinaryType(), False),
        StructField("kind", StringType(), False),
        StructField("task", StringType(), True),
        StructField("piece", IntegerType(), False),
        StructField("first_line", LongType(), True),
    ])
    pieces = spark.createDataFrame(
        files.rdd.flatMap(lambda r: _pieces(r.spec, r.path, r.content, r.kind, r.task, cwd,
                                            piece_bytes)),
        piece_schema)
    return (pieces.repartition(topic_partitions(spark), "spec", "path", "piece")
            .mapInArrow(_parse_pieces, raw_schema()))
