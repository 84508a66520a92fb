"""Fuzzed readers (issue 29, part 6): every input format, mutated at random.

Each example draws a small valid testbed, writes it in one format (qarla
JSONL, CSV/TSV, Parquet, SacreROUGE, a DUC/TAC folder, judgments, sources),
mutates what was written (random byte edits, truncation, a field removed,
a value of another type, a record duplicated, records or columns reordered,
whitespace, blank lines, a BOM, CRLF, gzip, Parquet's write options), and
reads it the way a small local input is read: in the driver, without Spark
(``check_in_driver``, what ``qarla validate`` and ``qarla run`` do first).

The oracle (:func:`judge`):

* a mutation that keeps the meaning (reordered records or columns,
  whitespace, blank lines, BOM, CRLF, gzip, hidden files, Parquet's write
  options, a DUC file as ROUGE HTML) must be accepted with the clean input's
  tables;
* a duplicated record must be refused with a "duplicate" error;
* any other mutation is either accepted with the tables an equivalent clean
  input gives (the accepted tables written again as clean JSONL and read
  back), or refused with errors each naming an input file and a line/row
  within it (or the whole file: no line);
* anything else fails: another exception type, a message saying "internal
  error" or "Traceback", a line beyond the file, a non-blank JSONL line or a
  Parquet row of summaries that yields neither a record nor a problem.

Examples: 500 per format in CI (``CI=true``), 30 locally; derandomised (the
same examples every run) and no example database written.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple
from unittest import mock

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from qarla_spark.errors import InputError
from qarla_spark.io import check_in_driver
from qarla_spark.io.readers import parse_input_arg, read_records

CI = os.environ.get("CI") == "true"
EXAMPLES = int(os.environ.get("QARLA_FUZZ_EXAMPLES") or (500 if CI else 30))
#: QARLA_FUZZ_SHRINK=0: report a failing example as found (shrinking one
#: can take minutes)
_PHASES = (tuple(Phase) if os.environ.get("QARLA_FUZZ_SHRINK") != "0"
           else (Phase.explicit, Phase.reuse, Phase.generate))
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                suppress_health_check=list(HealthCheck), print_blob=False,
                report_multiple_bugs=False, phases=_PHASES)

SAME, DUPLICATE, ANY = "same", "duplicate", "any"


# ---------------------------------------------------------------------------
# a clean testbed
# ---------------------------------------------------------------------------

_WORD = st.text("abcdefghijklmnopqrstuvwxyzéßøçαβ漢字", min_size=1, max_size=7)
_SENTENCE = st.lists(_WORD, min_size=1, max_size=5).map(lambda ws: " ".join(ws) + " .")
_SENTENCES = st.lists(_SENTENCE, min_size=1, max_size=3)
#: identifiers that are valid everywhere (DUC names, TASK=PATH): no dots,
#: no whitespace at the ends
_TASK = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,5}", fullmatch=True)
_TOPIC = st.from_regex(r"D[0-9]{1,4}[a-z]?", fullmatch=True)
_MODEL = st.from_regex(r"[A-Z]{1,2}", fullmatch=True)
_PEER = st.from_regex(r"[0-9]{1,3}", fullmatch=True)
#: names that are columns of their own in a CSV are not criteria
_RESERVED = {"task", "topic", "summarizer", "role", "text", "human", "criterion", "score",
             "instance_id", "summarizer_id", "summarizer_type", "metrics", "documents"}
_CRITERION = st.from_regex(r"[a-z][a-z_ ]{0,8}[a-z]", fullmatch=True).filter(
    lambda c: c not in _RESERVED)
_SCORE = st.one_of(st.integers(-5, 10).map(float),
                   st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))


@dataclass
class Summary:
    task: str
    topic: str
    summarizer: str
    role: str
    sentences: List[str]
    scores: Dict[str, float]

    @property
    def text(self) -> str:
        return "\n".join(self.sentences)


@dataclass
class Bed:
    summaries: List[Summary]
    sources: Dict[Tuple[str, str], List[str]]
    criteria: List[str]

    @property
    def tasks(self) -> List[str]:
        return sorted({s.task for s in self.summaries})


@st.composite
def beds(draw, max_tasks=2) -> Bed:
    tasks = draw(st.lists(_TASK, min_size=1, max_size=max_tasks, unique_by=str.lower))
    criteria = draw(st.lists(_CRITERION, min_size=1, max_size=2, unique=True))
    summaries, sources = [], {}
    for task in tasks:
        for topic in draw(st.lists(_TOPIC, min_size=1, max_size=3, unique=True)):
            models = draw(st.lists(_MODEL, min_size=1, max_size=4, unique=True))
            peers = draw(st.lists(_PEER, min_size=1, max_size=3, unique=True))
            for name in models:
                summaries.append(Summary(task, topic, name, "model", draw(_SENTENCES), {}))
            for name in peers:
                judged = draw(st.lists(st.sampled_from(criteria), min_size=1, unique=True))
                summaries.append(Summary(task, topic, name, "peer", draw(_SENTENCES),
                                         {c: draw(_SCORE) for c in judged}))
            if draw(st.booleans()):
                sources[(task, topic)] = [" ".join(d) for d in
                                          draw(st.lists(_SENTENCES, min_size=1, max_size=2))]
    return Bed(summaries, sources, criteria)


# ---------------------------------------------------------------------------
# mutations
# ---------------------------------------------------------------------------

def _file_name_ok(name: str) -> bool:
    """A name the file system can hold (a lone surrogate cannot be encoded)."""
    try:
        os.fsencode(name)
    except UnicodeEncodeError:
        return False
    return True


_NASTY = st.sampled_from(["", " ", "\t", "model", "peer", "reference", "NaN", "1e999",
                          "\ud800", "\x00", "\ufeff", "<![if x]>", "<!--", "&#0;", "\r"])
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                    st.sampled_from([2**63, -2**63 - 1, 10**400, 0]), st.floats(),
                    st.text(max_size=6), _NASTY)
_VALUE = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3),
    st.lists(st.tuples(inner, inner).map(list), min_size=1, max_size=2)), max_leaves=5)

#: pieces a byte edit may splice in: deep nesting, an integer too long for
#: Python's JSON decoder, escapes of lone surrogates, markup, NUL, a BOM
_SPLICE = st.sampled_from([b"[" * 3000, b"{\"a\":" * 1500, b"1" * 5000, b"\\ud800",
                           b"\"\\udfff\"", b"<![if x]>", b"<!DOCTYPE", b"<!-", b"\x00",
                           b"\xef\xbb\xbf", b"\r", b"\xff\xfe", b",,,", b"\"", b"\n\n",
                           b"\t", b"{}", b"[]", b"null", b"1e999", b"-0", b"NaN"])


def _paths(obj, prefix=()):
    """Every path to a value inside nested dicts and lists."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) \
        if isinstance(obj, list) else ()
    out = []
    for key, value in items:
        out.append(prefix + (key,))
        out += _paths(value, prefix + (key,))
    return out


