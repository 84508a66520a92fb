"""Rounds: the few Spark jobs a stage is made of (issue 26).

A stage's work is per topic (numpy kernels over the topic cube) and per
task (reductions of the topics' counts). Both run on the executors, over
every (task, topic) at once, as *records* — rows of :data:`ENVELOPE`: a
``key`` (the group a record goes to: a task, or a task and a statistic), a
``kind`` (what it holds) and ``data`` (the value, pickled: a dict of numpy
arrays, a pandas frame of a table's rows, ...). A round is

1. :func:`over_topics`: a kernel on every topic of the cube, in the cube's
   partitions (no shuffle), returning records;
2. :func:`reduce_by_key`: the records grouped by key (one shuffle), a
   reducer on each group, returning records;
3. :func:`collect`: the small records the driver needs (one Spark job
   computes and keeps both sides).

Tables are read from the records and written by the executors
(:func:`records_tables`: the tables of one set of records in one Spark job),
or by Spark where they cannot (:func:`table_of`).
Values a kernel needs (a task's metric sets, its HBR sample) go to the
executors as broadcast variables (:func:`broadcast`: once per executor, not
once per Spark task).

What a Spark task pays before its first topic is paid by every partition,
so it is kept small: records are pickled numpy arrays (no Python object per
row), and :func:`~qarla_spark.spark.worker.worker_ready` moves the Python
worker's long-lived objects (its imported modules) out of the garbage
collector's sight — PySpark's
worker runs a full ``gc.collect()`` after every task, which costs tens of
milliseconds once numpy, pandas, pyarrow and the kernels are imported
(DECISIONS.md, "What a Spark task costs").

Determinism: a group's records are given to its reducer sorted by (kind,
bytes of the value), so the reducer sees the same list whatever the
partitioning; the kernels and reducers are pure functions of their inputs.
"""

from __future__ import annotations

import functools
import pickle
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from qarla_spark.spark.worker import worker_ready

#: the schema of a round's records
ENVELOPE = "key string, kind string, data binary"
ENVELOPE_COLUMNS = ("key", "kind", "data")

#: a record as kernels and reducers return it: (key, kind, value)
Record = Tuple[str, str, Any]

#: the separator of a key's parts (a task name and a group)
KEY_SEPARATOR = "\x1f"


def key_of(*parts: str) -> str:
    """A record's key from its parts (a task; a task and a group)."""
    return KEY_SEPARATOR.join(str(p) for p in parts)


def key_parts(key: str) -> List[str]:
    return key.split(KEY_SEPARATOR)


def dumps(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def loads(data: bytes) -> Any:
    return pickle.loads(data)


def table_record(key: str, name: str, rows: Sequence[tuple]) -> Record:
    """A record holding rows of the declared table ``name`` (tuples starting
    with its columns, in order; extra fields are left out) as Arrow."""
    return (key, name, arrow_rows(rows, name))


def _arrow_schema(name: str):
    """The declared table ``name``'s Arrow schema, made once per
    declaration (:func:`_schema_of`): a schema costs ~50 µs to build, and a
    task's statistics make ~27 records (issue 36)."""
    from qarla_spark.tables import table
    return _schema_of(table(name))


@functools.lru_cache(maxsize=None)
def _schema_of(declared):
    """(a frozen :class:`~qarla_spark.tables.Table`: the schema of the
    declaration itself, never a stale one of the same name)"""
    return declared.arrow_schema()


def table_record_columns(key: str, name: str, columns: Sequence[Any]) -> Record:
    """:func:`table_record` of rows given as columns (arrays in the declared
    table's column order, one value per row): no Python tuple per row."""
    import pyarrow as pa

    schema = _arrow_schema(name)
    batch = pa.record_batch([pa.array(c, type=f.type) for c, f in zip(columns, schema)],
                            schema=schema)
    return (key, name, _arrow_bytes(batch, schema))


#: a record's Arrow rows are compressed (zstd) from this many bytes of
#: buffers on: below, compression's fixed cost is most of the record's
#: cost and saves a few kilobytes; a run of many small tasks makes
#: thousands of such records (issue 36). The rows read back are the same
#: either way (:func:`arrow_of` tells the two apart).
COMPRESS_FROM = 1 << 16

#: the first bytes of a compressed record: an uncompressed Arrow IPC
#: stream starts with its continuation marker (0xFFFFFFFF), never these
PACKED = b"QZS1"

#: zstd's level of a compressed record (Arrow's default level)
PACK_LEVEL = 1


@functools.lru_cache(maxsize=None)
def _ipc_plain():
    """The Arrow IPC options of a record (no compression of its buffers),
    made once: a new IpcWriteOptions costs ~10 µs, a small record's
    whole stream ~5 µs."""
    import pyarrow as pa
    return pa.ipc.IpcWriteOptions(compression=None)


@functools.lru_cache(maxsize=None)
def _codec():
    import pyarrow as pa
    return pa.Codec("zstd", PACK_LEVEL)


def _arrow_bytes(batch, schema) -> bytes:
    """The Arrow IPC stream of ``batch``: as it is below
    :data:`COMPRESS_FROM` bytes of buffers, else :data:`PACKED`, the
    stream's length (8 bytes, little-endian) and the whole stream as one
    zstd frame. One frame, not Arrow's compression of each buffer (a zstd
    context per buffer: the statistics stage's king_ci and comparisons
    records, ~40 buffers and ~0.2 MB each, cost 0.57-0.78 ms to write and
    0.40-0.59 ms to read so; one frame 0.24 ms and 0.12 ms, and ~10% fewer
    bytes, issue 36). The rows read back are the same (:func:`arrow_of`)."""
    import pyarrow as pa
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema, options=_ipc_plain()) as writer:
        writer.write_batch(batch)
    raw = sink.getvalue()
    if batch.nbytes < COMPRESS_FROM:
        return raw.to_pybytes()
    return PACKED + raw.size.to_bytes(8, "little") + _codec().compress(raw, asbytes=True)


