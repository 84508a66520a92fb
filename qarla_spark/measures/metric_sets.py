"""Metric sets as values (SPEC §1: a non-empty set of metrics).

Inside the library a metric set is a :class:`MetricSet`: the sorted, distinct
metric names, immutable and hashable. It becomes text in exactly two places:
:attr:`MetricSet.label`, the name written in the output tables
(``"GRAMSIM,Rpre-1.c"``), and :meth:`MetricSet.parse`, which reads a set the
user wrote (``--metric-set "R-1.a, TVM.512"``). Both use :data:`SEPARATOR`,
so no metric name may contain it
(:func:`qarla_spark.names.check_metric_name`, applied to built-in,
registered and user-table metrics and to reused similarity tables).

Ties between sets (the best set, the best single metric) are broken by
:attr:`MetricSet.tie_key`: fewer metrics first, then the label in code-point
order.
"""

from __future__ import annotations

from typing import Dict, Iterable, Iterator, Sequence, Tuple

from qarla_spark.errors import ConfigError
from qarla_spark.names import SEPARATOR


def positions(metrics: Sequence[str]) -> Dict[str, int]:
    """Each metric's position in ``metrics`` (for :meth:`MetricSet.indices`)."""
    return {m: i for i, m in enumerate(metrics)}


class MetricSet:
    """A set of metric names (sorted, distinct). Empty only where SPEC allows
    it (HBR's H(∅) = 0); :meth:`parse` never returns an empty set."""

    __slots__ = ("names",)

    def __init__(self, names: Iterable[str]):
        if isinstance(names, str):
            raise TypeError("MetricSet takes an iterable of names; use MetricSet.parse(text)")
        object.__setattr__(self, "names", tuple(sorted(set(names))))

    def __setattr__(self, key, value):
        raise AttributeError("MetricSet is immutable")

    @classmethod
    def parse(cls, text: str, known: Sequence[str] = ()) -> "MetricSet":
        """A set written by a user, ``"a,b"`` (spaces around names ignored);
        with ``known``, every name must be one of them."""
        names = [part.strip() for part in str(text).split(SEPARATOR) if part.strip()]
        if not names:
            raise ConfigError(f"an empty metric set: {text!r}")
        if known:
            missing = [n for n in names if n not in set(known)]
            if missing:
                raise ConfigError(f"metric set {text!r}: not in the similarity table: "
                                  f"{', '.join(missing)}")
        return cls(names)

    @classmethod
    def from_indices(cls, indices: Iterable[int], metrics: Sequence[str]) -> "MetricSet":
        return cls(metrics[i] for i in indices)

    @property
    def label(self) -> str:
        """The set's name in the output tables: the names joined by
        :data:`SEPARATOR` (the one place a set becomes text)."""
        return SEPARATOR.join(self.names)

    @property
    def size(self) -> int:
        return len(self.names)

    @property
    def tie_key(self) -> Tuple[int, str]:
        """Order among sets with equal scores: fewer metrics, then label."""
        return (len(self.names), self.label)

    def indices(self, metrics) -> Tuple[int, ...]:
        """Positions of the set's metrics in ``metrics`` (increasing):
        a sequence of names, or a dict name -> position already made
        (:func:`positions`: once for a family of 1,023 sets, not per set)."""
        position = metrics if isinstance(metrics, dict) else positions(metrics)
        missing = [n for n in self.names if n not in position]
        if missing:
            raise ConfigError(f"metric set {self.label}: not in the similarity table: "
                              f"{', '.join(missing)}")
        return tuple(sorted(position[n] for n in self.names))

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name) -> bool:
        return name in self.names

    def __eq__(self, other) -> bool:
        return isinstance(other, MetricSet) and self.names == other.names

    def __hash__(self) -> int:
        return hash(("MetricSet", self.names))

    def __lt__(self, other: "MetricSet") -> bool:
        return self.tie_key < other.tie_key

    def __repr__(self) -> str:
        return f"MetricSet({list(self.names)!r})"

    def __str__(self) -> str:
        return self.label

    def __reduce__(self):
        return (MetricSet, (self.names,))


def best_of(scores) -> MetricSet:
    """The set with the highest score in ``scores`` (a mapping MetricSet ->
    float); ties: :attr:`MetricSet.tie_key`. Scores must be exact (computed
    from integer counts) for ties to be ties."""
    if not scores:
        raise ValueError("no metric set to choose from")
    return min(scores, key=lambda s: (-scores[s], s.tie_key))


def best_index(scores, labels: Sequence[str], sizes: Sequence[int]) -> int:
    """:func:`best_of` of sets given by their positions, without making
    them: ``scores`` maps a position to its score, ``labels[i]`` and
    ``sizes[i]`` are set i's :attr:`MetricSet.label` and size (its
    :attr:`MetricSet.tie_key`); the position of the best set (a task's
    1,023 subsets: no MetricSet each)."""
    if not scores:
        raise ValueError("no metric set to choose from")
    return min(scores, key=lambda i: (-scores[i], sizes[i], labels[i]))