def _parent(obj, path):
    for key in path[:-1]:
        obj = obj[key]
    return obj


@st.composite
def record_mutations(draw, records: List[dict]) -> Tuple[List[dict], str, List[str]]:
    """Records after 1-3 record-level mutations, their expectation, and
    what was done (for the failure's note)."""
    records = json.loads(json.dumps(records))
    expect, done = SAME, []
    for _ in range(draw(st.integers(1, 3))):
        if not records:
            break
        op = draw(st.sampled_from(["reorder", "duplicate", "remove", "retype", "retype"]))
        i = draw(st.integers(0, len(records) - 1))
        if op == "reorder":
            records = draw(st.permutations(records))
            done.append("reorder")
        elif op == "duplicate":
            records.insert(draw(st.integers(0, len(records))), json.loads(json.dumps(records[i])))
            expect = ANY if expect == ANY else DUPLICATE
            done.append(f"duplicate {i}")
        else:
            paths = _paths(records[i])
            if not paths:
                continue
            path = draw(st.sampled_from(paths))
            parent = _parent(records[i], path)
            if op == "remove":
                del parent[path[-1]]
                done.append(f"remove {i} {path}")
            else:
                value = draw(_VALUE)
                parent[path[-1]] = value
                done.append(f"retype {i} {path} = {value!r:.80}")
            expect = ANY
    return records, expect, done


