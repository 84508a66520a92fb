"""A large JSON-lines file is parsed in pieces of whole lines, spread over
Spark's tasks (issue 36: one 120 MB file was one task of 22 s while the
other core idled). The pieces give the records and problems the whole file
gives, with the same line numbers, and Spark's reader gives them in the
order the driver reads them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.io.parsers import parse_file
from qarla_spark.io.readers import (
    READ_ORDER,
    InputSpec,
    file_pieces,
    parse_piece,
    read_raw,
    read_records,
)
from qarla_spark.names import RAW_FIELDS
from tests.helpers import write_jsonl

_GOOD = [json.dumps({"task": "t", "topic": f"d{k % 3}", "summarizer": f"s{k}",
                     "role": "model" if k % 2 else "peer", "text": f"text {k} é",
                     "human": {"q": [1, 2]}}) for k in range(6)]
_LINES = st.lists(st.one_of(
    st.sampled_from(_GOOD).map(str.encode),
    st.sampled_from([b"", b"   ", b"{broken", b"[1, 2]", b"\xff\xfe bad bytes",
                     _GOOD[0].encode() + b"\r", b'{"task": "t"}'])), max_size=12)


def _whole_and_pieces(lines, bom, trailing, max_bytes, path="in/s.jsonl"):
    data = (b"\xef\xbb\xbf" if bom else b"") + b"\n".join(lines) + (b"\n" if trailing else b"")
    whole = list(parse_file(path, data, "summaries", None))
    pieces = list(file_pieces(path, data, max_bytes))
    parsed = [rec for _, first, piece in pieces
              for rec in parse_piece(path, piece, "summaries", None, first)]
    return data, whole, pieces, parsed


@settings(max_examples=60, derandomize=True, database=None)
@given(_LINES, st.booleans(), st.booleans(), st.integers(1, 200))
def test_pieces_give_what_the_whole_file_gives(lines, bom, trailing, max_bytes):
    data, whole, pieces, parsed = _whole_and_pieces(lines, bom, trailing, max_bytes)
    assert parsed == whole
    assert b"".join(p for _, _, p in pieces) == data
    assert [n for n, _, _ in pieces] == list(range(len(pieces)))


def test_pieces_are_whole_lines_numbered_from_the_file_start():
    lines = [g.encode() for g in _GOOD]
    data = b"\n".join(lines) + b"\n"
    pieces = list(file_pieces("a.jsonl", data, 2 * len(lines[0])))
    assert len(pieces) > 1
    for _, first, piece in pieces:
        assert piece.endswith(b"\n")
        assert piece.split(b"\n")[0] == lines[first - 1]


def test_small_gzipped_and_other_files_are_one_piece():
    data = b"\n".join(g.encode() for g in _GOOD)
    assert list(file_pieces("a.jsonl", data, len(data))) == [(0, None, data)]
    assert list(file_pieces("a.jsonl.gz", data, 10)) == [(0, None, data)]
    assert list(file_pieces("a.csv", data, 10)) == [(0, None, data)]


@pytest.mark.slow
def test_spark_reads_pieces_in_the_drivers_order(spark, tmp_path):
    """read_raw with pieces of 200 bytes, over several files and inputs:
    every raw record of read_records, and in its order when sorted by
    READ_ORDER."""
    recs = [json.loads(g) for g in _GOOD] * 3 + ["{broken", "[1]"]
    a = write_jsonl(tmp_path / "in" / "a.jsonl", recs)
    b = write_jsonl(tmp_path / "in" / "b.jsonl", recs[::-1])
    j = write_jsonl(tmp_path / "j.jsonl", [
        {"task": "t", "topic": "d0", "summarizer": "s0", "criterion": "q", "score": [1, 2]}])
    specs = [InputSpec(str(tmp_path / "in")), InputSpec(str(j), "judgments"),
             InputSpec(str(a))]
    assert b.exists()
    expected = [tuple(r[f] for f in RAW_FIELDS) for r in read_records(specs)]
    rows = read_raw(spark, specs, piece_bytes=200).orderBy(*READ_ORDER).collect()
    got = [tuple(r[f] for f in RAW_FIELDS) for r in rows]
    assert [tuple(tuple(v) if isinstance(v, list) else v for v in r) for r in got] == \
        [tuple(tuple(v) if isinstance(v, list) else v for v in r) for r in expected]
    assert len({r["_piece"] for r in rows}) > 3
