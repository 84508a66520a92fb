"""Issue 37: a statistic of ``metric_eval/`` is declared once
(:mod:`qarla_spark.meta_statistics`) and computed by one kernel
(:data:`qarla_spark.measures.judge_statistics.KERNELS`). A toy statistic
added through those two public declarations, and nothing else, flows from
the stages' records (:mod:`qarla_spark.stages.statistics_inputs`) through
the judge-based groups (:mod:`qarla_spark.stages.judges`) to
``metric_eval/``'s rows and its chance rows, with the level, interval,
unit and tie threshold it declares; a toy without replicates has no
interval by its declaration alone; the other statistics' rows do not move.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from qarla_spark import meta_statistics as ms
from qarla_spark.measures import judge_statistics as js
from qarla_spark.names import CHANCE, HBR
from qarla_spark.spark import rounds as rd
from qarla_spark.stages import judges
from qarla_spark.stages.statistics_inputs import HbrContext, StatisticsRun, _meta_records
from test_judge_statistics import judged

TASK, N = "task", 40
#: with replicates: how many systems have a score (the point value: all of
#: them; a replicate leaves out those without a drawn topic)
SCORED = ms.Statistic("toy_scored", "system", "toy scored", "a toy: systems with a score",
                      (0.0, 100.0), ms.PERCENTILE, unit="topics", short="toy")
#: without replicates: the best system score of each measure
BEST = ms.Statistic("toy_best", "system", "toy best", "a toy: the best system score",
                    (-1.0, 1.0), None, unit="systems")


def _scored(scores: js.SystemScores) -> np.ndarray:
    return (scores.x.shape[1] - np.isnan(scores.x).sum(axis=1)).astype(np.float64)


def _best(scores: js.SystemScores) -> np.ndarray:
    return np.nanmax(scores.x[:1], axis=1)


@pytest.fixture
def toys(monkeypatch):
    """The two toys declared and given their kernels (undone after)."""
    monkeypatch.setattr(ms, "STATISTICS", ms.STATISTICS + (SCORED, BEST))
    monkeypatch.setitem(js.KERNELS, SCORED.key, _scored)
    monkeypatch.setitem(js.KERNELS, BEST.key, _best)


def _items(data: js.JudgedScores):
    """The records the HBR stage emits for the judge-based groups of one
    cube (its measures: two singles and HBR), by key."""
    out = {}
    for t, topic in enumerate(data.topics):
        have = [s for s in range(len(data.systems)) if np.isfinite(data.human[t, s])]
        judged_ = {"summarizer": [data.systems[s] for s in have],
                   "criterion": ["crit"] * len(have),
                   "score": [float(data.human[t, s]) for s in have]}
        for key, kind, value in _meta_records(TASK, "s_meta_h", topic, list(data.systems),
                                              data.scores[t], judged_):
            out.setdefault(key, []).append((kind, value))
    return out


CTX = StatisticsRun(seed=3, n=N, hbr=HbrContext(("m0", "m1", HBR)))


def _metric_eval(records):
    """metric_eval/'s rows of a group's records, as a DataFrame."""
    found = [value for _, name, value in records if name == "metric_eval"]
    assert len(found) == 1
    return rd.arrow_of(found[0]).to_pandas()


def _groups():
    items = _items(judged(0))
    meta = judges.meta_group(rd.key_of(TASK, "meta"), TASK, items[rd.key_of(TASK, "meta")],
                             CTX)
    chance = judges.chance_group(rd.key_of(TASK, "chance", "crit"), TASK, "crit",
                                 items[rd.key_of(TASK, "chance", "crit")], CTX)
    return _metric_eval(meta[0]), _metric_eval(chance[0])


def test_every_declared_statistic_has_one_kernel_and_a_valid_declaration():
    names = [st.name for st in ms.STATISTICS]
    keys = [st.key for st in ms.STATISTICS]       # a name may be declared at both levels
    assert len(set(keys)) == len(keys)
    assert set(js.KERNELS) == set(keys)
    for st in ms.STATISTICS:
        assert st.level in ms.LEVELS and st.interval in (ms.RECENTRED, ms.PERCENTILE, None)
        assert st.bounds[0] < st.bounds[1]
    assert ms.PRIMARY in names and set(ms.REPORTED) <= set(names)


def test_a_toy_statistic_flows_to_metric_eval(toys):
    rows, chance = _groups()
    measures = ["m0", "m1", HBR]
    mine = rows[rows["statistic"] == SCORED.name]
    assert list(mine["measure"]) == measures
    assert (mine["level"] == "system").all() and (mine["unit"] == "topics").all()
    assert (mine["interval"] == "percentile").all() and mine["epsilon"].isna().all()
    assert (mine["value"] == mine["n_systems"]).all()
    assert ((mine["ci_low"] <= mine["value"]) & (mine["value"] <= mine["ci_high"])).all()
    # without replicates: no interval, by its declaration alone
    best = rows[rows["statistic"] == BEST.name]
    assert list(best["measure"]) == measures and (best["unit"] == "systems").all()
    assert best["interval"].isna().all() and best["ci_low"].isna().all()
    assert np.isfinite(best["value"]).all()
    # after the declared statistics, in the declared order
    assert list(dict.fromkeys(zip(rows["level"], rows["statistic"]))) == \
        [st.key for st in ms.STATISTICS]
    # the chance baseline: every declared statistic's band
    assert list(zip(chance["level"], chance["statistic"])) == [st.key for st in ms.STATISTICS]
    band = chance[chance["statistic"] == SCORED.name].iloc[0]
    assert band["measure"] == CHANCE and band["interval"] == ms.BAND
    assert band["value"] == band["ci_low"] == band["ci_high"] == band["n_systems"]
    # the notes and the run's description of the statistics name it
    assert f"`{SCORED.name}`" in ms.statistic_note()
    assert js.configuration()[SCORED.name] == SCORED.explains


def test_a_toy_statistic_leaves_the_others_rows_alone(toys, monkeypatch):
    with_toys = _groups()
    monkeypatch.undo()
    without = _groups()
    toy = {SCORED.name, BEST.name}
    for got, before in zip(with_toys, without):
        kept = got[~got["statistic"].isin(toy)].reset_index(drop=True)
        assert kept.equals(before)
        assert not before["statistic"].isin(toy).any()


def test_a_statistic_without_replicates_is_no_special_case():
    """Soft pairwise accuracy is declared without replicates: its rows have
    no interval, its unit is its own, and KING is not set against it."""
    rows, _ = _groups()
    for st in ms.STATISTICS:
        mine = rows[(rows["statistic"] == st.name) & (rows["level"] == st.level)]
        assert len(mine) == 3 and (mine["unit"] == st.unit).all()
        assert mine["interval"].isna().all() == (not st.replicates)
        assert mine["epsilon"].notna().all() == st.calibrated
    soft = ms.statistic("soft_pairwise_accuracy")
    assert not soft.replicates and soft.unit == "sign flips"
    assert all(math.isfinite(v) for v in rows[rows["statistic"] == soft.name]["value"])


def test_a_toy_metric_flows_to_the_battery():
    """A user's metric added through the public declaration
    (``registry.register_metric``) is selected by name and computed for
    every ordered pair of a topic beside the built-in ones."""
    from qarla_spark.metrics import registry
    from qarla_spark.metrics.battery import topic_similarities

    name = "toy_length_gap.a"
    registry.register_metric(name, lambda s, r: float(len(s) - len(r)),
                             description="a toy: the difference of the lengths")
    try:
        metrics = registry.resolve_metrics(f"R-1.a,{name}")
        assert metrics == ("R-1.a", name)
        assert registry.describe(name).description == "a toy: the difference of the lengths"
        texts = ["alpha beta gamma", "alpha beta", "delta"]
        found = topic_similarities(texts, metrics, roles=["model", "peer", "peer"],
                                   user=registry.user_functions())
        lengths = [3, 2, 1]
        toy = found.values[:, found.metrics.index(name)]
        assert list(toy) == [float(lengths[s] - lengths[r]) for s, r in zip(found.s, found.r)]
    finally:
        registry.unregister_metric(name)
    assert name not in registry.user_functions()


def test_the_stages_named_rows_start_with_their_tables_columns():
    """The QARLA and HBR stages' named rows (:mod:`qarla_spark.stages.records`)
    start with their declared table's columns, in order (``table_record``
    keeps those); their records' types are frozen and pickle as
    themselves."""
    import pickle

    from qarla_spark.stages import records
    from qarla_spark.tables import table
    for name, row in records.TABLE_ROWS.items():
        columns = [c.name for c in table(name).columns]
        assert list(row._fields[:len(columns)]) == columns, name
    case = records.KingCases("t1", 0, np.array([1, 2]), np.array([3, 4]), 3, 6, ["c"])
    again = pickle.loads(pickle.dumps(case))
    assert type(again) is records.KingCases and again.topic == "t1"
    assert (again.win == case.win).all()
    with pytest.raises(AttributeError):
        case.topic = "t2"


def test_a_table_record_reads_back_its_rows_small_or_large():
    """A record's Arrow rows (rounds._arrow_bytes) read back equal whether
    compressed or not: small records are written uncompressed (zstd's fixed
    cost per record, issue 36), large ones as one zstd frame of the stream
    (rounds.PACKED), whose rows read back as Arrow's own compression's."""
    import pyarrow as pa
    schema = pa.schema([("task", pa.string()), ("value", pa.float64()), ("n", pa.int64())])
    for n in (0, 3, 200, 20_000):
        batch = pa.record_batch([pa.array([f"t{i % 3}" for i in range(n)], pa.string()),
                                 pa.array(np.zeros(n)), pa.array(np.arange(n) % 2)],
                                schema=schema)
        data = rd._arrow_bytes(batch, schema)
        assert rd.arrow_of(data).equals(pa.Table.from_batches([batch], schema))
        if batch.nbytes < rd.COMPRESS_FROM:
            assert len(data) >= batch.nbytes                      # as they are
        else:
            assert data.startswith(rd.PACKED)                     # one zstd frame
            assert len(data) < batch.nbytes / 4                   # compressed
            sink = pa.BufferOutputStream()                        # Arrow's own
            with pa.ipc.new_stream(sink, schema, options=pa.ipc.IpcWriteOptions(
                    compression="zstd")) as writer:
                writer.write_batch(batch)
            assert rd.arrow_of(data).equals(rd.arrow_of(sink.getvalue().to_pybytes()))
    rows = [("a", 0.5, 1), ("b", float("nan"), 2)]
    assert rd.arrow_of(rd._arrow_bytes(pa.record_batch(
        [pa.array(c) for c in zip(*rows)], schema=schema), schema)).to_pylist()[0] == \
        {"task": "a", "value": 0.5, "n": 1}


def _old_arrow_rows(rows, name):
    """rounds.arrow_rows before issue 36's round 2 (kept as the reference):
    a shortened tuple per row, a list per column, the schema built anew."""
    import pyarrow as pa

    from qarla_spark.tables import table
    schema = table(name).arrow_schema()
    width = len(schema)
    rows = [tuple(r[:width]) for r in rows]
    columns = list(zip(*rows)) if rows else [[] for _ in schema]
    batch = pa.record_batch([pa.array(list(c), type=f.type) for c, f in zip(columns, schema)],
                            schema=schema)
    return rd._arrow_bytes(batch, schema)


@pytest.mark.parametrize("n", [0, 1, 7, 5000])
def test_a_table_record_of_rows_reads_back_the_old_rows(n):
    """rounds.table_record (rows transposed at once, extra fields left out
    by zip, the schema made once per declaration) reads back the rows the
    old construction gave: the same values and bits (NaN, None, numpy
    scalars, a row's extra fields), from a list or a generator."""
    rng = np.random.default_rng(n)
    rows = []
    for i in range(n):
        value = [float("nan"), None, np.float64(rng.random()), 0.1 * i, -0.0][i % 5]
        rank = [None, i, np.int64(i % 3)][i % 3]
        rows.append((f"t{i % 2}", "c", "basis" if i % 4 else None, f"m{i}", value, rank,
                     *(["extra"] * (i % 3))))
    want = rd.arrow_of(_old_arrow_rows(rows, "metric_ranks"))
    for given in (rows, iter(rows)):
        key, kind, data = rd.table_record("k", "metric_ranks", given)
        got = rd.arrow_of(data)
        assert (key, kind) == ("k", "metric_ranks") and got.num_rows == n
        assert got.schema.equals(want.schema)
        for a, b in zip(got.columns, want.columns):
            a, b = a.combine_chunks(), b.combine_chunks()
            assert a.null_count == b.null_count
            assert [x.to_pybytes() if x is not None else None for x in a.buffers()] == \
                [x.to_pybytes() if x is not None else None for x in b.buffers()]