def arrow_rows(rows: Sequence[tuple], name: str) -> bytes:
    """The rows of the declared table ``name`` (tuples starting with its
    columns, in order; extra fields are left out) as
    compressed Arrow IPC bytes: what a reducer emits for a table the driver
    writes (compact, and no Python object per row on the way)."""
    import pyarrow as pa

    schema = _arrow_schema(name)
    # the rows transposed at once (a row's extra fields, past the table's
    # columns, make columns zip leaves out: no shortened tuple per row)
    columns = list(zip(*rows)) or [[] for _ in schema]
    batch = pa.record_batch([pa.array(c, type=f.type) for c, f in zip(columns, schema)],
                            schema=schema)
    return _arrow_bytes(batch, schema)


def arrow_of(data: bytes):
    """The pyarrow table of :func:`arrow_rows` bytes (an Arrow IPC stream,
    or one packed by :func:`_arrow_bytes`)."""
    import pyarrow as pa
    if data[:len(PACKED)] == PACKED:
        start = len(PACKED) + 8
        size = int.from_bytes(data[len(PACKED):start], "little")
        raw = _codec().decompress(memoryview(data)[start:], decompressed_size=size)
        return pa.ipc.open_stream(raw).read_all()
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def envelope_frame(records: Iterable[Record]):
    """A pandas frame of :data:`ENVELOPE` from records."""
    import pandas as pd
    keys, kinds, data = [], [], []
    for key, kind, value in records:
        keys.append(key)
        kinds.append(kind)
        data.append(dumps(value))
    return pd.DataFrame({"key": pd.Series(keys, dtype=object),
                         "kind": pd.Series(kinds, dtype=object),
                         "data": pd.Series(data, dtype=object)})


def records_of(pdf) -> List[Tuple[str, str, bytes]]:
    """(key, kind, pickled data) of a frame of :data:`ENVELOPE`."""
    return list(zip(pdf["key"], pdf["kind"], pdf["data"]))


def broadcast(spark, value):
    """``value`` as a broadcast variable, destroyed when the run's
    :func:`~qarla_spark.spark.cache.scope` ends."""
    from qarla_spark.spark import cache
    return cache.keep(spark.sparkContext.broadcast(value))


def detached(frame):
    """The rows of ``frame`` (a DataFrame) as a frame whose plan is a single
    scan of them (Spark's ``createDataFrame`` of the frame's RDD, its
    schema): the same rows in the same partitions, computed as ``frame``'s
    are (from its cache when it is persisted; recomputed from the RDD's
    lineage when a block is lost, unlike a local checkpoint), without its
    plan. Spark's driver analyses and plans each new frame over its whole
    plan: the statistics stage's union of the QARLA and HBR stages'
    persisted records and its persists planned their long plans again at
    every step (issue 36: ~2.6 s of the driver's time before the stage's
    job at 100 tasks on the 16-core plan, 0.9 s at one task). No Spark job;
    the frame's own plan is planned once, here."""
    from pyspark.sql import DataFrame
    spark = frame.sparkSession
    return DataFrame(spark._jsparkSession.createDataFrame(frame._jdf.rdd(), frame._jdf.schema()),
                     spark)


