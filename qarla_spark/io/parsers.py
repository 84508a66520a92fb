"""Pure parsers: one input file's bytes -> raw records and problems.

No Spark here: :func:`parse_file` is what the Spark reader runs on the
executors (a file, or a piece of a large JSON-lines file —
:func:`parse_jsonl_lines` — per task), and what the tests call directly.

Every record is a ``dict`` with the keys of
:data:`qarla_spark.names.RAW_FIELDS`; a problem is a record of kind
``problem`` naming the file, the 1-based line (JSONL, CSV, DUC/TAC) or row
(Parquet) and the field. A parser never raises on bad input: it reports the
problem and goes on, so one run lists every error at once.

Formats (chosen by the file name; ``.gz`` is decompressed first):

``*.jsonl`` / ``*.json`` (one JSON object per line)
    qarla records ``{"task"?, "topic", "summarizer", "role", "text",
    "human"?}``; SacreROUGE records (recognised by ``instance_id``):
    ``{"instance_id", "summarizer_id", "summarizer_type": peer|reference,
    "summary": text | [sentences] | {"text": ...}, "references"?: [...],
    "documents"?: [...]}``.
``*.csv`` / ``*.tsv``
    a header row and the same columns (``human`` as a JSON object).
``*.parquet``
    the same columns (``human`` as a map or struct column).
DUC/TAC file names ``D30001.M.100.T.A``
    topic = first dot field, summarizer = fifth; a summarizer made of letters
    is a model, of digits a peer; plain text or SGML/HTML markup.

Judgment files (``--judgments``) hold long-form rows ``(task?, topic,
summarizer, criterion, rater?, score)``, or per summary a ``human`` object, or
SacreROUGE ``metrics`` records; a CSV without a ``criterion`` column is read
in wide form (every other column is a criterion). A score is a number or a
list of numbers, one per rater (SacreROUGE's form: raters ``"0"``, ``"1"``,
... by position); an optional ``rater`` field or column names the rater of
a record's scores (absent: one anonymous rater). Source files
(``--sources``) hold ``{"task"?, "topic", "documents": [text, ...]}``.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import re
import zlib
from html.parser import HTMLParser
from typing import Any, Dict, Iterator, List, Optional, Tuple

from qarla_spark.names import JUDGMENT, PROBLEM, RAW_FIELDS, ROLES, SOURCE, SUMMARY

Record = Dict[str, Any]

#: what a file given as input, --judgments or --sources contains
KINDS = ("summaries", "judgments", "sources")

_DUC_NAME = re.compile(r"^[^.\s]+\.[^.\s]+\.[^.\s]+\.[^.\s]+\.[^.\s]+(\..*)?$")
_ID_FIELDS = ("task", "topic", "summarizer")


# ---------------------------------------------------------------------------
# file level
# ---------------------------------------------------------------------------

def detect_format(path: str) -> Optional[str]:
    """``jsonl``, ``csv``, ``tsv``, ``parquet`` or ``duc`` from a file name
    (``.gz`` ignored), or ``None`` when the name says nothing."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if name.endswith(".gz"):
        name = name[:-3]
    lower = name.lower()
    for suffix, fmt in ((".jsonl", "jsonl"), (".json", "jsonl"), (".csv", "csv"),
                        (".tsv", "tsv"), (".parquet", "parquet")):
        if lower.endswith(suffix):
            return fmt
    if _DUC_NAME.match(name):
        return "duc"
    return None