@st.composite
def byte_mutations(draw, data: bytes) -> Tuple[bytes, List[str]]:
    """Bytes after 1-3 random edits: replace, insert or delete a byte,
    splice in a nasty piece, or truncate."""
    done = []
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["replace", "insert", "delete", "splice", "truncate"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "replace" and data:
            data = data[:pos] + bytes([draw(st.integers(0, 255))]) + data[pos + 1:]
        elif op == "insert":
            data = data[:pos] + bytes([draw(st.integers(0, 255))]) + data[pos:]
        elif op == "delete":
            data = data[:pos] + data[pos + 1:]
        elif op == "splice":
            data = data[:pos] + draw(_SPLICE) + data[pos:]
        else:
            data = data[:pos]
        done.append(f"{op} at {pos}")
    return data, done


# ---------------------------------------------------------------------------
# serialisers: records -> bytes (options that keep the meaning)
# ---------------------------------------------------------------------------

@st.composite
def text_options(draw) -> dict:
    return {"crlf": draw(st.booleans()), "bom": draw(st.booleans()),
            "blank": draw(st.sets(st.integers(0, 30), max_size=3)),
            "pad": draw(st.booleans()), "sort_keys": draw(st.booleans()),
            "ascii": draw(st.booleans()), "quote_all": draw(st.booleans()),
            "reverse_columns": draw(st.booleans())}


def jsonl_bytes(records, opts=None) -> bytes:
    opts = opts or {}
    lines = []
    for i, rec in enumerate(records):
        line = json.dumps(rec, ensure_ascii=opts.get("ascii", True),
                          sort_keys=opts.get("sort_keys", False),
                          separators=(", ", ": ") if opts.get("pad") else (",", ":"))
        lines.append(("  " + line + " ") if opts.get("pad") else line)
        if i in opts.get("blank", ()):
            lines.append("   " if opts.get("pad") else "")
    end = "\r\n" if opts.get("crlf") else "\n"
    data = (end.join(lines) + end).encode("utf-8", "surrogatepass")
    return (b"\xef\xbb\xbf" + data) if opts.get("bom") else data


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


def csv_bytes(records, delimiter=",", opts=None) -> bytes:
    opts = opts or {}
    header: List[str] = []
    for rec in records:
        header += [k for k in rec if k not in header]
    if opts.get("reverse_columns"):
        header.reverse()
    out = io.StringIO(newline="")
    end = "\r\n" if opts.get("crlf") else "\n"
    writer = csv.writer(out, delimiter=delimiter, lineterminator=end,
                        quoting=csv.QUOTE_ALL if opts.get("quote_all") else csv.QUOTE_MINIMAL)
    writer.writerow(header)
    for i, rec in enumerate(records):
        writer.writerow([_cell(rec.get(k)) for k in header])
        if i in opts.get("blank", ()):
            out.write(end)
    data = out.getvalue().encode("utf-8", "surrogatepass")
    return (b"\xef\xbb\xbf" + data) if opts.get("bom") else data


def parquet_bytes(table, opts=None) -> bytes:
    import pyarrow.parquet as pq
    opts = opts or {}
    buf = io.BytesIO()
    pq.write_table(table, buf, compression=opts.get("compression", "snappy"),
                   use_dictionary=opts.get("dictionary", True),
                   row_group_size=opts.get("row_group_size"),
                   data_page_version=opts.get("page_version", "1.0"))
    return buf.getvalue()


@st.composite
def parquet_options(draw) -> dict:
    return {"compression": draw(st.sampled_from(["none", "snappy", "gzip", "zstd"])),
            "dictionary": draw(st.booleans()),
            "row_group_size": draw(st.sampled_from([None, 1, 2, 5])),
            "page_version": draw(st.sampled_from(["1.0", "2.0"]))}


_ARROW_VALUES = {
    "int64": st.integers(-2**63, 2**63 - 1), "float64": st.floats(),
    "string": st.text(max_size=8), "binary": st.binary(max_size=8),
    "bool": st.booleans(), "date32": st.dates(), "timestamp": st.datetimes(),
    "decimal": st.decimals(min_value=-10**6, max_value=10**6, places=3, allow_nan=False),
    "list_string": st.lists(st.text(max_size=5), max_size=3),
    "list_float": st.lists(st.floats(), max_size=3),
    "struct_text": st.fixed_dictionaries({"text": st.text(max_size=5)}),
    "map": st.lists(st.tuples(st.text(min_size=1, max_size=4), st.floats()), max_size=3),
    "null": st.none(),
}


def _arrow_type(name):
    import pyarrow as pa
    return {"int64": pa.int64(), "float64": pa.float64(), "string": pa.string(),
            "binary": pa.binary(), "bool": pa.bool_(), "date32": pa.date32(),
            "timestamp": pa.timestamp("us"), "decimal": pa.decimal128(12, 3),
            "list_string": pa.list_(pa.string()), "list_float": pa.list_(pa.float64()),
            "struct_text": pa.struct([("text", pa.string())]),
            "map": pa.map_(pa.string(), pa.float64()), "null": pa.null()}[name]


@st.composite
def arrow_mutations(draw, table) -> Tuple[object, str, List[str]]:
    """A Parquet file's table after 1-3 mutations: rows or columns reordered,
    a row duplicated, a column dropped, a cell nulled, a column cast or
    replaced by values of another type."""
    import pyarrow as pa
    import pyarrow.compute as pc
    expect, done = SAME, []
    for _ in range(draw(st.integers(1, 3))):
        n = table.num_rows
        op = draw(st.sampled_from(["rows", "columns", "duplicate", "drop", "null", "cast",
                                   "replace", "replace"]))
        if op == "rows":
            table = table.take(draw(st.permutations(range(n))))
        elif op == "columns":
            table = table.select(draw(st.permutations(table.column_names)))
        elif op == "duplicate" and n:
            i = draw(st.integers(0, n - 1))
            table = pa.concat_tables([table, table.slice(i, 1)])
            expect = ANY if expect == ANY else DUPLICATE
        elif table.num_columns == 0:
            continue
        else:
            name = draw(st.sampled_from(table.column_names))
            k = table.column_names.index(name)
            if op == "drop":
                table = table.drop_columns([name])
            elif op == "null" and n:
                i = draw(st.integers(0, n - 1))
                values = table.column(k).to_pylist()
                values[i] = None
                table = table.set_column(k, name, pa.array(values, table.column(k).type))
            elif op == "cast":
                target = _arrow_type(draw(st.sampled_from(["int64", "float64", "string",
                                                           "binary", "bool"])))
                try:
                    column = pc.cast(table.column(k), target)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    continue
                table = table.set_column(k, name, column)
            else:
                kind = draw(st.sampled_from(sorted(_ARROW_VALUES)))
                values = draw(st.lists(st.one_of(st.none(), _ARROW_VALUES[kind]),
                                       min_size=n, max_size=n))
                table = table.set_column(k, name, pa.array(values, _arrow_type(kind)))
            expect = ANY
        done.append(op)
    return table, expect, done


# ---------------------------------------------------------------------------
# a case: files on disk and how they are given
# ---------------------------------------------------------------------------

@dataclass
class Case:
    #: relative path -> bytes
    files: Dict[str, bytes]
    #: (relative path, kind, task given as TASK=PATH or None)
    inputs: List[Tuple[str, str, Optional[str]]]
    expect: str = SAME
    done: List[str] = field(default_factory=list)


def write_case(case: Case, root: str):
    for rel, data in case.files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
    specs = []
    for rel, kind, task in case.inputs:
        path = os.path.join(root, rel)
        os.makedirs(path, exist_ok=True) if rel.endswith("/") else None
        specs.append(parse_input_arg(f"{task}={path}" if task else path, kind))
    return specs


@dataclass
class Outcome:
    accepted: bool
    tables: Optional[dict] = None
    errors: List[dict] = field(default_factory=list)
    raw: List[dict] = field(default_factory=list)


def _rows(table) -> List[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in table.to_pylist())


def read(specs) -> Outcome:
    """What the driver makes of the inputs; only :class:`InputError` may be
    raised (anything else fails the test with its traceback)."""
    try:
        raw = list(read_records(specs))
        # its gc.collect() (70 ms in a process full of hypothesis' objects)
        # would be most of an example's time; what is checked is unchanged
        with mock.patch("qarla_spark.memory.release_freed_memory", lambda: None):
            checked = check_in_driver(specs, limit=50)
    except InputError as exc:
        return Outcome(False, errors=[{"severity": p.severity, "file": p.file, "line": p.line,
                                       "unit": p.unit, "field": p.field, "message": p.message}
                                      for p in exc.problems], raw=[])
    assert checked is not None, "the driver declined a small local input"
    text = checked.report.format()
    assert "internal error" not in text.lower() and "Traceback" not in text, text
    problems = checked.tables.problems.to_pylist()
    errors = [p for p in problems if p["severity"] == "error"]
    if errors:
        with pytest.raises(InputError) as raised:
            checked.report.raise_for_errors()
        assert "internal error" not in str(raised.value).lower()
        return Outcome(False, errors=errors, raw=raw)
    tables = {name: _rows(getattr(checked.tables, name))
              for name in ("summaries", "judgments", "sources")}
    tables["tasks"] = checked.report.tasks
    return Outcome(True, tables=tables, raw=raw)


def _units(path: str) -> Optional[int]:
    """How many lines (or Parquet rows) a file has; None: unreadable."""
    with open(path, "rb") as handle:
        data = handle.read()
    if path.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except Exception:
            return None
    if ".parquet" in os.path.basename(path):
        import pyarrow as pa
        import pyarrow.parquet as pq
        try:
            return pq.read_metadata(pa.BufferReader(data)).num_rows
        except Exception:
            return None
    lines = data.count(b"\n") + 1
    if ".csv" in path or ".tsv" in path:    # CSV's lines also end at a lone \r
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return lines
        lines = max(lines, len(io.StringIO(text, newline="").readlines()) + 1)
    return lines


#: errors of the testbed as a whole (no file: the message names the task,
#: or says the run has no summary): io.validate.nothing_to_evaluate
WHOLE_TESTBED = re.compile(r"^(task .+: no (peer|model) summary|the input yields no valid summary)")


def check_placed(errors: List[dict], root: str, case: Case):
    """Every error names an input file (or an input folder) and, when it
    has a line, one within that file; or is an error of the testbed as a
    whole (:data:`WHOLE_TESTBED`)."""
    inputs = {os.path.join(root, rel).rstrip("/") for rel, _, _ in case.inputs}
    files = {os.path.join(root, rel) for rel in case.files}
    for err in errors:
        text = err["message"]
        assert "internal error" not in text.lower() and "Traceback" not in text, err
        if not err["file"] and err["line"] is None and WHOLE_TESTBED.match(text):
            continue
        assert err["file"] in files | inputs, err
        if err["line"] is not None:
            assert err["file"] in files, err
            n = _units(err["file"])
            assert n is not None and 1 <= err["line"] <= n, (err, n)
            assert err["unit"] == ("row" if ".parquet" in err["file"] else "line"), err


def check_accounted(outcome: Outcome, root: str, case: Case):
    """Every non-blank line of a JSONL file of summaries and every row of a
    Parquet file of summaries gives a record or a problem: nothing is
    dropped without a word."""
    places = {(r["file"], r["line"]) for r in outcome.raw}
    for rel, kind, _ in case.inputs:
        if kind != "summaries" or rel.endswith("/"):
            continue
        path = os.path.join(root, rel)
        if rel.endswith(".jsonl"):
            data = case.files[rel]
            for number, line in enumerate(data.split(b"\n"), start=1):
                if number == 1 and line.startswith(b"\xef\xbb\xbf"):
                    line = line[3:]
                try:
                    blank = not line.decode("utf-8").strip()
                except UnicodeDecodeError:
                    blank = False
                if not blank and (path, number) not in places:
                    if (path, None) in places:     # a whole-file problem
                        break
                    raise AssertionError(f"line {number} of {rel} gave nothing: {line[:80]!r}")
        elif rel.endswith(".parquet") and (path, None) not in places:
            for row in range(1, (_units(path) or 0) + 1):
                assert (path, row) in places, f"row {row} of {rel} gave nothing"


def clean_again(tables: dict) -> Case:
    """The accepted tables written as clean JSONL: summaries, long-form
    judgments, sources."""
    def load(rows):
        return [json.loads(r) for r in rows]
    files = {"again/summaries.jsonl": jsonl_bytes(load(tables["summaries"])),
             "again/judgments.jsonl": jsonl_bytes(load(tables["judgments"])),
             "again/sources.jsonl": jsonl_bytes(load(tables["sources"]))}
    return Case(files, [("again/summaries.jsonl", "summaries", None),
                        ("again/judgments.jsonl", "judgments", None),
                        ("again/sources.jsonl", "sources", None)])


def judge(clean: Case, mutated: Case):
    """Read the clean and the mutated case; hold the oracle."""
    note(f"mutations: {mutated.done}, expect {mutated.expect}")
    with tempfile.TemporaryDirectory(prefix="qarla-fuzz-") as root:
        base = read(write_case(clean, os.path.join(root, "clean")))
        assert base.accepted, f"the clean input was refused: {base.errors}"
        where = os.path.join(root, "mutated")
        got = read(write_case(mutated, where))
        note(f"outcome: accepted={got.accepted}, errors={got.errors[:5]}")
        if not got.accepted:
            check_placed(got.errors, where, mutated)
            assert mutated.expect != SAME, f"refused a meaning-preserving mutation: {got.errors}"
            if mutated.expect == DUPLICATE:
                assert any("duplicate" in e["message"] for e in got.errors), got.errors
            check_accounted(got, where, mutated)
            return
        assert mutated.expect != DUPLICATE, "a duplicated record was accepted"
        check_accounted(got, where, mutated)
        if mutated.expect == SAME:
            assert got.tables == base.tables
        else:
            again = read(write_case(clean_again(got.tables), os.path.join(root, "again")))
            assert again.accepted, f"the accepted tables, written cleanly, are refused: " \
                                   f"{again.errors}"
            assert again.tables == got.tables


# ---------------------------------------------------------------------------
# the formats
# ---------------------------------------------------------------------------

def qarla_records(bed: Bed, human=True) -> List[dict]:
    out = []
    for s in bed.summaries:
        rec = {"task": s.task, "topic": s.topic, "summarizer": s.summarizer, "role": s.role,
               "text": s.text}
        if human and s.scores:
            rec["human"] = dict(s.scores)
        out.append(rec)
    return out


def _maybe_gzip(name: str, data: bytes, gz: bool) -> Tuple[str, bytes]:
    return (name + ".gz", gzip.compress(data, mtime=0)) if gz else (name, data)


@st.composite
def text_file_cases(draw, records, name, kind, serialise, extra=None, task=None):
    """A text file (JSONL/CSV/TSV) of ``records``: clean, and mutated by
    record-level edits, options that keep the meaning, gzip and byte edits."""
    extra = extra or {}
    inputs_extra = [(rel, k, None) for rel, k in extra.get("inputs", [])]
    files_extra = extra.get("files", {})
    clean = Case({name: serialise(records, {}), **files_extra},
                 [(name, kind, task)] + inputs_extra)
    mutated, expect, done = draw(record_mutations(records))
    opts = draw(text_options())
    data = serialise(mutated, opts)
    gz = draw(st.booleans()) and draw(st.booleans())
    if draw(st.booleans()):
        data, edits = draw(byte_mutations(data))
        expect, done = ANY, done + edits
    path, data = _maybe_gzip(name, data, gz)
    if gz and draw(st.integers(0, 3)) == 0:
        data, edits = draw(byte_mutations(data))
        expect, done = ANY, done + ["gz: "] + edits
    return clean, Case({path: data, **files_extra}, [(path, kind, task)] + inputs_extra,
                       expect, done + [f"opts {opts}", f"gzip {gz}"])


@given(st.data())
@FUZZ
def test_fuzz_qarla_jsonl(data):
    bed = data.draw(beds())
    clean, mutated = data.draw(text_file_cases(qarla_records(bed), "in/s.jsonl", "summaries",
                                               jsonl_bytes))
    judge(clean, mutated)


@given(st.data())
@FUZZ
def test_fuzz_csv_and_tsv(data):
    bed = data.draw(beds())
    tsv = data.draw(st.booleans())
    name = "in/s.tsv" if tsv else "in/s.csv"
    clean, mutated = data.draw(text_file_cases(
        qarla_records(bed), name, "summaries",
        lambda recs, opts: csv_bytes(recs, "\t" if tsv else ",", opts)))
    judge(clean, mutated)


def summaries_table(bed: Bed, human_as_map: bool):
    import pyarrow as pa
    human = (pa.map_(pa.string(), pa.float64()) if human_as_map else
             pa.struct([(c, pa.float64()) for c in bed.criteria]))
    schema = pa.schema([("task", pa.string()), ("topic", pa.string()),
                        ("summarizer", pa.string()), ("role", pa.string()),
                        ("text", pa.string()), ("human", human)])
    rows = []
    for rec in qarla_records(bed):
        scores = rec.pop("human", None)
        if scores is not None and human_as_map:
            scores = list(scores.items())
        elif scores is not None:     # a struct: every criterion, null when not judged
            scores = {c: scores.get(c) for c in bed.criteria}
        rows.append(dict(rec, human=scores))
    return pa.Table.from_pylist(rows, schema=schema)


def parquet_case(draw, table, name, kind, extra_files=None, extra_inputs=()):
    extra_files = extra_files or {}
    inputs = [(name, kind, None)] + list(extra_inputs)
    clean = Case({name: parquet_bytes(table), **extra_files}, inputs)
    mutated, expect, done = draw(arrow_mutations(table))
    opts = draw(parquet_options())
    data = parquet_bytes(mutated, opts)
    if draw(st.booleans()):
        data, edits = draw(byte_mutations(data))
        expect, done = ANY, done + edits
    return clean, Case({name: data, **extra_files}, inputs, expect, done + [f"opts {opts}"])


@given(st.data())
@FUZZ
def test_fuzz_parquet(data):
    bed = data.draw(beds())
    table = summaries_table(bed, data.draw(st.booleans()))
    judge(*parquet_case(data.draw, table, "in/s.parquet", "summaries"))


def sacrerouge_records(bed: Bed, task: str, draw) -> List[dict]:
    """One record per peer, each with the topic's references and documents
    (SacreROUGE repeats them on every line)."""
    out = []
    for topic in sorted({s.topic for s in bed.summaries if s.task == task}):
        summ = [s for s in bed.summaries if s.task == task and s.topic == topic]
        refs = [{"summarizer_id": s.summarizer, "summarizer_type": "reference",
                 "text": s.sentences} for s in summ if s.role == "model"]
        for s in summ:
            if s.role != "peer":
                continue
            form = draw(st.sampled_from(["list", "dict", "text"]))
            summary = {"list": s.sentences, "dict": {"text": s.sentences},
                       "text": s.text}[form]
            rec = {"instance_id": topic, "summarizer_id": s.summarizer,
                   "summarizer_type": "peer", "summary": summary, "references": refs}
            if (task, topic) in bed.sources:
                rec["documents"] = [{"text": d} for d in bed.sources[(task, topic)]]
            out.append(rec)
    return out


@given(st.data())
@FUZZ
def test_fuzz_sacrerouge(data):
    bed = data.draw(beds(max_tasks=1))
    (task,) = bed.tasks
    records = sacrerouge_records(bed, task, data.draw)
    clean, mutated = data.draw(text_file_cases(records, "sr/peers.jsonl", "summaries",
                                               jsonl_bytes, task=task))
    judge(clean, mutated)


# --- DUC/TAC folders --------------------------------------------------------

def duc_plain(sentences, opts) -> bytes:
    end = "\r\n" if opts.get("crlf") else "\n"
    lines = [("  " + s + " \t") if opts.get("pad") else s for s in sentences]
    if opts.get("blank"):
        lines = [""] + [x for line in lines for x in (line, "")]
    data = (end.join(lines) + end).encode("utf-8")
    return (b"\xef\xbb\xbf" + data) if opts.get("bom") else data


def duc_html(name, sentences) -> bytes:
    body = "\n".join(f'<a name="{i}">[{i}]</a> <a href="#{i}" id={i}>{s}</a>'
                     for i, s in enumerate(sentences, start=1))
    return (f"<html><head><title>{name}</title></head><body bgcolor=\"white\">\n{body}\n"
            "</body></html>\n").encode("utf-8")


@given(st.data())
@FUZZ
def test_fuzz_duc_folders(data):
    bed = data.draw(beds())
    draw = data.draw

    def layout(opts_of):
        files = {}
        for n, s in enumerate(bed.summaries):
            folder = f"duc{bed.tasks.index(s.task)}/"
            name = f"{s.topic}.M.100.T.{s.summarizer}"
            sub, opts = opts_of(n)
            files[folder + sub + name] = (duc_html(name, s.sentences) if opts.get("html")
                                          else duc_plain(s.sentences, opts))
        return files

    inputs = [(f"duc{i}/", "summaries", task) for i, task in enumerate(bed.tasks)]
    clean = Case(layout(lambda n: ("", {})), inputs)
    chosen = {}

    def mutated_opts(n):
        chosen[n] = (draw(st.sampled_from(["", "sub/", "a/b/"])),
                     {"html": draw(st.booleans()), "crlf": draw(st.booleans()),
                      "bom": draw(st.booleans()), "pad": draw(st.booleans()),
                      "blank": draw(st.booleans())})
        return chosen[n]

    files = layout(mutated_opts)
    expect, done = SAME, [f"layout {chosen}"]
    if draw(st.booleans()):    # hidden files are skipped, as Spark does
        files["duc0/_SUCCESS"] = b"\xff\x00"
        files["duc0/sub/.DS_Store"] = b"\x00\x01"
        done.append("hidden files")
    for _ in range(draw(st.integers(0, 2))):
        names = sorted(files)
        victim = draw(st.sampled_from(names))
        op = draw(st.sampled_from(["bytes", "bytes", "rename", "remove", "duplicate",
                                   "stranger"]))
        if op == "bytes":
            files[victim], edits = draw(byte_mutations(files[victim]))
            done += [f"bytes of {victim}"] + edits
            expect = ANY
        elif op == "rename":
            folder, name = victim.rsplit("/", 1)
            parts = name.split(".")
            k = draw(st.integers(0, len(parts) - 1))
            parts[k] = draw(st.one_of(st.text(max_size=4), _NASTY, _PEER, _MODEL))
            new = folder + "/" + ".".join(parts).replace("/", "_")
            if new.rsplit("/", 1)[1] in ("", ".", "..") or "\x00" in new or new in files \
                    or not _file_name_ok(new):
                continue
            files[new] = files.pop(victim)
            done.append(f"rename {victim} -> {new}")
            expect = ANY
        elif op == "remove":
            del files[victim]
            done.append(f"remove {victim}")
            expect = ANY
        elif op == "duplicate":
            folder, name = victim.rsplit("/", 1)
            copy = folder + "/copy/" + name
            if copy in files or name.startswith((".", "_")):
                continue
            files[copy] = files[victim]
            done.append(f"duplicate {victim}")
            expect = ANY if expect == ANY else DUPLICATE
        else:
            files[victim.rsplit("/", 1)[0] + "/notes.txt"] = b"hello"
            done.append("a file whose name says no format")
            expect = ANY
    judge(clean, Case(files, inputs, expect, done))


# --- judgments and sources ----------------------------------------------------

JUDGMENT_FORMATS = ("long.jsonl", "long.csv", "wide.csv", "wide.tsv", "human.jsonl",
                    "metrics.jsonl", "long.parquet")


def judgment_records(bed: Bed, form: str, task: str) -> List[dict]:
    peers = [s for s in bed.summaries if s.task == task and s.scores]
    if form == "long":
        return [{"task": s.task, "topic": s.topic, "summarizer": s.summarizer,
                 "criterion": c, "score": v} for s in peers for c, v in s.scores.items()]
    if form == "wide":
        return [{"task": s.task, "topic": s.topic, "summarizer": s.summarizer, **s.scores}
                for s in peers]
    if form == "human":
        return [{"task": s.task, "topic": s.topic, "summarizer": s.summarizer,
                 "human": dict(s.scores)} for s in peers]
    return [{"instance_id": s.topic, "summarizer_id": s.summarizer, "summarizer_type": "peer",
             "metrics": dict(s.scores)} for s in peers]


@given(st.data())
@FUZZ
def test_fuzz_judgments(data):
    bed = data.draw(beds(max_tasks=1))
    (task,) = bed.tasks
    form, ext = data.draw(st.sampled_from(JUDGMENT_FORMATS)).split(".")
    records = judgment_records(bed, form, task)
    summaries = {"in/s.jsonl": jsonl_bytes(qarla_records(bed, human=False))}
    extra = {"files": summaries, "inputs": [("in/s.jsonl", "summaries")]}
    name = f"j/{form}.{ext}"
    given_task = task if form == "metrics" else None
    if ext == "parquet":
        import pyarrow as pa
        table = pa.Table.from_pylist(records)
        clean, mutated = parquet_case(data.draw, table, name, "judgments", summaries,
                                      [("in/s.jsonl", "summaries", None)])
    elif ext == "jsonl":
        clean, mutated = data.draw(text_file_cases(records, name, "judgments", jsonl_bytes,
                                                   extra, given_task))
    else:
        delimiter = "\t" if ext == "tsv" else ","
        clean, mutated = data.draw(text_file_cases(
            records, name, "judgments", lambda recs, opts: csv_bytes(recs, delimiter, opts),
            extra, given_task))
    if form == "wide":
        # a wide row's duplicate duplicates its judgments only when it has
        # one; removing a cell is "not judged": both are checked as ANY
        mutated.expect = ANY if mutated.expect == DUPLICATE else mutated.expect
    judge(clean, mutated)


@given(st.data())
@FUZZ
def test_fuzz_sources(data):
    bed = data.draw(beds(max_tasks=1))
    form = data.draw(st.sampled_from(["list", "dicts", "single"]))
    records = []
    for (task, topic), docs in sorted(bed.sources.items()):
        value = {"list": docs, "dicts": [{"text": d} for d in docs],
                 "single": docs[0]}[form if form != "single" or len(docs) == 1 else "list"]
        records.append({"task": task, "topic": topic, "documents": value})
    summaries = {"in/s.jsonl": jsonl_bytes(qarla_records(bed))}
    extra = {"files": summaries, "inputs": [("in/s.jsonl", "summaries")]}
    clean, mutated = data.draw(text_file_cases(records, "src/sources.jsonl", "sources",
                                               jsonl_bytes, extra))
    judge(clean, mutated)


# ---------------------------------------------------------------------------
# what the fuzzing found: one regression test each
# ---------------------------------------------------------------------------

def _parsed(path, data, kind="summaries", task="T"):
    from qarla_spark.io.parsers import parse_file
    return list(parse_file(path, data if isinstance(data, bytes) else data.encode(), kind, task))


def _problems(recs):
    return [(r["line"], r["field"], r["message"]) for r in recs if r["kind"] == "problem"]


GOOD = {"task": "T", "topic": "d1", "summarizer": "A", "role": "model", "text": "One ."}


def _parquet(rows, schema=None, **write):
    import pyarrow as pa
    import pyarrow.parquet as pq
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), buf, **write)
    return buf.getvalue()