def over_topics(frame, kernel: Callable[[dict, Any], Iterable[Record]],
                context=None, combine: Optional[Callable[[List[Record]], List[Record]]] = None):
    """``kernel(row, context)`` for every row of ``frame`` (cube rows as
    dicts), on the executors, in ``frame``'s partitions; ``context``: a
    broadcast variable (:func:`broadcast`) or None. ``combine(records)``,
    if given, reduces the records of a partition before they leave it (a
    partial aggregation). Returns the records (lazy, :data:`ENVELOPE`)."""

    def run(batches):
        worker_ready()
        value = context.value if context is not None else None
        out: List[Record] = []
        for pdf in batches:
            for row in pdf.to_dict("records"):
                out.extend(kernel(row, value))
        if combine is not None:
            out = combine(out)
        yield envelope_frame(out)

    return frame.mapInPandas(run, ENVELOPE)


def over_rows(frame, func: Callable[[Any, Any], Iterable[Record]], context=None):
    """``func(pdf, context)`` on every Arrow batch of ``frame`` (a pandas
    frame of its rows), in its partitions: records (lazy)."""

    def run(batches):
        worker_ready()
        value = context.value if context is not None else None
        out: List[Record] = []
        for pdf in batches:
            out.extend(func(pdf, value))
        yield envelope_frame(out)

    return frame.mapInPandas(run, ENVELOPE)


_MASK = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def murmur3_int(value: int, seed: int = 42) -> int:
    """Spark's Murmur3 hash of a 32-bit int (``hash(int)``; the hash
    ``repartition(n, column)`` places an int column's rows by, seed 42), a
    signed 32-bit int."""
    k1 = _rotl((value & _MASK) * 0xCC9E2D51 & _MASK, 15) * 0x1B873593 & _MASK
    h1 = (_rotl(seed ^ k1, 13) * 5 + 0xE6546B64) & _MASK
    h1 ^= 4
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _MASK
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def spark_partition_of(value: int, n_partitions: int) -> int:
    """The partition ``repartition(n_partitions, column)`` puts a row whose
    int column is ``value`` in (``pmod(hash, n)``)."""
    return murmur3_int(value) % n_partitions


@functools.lru_cache(maxsize=64)
def partition_handles(n_partitions: int) -> Tuple[int, ...]:
    """For each partition p of ``n_partitions``, the smallest int ≥ 0 that
    ``repartition(n_partitions, column)`` sends to p: a column of handles
    puts each row in the partition chosen for it."""
    handles: Dict[int, int] = {}
    value = 0
    while len(handles) < n_partitions:
        handles.setdefault(spark_partition_of(value, n_partitions), value)
        value += 1
    return tuple(handles[p] for p in range(n_partitions))


def _placed(records, n_partitions: int, placement: Dict[str, int]):
    """``records`` repartitioned so that the records of key k are in
    partition ``placement[k]``: a column of :func:`partition_handles`
    looked up from the key in a map literal (the JVM's own expression,
    constant-folded: no Python worker, no Spark job, no shuffle besides the
    repartition's; given as one JSON literal). A key the placement does not name goes by Spark's hash
    of the key. (A pandas UDF did the same, but the first task of each
    Python worker paid about 2 s for it, on the critical path.)"""
    import json

    from pyspark.sql import functions as F
    handles = partition_handles(n_partitions)
    # one JSON literal, folded by Spark's optimizer into the same map
    # literal: a few calls into the JVM instead of two per key (~2.5 s of
    # the driver's time for the 520 groups of 40 tasks on a loaded machine)
    text = json.dumps({k: handles[placement[k]] for k in sorted(placement)})
    table = F.from_json(F.lit(text), "map<string,int>")
    part = F.coalesce(table[F.col("key")], F.hash(F.col("key")))
    return records.withColumn("_part", part) \
        .repartition(n_partitions, "_part").select(*ENVELOPE_COLUMNS)


def reduce_by_key(records, reducer: Callable[[str, List[Tuple[str, Any]], Any], Iterable[Record]],
                  n_partitions: int, context=None, placement: Optional[Dict[str, int]] = None):
    """The records grouped by key (hash-partitioned into ``n_partitions``,
    or each key in the partition ``placement`` gives it: groups of known
    costs spread evenly, :func:`placement_by_cost`), and
    ``reducer(key, [(kind, value), ...], context)`` on each group, on the
    executors; the group's records sorted by (kind, pickled bytes).
    Returns the reducer's records (lazy)."""

    def run(batches):
        worker_ready()
        value = context.value if context is not None else None
        groups: Dict[str, List[Tuple[str, bytes]]] = {}
        for pdf in batches:
            for key, kind, data in records_of(pdf):
                groups.setdefault(key, []).append((kind, data))
        out: List[Record] = []
        for key in sorted(groups):
            items = sorted(groups.pop(key))
            out.extend(reducer(key, [(kind, loads(data)) for kind, data in items], value))
        yield envelope_frame(out)

    n = max(1, int(n_partitions))
    shuffled = _placed(records, n, placement) if placement else records.repartition(n, "key")
    return shuffled.mapInPandas(run, ENVELOPE)


