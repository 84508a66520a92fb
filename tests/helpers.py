"""Helpers shared by the tests (import as ``from helpers import ...``)."""

from __future__ import annotations

import json
from pathlib import Path


def write_jsonl(path: Path, records) -> Path:
    """Write dicts (or raw strings, written as they are) one per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for rec in records:
            handle.write(rec if isinstance(rec, str) else json.dumps(rec))
            handle.write("\n")
    return path


def make_testbed(n_topics=2, n_models=4, n_peers=3, task="t", judged=True):
    """Records of a small regular testbed: topics t0.., models m0.., peers p0..;
    peers carry one 'quality' judgment."""
    records = []
    for t in range(n_topics):
        for m in range(n_models):
            records.append({"task": task, "topic": f"t{t}", "summarizer": f"m{m}",
                            "role": "model", "text": f"model {m} of topic {t} . a sentence ."})
        for p in range(n_peers):
            rec = {"task": task, "topic": f"t{t}", "summarizer": f"p{p}", "role": "peer",
                   "text": f"peer {p} writes about topic {t} ."}
            if judged:
                rec["human"] = {"quality": float(p + t)}
            records.append(rec)
    return records