def test_parquet_struct_human_with_a_null_score_is_not_judged():
    """A ``human`` struct column has every criterion: null is "not judged"
    (it was "score must be a number, found null", refusing a clean file)."""
    import pyarrow as pa
    schema = pa.schema([(k, pa.string()) for k in GOOD] + [
        ("human", pa.struct([("q", pa.float64()), ("r", pa.float64())]))])
    rows = [dict(GOOD, summarizer="1", role="peer", human={"q": 2.0, "r": None}),
            dict(GOOD, summarizer="2", role="peer", human={"q": None, "r": None})]
    recs = _parsed("x.parquet", _parquet(rows, schema))
    assert not _problems(recs)
    assert [(r["summarizer"], r["criterion"], r["score"]) for r in recs
            if r["kind"] == "judgment"] == [("1", "q", 2.0)]


def test_sacrerouge_summarizer_type_that_is_not_a_string_is_a_problem():
    """(It was ``TypeError: unhashable type: 'list'``.)"""
    rec = {"instance_id": "d1", "summarizer_id": "1", "summarizer_type": ["peer"],
           "summary": "x ."}
    assert _problems(_parsed("sr.jsonl", json.dumps(rec))) == [
        (1, "summarizer_type",
         "unknown summarizer_type [\"peer\"] (expected 'peer' or 'reference')")]


