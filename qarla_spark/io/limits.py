"""How big a topic a run accepts with its memory settings, checked before
Spark starts (issue 29, part 7; docs/DECISIONS.md, "Topic size limits").

A topic is computed whole in one Python worker and carried whole as one row
of the topic cube (:mod:`qarla_spark.stages.cube`): ``n`` summaries and
``m`` metrics make a float64 array of ``n² m`` values (the cube bytes ``C``).
Measured (docs/PERFORMANCE.md, "Topic size limits"):

- the Python worker of the topic peaks at about ``300 MB + 14 C`` (the
  battery's columns, the cube, its bytes and, the largest part, the long
  similarity table of the topic in Arrow: ~70 bytes a row), plus the LCS
  tables of ROUGE-L/W, ``24 S²`` bytes for the topic's longest sentence of
  ``S`` tokens (three ``(S+1)²`` tables of 8 bytes);
- the JVM holding the cube row (cached, read by each stage through Arrow)
  needs about ``10 C`` of its heap beyond Spark's reserved 300 MB: a topic
  of 400 summaries × 59 metrics (C = 72 MB) ran with a 1 GB heap and
  killed the JVM with 768 MB.

:func:`topics_over` is pure: the sizes and the budgets in, the topics over
(or close to) a limit out. :func:`check_run` is the hook for the inputs
checked in the driver (their sizes, the budgets from the run's Spark
settings), :func:`check_report` for those Spark read (each task's largest
topic from the validation report, the session's settings).
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from typing import Iterable, List, Mapping, Optional, Sequence

from qarla_spark.errors import ConfigError

MB = 1 << 20
#: Spark's reserved heap (not for tasks)
JVM_RESERVED = 300 * MB
#: the smallest heap Spark starts with (1.5 × the reserved memory)
SPARK_MIN_HEAP = JVM_RESERVED * 3 // 2
#: heap bytes per cube byte (measured between 6.5 and 10: the bound kept)
JVM_PER_CUBE_BYTE = 10
#: a Python worker's memory before a topic (imports, numba, the tagger)
PYTHON_BASE = 300 * MB
#: Python bytes per cube byte (measured 13.7-15 at 200-400 summaries)
PYTHON_PER_CUBE_BYTE = 14
#: bytes per cell of the LCS tables (three (S+1)² tables of 8 bytes)
LCS_BYTES = 24
#: a topic above this share of a limit gets a warning
WARN_SHARE = 0.8


@dataclass(frozen=True)
class TopicSize:
    """A topic's summaries and its longest sentence (whitespace tokens)."""

    task: str
    topic: str
    n_summaries: int
    longest_sentence: int = 0


@dataclass(frozen=True)
class Budget:
    """The memory a topic may use: the JVM heap of a task and its setting,
    and the Python worker's memory (``None``: not limited) and its
    setting."""

    heap: int
    heap_setting: str
    python: Optional[int] = None
    python_setting: str = "spark.executor.pyspark.memory"


@dataclass(frozen=True)
class OverLimit:
    """A topic over (``error``) or close to (``warning``) a limit."""

    severity: str
    size: TopicSize
    need: int
    limit: int
    setting: str
    message: str


def cube_bytes(n_summaries: int, n_metrics: int) -> int:
    return n_summaries * n_summaries * n_metrics * 8


def jvm_need(size: TopicSize, n_metrics: int) -> int:
    """Heap a topic's cube row needs (beyond Spark's reserved memory)."""
    return JVM_PER_CUBE_BYTE * cube_bytes(size.n_summaries, n_metrics)


def python_need(size: TopicSize, n_metrics: int) -> int:
    """A Python worker's peak on the topic."""
    return (PYTHON_BASE + PYTHON_PER_CUBE_BYTE * cube_bytes(size.n_summaries, n_metrics)
            + LCS_BYTES * size.longest_sentence ** 2)


def max_summaries(budget_bytes: int, n_metrics: int, per_cube_byte: int) -> int:
    """The most summaries a topic of ``n_metrics`` may have in a budget."""
    if n_metrics <= 0:
        return 0
    return int((max(budget_bytes, 0) / (per_cube_byte * 8 * n_metrics)) ** 0.5)


def _mb(value: int) -> str:
    return f"{value / MB:,.0f} MB"


def topics_over(sizes: Iterable[TopicSize], n_metrics: int, budget: Budget,
                warn_share: float = WARN_SHARE) -> List[OverLimit]:
    """The topics over a limit of ``budget`` (errors) or above
    ``warn_share`` of one (warnings), with ``n_metrics`` metrics in the
    cube; each names its task, topic, size, limit and the setting to raise."""
    out: List[OverLimit] = []
    heap = budget.heap - JVM_RESERVED
    for size in sizes:
        where = f"task {size.task!r}, topic {size.topic!r}"
        checks = [(jvm_need(size, n_metrics), heap, budget.heap_setting,
                   f"{size.n_summaries:,} summaries × {n_metrics} metrics (a cube of "
                   f"{_mb(cube_bytes(size.n_summaries, n_metrics))}) need about "
                   f"{_mb(jvm_need(size, n_metrics))} of Java heap; {budget.heap_setting}="
                   f"{_mb(budget.heap)} leaves {_mb(heap)}: at most "
                   f"{max_summaries(heap, n_metrics, JVM_PER_CUBE_BYTE):,} summaries a topic "
                   f"at {n_metrics} metrics")]
        if budget.python is not None:
            checks.append((python_need(size, n_metrics), budget.python, budget.python_setting,
                           f"{size.n_summaries:,} summaries × {n_metrics} metrics and a "
                           f"longest sentence of {size.longest_sentence:,} tokens need about "
                           f"{_mb(python_need(size, n_metrics))} in a Python worker; "
                           f"{budget.python_setting} gives {_mb(budget.python)}"))
        for need, limit, setting, what in checks:
            if need > limit:
                out.append(OverLimit("error", size, need, limit, setting,
                                     f"{where}: {what}. Raise {setting} (--conf {setting}=...), "
                                     "or use fewer metrics (--metrics) or split the topic"))
            elif need > warn_share * limit:
                out.append(OverLimit("warning", size, need, limit, setting,
                                     f"{where} is close to the memory limit: {what}"))
    return out


