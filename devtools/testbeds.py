"""Larger text testbeds made from the bundled SummEval, for scale benchmarks.

:func:`scale_testbed` builds ``n_tasks`` tasks of ``n_topics`` topics of
SummEval's shape (11 models, 16 peers per topic) from SummEval's own texts,
by a seeded resampling of its topics; :func:`write_testbed` writes it as
input files (JSONL in the bundled format, ``human`` judgments included, and
a sources file). Pure Python, no Spark: ``devtools/benchmark_scale.py`` uses it
and ``tests/test_scale_testbed.py`` checks it.

How a generated topic is made, and why:

- **One SummEval topic per generated topic, whole.** A generated topic takes
  one SummEval topic's article (its source), its 11 references (models,
  ``ref00``..``ref10``) and its 16 system outputs (peers, ``M0``..``M23``),
  under a new topic id. Nothing is mixed across topics: every summary of a
  real topic is about the same article, and that is what makes the
  similarities (and the work behind them: n-gram hits, LCS tables, the
  topic's TVM terms) what they are; a peer taken from another article
  would be trivially unlike the references. Nothing changes roles either:
  a reference never becomes a system output. System names are kept, so
  within a task each name is one system's outputs over all its topics, as
  in a real shared task (system-level rankings, JACK and the agreement
  with humans stay meaningful).
- **Seeded rounds without replacement.** Each task draws its topics in
  rounds, each round a seeded permutation of SummEval's 100 topics: a task
  of up to 100 topics never repeats an article (a real testbed does not),
  a task of 1,000 topics uses every article exactly 10 times, and a task's
  cost per topic is SummEval's on average. Every task has its own
  permutation (seeded by ``seed`` and the task's index), so a task's draw
  does not depend on how many tasks there are.
- **Distinct texts within a topic.** In 38 SummEval topics two or more
  extractive systems output byte-identical texts (mostly the same lead
  sentences). The first summarizer in the topic's order (models, then
  peers, each by name) keeps the text; each later duplicate becomes the
  nearest distinct extract: its first sentences without the last one (then
  two, ...), then its last sentences, then the text cut short by tokens —
  what another extractive system would plausibly output. Such a changed
  text was never judged, so it carries no ``human`` scores; every other
  peer keeps SummEval's expert judgments, so AUC and the agreement with
  humans are computed on real judgments.

The same SummEval topic reused within a task (more than 100 topics) gives
byte-identical texts under different topic ids; the library computes per
(task, topic), so this costs what distinct texts would.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from dataclasses import dataclass, field
from importlib import resources
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from qarla_spark.text.tokenize import split_sentences

Record = Dict[str, object]


@dataclass
class ScaleTestbed:
    """A generated testbed: records in the input format, and where each
    generated topic comes from."""

    summaries: List[Record]                 # {task, topic, summarizer, role, text, human?}
    sources: List[Record]                   # {task, topic, documents}
    origin: Dict[Tuple[str, str], str] = field(default_factory=dict)  # (task, topic) -> base
    changed: int = 0                        # summaries changed to keep a topic's texts distinct

    @property
    def tasks(self) -> List[str]:
        return sorted({r["task"] for r in self.sources})

    @property
    def n_topics(self) -> int:
        return len(self.origin)


def _bundled_jsonl(name: str) -> List[Record]:
    data = (resources.files("qarla_spark") / "data" / "summeval" / name).read_bytes()
    return [json.loads(line) for line in gzip.decompress(data).splitlines() if line.strip()]


def summeval_records() -> Tuple[List[Record], List[Record]]:
    """(summaries, sources) of the bundled SummEval, as records."""
    return _bundled_jsonl("summaries.jsonl.gz"), _bundled_jsonl("sources.jsonl.gz")


def _summarizer_order(record: Record) -> Tuple[int, str]:
    return (0 if record["role"] == "model" else 1, str(record["summarizer"]))


def _alternatives(text: str) -> Iterable[str]:
    """Extracts near ``text``, nearest first: fewer sentences from the end,
    then from the start, then fewer tokens from the end."""
    sentences = split_sentences(text)
    for k in range(1, len(sentences)):
        yield " ".join(sentences[:-k])
    for k in range(1, len(sentences)):
        yield " ".join(sentences[k:])
    tokens = text.split()
    for k in range(1, len(tokens)):
        yield " ".join(tokens[:-k])


def distinct_topic(records: Sequence[Record]) -> Tuple[List[Record], int]:
    """One topic's summaries with distinct texts (see the module's
    docstring): copies in the topic's order, and how many were changed.
    A changed summary loses its ``human`` scores."""
    taken = {str(r["text"]) for r in records}    # a new text must be unlike all of them
    seen, out, changed = set(), [], 0
    for record in sorted(records, key=_summarizer_order):
        record = dict(record)
        text = str(record["text"])
        if text in seen:
            text = next((t for t in _alternatives(text) if t.strip() and t not in taken), None)
            if text is None:
                raise ValueError(f"topic {record['topic']!r}: no distinct text for "
                                 f"{record['summarizer']!r}")
            record["text"] = text
            record.pop("human", None)
            changed += 1
        seen.add(text)
        taken.add(text)
        out.append(record)
    return out, changed


def topic_order(bases: Sequence[str], n_topics: int, seed: int, task_index: int) -> List[str]:
    """The base topics of one task: rounds of seeded permutations of
    ``bases`` (sorted first), cut at ``n_topics``."""
    rng = random.Random(f"qarla-scale:{seed}:{task_index}")
    pool, order = sorted(bases), []
    while len(order) < n_topics:
        round_ = list(pool)
        rng.shuffle(round_)
        order += round_
    return order[:n_topics]


def scale_testbed(n_tasks: int, n_topics: int, seed: int = 13,
                  records: Optional[Tuple[List[Record], List[Record]]] = None,
                  task_prefix: str = "scale") -> ScaleTestbed:
    """``n_tasks`` tasks (``<prefix>00``, ...) of ``n_topics`` topics
    (``t0000``, ...) made from ``records`` (default: the bundled SummEval's
    summaries and sources) by the seeded resampling of the module's
    docstring. The same arguments give the same testbed."""
    if n_tasks < 1 or n_topics < 1:
        raise ValueError("n_tasks and n_topics must be positive")
    summaries, sources = records if records is not None else summeval_records()
    by_topic: Dict[str, List[Record]] = {}
    for r in summaries:
        by_topic.setdefault(str(r["topic"]), []).append(r)
    documents = {str(s["topic"]): list(s["documents"]) for s in sources}
    distinct = {topic: distinct_topic(rs) for topic, rs in by_topic.items()}
    width = max(2, len(str(n_tasks - 1)))
    twidth = max(4, len(str(n_topics - 1)))
    out = ScaleTestbed([], [])
    for k in range(n_tasks):
        task = f"{task_prefix}{k:0{width}d}"
        for i, base in enumerate(topic_order(list(by_topic), n_topics, seed, k)):
            topic = f"t{i:0{twidth}d}"
            out.origin[(task, topic)] = base
            rows, changed = distinct[base]
            out.changed += changed
            for r in rows:
                record = {"task": task, "topic": topic, "summarizer": r["summarizer"],
                          "role": r["role"], "text": r["text"]}
                if r.get("human"):
                    record["human"] = dict(r["human"])
                out.summaries.append(record)
            if base in documents:
                out.sources.append({"task": task, "topic": topic,
                                    "documents": documents[base]})
    return out


def write_testbed(testbed: ScaleTestbed, directory: str) -> Tuple[str, str]:
    """Write ``summaries.jsonl`` and ``sources.jsonl`` (UTF-8, one object a
    line) into ``directory``; their paths."""
    os.makedirs(directory, exist_ok=True)
    paths = (os.path.join(directory, "summaries.jsonl"), os.path.join(directory, "sources.jsonl"))
    for path, rows in zip(paths, (testbed.summaries, testbed.sources)):
        with open(path, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return paths