def test_human_as_pairs_whose_names_are_not_strings_is_a_problem():
    """(``[[[1], 2]]`` was ``TypeError: unhashable type: 'list'``.)"""
    recs = _parsed("s.jsonl", json.dumps(dict(GOOD, human=[[[1], 2]])))
    assert _problems(recs) == [(1, "human", "'human' must be an object of criterion: score")]


@pytest.mark.parametrize("kind, rec, field_name", [
    ("summaries", dict(GOOD, human={"q": 10**400}), "human.q"),
    ("judgments", {"instance_id": "d1", "summarizer_id": "1", "metrics": {"q": -10**400}},
     "metrics.q"),
])
def test_an_integer_score_beyond_a_double_is_a_problem(kind, rec, field_name):
    """(It was ``OverflowError: int too large to convert to float``.)"""
    ((line, field_, message),) = _problems(_parsed("s.jsonl", json.dumps(rec), kind))
    assert (line, field_) == (1, field_name)
    assert message.startswith("score must be a finite number, found ") and len(message) < 110


@pytest.mark.parametrize("line, message", [
    ('{"topic": ' + "1" * 5000 + "}", "malformed JSON: Exceeds the limit (4300 digits)"),
    ("[" * 3000 + "]" * 3000, "malformed JSON: nested too deeply"),
])
def test_json_python_cannot_decode_is_a_problem_of_its_line(line, message):
    """(A 5,000-digit integer was ``ValueError``, deep nesting
    ``RecursionError``.)"""
    recs = _parsed("s.jsonl", json.dumps(GOOD) + "\n" + line + "\n")
    ((number, _, text),) = _problems(recs)
    assert number == 2 and text.startswith(message)


