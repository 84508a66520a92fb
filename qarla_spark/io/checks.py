"""The checks of a testbed, as pure functions (no Spark).

Every check but one is within a topic: duplicates, judgments for unknown
summaries, sources of a topic without summaries, topics with too few models
or no peers. :func:`check_topic` takes the raw records of one (task, topic)
(dicts with the fields of :data:`~qarla_spark.names.RAW_FIELDS`) and
returns that topic's canonical rows (the fields of their kind only), its
problems and one *profile* row (its counts and summarizers).
:func:`check_task` takes the profiles of one task and returns the task's
description (:data:`STATS_FIELDS`) and the one task-wide check (a
summarizer that is a model in some topics and a peer in others).

The same two functions run in both readers of :mod:`qarla_spark.io`: on
Spark (per topic, then per task, each group's records as dicts:
:func:`qarla_spark.spark.grouped.map_groups`) and in the driver for small
local inputs (:func:`check_records`), so the two give the same tables and
the same report.

:func:`select_problems` and :func:`finish_problems` choose what a report
shows of the problems (at most ``limit`` of each severity, errors first in
file/line order; per group of a kind its size and first names). Spark does
the first with window functions (:func:`qarla_spark.io.validate.collect_problems`).
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from qarla_spark.names import JUDGMENT, PROBLEM, RATING, RAW_FIELDS, SOURCE, SUMMARY
from qarla_spark.thresholds import EMPTY_ERROR_SHARE, SCRIPT_ERROR_SHARE, SCRIPT_WARNING_SHARE
from qarla_spark.thresholds import MIN_MODELS_JACKKNIFE as MIN_MODELS_KING
from qarla_spark.thresholds import MIN_MODELS_QUEEN

Record = Dict[str, Any]

#: the columns of a problem in the ``problems`` table, and those that group it
PROBLEM_COLUMNS = ("severity", "file", "line", "unit", "field", "message")
KIND_COLUMNS = ("kind", "task", "detail", "subject")

#: a topic's profile: what :func:`check_task` needs of it
PROFILE_FIELDS = ("n_models", "n_peers", "has_sources", "models", "peers", "criteria",
                  "criterion_counts")
#: a topic's letters under its task's language (issue 38): how many, how many
#: outside the scripts the language reads (by script), its summaries that
#: yield no token, and its summary with the most letters outside, as an
#: example (place, names and the text's start)
SCRIPT_FIELDS = ("n_letters", "n_outside", "outside_scripts", "outside_counts", "n_empty",
                 "example", "example_outside")

#: the rows :func:`check_topic` returns: ``kind`` is summary, rating (one
#: rater's judgment), judgment (a summary's mean over its raters), source,
#: problem (with ``problem_kind``, ``detail``, ``subject``) or profile
TOPIC_FIELDS = ("kind", "task", "topic", "summarizer", "role", "text", "criterion", "rater",
                "score",
                "documents", "severity", "file", "line", "unit", "field", "message",
                "problem_kind", "detail", "subject") + PROFILE_FIELDS + SCRIPT_FIELDS

#: a task's description (:class:`~qarla_spark.io.validate.TaskStats`; the
#: judgments as two lists, criteria and counts)
STATS_FIELDS = ("n_topics", "models_min", "models_median", "models_max",
                "n_model_summarizers", "n_peer_systems", "n_summaries", "n_model_summaries",
                "n_peer_summaries", "n_topics_with_sources", "criteria", "criterion_counts")

#: the topics the QARLA stage leaves out, per reason (``queen``: fewer than 3
#: models; ``king``: 3 models or no peer): how many, and the first
#: :data:`SKIPPED_SHOWN` of them by name
SKIPPED_FIELDS = ("n_skipped_queen", "skipped_queen", "n_skipped_king", "skipped_king")
#: the task's largest topic (most summaries; ties: the first name) and its
#: summaries, for the topic size limits of inputs Spark reads (io.limits)
LARGEST_FIELDS = ("summaries_max", "largest_topic")
SKIPPED_SHOWN = 10

#: the rows :func:`check_task` returns: ``kind`` is stats or problem
TASK_FIELDS = ("kind", "task") + STATS_FIELDS[:-2] + (
    "criteria", "criterion_counts", "severity", "file", "line", "unit", "field", "message",
    "problem_kind", "detail", "subject") + SKIPPED_FIELDS + LARGEST_FIELDS


def _first(value):
    """Sort key putting ``None`` first (Spark's ascending order)."""
    return (value is not None, value if value is not None else 0)


def _place_key(rec: Record):
    return (_first(rec["file"]), _first(rec["line"]), _first(rec["unit"]))


def _problem(severity: str, field: Optional[str], message: str, place: Optional[Record] = None,
             kind: Optional[str] = None, task: Optional[str] = None, subject=None,
             detail=None) -> Record:
    """A problem row; with a ``kind``, also what groups it (its task, the
    kind's number ``detail`` and the name a grouped line lists)."""
    row = dict.fromkeys(TOPIC_FIELDS)
    row.update(kind=PROBLEM, severity=severity, field=field, message=message,
               problem_kind=kind, task=task if kind is not None else None,
               detail=None if detail is None else str(detail),
               subject=None if subject is None else str(subject))
    if place is not None:
        row.update(file=place["file"], line=place["line"], unit=place["unit"])
    return row


def _merge_embedded(records: List[Record], keys: Sequence[str]) -> List[Record]:
    """Drop repeats of an embedded record (a reference inside another record)
    identical to an earlier one: per key, every record read on its own is
    kept; an embedded one only when no other comes before it (in file/line
    order)."""
    def key(rec):
        return tuple(tuple(rec[k]) if k == "documents" else rec[k] for k in keys)

    ordered = sorted(records, key=lambda r: (bool(r["embedded"]), _place_key(r)))
    seen, kept = set(), []
    for rec in ordered:
        k = key(rec)
        if not rec["embedded"] or k not in seen:
            kept.append(rec)
        seen.add(k)
    return kept


def _duplicates(records: List[Record], keys: Sequence[str], what: str,
                field_name: str) -> Tuple[set, List[Record]]:
    """The repeated keys, and one error for each, placed at its first
    occurrence and naming another one."""
    groups: Dict[tuple, List[Record]] = {}
    for rec in records:
        groups.setdefault(tuple(rec[k] for k in keys), []).append(rec)
    repeated, problems = set(), []
    for ident, recs in groups.items():
        if len(recs) < 2:
            continue
        repeated.add(ident)
        first, second = sorted(recs, key=_place_key)[:2]
        where = (f"{second['unit']} {second['line']}"
                 if second["unit"] is not None and second["line"] is not None else None)
        other = ", ".join(x for x in (second["file"], where) if x is not None)
        named = ", ".join(f"{k} '{v}'" for k, v in zip(keys, ident))
        problems.append(_problem("error", field_name,
                                 f"duplicate {what} ({named}): {len(recs)} records, "
                                 f"another at {other}", first))
    return repeated, problems


def _duplicate_judgments(records: List[Record]) -> List[Record]:
    """The errors of repeated judgments of one (summary, criterion): a
    judgment without a rater must be the only one (two of them are a
    duplicate, as a file given twice; one beside named raters would be
    averaged with them unnoticed); a named rater judges it once."""
    keys = ("task", "topic", "summarizer", "criterion")
    groups: Dict[tuple, List[Record]] = {}
    for rec in records:
        groups.setdefault(tuple(rec[k] for k in keys), []).append(rec)
    problems, named = [], []
    for ident, recs in groups.items():
        if len(recs) > 1 and any(r["rater"] is None for r in recs):
            first, second = sorted(recs, key=_place_key)[:2]
            where = (f"{second['unit']} {second['line']}"
                     if second["unit"] is not None and second["line"] is not None else None)
            other = ", ".join(x for x in (second["file"], where) if x is not None)
            what = ", ".join(f"{k} '{v}'" for k, v in zip(keys, ident))
            problems.append(_problem(
                "error", "criterion",
                f"duplicate judgment ({what}): {len(recs)} records, another at {other}; a "
                "judgment without a rater must be the only one of its summary and criterion "
                "(name the raters with a 'rater' field to give several)", first))
        else:
            named += recs
    return problems + _duplicates(named, keys + ("rater",), "judgment", "rater")[1]


def rater_means(judgments: Sequence[Record]) -> List[Record]:
    """One ``judgment`` row per (summarizer, criterion) of one topic's
    ratings: the mean of its raters' scores' readings (thirds as thirds,
    :mod:`qarla_spark.measures.human`), exact and rounded once (a
    single rating: its score itself), in the order of their first rating.
    Every stage reads these: a summary's human score is the mean over its
    raters."""
    from qarla_spark.measures import human
    found: Dict[tuple, List[Record]] = {}
    for rec in judgments:
        found.setdefault((rec["summarizer"], rec["criterion"]), []).append(rec)
    out = []
    for (summarizer, criterion), recs in found.items():
        score = human.mean([rec["score"] for rec in recs])
        out.append({"kind": JUDGMENT, "task": recs[0]["task"], "topic": recs[0]["topic"],
                    "summarizer": summarizer, "criterion": criterion, "score": score})
    return out


def check_topic(records: Iterable[Record], language: Optional[str] = "en") -> List[Record]:
    """The canonical rows, problems and profile of one (task, topic), from
    its raw records (no parse problems among them); ``language``: the task's
    (the letters and tokens of its summaries are counted under it; ``None``:
    not counted, the readers' own tests)."""
    records = list(records)
    if not records:
        return []
    task, topic = records[0]["task"], records[0]["topic"]
    by_kind: Dict[str, List[Record]] = {SUMMARY: [], JUDGMENT: [], SOURCE: []}
    for rec in records:
        by_kind[rec["kind"]].append(rec)

    summ = _merge_embedded(by_kind[SUMMARY], ("summarizer", "role", "text"))
    dup_summ, problems = _duplicates(summ, ("task", "topic", "summarizer"), "summary",
                                     "summarizer")
    known = {r["summarizer"] for r in summ}
    judg = by_kind[JUDGMENT]
    said = set()
    for rec in judg:
        # once per record and criterion (a list of scores is one per rater)
        place = (rec["file"], rec["line"], rec["unit"], rec["summarizer"], rec["criterion"])
        if rec["summarizer"] not in known and place not in said:
            said.add(place)
            problems.append(_problem(
                "error", "summarizer",
                f"judgment for an unknown summary: task '{task}', topic '{topic}' has no "
                f"summary by '{rec['summarizer']}' in the input", rec))
    single = [r for r in judg if (task, topic, r["summarizer"]) not in dup_summ]
    problems += _duplicate_judgments(single)

    src = _merge_embedded(by_kind[SOURCE], ("documents",))
    problems += _duplicates(src, ("task", "topic"), "sources of a topic", "topic")[1]
    if not summ:
        problems += [_problem("warning", "topic",
                              f"sources for topic '{topic}' of task '{task}', which has no "
                              "summaries", rec, "orphan_sources", task, topic) for rec in src]

    n_models = sum(r["role"] == "model" for r in summ)
    n_peers = sum(r["role"] == "peer" for r in summ)
    if summ:
        if n_models < MIN_MODELS_QUEEN:
            problems.append(_problem(
                "warning", None,
                f"topic '{topic}' of task '{task}' has {n_models} model(s): QUEEN needs "
                f"{MIN_MODELS_QUEEN} and KING {MIN_MODELS_KING}, so the measures will skip "
                "this topic", None, "few_models", task, topic, n_models))
        elif n_models == MIN_MODELS_QUEEN:
            problems.append(_problem(
                "warning", None,
                f"topic '{topic}' of task '{task}' has {n_models} models: KING holds one out "
                f"and needs {MIN_MODELS_KING}, so KING will skip this topic", None,
                "three_models", task, topic, n_models))
        if n_peers == 0:
            problems.append(_problem("warning", None,
                                     f"topic '{topic}' of task '{task}' has no peer summaries",
                                     None, "no_peers", task, topic))

    scripts: Record = {}
    if language is not None:
        scripts, empty_problems = _script_profile(summ, task, topic, language)
        problems += empty_problems
    rows = [_canonical(SUMMARY, r, ("summarizer", "role", "text")) for r in summ]
    rows += [_canonical(RATING, r, ("summarizer", "criterion", "rater", "score")) for r in judg]
    means = rater_means(judg)
    rows += means
    rows += [_canonical(SOURCE, r, ("documents",)) for r in src]
    rows += problems
    criteria: Dict[str, int] = {}
    for rec in means:
        criteria[rec["criterion"]] = criteria.get(rec["criterion"], 0) + 1
    profile = dict.fromkeys(TOPIC_FIELDS)
    profile.update(
        kind="profile", task=task, topic=topic, n_models=n_models, n_peers=n_peers,
        has_sources=bool(summ and src),
        models=sorted({r["summarizer"] for r in summ if r["role"] == "model"}),
        peers=sorted({r["summarizer"] for r in summ if r["role"] == "peer"}),
        criteria=sorted(criteria), criterion_counts=[criteria[c] for c in sorted(criteria)],
        **scripts)
    rows.append(profile)
    return rows


#: how much of a summary an example shows
EXAMPLE_CHARS = 60


def _script_profile(summaries: List[Record], task: str, topic: str, language: str
                    ) -> Tuple[Record, List[Record]]:
    """The :data:`SCRIPT_FIELDS` of a topic's summaries under ``language``,
    and a warning for each summary that yields no token (issue 38)."""
    from qarla_spark.text.languages import has_any_token, letter_profile
    n_letters = n_outside = 0
    scripts: Dict[str, int] = {}
    problems: List[Record] = []
    example, example_outside = None, 0
    for rec in sorted(summaries, key=_place_key):
        letters, outside = letter_profile(rec["text"], language)
        n_letters += letters
        count = sum(outside.values())
        n_outside += count
        for script, n in outside.items():
            scripts[script] = scripts.get(script, 0) + n
        if count > example_outside:
            example, example_outside = _example(rec), count
        if not has_any_token(rec["text"], language):
            problems.append(_problem(
                "warning", "text",
                f"the summary of topic '{topic}' by '{rec['summarizer']}' (task '{task}') "
                f"yields no token in language {language}: ROUGE scores it 0 and the other "
                "metrics by its length alone", rec, "no_tokens", task,
                f"{rec['file']}, {rec['unit']} {rec['line']}" if rec["line"] is not None
                else rec["file"], language))
    ordered = sorted(scripts)
    return ({"n_letters": n_letters, "n_outside": n_outside, "outside_scripts": ordered,
             "outside_counts": [scripts[k] for k in ordered], "n_empty": len(problems),
             "example": example, "example_outside": example_outside}, problems)


def _example(rec: Record) -> str:
    """``file, line N (topic t, summarizer s): "text…"``."""
    text = " ".join(str(rec["text"]).split())
    short = text[:EXAMPLE_CHARS] + ("…" if len(text) > EXAMPLE_CHARS else "")
    place = ", ".join(x for x in (rec["file"], f"{rec['unit']} {rec['line']}"
                                  if rec["line"] is not None else None) if x)
    return f"{place} (topic '{rec['topic']}', summarizer '{rec['summarizer']}'): \"{short}\""


def _canonical(kind: str, rec: Record, fields: Sequence[str]) -> Record:
    """A canonical row: its kind, task, topic and ``fields`` only (the other
    :data:`TOPIC_FIELDS` are null; :func:`full_row` adds them): tens of
    thousands of these live in the driver at once."""
    row = {"kind": kind, "task": rec["task"], "topic": rec["topic"]}
    for f in fields:
        row[f] = list(rec[f]) if f == "documents" else rec[f]
    return row


def full_row(row: Record) -> Record:
    """A row of :func:`check_topic` with every :data:`TOPIC_FIELDS` key."""
    return row if len(row) == len(TOPIC_FIELDS) else {**dict.fromkeys(TOPIC_FIELDS), **row}


def _median(values: Sequence[int]) -> float:
    """The median with linear interpolation (Spark's ``percentile(x, 0.5)``)."""
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def check_task(profiles: Iterable[Record], language: Optional[str] = "en") -> List[Record]:
    """One task's description (a ``stats`` row; none when no topic has a
    summary) and its task-wide problems, from the profiles of its topics
    (``language``: the task's; ``None``: its letters are not checked)."""
    profiles = list(profiles)
    if not profiles:
        return []
    task = profiles[0]["task"]
    rows: List[Record] = []
    for row in language_problems(task, language, profiles) if language is not None else ():
        rows.append({f: row.get(f) for f in TASK_FIELDS})
    topics = [p for p in profiles if p["n_models"] + p["n_peers"] > 0]
    models = set().union(*(p["models"] for p in topics)) if topics else set()
    peers = set().union(*(p["peers"] for p in topics)) if topics else set()
    for name in sorted(models & peers):
        row = _problem("warning", None,
                       f"summarizer '{name}' of task '{task}' is a model in some topics and a "
                       "peer in others", None, "model_and_peer", task, name)
        rows.append({f: row.get(f) for f in TASK_FIELDS})
    if topics:
        counts: Dict[str, int] = {}
        for p in profiles:
            for c, n in zip(p["criteria"], p["criterion_counts"]):
                counts[c] = counts.get(c, 0) + int(n)
        n_models = [int(p["n_models"]) for p in topics]
        n_peers = [int(p["n_peers"]) for p in topics]
        stats = dict.fromkeys(TASK_FIELDS)
        stats.update(
            kind="stats", task=task, n_topics=len(topics), models_min=min(n_models),
            models_median=_median(n_models), models_max=max(n_models),
            n_model_summarizers=len(models), n_peer_systems=len(peers),
            n_summaries=sum(n_models) + sum(n_peers), n_model_summaries=sum(n_models),
            n_peer_summaries=sum(n_peers),
            n_topics_with_sources=sum(bool(p["has_sources"]) for p in topics),
            criteria=sorted(counts), criterion_counts=[counts[c] for c in sorted(counts)])
        for reason, names in skipped_topics(topics).items():
            stats[f"n_skipped_{reason}"] = len(names)
            stats[f"skipped_{reason}"] = names[:SKIPPED_SHOWN]
        largest = min(topics, key=lambda p: (-(int(p["n_models"]) + int(p["n_peers"])),
                                             p["topic"]))
        stats.update(summaries_max=int(largest["n_models"]) + int(largest["n_peers"]),
                     largest_topic=largest["topic"])
        rows.append(stats)
    return rows


def language_problems(task: str, language: str, profiles: Sequence[Record]) -> List[Record]:
    """Issue 38: a task whose letters lie outside the scripts its language's
    tokenizer reads (a share of :data:`SCRIPT_ERROR_SHARE` or more: an error
    naming the task, an example and the ``--language`` to use; of
    :data:`SCRIPT_WARNING_SHARE` or more: a warning, the task mixes
    scripts), or most of whose summaries yield no token (an error)."""
    from qarla_spark.text.languages import ENGLISH, LANGUAGES, suggest
    n_letters = sum(int(p.get("n_letters") or 0) for p in profiles)
    n_outside = sum(int(p.get("n_outside") or 0) for p in profiles)
    n_summaries = sum(int(p["n_models"] or 0) + int(p["n_peers"] or 0) for p in profiles)
    n_empty = sum(int(p.get("n_empty") or 0) for p in profiles)
    scripts: Dict[str, int] = {}
    example, most = None, 0
    for p in profiles:
        for script, n in zip(_seq(p.get("outside_scripts")), _seq(p.get("outside_counts"))):
            scripts[script] = scripts.get(script, 0) + int(n)
        count = int(p.get("example_outside") or 0)
        if count and (count, example is None or p["example"] < example) > (most, False):
            example, most = p["example"], count
    out: List[Record] = []
    share = n_outside / n_letters if n_letters else 0.0
    reader = ("ROUGE-1.5.5's tokenizer (ASCII letters and digits only)" if language == ENGLISH
              else f"the {LANGUAGES[language].name} ({language}) tokenizer, stop list and "
                   "stemmer")
    if share >= SCRIPT_WARNING_SHARE:
        named = ", ".join(f"{s} {scripts[s] / n_letters:.0%}"
                          for s in sorted(scripts, key=lambda s: (-scripts[s], s)))
        code = suggest(scripts)
        if code is not None:
            fix = (f"use --language {code} (or --language {task}={code} for this task "
                   "alone)")
        elif language == ENGLISH:
            fix = ("give its language with --language (e.g. --language fr, or "
                   f"--language {task}=fr for this task alone)")
        else:
            fix = "give its language with --language"
        severity = "error" if share >= SCRIPT_ERROR_SHARE else "warning"
        what = ("its metrics would be constant or meaningless" if severity == "error"
                else "the task mixes scripts; its metrics read those letters badly")
        out.append(_problem(severity, "text",
                            f"task '{task}' (language {language}): {share:.0%} of its letters "
                            f"({named}) are outside what {reader} reads: {what}; e.g. "
                            f"{example}. {fix[0].upper() + fix[1:]}", None))
    if n_summaries and n_empty > EMPTY_ERROR_SHARE * n_summaries and \
            not (out and out[0]["severity"] == "error"):
        out.append(_problem("error", "text",
                            f"task '{task}' (language {language}): {n_empty:,} of its "
                            f"{n_summaries:,} summaries yield no token: its metrics would be "
                            "constant; is --language right?", None))
    return out


def skipped_topics(profiles: Sequence[Record]) -> Dict[str, List[str]]:
    """Per reason (``queen``: fewer than 3 models, no QUEEN; ``king``: 3
    models or no peer, no KING), the names of the topics (with summaries)
    the QARLA stage leaves out, sorted."""
    out: Dict[str, List[str]] = {}
    for p in profiles:
        n_models, n_peers = int(p["n_models"]), int(p["n_peers"])
        if n_models < MIN_MODELS_QUEEN:
            out.setdefault("queen", []).append(p["topic"])
        elif n_models < MIN_MODELS_KING or n_peers < 1:
            out.setdefault("king", []).append(p["topic"])
    return {reason: sorted(names) for reason, names in out.items()}


# ---------------------------------------------------------------------------
# the driver: every check over all records
# ---------------------------------------------------------------------------

def check_records(records: Iterable[Record], languages: Optional[Dict[str, str]] = None
                  ) -> Tuple[List[Record], List[Record]]:
    """Every check over raw records (parse problems included): the rows of
    :func:`check_topic` for every topic with the parse problems among them,
    and those of :func:`check_task` for every task. Topics and tasks in
    sorted order (the order of the tables Spark writes is not defined).
    ``languages``: each task's language (:func:`language_of`; ``None``:
    the texts' scripts are not checked)."""
    topic_rows: List[Record] = []
    # the raw records wait for their topic as tuples (a third of a dict's
    # size) and are dropped once it is checked: the driver never holds every
    # raw record as a dict, nor every raw record and every canonical row
    by_topic: Dict[tuple, List[tuple]] = {}
    for rec in records:
        if rec["kind"] == PROBLEM:
            row = dict.fromkeys(TOPIC_FIELDS)
            row.update({c: rec[c] for c in PROBLEM_COLUMNS}, kind=PROBLEM)
            topic_rows.append(row)
        else:
            by_topic.setdefault((rec["task"], rec["topic"]), []).append(
                tuple(rec[f] for f in RAW_FIELDS))
    profiles: Dict[str, List[Record]] = {}
    for key in sorted(by_topic):
        for row in check_topic([dict(zip(RAW_FIELDS, t)) for t in by_topic.pop(key)],
                               language_of(languages, key[0])):
            if row["kind"] == "profile":
                profiles.setdefault(row["task"], []).append(row)
            topic_rows.append(row)
    task_rows = [row for task in sorted(profiles)
                 for row in check_task(profiles[task], language_of(languages, task))]
    return topic_rows, task_rows


def _seq(value) -> Sequence:
    """A list column's value (``None``: empty; Arrow gives numpy arrays)."""
    return () if value is None else list(value)


def language_of(languages: Optional[Dict[str, str]], task: str) -> Optional[str]:
    """A task's language in a map ``{"*": default, task: code}`` (``en``
    for a task it does not name); without a map ``None``: the text's
    language is not checked (a run always has one: ``--language``)."""
    if languages is None:
        return None
    return languages.get(task, languages.get("*", "en"))


def problem_rows(rows: Iterable[Record]) -> List[Record]:
    """The problems among the rows of :func:`check_topic` or
    :func:`check_task`, with the columns of the ``problems`` table and
    those that group them (``kind`` = the kind of problem)."""
    return [{**{c: r[c] for c in PROBLEM_COLUMNS}, "kind": r["problem_kind"],
             "task": r["task"], "detail": r["detail"], "subject": r["subject"]}
            for r in rows if r["kind"] == PROBLEM]


def select_problems(problems: Sequence[Record], limit: int, shown: int) -> List[Record]:
    """What a report fetches of the problems (the driver's version of
    :func:`qarla_spark.io.validate.collect_problems`): per severity its
    count ``_n`` and file/line rank ``_rn`` (kept when ≤ ``limit``); per
    group of a kind its size ``total`` and rank ``_rk`` by name (kept when
    ≤ ``shown``)."""
    by_severity: Dict[str, List[Record]] = {}
    for p in problems:
        by_severity.setdefault(p["severity"], []).append(p)
    rows = []
    for severity, members in by_severity.items():
        ordered = sorted(members, key=lambda p: (p["file"] is None, p["file"] or "",
                                                 _first(p["line"]), _first(p["field"]),
                                                 _first(p["message"])))
        groups: Dict[tuple, List[Record]] = {}
        for p in ordered:
            if p["kind"] is not None:
                groups.setdefault((p["kind"], p["task"], p["detail"]), []).append(p)
        rank = {}
        for members_of_group in groups.values():
            by_name = sorted(members_of_group,
                             key=lambda p: (_first(p["subject"]), _first(p["message"])))
            for k, p in enumerate(by_name, start=1):
                rank[id(p)] = (k, len(by_name))
        for n, p in enumerate(ordered, start=1):
            rk, total = rank.get(id(p), (None, 1))
            if n <= limit or (p["kind"] is not None and rk <= shown):
                rows.append({**p, "_n": len(ordered), "_rn": n, "_rk": rk, "total": total})
    return rows
