"""``qarla export``: the per-summary scores of a finished run, in the file
formats of two evaluation toolkits, read without Spark (pyarrow only, like
``qarla report``).

A summary's score under a similarity metric x is its mean similarity to the
topic's models: for a peer s, the mean over the models r of x(s, r); for a
model, over the other models (jackknifed), NaN values left out — exact and
rounded once, the double :func:`qarla_spark.measures.hbr.topic_scores`
gives HBR and the statistics (issue 39). Also,
where the run has them: ``QUEEN(<metric set>)`` (``queen/``: a peer's with
all models, a model's with itself held out) and ``HBR`` (``hbr/``).

- ``sacrerouge``: SacreROUGE's Metrics JSONL (``sacrerouge.data.Metrics``
  as its ``JsonlWriter`` writes it), one file per task,
  ``DIR/<task>/metrics.jsonl``: one object per summary,
  ``{"instance_id": topic, "summarizer_id", "summarizer_type":
  "peer"|"reference", "metrics": {name: value}}``, sorted by instance_id
  then summarizer_id; a missing value is left out.
- ``mtme``: google-research/mt-metrics-eval's test-set layout,
  ``DIR/<test set>/`` (the run folder's name): a task is a language pair,
  a topic a segment (and a document), the peers are the systems, the models
  the reference ``refs``; ``metric-scores/<lp>/<measure>-refs.{sys,seg}.score``
  (``system<TAB>score``; seg: a block per system in segment order; sys: the
  mean over topics), ``human-scores/<lp>.<criterion>.{sys,seg}.score`` from
  ``judgments/``, ``system-outputs/``, ``references/``, ``sources/``,
  ``documents/``; a missing score is ``None``.

Names that cannot be file names or whitespace-separated fields are written
with ``_`` (:func:`safe_name`); ``qarla-export.json`` maps them back. The
similarity table is read one task at a time (a ``pyarrow.dataset`` filter on
its task folders) and each task's files are written before the next is
read; the export is written into ``DIR.incomplete-<id>`` and renamed to
``DIR`` when complete.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import uuid
from typing import Any, Dict, Iterable, List, Optional, Tuple

from qarla_spark import tables as declared
from qarla_spark.measures import exact
from qarla_spark.measures import human as hu
from qarla_spark.measures.resampling import grouped_nan_real_means
from qarla_spark.names import HBR, queen_of
from qarla_spark.paths import local_path
from qarla_spark.report.data import ReportError, load_run

#: the formats ``qarla export`` writes
FORMATS = ("sacrerouge", "mtme")
#: SacreROUGE's file of each task, under ``DIR/<task>/``
SACREROUGE_FILE = "metrics.jsonl"
#: SacreROUGE's ``summarizer_type`` of each role
SUMMARIZER_TYPES = {"peer": "peer", "model": "reference"}
#: mt-metrics-eval: the reference set every metric used (the models), the
#: levels written, the separator of a topic's models in the reference file,
#: the mark of a missing score
MTME_REFSET = "refs"
MTME_LEVELS = ("sys", "seg")
MTME_REFERENCE_JOIN = " ||| "
MTME_MISSING = "None"
#: the test set's name when the run folder's name gives none
MTME_DEFAULT_TESTSET = "qarla"
#: the file mapping the names written back to the run's
NAMES_FILE = "qarla-export.json"

#: a summary: (topic, summarizer); its scores: {measure: value}
Key = Tuple[str, str]


class ExportError(ReportError):
    """The export cannot be made (not a finished run, a bad format, an
    existing ``--out``): one sentence, exit status 1."""

    exit_code = 1


# --------------------------------------------------------------------- names

def safe_name(name: Any, also: str = "") -> str:
    """``name`` as a file name and a whitespace-separated field: whitespace,
    control characters, ``/``, ``\\`` and the characters of ``also`` become
    ``_``, and so does a leading ``.`` (no hidden file, no ``..``)."""
    text = "".join("_" if c.isspace() or ord(c) < 32 or c in "/\\" or c in also else c
                   for c in str(name))
    if not text or text.startswith("."):
        text = "_" + text[1:] if text else "_"
    return text


def unique_names(names: Iterable[str], also: str = "") -> Dict[str, str]:
    """{name: its safe name}, distinct (``_`` appended on a collision),
    assigned in sorted order."""
    out, used = {}, set()
    for name in sorted(set(names)):
        safe = safe_name(name, also)
        while safe in used:
            safe += "_"
        used.add(safe)
        out[name] = safe
    return out


def _one_line(text: Optional[str]) -> str:
    """A text as one line (mt-metrics-eval reads a segment per line, in
    Python's universal-newline mode)."""
    return " ".join((text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def _number(value: Optional[float]) -> str:
    return MTME_MISSING if value is None else repr(float(value))


def _mean(values: Iterable[Optional[float]]) -> Optional[float]:
    """A system's score: the exact mean of its topics' scores, rounded once
    (the statistics' system means of the same doubles)."""
    present = [float(v) for v in values if v is not None]
    return exact.real_mean(present) if present else None


def _human_mean(values: Iterable[Optional[float]]) -> Optional[float]:
    """A system's human score: the exact mean of its topics' readings
    (thirds as thirds), rounded once — the statistics' (issue 39, part 2)."""
    present = [float(v) for v in values if v is not None]
    return hu.mean(present) if present else None


# --------------------------------------------------------------------- reading

def _dataset(run_path: str, name: str, folder: Optional[str] = None):
    """A table of the run as a ``pyarrow.dataset`` (``None``: not written, or
    without rows, as ``sources/`` of a run without sources):
    a table partitioned by task reads its folders as a string column, so
    that a filter on the task reads that task's files only."""
    import pyarrow as pa
    import pyarrow.dataset as ds
    folder = folder or os.path.join(run_path, name)
    if not os.path.isdir(folder):
        return None
    table = declared.BY_NAME.get(name)
    partitioning = None
    if table is not None and table.partition_by:
        partitioning = ds.partitioning(pa.schema([(c, pa.string()) for c in table.partition_by]),
                                       flavor="hive")
    # names read dictionary-encoded: a task's similarity rows repeat a few
    # thousand names millions of times (texts are read as they are)
    strings = [c.name for c in table.columns if c.type == "string" and c.name != "text"] \
        if table else []
    parquet = ds.ParquetFileFormat(
        read_options=ds.ParquetReadOptions(dictionary_columns=strings),
        default_fragment_scan_options=ds.ParquetFragmentScanOptions(pre_buffer=False))
    dataset = ds.dataset(folder, format=parquet, partitioning=partitioning)
    return dataset if dataset.files else None


def _task_rows(dataset, task: str, columns: List[str], extra=None):
    """The rows of one task, ``columns`` only, as an Arrow table."""
    import pyarrow.dataset as ds
    condition = ds.field("task") == task
    if extra is not None:
        condition = condition & extra
    return dataset.to_table(columns=columns, filter=condition)


class _Labels:
    """The distinct values of a string column met batch after batch, each
    with a code in the order it was met (:meth:`codes`), and at the end in
    sorted order (:meth:`ranked`)."""

    def __init__(self):
        self.ids: Dict[str, int] = {}

    def codes(self, array):
        """The codes of one batch's column (an int32 array)."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
        if not pa.types.is_dictionary(array.type):
            array = pc.dictionary_encode(array)
        mapping = np.asarray([self.ids.setdefault(v, len(self.ids))
                              for v in array.dictionary.to_pylist()] or [0], dtype=np.int32)
        return mapping[array.indices.fill_null(0).to_numpy(zero_copy_only=False)]

    def names(self) -> List[str]:
        """The values by code."""
        return list(self.ids)

    def ranked(self) -> Tuple[List[str], Any]:
        """(the values sorted, each code's position among them)."""
        import numpy as np
        labels = sorted(self.ids)
        rank = np.empty(len(labels), dtype=np.int32)
        rank[[self.ids[v] for v in labels]] = np.arange(len(labels), dtype=np.int32)
        return labels, rank


class RunScores:
    """A finished run's per-summary scores, one task at a time."""

    def __init__(self, run_dir: str):
        try:
            run = load_run(run_dir)
        except ReportError as exc:
            raise ExportError(str(exc)) from None
        self.run_dir = run_dir
        self.path = run.path
        self.info = run.info
        self.summaries = _dataset(self.path, "summaries")
        if self.summaries is None:
            raise ExportError(f"{run_dir} has no summaries/ table: it is not a run qarla "
                              "run or qarla similarities wrote")
        self.similarities = _dataset(self.path, "similarities", self._similarity_folder())
        self.queen = _dataset(self.path, "queen")
        self.hbr = _dataset(self.path, "hbr")
        self.judgments = _dataset(self.path, "judgments")
        self.sources = _dataset(self.path, "sources")

    def _similarity_folder(self) -> Optional[str]:
        """The run's similarities/, or the finished run's table it reused
        (``--similarities``, a local folder)."""
        own = os.path.join(self.path, "similarities")
        if os.path.isdir(own):
            return own
        reused = (self.info.get("similarities") or {}).get("reused")
        folder = local_path(reused) if reused else None
        return folder if folder and os.path.isdir(folder) else None

    def tasks(self) -> List[str]:
        """The run's tasks, in name order (the summaries' task folders)."""
        import pyarrow.compute as pc
        column = self.summaries.to_table(columns=["task"])["task"]
        return sorted(v for v in pc.unique(column).to_pylist() if v is not None)

    def summaries_of(self, task: str, text: bool = False) -> Dict[Key, Dict[str, Any]]:
        """{(topic, summarizer): {"role", "text"?}} of one task."""
        columns = ["topic", "summarizer", "role"] + (["text"] if text else [])
        rows = _task_rows(self.summaries, task, columns).to_pylist()
        return {(r["topic"], r["summarizer"]): r for r in rows}

    def scores_of(self, task: str, roles: Dict[Key, str]
                  ) -> Tuple[Dict[Key, Dict[str, float]], List[str]]:
        """({(topic, summarizer): {measure: value}}, the measures in their
        order: the similarity metrics by name, then QUEEN's sets, then HBR).
        Missing and NaN values are left out."""
        scores: Dict[Key, Dict[str, float]] = {}
        metrics = self._metric_means(task, roles, scores)
        queens = self._queen(task, scores)
        hbrs = self._hbr(task, scores)
        return scores, metrics + queens + hbrs

    def _metric_means(self, task, roles, scores) -> List[str]:
        """Each summary's mean similarity to the topic's models (for a
        model, the other models: no row has s = r), per metric. The task's
        rows are read batch by batch and only those whose r is a model of
        the topic and whose value is not NaN are kept, as codes; each mean
        is exact and rounded once
        (:func:`~qarla_spark.measures.resampling.grouped_nan_real_means`, as HBR's
        topic scores: the same double the statistics read)."""
        import numpy as np
        import pyarrow.dataset as ds
        if self.similarities is None:
            return []
        names = ("topic", "summarizer_s", "summarizer_r", "metric")
        labels = {c: _Labels() for c in names}
        model_pair: Dict[Tuple[int, int], bool] = {}
        kept: Dict[str, List[Any]] = {c: [] for c in names + ("value",)}
        for batch in self.similarities.to_batches(
                columns=[*names, "value"], filter=ds.field("task") == task):
            if batch.num_rows == 0:
                continue
            codes = {c: labels[c].codes(batch.column(c)) for c in names}
            value = batch.column("value").to_numpy(zero_copy_only=False)
            pair = codes["topic"].astype(np.int64) << 32 | codes["summarizer_r"]
            unique, inverse = np.unique(pair, return_inverse=True)
            topics, models = labels["topic"].names(), labels["summarizer_r"].names()
            for p in unique.tolist():
                if p not in model_pair:
                    model_pair[p] = roles.get((topics[p >> 32], models[p & 0xFFFFFFFF])) == "model"
            keep = np.asarray([model_pair[p] for p in unique.tolist()], dtype=bool)[inverse]
            keep &= ~np.isnan(value)
            for c in names:
                kept[c].append(codes[c][keep])
            kept["value"].append(value[keep])
        if not kept["value"] or not sum(len(v) for v in kept["value"]):
            return []
        ranked = {c: labels[c].ranked() for c in names}
        topic, s, r, metric = (ranked[c][1][np.concatenate(kept.pop(c))] for c in names)
        value = np.concatenate(kept.pop("value"))
        topic_names, s_names, metric_names = (ranked[c][0] for c in
                                              ("topic", "summarizer_s", "metric"))
        n_m, n_sm = len(metric_names), len(s_names) * len(metric_names)
        key = topic.astype(np.int64) * n_sm + s.astype(np.int64) * n_m + metric
        del topic, s, metric
        order = np.lexsort((r, key))
        key, value = key[order], value[order]
        del r, order
        starts = np.concatenate(([0], np.flatnonzero(np.diff(key)) + 1))
        counts = np.diff(np.append(starts, len(key)))
        # the exact mean rounded once, by the function HBR's topic scores
        # use (the same double)
        means = grouped_nan_real_means(value, np.repeat(np.arange(len(starts)), counts),
                                       len(starts))
        for k, mean in zip(key[starts].tolist(), means.tolist()):
            summary = (topic_names[k // n_sm], s_names[(k % n_sm) // n_m])
            scores.setdefault(summary, {})[metric_names[k % n_m]] = mean
        return [metric_names[i] for i in sorted(set((key[starts] % n_m).tolist()))]

    def _queen(self, task, scores) -> List[str]:
        """QUEEN of a peer with all models (holdout null) and of a model
        with itself held out: ``QUEEN(<metric set>)``."""
        import pyarrow.dataset as ds
        if self.queen is None:
            return []
        own = ds.field("holdout").is_null() | (ds.field("holdout") == ds.field("summarizer"))
        rows = _task_rows(self.queen, task, ["topic", "summarizer", "metric_set", "queen"], own)
        names = set()
        for row in rows.to_pylist():
            if row["queen"] is None or math.isnan(row["queen"]):
                continue
            name = queen_of(row['metric_set'])
            names.add(name)
            scores.setdefault((row["topic"], row["summarizer"]), {})[name] = row["queen"]
        return sorted(names)

    def _hbr(self, task, scores) -> List[str]:
        """HBR of every scored summary: ``HBR`` (``HBR(<measure set>)``
        when a task has several)."""
        if self.hbr is None:
            return []
        rows = _task_rows(self.hbr, task, ["topic", "summarizer", "measure_set", "hbr"])
        rows = rows.to_pylist()
        several = len({r["measure_set"] for r in rows}) > 1
        names = set()
        for row in rows:
            if row["hbr"] is None or math.isnan(row["hbr"]):
                continue
            name = f"{HBR}({row['measure_set']})" if several else HBR
            names.add(name)
            scores.setdefault((row["topic"], row["summarizer"]), {})[name] = row["hbr"]
        return sorted(names)

    def judgments_of(self, task: str) -> Dict[str, Dict[Key, float]]:
        """{criterion: {(topic, summarizer): score}} (the mean over a
        summary's raters where it has several, exact and rounded once: the
        number the stages used)."""
        if self.judgments is None:
            return {}
        rows = _task_rows(self.judgments, task, ["topic", "summarizer", "criterion", "score"])
        found: Dict[str, Dict[Key, List[float]]] = {}
        for row in rows.to_pylist():
            if row["score"] is not None and not math.isnan(row["score"]):
                found.setdefault(row["criterion"], {}).setdefault(
                    (row["topic"], row["summarizer"]), []).append(row["score"])
        return {c: {k: hu.mean(v) for k, v in by.items()} for c, by in found.items()}

    def sources_of(self, task: str) -> Dict[str, List[str]]:
        """{topic: its source documents}."""
        if self.sources is None:
            return {}
        rows = _task_rows(self.sources, task, ["topic", "documents"]).to_pylist()
        return {r["topic"]: list(r["documents"] or []) for r in rows}


# --------------------------------------------------------------------- writing

def _write_lines(path: str, lines: Iterable[str]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for line in lines:
            out.write(line)
            out.write("\n")


def write_sacrerouge(scores: RunScores, out: str) -> Dict[str, Any]:
    """``out/<task>/metrics.jsonl`` for every task; what ``qarla-export.json``
    records."""
    from qarla_spark.memory import release_freed_memory
    tasks = scores.tasks()
    folders = unique_names(tasks)
    record: Dict[str, Any] = {"tasks": {}}
    for task in tasks:
        summaries = scores.summaries_of(task)
        roles = {k: v["role"] for k, v in summaries.items()}
        values, measures = scores.scores_of(task, roles)
        lines = []
        for key in sorted(summaries):
            got = values.get(key, {})
            lines.append(json.dumps({
                "instance_id": key[0], "summarizer_id": key[1],
                "summarizer_type": SUMMARIZER_TYPES[roles[key]],
                "metrics": {m: got[m] for m in measures if m in got}}, allow_nan=False))
        _write_lines(os.path.join(out, folders[task], SACREROUGE_FILE), lines)
        record["tasks"][folders[task]] = {"task": task, "summaries": len(lines),
                                          "measures": measures}
        del summaries, values, lines
        release_freed_memory()
    return record


def testset_name(run_dir: str) -> str:
    """mt-metrics-eval's test-set name of a run: its folder's name."""
    base = os.path.basename(os.path.normpath(local_path(run_dir) or run_dir))
    return safe_name(base) if base and base not in (".", "..") else MTME_DEFAULT_TESTSET


def write_mtme(scores: RunScores, out: str) -> Dict[str, Any]:
    """``out/<test set>/`` in mt-metrics-eval's layout, every task a
    language pair; what ``qarla-export.json`` records."""
    from qarla_spark.memory import release_freed_memory
    name = testset_name(scores.run_dir)
    root = os.path.join(out, name)
    tasks = scores.tasks()
    # a language pair is the first field of a human-score file's name and a
    # glob pattern: no dot, no wildcard
    lps = unique_names(tasks, also=".*?[]")
    record: Dict[str, Any] = {"testset": name, "refset": MTME_REFSET, "levels": MTME_LEVELS,
                              "lps": {}}
    for task in tasks:
        lp = lps[task]
        summaries = scores.summaries_of(task, text=True)
        roles = {k: v["role"] for k, v in summaries.items()}
        values, measures = scores.scores_of(task, roles)
        topics = sorted({t for t, _ in summaries})
        docs = unique_names(topics)
        peers = sorted({s for (_, s), r in roles.items() if r == "peer"})
        systems = unique_names(peers)
        files = unique_names(measures)

        _write_lines(os.path.join(root, "documents", f"{lp}.docs"),
                     (f"{lp} {docs[t]}" for t in topics))
        sources = scores.sources_of(task)
        _write_lines(os.path.join(root, "sources", f"{lp}.txt"),
                     (_one_line(" ".join(sources.get(t, []))) for t in topics))
        models: Dict[str, List[str]] = {}
        for (t, s) in sorted(summaries):
            if roles[(t, s)] == "model":
                models.setdefault(t, []).append(_one_line(summaries[(t, s)]["text"]))
        _write_lines(os.path.join(root, "references", f"{lp}.{MTME_REFSET}.txt"),
                     (MTME_REFERENCE_JOIN.join(models.get(t, [])) for t in topics))
        for peer in peers:
            _write_lines(os.path.join(root, "system-outputs", lp, f"{systems[peer]}.txt"),
                         (_one_line(summaries[(t, peer)]["text"]) if (t, peer) in summaries
                          else "" for t in topics))

        def score_files(prefix: str, table: Dict[Key, float], who: List[str],
                        mean=_mean) -> None:
            seg = {p: [table.get((t, p)) for t in topics] for p in who}
            _write_lines(f"{prefix}.seg.score",
                         (f"{systems[p]}\t{_number(v)}" for p in who for v in seg[p]))
            _write_lines(f"{prefix}.sys.score",
                         (f"{systems[p]}\t{_number(mean(seg[p]))}" for p in who))

        for measure in measures:
            table = {k: v[measure] for k, v in values.items() if measure in v}
            score_files(os.path.join(root, "metric-scores", lp,
                                     f"{files[measure]}-{MTME_REFSET}"), table, peers)
        judgments = scores.judgments_of(task)
        criteria = unique_names(judgments)
        for criterion, table in sorted(judgments.items()):
            judged = [p for p in peers if any((t, p) in table for t in topics)]
            if judged:
                score_files(os.path.join(root, "human-scores", f"{lp}.{criteria[criterion]}"),
                            table, judged, _human_mean)
        record["lps"][lp] = {
            "task": task, "segments": topics,
            "documents": {docs[t]: t for t in topics},
            "systems": {systems[p]: p for p in peers},
            "metrics": {f"{files[m]}-{MTME_REFSET}": m for m in measures},
            "human": {criteria[c]: c for c in sorted(judgments)}}
        del summaries, values
        release_freed_memory()
    return record


WRITERS = {"sacrerouge": write_sacrerouge, "mtme": write_mtme}


def export_run(run_dir: str, fmt: str, out: str) -> Dict[str, Any]:
    """Write the per-summary scores of the finished run ``run_dir`` to the
    local folder ``out`` (absent or empty) in ``fmt`` (:data:`FORMATS`);
    returns what ``out/qarla-export.json`` says. :class:`ExportError` (one
    sentence) when the run is not finished, the format unknown or ``out``
    not empty; nothing is written then."""
    if fmt not in WRITERS:
        raise ExportError(f"unknown export format {fmt!r}: choose one of {', '.join(FORMATS)}")
    target = local_path(out)
    if target is None:
        raise ExportError(f"{out} is not on the local file system: qarla export writes a "
                          "local folder")
    if os.path.exists(target) and not (os.path.isdir(target) and not os.listdir(target)):
        raise ExportError(f"the output directory {out.rstrip('/')} already exists and is not "
                          "empty: choose another --out")
    scores = RunScores(run_dir)
    target = os.path.abspath(target)
    staging = f"{target.rstrip(os.sep)}.incomplete-{uuid.uuid4().hex[:12]}"
    os.makedirs(staging)
    try:
        record = {"format": fmt, "run": os.path.abspath(scores.path),
                  "signature": scores.info.get("signature"),
                  **WRITERS[fmt](scores, staging)}
        languages = (scores.info.get("similarities") or {}).get("languages") or {}
        if any(d.get("language") != "en" for d in languages.values()):
            # issue 38: the language each task's scores were computed in
            record["languages"] = {t: d.get("language") for t, d in sorted(languages.items())}
        with open(os.path.join(staging, NAMES_FILE), "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1, sort_keys=True)
            handle.write("\n")
        os.replace(staging, target)     # over an empty folder too
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return record