@pytest.mark.parametrize("name, data", [
    ("s.jsonl", json.dumps(dict(GOOD, text="caf\ud800 ."))),
    ("s.csv", 'task,topic,summarizer,role,text,human\nT,d1,A,peer,x,"{""q\\ud800"": 1}"\n'),
])
def test_half_a_surrogate_pair_is_a_problem_not_a_crash(tmp_path, name, data):
    """``"\\ud800"`` is valid JSON but not Unicode: the record was accepted,
    then making the Arrow tables raised ``UnicodeEncodeError``."""
    path = tmp_path / name
    path.write_bytes(data.encode())
    checked = check_in_driver([parse_input_arg(str(path), "summaries")])
    (error,) = [p for p in checked.report.problems if p.severity == "error"]
    assert (error.file, error.line) == (str(path), 2 if name.endswith(".csv") else 1)
    assert "surrogate" in error.message


def test_parquet_values_of_other_types_are_problems_naming_row_and_column():
    """Bytes, decimals and dates (``TypeError: Object of type bytes is not
    JSON serializable`` while writing the message)."""
    import datetime
    import decimal
    rows = [dict(GOOD, text=b"abc"), dict(GOOD, topic=datetime.date(2020, 1, 2)),
            dict(GOOD, summarizer="1", role="peer", human={"q": decimal.Decimal("1.5")})]
    got = _problems(_parsed("x.parquet", b"".join([]) or _parquet(rows[:1])))
    assert got == [(1, "text", "'text' must be text, found b'abc'")]
    got = _problems(_parsed("x.parquet", _parquet(rows[1:2])))
    assert got == [(1, "topic", "'topic' must be a string, found datetime.date(2020, 1, 2)")]
    got = _problems(_parsed("x.parquet", _parquet(rows[2:])))
    assert got == [(1, "human.q", "score must be a number, found Decimal('1.5')")]


