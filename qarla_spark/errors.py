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


# ---------------------------------------------------------------------------
# failures on Spark's executors
# ---------------------------------------------------------------------------

#: how the README names the fix for executors without the package
SHIP_THE_PACKAGE = ("ship the package with the job: `qarla package` writes the zip for "
                    "spark-submit --py-files (README, \"Running on a cluster\")")


def executor_failure(text: str) -> Optional[str]:
    """One sentence for a failure on Spark's executors, from the text of the
    error the driver received (a Py4J error or PySpark's captured exception,
    which carry the executor's traceback or Java cause); ``None`` when the
    text shows no executor-side cause this function knows."""
    import re

    program = re.search(r'Cannot run program "([^"]+)"(?:[^:\n]*: ([^\n]+))?', text)
    if program:
        why = program.group(2) or "it cannot be started"
        why = re.sub(r"^error=\d+,\s*", "", why).strip()
        return (f"Spark's executors cannot start Python {program.group(1)!r} ({why}): set "
                "PYSPARK_PYTHON (or spark.pyspark.python) to an absolute path that exists "
                "on every executor")
    module = re.search(r"ModuleNotFoundError: No module named '([^']+)'", text)
    if module:
        name = module.group(1)
        if name.split(".")[0] == "qarla_spark":
            return (f"Spark's executors cannot import {name} (their Python does not have "
                    f"qarla_spark installed): {SHIP_THE_PACKAGE}")
        return (f"Spark's executors cannot import the Python module {name!r} that qarla_spark "
                f"needs: install it in the executors' Python, or {SHIP_THE_PACKAGE}")
    if "PythonException" in text or "Python worker" in text:
        lines = [line.strip() for line in text.splitlines()]
        raised = [line for line in lines
                  if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b:?", line)
                  and not line.startswith(("org.apache", "java.", "py4j", "pyspark.errors"))]
        if raised:
            return f"a Python task failed on an executor: {raised[-1][:300]}"
    lost = re.search(r"most recent failure: Lost task [^:]*\):\s*([^\n]+)", text)
    if lost:
        return f"a Spark task failed on an executor: {lost.group(1).strip()[:300]}"
    return None


class SparkStartError(ConfigError):
    """Spark could not start (a bad setting or master URL, a port that
    cannot be bound, too little memory, an option Java refuses): Spark's or
    the JVM's own reason and the setting that caused it. A configuration
    error (exit status 2, docs/DECISIONS.md)."""