def spread_by_cost(costs: Sequence[float], n_bins: int) -> List[int]:
    """The bin of each item of ``costs``, spread over ``n_bins`` as evenly
    as the greedy rule can: the costliest first (equal costs: the earlier
    item), each to the bin with the least so far (ties: the lower bin) — the
    largest bin is at most 4/3 of the best possible (Graham's bound for
    this rule)."""
    import heapq
    loads = [(0.0, b) for b in range(max(1, int(n_bins)))]
    out = [0] * len(costs)
    for i in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        load, b = heapq.heappop(loads)
        out[i] = b
        heapq.heappush(loads, (load + costs[i], b))
    return out


def placement_by_cost(costs: Dict[str, float], n_partitions: int) -> Dict[str, int]:
    """Each key's partition, the groups' estimated ``costs`` spread over
    ``n_partitions`` by :func:`spread_by_cost` (equal costs: key order)."""
    keys = sorted(costs)
    return dict(zip(keys, spread_by_cost([costs[k] for k in keys], n_partitions)))


def of_kinds(records, kinds: Sequence[str]):
    """The records of these kinds (lazy)."""
    from pyspark.sql import functions as F
    return records.filter(F.col("kind").isin(list(kinds)))


def collect(records, kinds: Sequence[str]) -> List[Tuple[str, str, Any]]:
    """(key, kind, value) of the records of ``kinds``, sorted by key and
    kind (one Spark job; only for small, per-task values)."""
    rows = of_kinds(records, kinds).select(*ENVELOPE_COLUMNS).collect()
    out = [(r["key"], r["kind"], r["data"]) for r in rows]
    out.sort(key=lambda t: (t[0], t[1], t[2]))
    return [(key, kind, loads(data)) for key, kind, data in out]


def table_of(records, kind: str, schema: str, columns: Optional[Sequence[str]] = None):
    """The rows of a table held by the records of ``kind`` (each value a
    pandas frame, or a dict of columns, with the columns of ``schema``, a
    DDL string), as a DataFrame (lazy: a narrow map over the records)."""
    from qarla_spark.spark.grouped import empty_frame, schema_columns
    names = [c for c, _ in schema_columns(schema)]

    def run(batches):
        import pandas as pd
        worker_ready()
        parts = []
        for pdf in batches:
            for data in pdf["data"]:
                value = loads(data)
                if isinstance(value, bytes):         # rows as Arrow (table_record)
                    value = arrow_of(value).to_pandas()
                frame = value if isinstance(value, pd.DataFrame) else pd.DataFrame(value)
                if len(frame):
                    parts.append(frame[names])
        if parts:
            yield pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        else:
            yield empty_frame(schema)

    return of_kinds(records, [kind]).select("data").mapInPandas(run, schema)


def _records_to_arrow(name: str):
    """The executor-side function of :func:`records_tables`: a batch of
    records (pickled pandas frames or Arrow bytes) to pyarrow tables."""
    def to_arrow(pdf):
        import pandas as pd
        import pyarrow as pa

        from qarla_spark.tables import table
        schema = table(name).arrow_schema()
        out = []
        for data in pdf["data"]:
            value = loads(data)
            if isinstance(value, bytes):
                out.append(arrow_of(value))
            else:
                frame = value if isinstance(value, pd.DataFrame) else pd.DataFrame(value)
                out.append(pa.Table.from_pandas(frame[list(schema.names)], schema=schema,
                                                preserve_index=False))
        return out
    return to_arrow


def records_tables(records, names: Sequence[str]) -> Dict[str, Any]:
    """The declared tables ``names`` held by the records of those kinds
    (pandas frames, or Arrow from :func:`table_record`), written together:
    one Spark job of the executors for all of them where they can, else
    each by Spark (:func:`table_of`;
    :class:`~qarla_spark.spark.output.ExecutorTables`). The driver holds
    none of them, whatever the number of tasks."""
    from qarla_spark.spark.output import BundledTable, ExecutorTables
    from qarla_spark.tables import table
    bundle = ExecutorTables(of_kinds(records, names).select("kind", "data"), _records_to_arrow,
                            lambda name: table_of(records, name, table(name).ddl))
    return {name: BundledTable(bundle, name) for name in names}