def test_parquet_string_that_is_not_utf8_names_its_row_and_column():
    """(``to_pylist`` raised ``UnicodeDecodeError`` for the whole file.)"""
    rows = [GOOD, dict(GOOD, summarizer="B", text="Twoo ."), dict(GOOD, summarizer="C")]
    data = _parquet(rows, compression="none", use_dictionary=False,
                    write_statistics=False)
    assert data.count(b"Twoo .") == 1
    recs = _parsed("x.parquet", data.replace(b"Twoo .", b"Tw\xffo ."))
    assert _problems(recs) == [(2, "text", "not valid UTF-8: byte 0xff at byte 3 of the value")]
    assert [r["summarizer"] for r in recs if r["kind"] == "summary"] == ["A", "C"]


@pytest.mark.parametrize("name, data, kind, field_name", [
    ("s.jsonl", json.dumps(dict(GOOD, human={" ": 3})), "summaries", "human. "),
    ("j.csv", "topic,summarizer,,q\nd1,A,3,4\n", "judgments", ""),
    ("m.jsonl", json.dumps({"instance_id": "d1", "summarizer_id": "1", "metrics": {"": 1}}),
     "judgments", "metrics."),
])
def test_a_criterion_name_is_an_identifier_not_empty(name, data, kind, field_name):
    """An empty criterion (a ``human`` key, a wide CSV's unnamed column) was
    accepted, where ``criterion: ""`` in long form is an error."""
    assert _problems(_parsed(name, data, kind)) == [(1 if name != "j.csv" else 2, field_name,
                                                     "empty criterion name")]
    recs = _parsed("s.jsonl", json.dumps(dict(GOOD, human={" q ": 3})))
    assert [r["criterion"] for r in recs if r["kind"] == "judgment"] == ["q"]