def raise_or_warn(found: Sequence[OverLimit]) -> None:
    """A :class:`ConfigError` naming every topic over a limit, else a
    warning for each one close to it."""
    errors = [o.message for o in found if o.severity == "error"]
    if errors:
        raise ConfigError("topic(s) too large for the memory settings: " + "; ".join(errors))
    for o in found:
        warnings.warn(o.message, stacklevel=2)


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": MB, "g": 1 << 30, "t": 1 << 40}


def parse_bytes(value: str, default_unit: str = "m") -> int:
    """A Spark size (``4g``, ``512m``, ``1024``: MiB by default) in bytes."""
    match = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)b?\s*", str(value).lower())
    if not match:
        raise ConfigError(f"not a memory size: {value!r} (e.g. 4g, 512m)")
    unit = match.group(2) or default_unit
    return int(match.group(1)) * _UNITS[unit]


def budget_of(settings: Mapping[str, str], physical: Optional[int] = None) -> Budget:
    """The :class:`Budget` of a run's Spark settings: the heap of the JVM
    that runs the tasks (``spark.driver.memory`` in local mode, else
    ``spark.executor.memory``; Spark's default 1g); the Python worker's:
    ``spark.executor.pyspark.memory`` when set, else in local mode the
    machine's ``physical`` memory (``None``: unknown, not checked)."""
    local = settings.get("spark.master", "local[*]").startswith("local")
    heap_setting = "spark.driver.memory" if local else "spark.executor.memory"
    heap = parse_bytes(settings.get(heap_setting, "1g"))
    if "spark.executor.pyspark.memory" in settings:
        python = parse_bytes(settings["spark.executor.pyspark.memory"])
        return Budget(heap, heap_setting, python, "spark.executor.pyspark.memory")
    if local and physical:
        return Budget(heap, heap_setting, physical, "the machine's memory")
    return Budget(heap, heap_setting)


def topic_sizes(summaries, languages: Optional[Mapping[str, str]] = None) -> List[TopicSize]:
    """Each topic's size from an Arrow table of summaries (``task``,
    ``topic``, ``text``): its summaries and its longest sentence in
    whitespace tokens (SPEC §2's sentences: lines, or ends at ``.!?``); in a
    task of another language (``languages``: ``{"*": default, task: code}``)
    in that language's sentences and tokens (a Chinese sentence has no
    space: its characters are its tokens)."""
    from qarla_spark.text.tokenize import split_sentences
    counts: dict = {}
    languages = dict(languages or {})
    columns = summaries.select(["task", "topic", "text"]).to_pydict()
    for task, topic, text in zip(columns["task"], columns["topic"], columns["text"]):
        key = (task, topic)
        n, longest = counts.get(key, (0, 0))
        code = languages.get(task, languages.get("*", "en"))
        if code != "en":
            from qarla_spark.text import languages as lang
            text = lang.normalise(text or "")
            sentence = max((len(lang.tokens_of_normalised(s, code))
                            for s in lang.unicode_sentences(text)), default=0)
        else:
            sentence = max((len(s.split()) for s in split_sentences(text or "")), default=0)
        counts[key] = (n + 1, max(longest, sentence))
    return [TopicSize(t, p, n, s) for (t, p), (n, s) in sorted(counts.items())]


def _budget_or_none(settings: Mapping[str, str]) -> Optional[Budget]:
    """:func:`budget_of`, or ``None`` when Spark itself will refuse the
    settings (a size it cannot read, a heap below its own minimum of 1.5 ×
    the reserved 300 MB): its own reason is then said as it fails to start
    (:func:`qarla_spark.spark.session.start_failure`), not a limit of ours."""
    try:
        budget = budget_of(settings, _physical_memory())
    except ConfigError:
        return None
    return budget if budget.heap >= SPARK_MIN_HEAP else None


def check_report(report, n_metrics: int, settings: Mapping[str, str]) -> None:
    """The hook for inputs Spark read (no driver-side sizes): each task's
    largest topic (``TaskStats.summaries_max``; its longest sentence is not
    known there) against the running session's ``settings``, after
    validation and before the similarities."""
    if not n_metrics:
        return
    sizes = [TopicSize(t.task, t.largest_topic, t.summaries_max)
             for t in report.tasks if t.summaries_max]
    budget = _budget_or_none(settings)
    if budget is not None:
        raise_or_warn(topics_over(sizes, n_metrics, budget))


def _physical_memory() -> Optional[int]:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        return None


def check_run(config, checked, n_metrics: int) -> None:
    """The hook (before Spark starts): the topics of the inputs checked in
    the driver (``checked``; ``None``: read by Spark, not checked) against
    the run's Spark settings (:func:`topics_over`, :func:`raise_or_warn`)."""
    if checked is None or checked.tables is None or not n_metrics:
        return
    from qarla_spark.spark.profiles import resolve_settings
    settings = resolve_settings(config.profile, config.master, config.spark_conf, {})
    budget = _budget_or_none(settings)
    if budget is not None:
        raise_or_warn(topics_over(topic_sizes(checked.tables.summaries, config.language),
                                  n_metrics, budget))