def parse_file(path: str, data: bytes, kind: str = "summaries",
               default_task: Optional[str] = None) -> Iterator[Record]:
    """Parse one file. ``path`` is only used to name places in messages and
    to choose the format; ``default_task`` fills records that carry none."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    fmt = detect_format(path)
    ctx = _Ctx(path, default_task)
    if fmt is None:
        yield ctx.problem(None, "cannot tell the format of this file from its name: expected "
                                "*.jsonl, *.json, *.csv, *.tsv, *.parquet (optionally .gz) or a "
                                "DUC/TAC summary name like D30001.M.100.T.A", line=None)
        return
    if path.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            yield ctx.problem(None, f"cannot decompress this gzip file ({exc})", line=None)
            return
    if fmt == "jsonl":
        yield from _parse_jsonl(ctx, data, kind)
    elif fmt in ("csv", "tsv"):
        yield from _parse_csv(ctx, data, kind, "\t" if fmt == "tsv" else ",")
    elif fmt == "parquet":
        yield from _parse_parquet(ctx, data, kind)
    else:
        yield from _parse_duc(ctx, data, kind)


class _Ctx:
    """The place being parsed; builds records and problems."""

    def __init__(self, file: str, default_task: Optional[str]):
        self.file = file
        self.default_task = default_task
        self.line: Optional[int] = None
        self.unit = "line"

    def record(self, kind: str, **values: Any) -> Record:
        rec = dict.fromkeys(RAW_FIELDS)
        rec.update(kind=kind, file=self.file, line=self.line, unit=self.unit, embedded=False)
        rec.update(values)
        return rec

    def problem(self, field: Optional[str], message: str, severity: str = "error",
                line: Any = "current") -> Record:
        rec = self.record(PROBLEM, severity=severity, field=field, message=message)
        if line != "current":
            rec["line"] = line
        return rec


def _decode_error_message(raw: bytes, exc: UnicodeDecodeError) -> str:
    bad = raw[exc.start:exc.start + 1].hex()
    return (f"not valid UTF-8: byte 0x{bad} at byte {exc.start + 1} of the line; "
            "convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)")


def _json_error(exc: json.JSONDecodeError) -> str:
    """``Expecting value at column 5``: the column said once (some of the
    decoder's messages already end in "at", as in "Unterminated string
    starting at")."""
    words = exc.msg.rstrip()
    return f"{words} column {exc.colno}" if words.endswith(" at") else \
        f"{words} at column {exc.colno}"


def _decode_whole(ctx: _Ctx, data: bytes) -> Tuple[Optional[str], List[Record]]:
    """Decode a whole file; on bad bytes report the line they are on."""
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        line_no = data.count(b"\n", 0, exc.start) + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        exc2 = UnicodeDecodeError(exc.encoding, data, exc.start - line_start,
                                  exc.end - line_start, exc.reason)
        msg = _decode_error_message(data[line_start:], exc2)
        return None, [ctx.problem(None, msg, line=line_no)]


# ---------------------------------------------------------------------------
# JSONL
# ---------------------------------------------------------------------------

def parse_jsonl_lines(path: str, data: bytes, kind: str, default_task: Optional[str],
                      first_line: int) -> Iterator[Record]:
    """Parse a piece of a JSON-lines file: whole lines, the first of them
    line ``first_line`` of the file (the records and problems
    :func:`parse_file` gives for those lines of the whole file: each line is
    parsed on its own)."""
    yield from _parse_jsonl(_Ctx(path, default_task), data, kind, first_line)


def _parse_jsonl(ctx: _Ctx, data: bytes, kind: str, first_line: int = 1) -> Iterator[Record]:
    for number, raw in enumerate(data.split(b"\n"), start=first_line):
        ctx.line = number
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield ctx.problem(None, _decode_error_message(raw, exc))
            continue
        if not line.strip():
            continue
        try:
            obj = _json_loads(line)
        except _Bad as bad:
            yield ctx.problem(None, f"malformed JSON: {bad.message}")
            continue
        if not isinstance(obj, dict):
            yield ctx.problem(None, f"expected a JSON object, found {type(obj).__name__}")
            continue
        yield from _parse_object(ctx, obj, kind, from_text=False)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _json_loads(text: str) -> Any:
    """``json.loads``, with what Python's decoder accepts but no table can
    hold, or raises other than a syntax error, as :class:`_Bad`: an
    integer of more than 4,300 digits, nesting deeper than the recursion
    limit, a ``\\ud800`` escape of half a surrogate pair (a string that is
    not valid Unicode)."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Bad(None, _json_error(exc)) from None
    except ValueError as exc:          # e.g. an integer too long to convert
        raise _Bad(None, str(exc).split(";")[0]) from None
    except RecursionError:
        raise _Bad(None, "nested too deeply") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _Bad(None, f"a string holds half a surrogate pair "
                             f"(\\u{ord(exc.object[exc.start]):04x}), which is not "
                             "valid Unicode") from None
    return obj


def _parse_object(ctx: _Ctx, obj: Dict[str, Any], kind: str, from_text: bool) -> Iterator[Record]:
    if kind == "summaries":
        if "instance_id" in obj:
            yield from _sacrerouge_summary(ctx, obj)
        else:
            yield from _qarla_summary(ctx, obj, from_text)
    elif kind == "judgments":
        yield from _judgment_object(ctx, obj, from_text)
    else:
        yield from _source_object(ctx, obj)


# ---------------------------------------------------------------------------
# field helpers
# ---------------------------------------------------------------------------

class _Bad(Exception):
    """A field problem inside one record (caught per record)."""

    def __init__(self, field: Optional[str], message: str):
        super().__init__(message)
        self.field = field
        self.message = message


def _shown(value: Any) -> str:
    """A value as a message shows it (at most 60 characters): as JSON when
    it is JSON, else as Python writes it (a Parquet file's bytes, decimals,
    dates)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _ident(obj: Dict[str, Any], key: str, field: Optional[str] = None) -> str:
    """A non-empty identifier (string, or an integer written as one)."""
    field = field or key
    value = obj.get(key)
    if _missing(value):
        what = "missing" if value is None and key not in obj else "empty"
        raise _Bad(field, f"{what} field '{field}'")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise _Bad(field, f"'{field}' must be a string, found {_shown(value)}")
    return str(value).strip()


def _task(ctx: _Ctx, obj: Dict[str, Any]) -> str:
    if _missing(obj.get("task")):
        if ctx.default_task:
            return ctx.default_task
        raise _Bad("task", "missing field 'task' and no default task: give one with "
                           "--task NAME (or write the input as NAME=PATH)")
    return _ident(obj, "task")


def _text(value: Any, field: str) -> str:
    """A summary text: a string, or a list of sentences (nested lists allowed,
    as SacreROUGE writes them), joined one sentence per line."""
    if isinstance(value, dict) and "text" in value:
        return _text(value["text"], field + ".text")
    if isinstance(value, str):
        text = value
    elif isinstance(value, list):
        parts: List[str] = []

        def walk(v: Any) -> None:
            if isinstance(v, str):
                parts.append(v.strip())
            elif isinstance(v, list):
                for item in v:
                    walk(item)
            else:
                raise _Bad(field, f"'{field}' must hold text, found {_shown(v)}")

        walk(value)
        text = "\n".join(p for p in parts if p)
    elif value is None:
        raise _Bad(field, f"missing field '{field}'")
    else:
        raise _Bad(field, f"'{field}' must be text, found {_shown(value)}")
    if not text.strip():
        raise _Bad(field, f"empty text in '{field}' (only whitespace)")
    return text


def _score(value: Any, field: str, from_text: bool) -> float:
    if from_text and isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise _Bad(field, f"score must be a number, found {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Bad(field, f"score must be a number, found {_shown(value)}")
    try:
        number = float(value)
    except OverflowError:           # an integer beyond a double's range
        number = math.inf
    if not math.isfinite(number):
        raise _Bad(field, f"score must be a finite number, found {_shown(value)}")
    return number


def _rater(obj: Dict[str, Any]) -> Optional[str]:
    """The optional ``rater`` of a record (an identifier); absent, null or
    blank: ``None``, one anonymous rater."""
    return None if _missing(obj.get("rater")) else _ident(obj, "rater")


def _ratings(value: Any, field: str, from_text: bool,
             rater: Optional[str]) -> List[Tuple[Optional[str], float]]:
    """The (rater, score) pairs of one score: a number (by ``rater``), or a
    list of numbers, one per rater, named by position ``"0"``, ``"1"``, ...
    (SacreROUGE's metrics keep each annotator's score so; in a CSV cell, as
    JSON text). A list with a named ``rater``, an empty list and an element
    that is not a number are errors naming the field (and the element)."""
    if from_text and isinstance(value, str) and value.strip().startswith("["):
        try:
            value = _json_loads(value.strip())
        except _Bad as bad:
            raise _Bad(field, f"'{field}' is not a JSON list of scores: {bad.message}") from None
    if not isinstance(value, list):
        return [(rater, _score(value, field, from_text))]
    if rater is not None:
        raise _Bad(field, f"'{field}' holds a list of scores (its raters named by position) "
                          f"and the record names rater {_shown(rater)}: give one score per "
                          "rater, or no 'rater'")
    if not value:
        raise _Bad(field, f"'{field}' is an empty list of scores (one per rater)")
    return [(str(i), _score(v, f"{field}[{i}]", False)) for i, v in enumerate(value)]


def _role(value: Any, field: str = "role") -> str:
    if _missing(value):
        raise _Bad(field, f"missing field '{field}'")
    if value not in ROLES:
        hint = "; human references are 'model'" if value in ("reference", "ref", "human") else ""
        raise _Bad(field, f"unknown role {_shown(value)} (expected 'model' or 'peer'{hint})")
    return value


def _mapping(value: Any, field: str, from_text: bool) -> Dict[str, Any]:
    """A criterion -> score object: dict, JSON text (CSV), or list of pairs
    (a Parquet map column)."""
    if from_text and isinstance(value, str):
        try:
            value = _json_loads(value)
        except _Bad as bad:
            raise _Bad(field, f"'{field}' is not a JSON object: {bad.message}") from None
    if isinstance(value, list) and all(isinstance(p, (list, tuple)) and len(p) == 2
                                       and isinstance(p[0], (str, int)) for p in value):
        value = dict(value)
    if not isinstance(value, dict):
        raise _Bad(field, f"'{field}' must be an object of criterion: score")
    return value


def _criterion(name: Any, field: str) -> str:
    """A criterion named by a key (``human``, ``metrics``) or a wide table's
    column: an identifier like any other (stripped, not empty)."""
    if isinstance(name, bool) or not isinstance(name, (str, int)):
        raise _Bad(field, f"a criterion's name must be a string, found {_shown(name)}")
    name = str(name).strip()
    if not name:
        raise _Bad(field, "empty criterion name")
    return name


def _guard(ctx: _Ctx, make) -> Iterator[Record]:
    """Run one record's parser; turn a field problem into a problem record."""
    try:
        yield from make()
    except _Bad as bad:
        yield ctx.problem(bad.field, bad.message)
    except RecursionError:       # a value nested deeper than Python can walk
        yield ctx.problem(None, "a value is nested too deeply")


# ---------------------------------------------------------------------------
# summaries
# ---------------------------------------------------------------------------

def _qarla_summary(ctx: _Ctx, obj: Dict[str, Any], from_text: bool) -> Iterator[Record]:
    def make():
        task = _task(ctx, obj)
        topic = _ident(obj, "topic")
        summarizer = _ident(obj, "summarizer")
        role = _role(obj.get("role"))
        text = _text(obj.get("text"), "text")
        human = obj.get("human")
        scores: List[Tuple[str, Optional[str], float]] = []
        if not _missing(human):
            rater = _rater(obj)
            for criterion, value in _mapping(human, "human", from_text).items():
                field = f"human.{criterion}"
                name = _criterion(criterion, field)
                scores += [(name, r, v) for r, v in _ratings(value, field, from_text, rater)]
        yield ctx.record(SUMMARY, task=task, topic=topic, summarizer=summarizer,
                         role=role, text=text)
        for criterion, rater, score in scores:
            yield ctx.record(JUDGMENT, task=task, topic=topic, summarizer=summarizer,
                             criterion=criterion, rater=rater, score=score)
    yield from _guard(ctx, make)


_SACRE_ROLES = {"peer": "peer", "reference": "model"}


def _sacrerouge_summary(ctx: _Ctx, obj: Dict[str, Any]) -> Iterator[Record]:
    def make():
        task = _task(ctx, obj)
        topic = _ident(obj, "instance_id")
        summarizer = _ident(obj, "summarizer_id")
        stype = obj.get("summarizer_type")
        if not isinstance(stype, str) or stype not in _SACRE_ROLES:
            raise _Bad("summarizer_type", f"unknown summarizer_type {_shown(stype)} "
                                          "(expected 'peer' or 'reference')")
        text = _text(obj.get("summary"), "summary")
        out = [ctx.record(SUMMARY, task=task, topic=topic, summarizer=summarizer,
                          role=_SACRE_ROLES[stype], text=text)]
        references = obj.get("references") or []
        if not isinstance(references, list):
            raise _Bad("references", "'references' must be a list")
        for i, ref in enumerate(references):
            field = f"references[{i}]"
            if not isinstance(ref, dict):
                raise _Bad(field, f"'{field}' must be an object with summarizer_id and text")
            ref_id = _ident(ref, "summarizer_id", f"{field}.summarizer_id")
            ref_text = _text(ref.get("text", ref.get("summary")), f"{field}.text")
            out.append(ctx.record(SUMMARY, task=task, topic=topic, summarizer=ref_id,
                                  role="model", text=ref_text, embedded=True))
        documents = obj.get("documents", obj.get("document"))
        if documents is not None:
            docs = _documents(documents, "documents")
            out.append(ctx.record(SOURCE, task=task, topic=topic, documents=docs, embedded=True))
        yield from out
    yield from _guard(ctx, make)


# ---------------------------------------------------------------------------
# judgments
# ---------------------------------------------------------------------------

def _judgment_object(ctx: _Ctx, obj: Dict[str, Any], from_text: bool) -> Iterator[Record]:
    def make():
        task = _task(ctx, obj)
        if "instance_id" in obj:  # SacreROUGE metrics record
            topic = _ident(obj, "instance_id")
            summarizer = _ident(obj, "summarizer_id")
            metrics = obj.get("metrics")
            if not isinstance(metrics, dict):
                raise _Bad("metrics", "missing field 'metrics' (an object of criterion: score)")
            rater = _rater(obj)
            found = list(_flatten_metrics(metrics, "", from_text, rater))
        else:
            topic = _ident(obj, "topic")
            summarizer = _ident(obj, "summarizer")
            if "criterion" in obj:
                criterion = _ident(obj, "criterion")
                if "score" not in obj or _missing(obj.get("score")):
                    raise _Bad("score", "missing field 'score'")
                found = [(criterion, r, v)
                         for r, v in _ratings(obj["score"], "score", from_text, _rater(obj))]
            elif "human" in obj:
                rater = _rater(obj)
                found = [(_criterion(c, f"human.{c}"), r, v)
                         for c, value in _mapping(obj["human"], "human", from_text).items()
                         for r, v in _ratings(value, f"human.{c}", from_text, rater)]
            else:
                raise _Bad("criterion", "missing field 'criterion' (long form: topic, summarizer, "
                                        "criterion, score) or 'human' (an object of criterion: score)")
        for criterion, rater, score in found:
            yield ctx.record(JUDGMENT, task=task, topic=topic, summarizer=summarizer,
                             criterion=criterion, rater=rater, score=score)
    yield from _guard(ctx, make)


def _flatten_metrics(metrics: Dict[str, Any], prefix: str, from_text: bool,
                     rater: Optional[str]):
    """(criterion, rater, score) of SacreROUGE's metrics: nested keys joined
    by ``_`` (its ``flatten_keys``), a list one score per rater (what its
    ``average_values`` averages)."""
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten_metrics(value, name + "_", from_text, rater)
        else:
            criterion = _criterion(name, f"metrics.{name}")
            for r, v in _ratings(value, f"metrics.{name}", from_text, rater):
                yield criterion, r, v


# ---------------------------------------------------------------------------
# sources
# ---------------------------------------------------------------------------

def _documents(value: Any, field: str) -> List[str]:
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list) or not value:
        raise _Bad(field, f"'{field}' must be a non-empty list of texts")
    return [_text(doc, f"{field}[{i}]") for i, doc in enumerate(value)]


def _source_object(ctx: _Ctx, obj: Dict[str, Any]) -> Iterator[Record]:
    def make():
        task = _task(ctx, obj)
        topic = _ident(obj, "instance_id" if "instance_id" in obj else "topic")
        docs = _documents(obj.get("documents", obj.get("document")), "documents")
        yield ctx.record(SOURCE, task=task, topic=topic, documents=docs)
    yield from _guard(ctx, make)


# ---------------------------------------------------------------------------
# CSV / TSV
# ---------------------------------------------------------------------------

_WIDE_KEYS = ("task", "topic", "summarizer", "role", "summarizer_type", "instance_id",
              "summarizer_id", "rater")


def _parse_csv(ctx: _Ctx, data: bytes, kind: str, delimiter: str) -> Iterator[Record]:
    text, problems = _decode_whole(ctx, data)
    if text is None:
        yield from problems
        return
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        yield ctx.problem(None, f"malformed CSV header: {exc}", line=1)
        return
    if not header:
        yield ctx.problem(None, "empty CSV file (no header row)", line=1)
        return
    wide = kind == "judgments" and "criterion" not in header and "human" not in header
    start = reader.line_num + 1
    last = 1                     # where the last row read (or the header) starts
    while True:
        try:
            row = next(reader)
        except StopIteration:
            if _quote_left_open(text, last, delimiter):
                yield ctx.problem(None, "a quoted value opened in this row is never closed, so "
                                        "the rest of the file was read as one value (a file "
                                        "cut short, or a stray '\"')", line=last)
            break
        except csv.Error as exc:
            ctx.line = start
            yield ctx.problem(None, f"malformed CSV: {exc}")
            break
        ctx.line = last = start
        start = reader.line_num + 1
        if None in row:
            yield ctx.problem(None, f"this row has more fields than the header ({len(header)})")
            continue
        if wide:
            yield from _wide_judgments(ctx, row)
        else:
            yield from _parse_object(ctx, dict(row), kind, from_text=True)


def _quote_left_open(text: str, line: int, delimiter: str) -> bool:
    """Whether the CSV row starting on ``line`` (the last one) ends inside a
    quoted value: Python's reader, not strict, takes the rest of the file
    as that value without a word."""
    if '"' not in text:
        return False
    tail = "".join(io.StringIO(text, newline="").readlines()[line - 1:])
    try:
        for _ in csv.reader(io.StringIO(tail, newline=""), delimiter=delimiter, strict=True):
            pass
    except csv.Error as exc:
        return "unexpected end of data" in str(exc)
    return False


def _wide_judgments(ctx: _Ctx, row: Dict[str, Any]) -> Iterator[Record]:
    """A wide judgments row: every column but the identifiers is a criterion;
    a blank cell means "not judged"."""
    def make():
        task = _task(ctx, row)
        topic = _ident(row, "instance_id" if "instance_id" in row else "topic")
        summarizer = _ident(row, "summarizer_id" if "summarizer_id" in row else "summarizer")
        rater = _rater(row)
        scores = [(_criterion(c, c), r, s) for c, v in row.items()
                  if c not in _WIDE_KEYS and not _missing(v)
                  for r, s in _ratings(v, c, True, rater)]
        for criterion, rater, score in scores:
            yield ctx.record(JUDGMENT, task=task, topic=topic, summarizer=summarizer,
                             criterion=criterion, rater=rater, score=score)
    yield from _guard(ctx, make)


# ---------------------------------------------------------------------------
# Parquet
# ---------------------------------------------------------------------------

def _parse_parquet(ctx: _Ctx, data: bytes, kind: str) -> Iterator[Record]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    ctx.unit = "row"
    try:
        table = pq.read_table(pa.BufferReader(data))
    except Exception as exc:  # pyarrow raises several types for bad files
        yield ctx.problem(None, f"not a readable Parquet file ({exc})", line=None)
        return
    try:
        rows = table.to_pylist()
    except Exception:  # a value Python cannot hold (a string column with bad UTF-8)
        rows = None
    for number in range(1, table.num_rows + 1):
        ctx.line = number
        if rows is not None:
            row = rows[number - 1]
        else:
            row, bad = _parquet_row(table, number - 1)
            if bad is not None:
                yield ctx.problem(*bad)
                continue
        obj = {k: _unjudged_dropped(v) if k in ("human", "metrics") else v
               for k, v in row.items() if v is not None}
        yield from _parse_object(ctx, obj, kind, from_text=False)


def _parquet_row(table, index: int) -> Tuple[Dict[str, Any], Optional[Tuple[str, str]]]:
    """One row of a table whose rows pyarrow cannot convert all at once;
    with (field, message) for its first value that cannot be read."""
    row: Dict[str, Any] = {}
    for name in table.column_names:
        try:
            row[name] = table.column(name)[index].as_py()
        except UnicodeDecodeError as exc:
            return row, (name, f"not valid UTF-8: byte 0x{exc.object[exc.start:exc.start + 1].hex()}"
                               f" at byte {exc.start + 1} of the value")
        except Exception as exc:  # pyarrow raises several types
            return row, (name, f"cannot read this value ({type(exc).__name__}: {exc})"[:300])
    return row, None


def _unjudged_dropped(value: Any) -> Any:
    """A ``human`` (or ``metrics``) struct or map column with its null
    scores left out: a struct has every criterion, and null is "not
    judged" (as a blank cell of a wide CSV)."""
    if isinstance(value, dict):
        return {k: _unjudged_dropped(v) for k, v in value.items() if v is not None}
    if isinstance(value, list) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return [p for p in value if p[1] is not None]
    return value


# ---------------------------------------------------------------------------
# DUC / TAC
# ---------------------------------------------------------------------------

_TAG = re.compile(r"<\s*/?\s*[A-Za-z][^<>]*>")


class _MarkupText(HTMLParser):
    """Text of a DUC/TAC summary with SGML/HTML markup, one sentence a line.

    Handles ROUGE's HTML format (``<a name="1">[1]</a> <a href="#1"
    id=1>sentence</a>``: the ``[1]`` anchors are dropped, each sentence is a
    line) and DUC's SGML (``<SUM ...>text</SUM>``, ``<s>`` sentences)."""

    _SKIP = {"head", "title", "script", "style"}
    _BREAK = {"p", "br", "div", "s", "sentence", "li", "tr", "sum", "text", "body",
              "h1", "h2", "h3", "h4", "h5", "h6", "doc"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: List[str] = []
        self.skip = 0
        self.anchors: List[bool] = []

    def handle_starttag(self, tag, attrs):
        if tag in self._SKIP:
            self.skip += 1
        elif tag == "a":
            keys = {k for k, _ in attrs}
            skip = "name" in keys and "href" not in keys and "id" not in keys
            self.anchors.append(skip)
            if skip:
                self.skip += 1
        if tag in self._BREAK:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in self._SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "a" and self.anchors:
            if self.anchors.pop():
                self.skip = max(0, self.skip - 1)
            else:
                self.parts.append("\n")
        if tag in self._BREAK:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def duc_text(content: str) -> str:
    """The summary text of a DUC/TAC file: markup removed, one non-empty
    stripped line per line (sentence)."""
    if _TAG.search(content):
        parser = _MarkupText()
        parser.feed(content)
        parser.close()
        content = "".join(parser.parts)
    lines = (" ".join(line.split()) for line in content.splitlines())
    return "\n".join(line for line in lines if line)


def duc_name(path: str) -> Tuple[str, str, Optional[str]]:
    """(topic, summarizer, role) from a DUC/TAC file name; role is ``None``
    when the summarizer is neither all letters nor all digits."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if name.endswith(".gz"):
        name = name[:-3]
    fields = name.split(".")
    topic, summarizer = fields[0], fields[4]
    if summarizer.isdigit():
        role: Optional[str] = "peer"
    elif summarizer.isalpha():
        role = "model"
    else:
        role = None
    return topic, summarizer, role


def _parse_duc(ctx: _Ctx, data: bytes, kind: str) -> Iterator[Record]:
    if kind != "summaries":
        yield ctx.problem(None, f"a DUC/TAC summary file was given as {kind}", line=None)
        return
    topic, summarizer, role = duc_name(ctx.file)
    if role is None:
        yield ctx.problem("summarizer", f"unknown role: summarizer '{summarizer}' (fifth field of "
                                        "the file name) must be letters (a model) or digits "
                                        "(a peer)", line=None)
        return
    if not ctx.default_task:
        yield ctx.problem("task", "DUC/TAC files carry no task: give one with --task NAME "
                                  "(or write the input as NAME=PATH)", line=None)
        return
    content, problems = _decode_whole(ctx, data)
    if content is None:
        yield from problems
        return
    text = duc_text(content)
    ctx.line = None
    if not text:
        yield ctx.problem("text", "empty text (no words in the file)")
        return
    yield ctx.record(SUMMARY, task=ctx.default_task, topic=topic, summarizer=summarizer,
                     role=role, text=text)