# ---------------------------------------------------------------------------
# end to end: a refused input leaves no run directory
# ---------------------------------------------------------------------------

def _bad_inputs(root: str) -> List[Tuple[str, str]]:
    """Three mutated inputs the fuzzing found (path, what names the place)."""
    os.makedirs(root, exist_ok=True)
    sacre = os.path.join(root, "peers.jsonl")
    with open(sacre, "w") as handle:
        handle.write(json.dumps({"instance_id": "d1", "summarizer_id": "1",
                                 "summarizer_type": ["peer"], "summary": "x ."}) + "\n")
    pq_path = os.path.join(root, "s.parquet")
    rows = [GOOD, dict(GOOD, summarizer="B", text="Twoo ."), dict(GOOD, summarizer="C")]
    with open(pq_path, "wb") as handle:
        handle.write(_parquet(rows, compression="none", use_dictionary=False,
                    write_statistics=False)
                     .replace(b"Twoo .", b"Tw\xffo ."))
    truncated = os.path.join(root, "s.csv")
    with open(truncated, "wb") as handle:
        handle.write(b'task,topic,summarizer,role,text\nT,d1,A,model,"One .\n')
    return [(f"T={sacre}", "in/peers.jsonl, line 1"), (pq_path, "in/s.parquet, row 2"),
            (truncated, "in/s.csv, line 2")]


def test_a_refused_input_leaves_no_run_directory(tmp_path):
    """``qarla run BAD --out DIR`` in a fresh process: exit 1, the problems
    named by file and line/row, no traceback, no DIR. Small local inputs
    are checked before Spark starts, so this takes a second or two per
    input (not slow); an input wrongly accepted would start a whole run."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    os.environ.get("PYTHONPATH")) if p))
    # (named relative to the working directory, tmp_path)
    for n, (arg, place) in enumerate(_bad_inputs(str(tmp_path / "in"))):
        out = tmp_path / f"run{n}"
        proc = subprocess.run([sys.executable, "-m", "qarla_spark.cli", "run", arg,
                               "--out", str(out)], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=300)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith("qarla: the input has errors"), proc.stderr
        assert place in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
        assert not out.exists()


@pytest.mark.parametrize("data, line", [
    ('task,topic,summarizer,role,text\nT,d1,A,model,"One .\nT,d1,B,model,Two .\n', 2),
    ('"task,topic,summarizer,role,text\nT,d1,A,model,One .\n', 1),
])
def test_csv_quote_never_closed_is_a_problem_of_its_row(data, line):
    """A CSV cut inside a quoted value (found by the end-to-end run of a
    truncated file) was accepted: the rest of the file became that value."""
    assert [(n, m.split(",")[0]) for n, _, m in _problems(_parsed("s.csv", data))] == [
        (line, "a quoted value opened in this row is never closed")]
