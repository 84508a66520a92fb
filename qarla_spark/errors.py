"""Exceptions that reach the user as one clear paragraph.

Every error qarla_spark raises on purpose derives from :class:`QarlaError`;
the command line prints its message (no traceback unless ``--debug``) and
exits with :attr:`QarlaError.exit_code`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence


class QarlaError(Exception):
    """Base class: an error the user can fix, with a message that says how."""

    exit_code = 2


class ConfigError(QarlaError):
    """A run was configured wrongly (bad option, unknown metric, bad file)."""


class JavaNotFoundError(QarlaError):
    """Spark cannot start because Java is missing or too old."""

    exit_code = 3


@dataclass(frozen=True, order=True)
class Problem:
    """One problem found in the input, with the place it was found.

    ``line`` is the 1-based line of a JSONL or CSV file, or the 1-based row
    of a Parquet file (``unit`` says which), ``None`` for a whole file.
    """

    severity: str  # "error" | "warning"
    file: str
    line: Optional[int]
    field: Optional[str]
    message: str
    unit: str = "line"

    def place(self) -> str:
        """``file, line N, field 'f'``; empty for problems of the testbed as a
        whole (their message names the task and topic)."""
        parts = []
        if self.file:
            parts.append(self.file)
        if self.line is not None:
            parts.append(f"{self.unit} {self.line}")
        if self.field:
            parts.append(f"field '{self.field}'")
        return ", ".join(parts)

    def format(self) -> str:
        place = self.place()
        return f"{self.severity}: {place}: {self.message}" if place else \
            f"{self.severity}: {self.message}"


class InputError(QarlaError):
    """The input has errors. ``problems`` holds (up to a limit) all of them,
    ``n_errors`` how many there are in total."""

    def __init__(self, problems: Sequence[Problem], n_errors: Optional[int] = None,
                 header: str = "the input has errors"):
        self.problems = list(problems)
        self.n_errors = n_errors if n_errors is not None else sum(
            p.severity == "error" for p in self.problems)
        super().__init__(self._render(header))

    def _render(self, header: str) -> str:
        errors = [p for p in self.problems if p.severity == "error"]
        shown = len(errors)
        count = f"{self.n_errors} error{'s' if self.n_errors != 1 else ''}"
        more = "" if shown >= self.n_errors else f" (first {shown} shown)"
        lines = [f"{header}: {count}{more}. Fix them and run again."]
        lines += ["  " + p.format() for p in errors]
        return "\n".join(lines)


def input_error(file: str, message: str, line: Optional[int] = None,
                field: Optional[str] = None) -> InputError:
    """An :class:`InputError` for a single problem."""
    return InputError([Problem("error", file, line, field, message)])


def format_problems(problems: Iterable[Problem]) -> str:
    return "\n".join(p.format() for p in problems)
