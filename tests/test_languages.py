"""Every language (issue 38): the tokenizer, stop list and stemmer of each
language, checked against independent code (rouge-score's scoring with the
same tokenizer passed in, snowballstemmer's and stopwordsiso's own
answers); English unchanged; the validation that refuses non-Latin text
under ``en``; the metrics a language cannot compute refused or left out;
the option. No Spark (tests/test_validate.py runs the detection through
both readers).
"""

from __future__ import annotations

import json
import unicodedata
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.errors import ConfigError
from qarla_spark.metrics.battery import topic_similarities
from qarla_spark.text import languages as L
from qarla_spark.text.variants import prepare

FIXTURE = Path(__file__).parent / "data" / "multilingual.jsonl"

#: words of each language checked against independent code: inflected
#: forms, capitals, diacritics, final sigma, combining marks, stop words
WORDS = {
    "ru": ["Москва", "москвы", "столица", "столицы", "России", "и", "в", "не", "книга",
           "книгами", "Ёлка", "ёлки", "читал", "читали", "большой", "большие", "2024"],
    "de": ["Straße", "Strassen", "Häuser", "Haus", "und", "der", "die", "Bäume", "läuft",
           "laufen", "Größe", "groß", "nicht", "Kinder", "Kind", "schön", "1990"],
    "zh": ["北京", "是", "中国", "的", "首都", "人民", "我们", "了", "经济", "发展",
           "科学家", "发现", "青蛙", "2024年", "iPhone"],
    "el": ["Αθήνα", "αθήνας", "λόγος", "λόγοι", "και", "το", "η", "πόλη", "πόλεις",
           "ΕΛΛΑΔΑ", "ελληνικός", "ελληνικές", "δρόμος", "δρόμους"],
    "hi": ["भारत", "भारतीय", "की", "है", "राजधानी", "दिल्ली", "लड़कों", "लड़का", "और",
           "सरकार", "सरकारें", "में"],
}
#: the Snowball algorithm of each language checked
SNOWBALL = {"ru": "russian", "de": "german", "el": "greek", "hi": "hindi"}


def _text(words, code):
    return ("" if code == "zh" else " ").join(words)


def texts(code):
    return st.lists(st.sampled_from(WORDS[code]), min_size=0, max_size=25).map(
        lambda ws: _text(ws, code))


class _Tokenizer:
    """rouge-score's tokenizer interface around the language's tokenizer."""

    def __init__(self, code):
        self.code = code

    def tokenize(self, text):
        return L.unicode_tokenize(text, self.code)


# --- independent ROUGE -------------------------------------------------------


@pytest.mark.parametrize("code", sorted(WORDS))
@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.data())
def test_rouge_a_equals_rouge_score_with_the_same_tokens(code, data):
    """R-1, R-2, R-L of variant a equal rouge-score's recall on the same
    tokens (one-sentence texts: rouge-score's L is one LCS of the whole text)."""
    from rouge_score import rouge_scorer
    s, r = data.draw(texts(code)), data.draw(texts(code))
    ours = topic_similarities([s, r], ["R-1.a", "R-2.a", "R-L.a", "Rpre-1.a"],
                              language=code)
    got = dict(zip(ours.metrics, ours.values[0]))          # pair (s, r)
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"],
                                      tokenizer=_Tokenizer(code))
    ref = scorer.score(r, s)                               # target r, prediction s
    assert got["R-1.a"] == ref["rouge1"].recall
    assert got["R-2.a"] == ref["rouge2"].recall
    assert got["R-L.a"] == ref["rougeL"].recall
    assert got["Rpre-1.a"] == ref["rouge1"].precision


@pytest.mark.parametrize("code", sorted(SNOWBALL))
@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.data())
def test_variants_b_and_c_are_the_libraries_answers(code, data):
    """b: a without stopwords-iso's words; c: b stemmed as snowballstemmer's
    own public API stems it."""
    import snowballstemmer
    import stopwordsiso
    text = data.draw(texts(code))
    p = prepare(text, code)
    a = [t for s in p.a for t in s]
    assert a == L.unicode_tokenize(text, code)
    stop = {unicodedata.normalize("NFKC", w).casefold() for w in stopwordsiso.stopwords(code)}
    b = [t for t in a if t not in stop]
    assert [t for s in p.b for t in s] == b
    assert [t for s in p.c for t in s] == snowballstemmer.stemmer(SNOWBALL[code]).stemWords(b)


def test_tokens_of_each_script():
    assert L.unicode_tokenize("Кто-то сказал: «Привет»", "ru") == ["кто", "то", "сказал",
                                                                   "привет"]
    assert L.unicode_tokenize("м'ясо і хліб", "uk") == ["м'ясо", "і", "хліб"]
    assert L.unicode_tokenize("Straße ２０２４", "de") == ["strasse", "2024"]
    assert L.unicode_tokenize("東京タワー", "ja") == ["東", "京", "タ", "ワ", "ー"]
    assert L.unicode_tokenize("İstanbul ILIK", "tr") == ["istanbul", "ılık"]
    assert L.unicode_tokenize("ผมรักภาษาไทย", "th") == ["ผม", "รัก", "ภาษาไทย"]
    # combining marks stay in their word
    assert L.unicode_tokenize("लड़कों की", "hi") == ["लड़कों", "की"]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=60), st.sampled_from(["ru", "de", "zh", "ar", "hi", "ja", "ko"]))
def test_tokens_are_folded_letters_marks_and_digits(text, code):
    import regex
    for token in L.unicode_tokenize(text, code):
        assert token and regex.fullmatch(r"[\p{L}\p{M}\p{Nd}]+", token)
        assert token == token.casefold() or code in ("tr", "az")
        if regex.search(r"[\p{Han}\p{Hiragana}\p{Katakana}]", token):
            assert len(token) == 1


def test_sentences_know_other_scripts_ends():
    assert L.unicode_sentences("今天下雨。我们不去了！好吗？") == ["今天下雨。", "我们不去了！",
                                                                "好吗？"]
    assert L.unicode_sentences("「你好。」他说。") == ["「你好。」", "他说。"]
    assert L.unicode_sentences("क्या हुआ। कुछ नहीं") == ["क्या हुआ।", "कुछ नहीं"]
    assert L.unicode_sentences("Он пришёл. Она ушла!") == ["Он пришёл.", "Она ушла!"]
    assert L.unicode_sentences("one line\nanother。line") == ["one line", "another。line"]


def test_english_is_rouge155_unchanged():
    """``en`` goes through the ROUGE-1.5.5 functions themselves (the golden
    ROUGE-1.5.5 tests hold them); the default is en."""
    text = "Merson's call-up: 83rd minute, café! Москва"
    assert prepare(text) == prepare(text, "en")
    assert prepare(text).a == (("merson", "s", "call", "up", "83rd", "minute", "caf"),)
    pair, roles = ["a b c. d", "b c d e"], ["model", "peer"]
    a = topic_similarities(pair, ["R-1.a", "R-L.c", "TVM.4"], roles=roles)
    b = topic_similarities(pair, ["R-1.a", "R-L.c", "TVM.4"], roles=roles, language="en")
    assert np.array_equal(a.values, b.values)


# --- the battery in other languages ------------------------------------------


def _fixture():
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def test_the_fixture_is_the_generators():
    from devtools.multilingual import text
    assert FIXTURE.read_text(encoding="utf-8") == text()


@pytest.mark.parametrize("code", ["ru", "zh"])
def test_non_english_measures_are_real_and_not_constant(code):
    """Under en every metric of a Russian or Chinese topic is constant (the
    defect of issue 38); under its language none of them is, and a model
    is closer to the other models than the systems are (R-1)."""
    recs = [r for r in _fixture() if r["task"] == code and r["topic"] == "t1"]
    texts_, roles = [r["text"] for r in recs], [r["role"] for r in recs]
    metrics = ["R-1.a", "R-2.b", "R-L.a", "TVM.8", "AVLS"]
    english = topic_similarities(texts_, metrics, roles=roles)
    assert all(np.ptp(english.values[:, k]) == 0 for k in range(len(metrics)))
    ours = topic_similarities(texts_, metrics, roles=roles, language=code)
    assert all(np.ptp(ours.values[:, k]) > 0 for k in range(len(metrics)))
    models = {i for i, r in enumerate(roles) if r == "model"}
    r1 = ours.values[:, 0]
    to_models = [(s, v) for s, r, v in zip(ours.s, ours.r, r1) if r in models and s != r]
    model_mean = np.mean([v for s, v in to_models if s in models])
    peer_mean = np.mean([v for s, v in to_models if s not in models])
    assert model_mean > peer_mean


def test_non_english_battery_speed_is_per_summary():
    """Segmentation is per summary: a topic's preparation runs once per
    text, not once per pair (the cost ratio is in DECISIONS)."""
    from qarla_spark.text import variants
    calls = []
    real = variants.prepare_language

    def counted(text, language):
        calls.append(text)
        return real(text, language)
    recs = [r for r in _fixture() if r["task"] == "zh" and r["topic"] == "t2"]
    variants.prepare_language, saved = counted, variants.prepare_language
    try:
        topic_similarities([r["text"] for r in recs], ["R-1.a", "R-L.a"], language="zh")
    finally:
        variants.prepare_language = saved
    assert len(calls) == len(recs)


# --- validation (the driver; tests/test_validate.py: both readers) -----------


def _records(texts_, task="t", file="in.jsonl"):
    from qarla_spark.names import RAW_FIELDS, SUMMARY
    out = []
    for i, text in enumerate(texts_):
        rec = dict.fromkeys(RAW_FIELDS)
        rec.update(kind=SUMMARY, file=file, line=i + 1, unit="line", task=task,
                   topic=f"d{i % 2}", summarizer=f"s{i // 2}",
                   role="model" if i < 8 else "peer", text=text, embedded=False)
        out.append(rec)
    return out


def _problems(texts_, languages=None, task="t"):
    languages = {"*": "en"} if languages is None else languages
    from qarla_spark.io.checks import check_records, problem_rows
    topic_rows, task_rows = check_records(_records(texts_, task), languages)
    return problem_rows(topic_rows) + problem_rows(task_rows)


RUSSIAN = [f"Москва — столица России, текст номер {i}." for i in range(12)]
CHINESE = [f"北京是中国的首都，第{i}篇。" for i in range(12)]
JAPANESE = [f"東京はとても大きな都市です。{i}" for i in range(12)]


@pytest.mark.parametrize("texts_, code", [(RUSSIAN, "ru"), (CHINESE, "zh"), (JAPANESE, "ja")])
def test_non_latin_text_under_english_is_an_error_naming_the_fix(texts_, code):
    problems = _problems(texts_, task="news")
    errors = [p for p in problems if p["severity"] == "error"]
    assert len(errors) == 1, problems
    message = errors[0]["message"]
    assert "task 'news' (language en)" in message
    assert f"--language {code}" in message and f"--language news={code}" in message
    assert "in.jsonl, line " in message            # an example, placed
    assert not [p for p in _problems(texts_, {"*": code}) if p["severity"] != "info"]


def test_a_mixed_script_task_is_a_warning_or_an_error():
    few = RUSSIAN[:9] + CHINESE[:3]
    problems = _problems(few, {"*": "ru"})
    assert [p["severity"] for p in problems] == ["warning"]
    assert "Han" in problems[0]["message"] and "mixes scripts" in problems[0]["message"]
    many = RUSSIAN[:4] + CHINESE[:8]
    assert [p["severity"] for p in _problems(many, {"*": "ru"})] == ["error"]
    # Latin names in a Russian task are not another script's text
    assert _problems([t + " iPhone NASA" for t in RUSSIAN], {"*": "ru"}) == []


def test_summaries_without_a_token_are_warnings_with_their_place():
    texts_ = RUSSIAN[:10] + ["— … !!", "?!"]
    problems = _problems(texts_, {"*": "ru"})
    assert [(p["severity"], p["kind"], p["line"]) for p in problems] == [
        ("warning", "no_tokens", 11), ("warning", "no_tokens", 12)]
    assert problems[0]["file"] == "in.jsonl" and problems[0]["subject"] == "in.jsonl, line 11"
    mostly = ["…"] * 8 + RUSSIAN[:4]
    errors = [p for p in _problems(mostly, {"*": "ru"}) if p["severity"] == "error"]
    assert len(errors) == 1 and "8 of its 12 summaries yield no token" in errors[0]["message"]


def test_the_bundled_english_testbed_raises_no_language_problem():
    """SummEval under en: no new problem (its problems/ table is unchanged)."""
    from qarla_spark.io import bundled_inputs, check_in_driver
    checked = check_in_driver(bundled_inputs(), 50, 64 << 20, {"*": "en"})
    assert checked.report.n_errors == 0 and checked.report.n_warnings == 0


# --- refused metrics, the option ---------------------------------------------


def _config(**kw):
    from qarla_spark.config import RunConfig
    return RunConfig(**kw)


def test_metrics_a_language_lacks_are_left_out_with_a_warning():
    from qarla_spark.metrics.registry import DEFAULT_BATTERY
    from qarla_spark.stages.similarities import for_languages
    config = _config(language={"*": "en", "zh": "zh", "ru": "ru"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kept, info = for_languages(config, DEFAULT_BATTERY, ["en", "ru", "zh"])
    said = [str(w.message) for w in caught]
    assert not any(m.endswith(".c") and m.startswith("R") for m in kept)
    assert "GRAMSIM" not in kept and "R-1.b" in kept and "TVM.8" in kept
    assert any("R-*.c, Rpre-*.c left out" in s and "no stemmer for Chinese (zh)" in s
               for s in said)
    assert any(s.startswith("GRAMSIM left out") for s in said)
    assert info["left_out"]["GRAMSIM"] == ["ru", "zh"]
    assert info["languages"]["ru"]["stemmer"].startswith("Snowball russian")
    assert for_languages(_config(), DEFAULT_BATTERY, ["summeval"])[0] == DEFAULT_BATTERY


def test_metrics_named_exactly_are_refused_and_task_names_checked():
    from qarla_spark.stages.similarities import for_languages
    with pytest.raises(ConfigError, match=r"R-1\.c cannot be computed for task 'zh' "
                                          r"\(language zh\): no stemmer"):
        for_languages(_config(language=["zh"], metrics=("R-1.c",)), ("R-1.c",), ["zh"])
    with pytest.raises(ConfigError, match="GRAMSIM cannot be computed"):
        for_languages(_config(language=["ru"], metric_sets=("GRAMSIM,R-1.a",)),
                      ("GRAMSIM", "R-1.a"), ["news"])
    with pytest.raises(ConfigError, match="the input has no task 'zh_news'; did you mean "
                                          "zh-news"):
        for_languages(_config(language=["zh_news=zh"]), ("R-1.a",), ["zh-news", "ru"])


def test_the_option_takes_a_code_pairs_or_a_table():
    from qarla_spark.options import OPTIONS
    assert _config().language == {"*": "en"}
    assert _config(language=["ru", "zh=zh"]).language == {"*": "ru", "zh": "zh"}
    assert _config(language={"a": "de"}).to_dict()["language"] == {"*": "en", "a": "de"}
    assert _config(language="fr").to_dict()["language"] == "fr"
    option = next(o for o in OPTIONS if o.name == "language")
    assert option.kind.from_cli(["zh=zh"], {"*": "ru"}) == {"*": "ru", "zh": "zh"}
    with pytest.raises(ConfigError):
        _config(language=["=ru"])
    with pytest.raises(ConfigError, match="unknown language 'russian'; did you mean ru"):
        L.LanguageMap.of({"*": "russian"})
    with pytest.raises(ConfigError, match="no installed package segments it"):
        L.check_code("my")


def test_run_json_signature_names_the_languages():
    from qarla_spark.pipeline import signature
    config = _config()
    assert signature(config, "4.0") == "qarla_spark:0.1.0|spark:4.0|seed:13"
    sig = signature(config, "4.0", {"a": {"language": "en"}, "b": {"language": "th"}})
    assert "|lang:a=en,b=th|text:regex-" in sig and "pythainlp-" in sig


def test_the_readme_lists_the_languages():
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    assert L.markdown_list() in readme


def test_topic_size_limits_count_a_language_s_tokens():
    """A Chinese sentence has no space: its size is its characters."""
    import pyarrow as pa

    from qarla_spark.io.limits import TopicSize, topic_sizes
    table = pa.table({"task": ["zh", "en"], "topic": ["a", "b"],
                      "text": ["北京是中国的首都。我们", "one two three."]})
    assert topic_sizes(table, {"*": "en", "zh": "zh"}) == [TopicSize("en", "b", 1, 3),
                                                           TopicSize("zh", "a", 1, 8)]
    assert topic_sizes(table)[1] == TopicSize("zh", "a", 1, 1)


def test_thai_without_its_segmenter_is_refused_by_name(monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pythainlp" else real(name, *a))
    with pytest.raises(ConfigError, match=r"pip install 'qarla_spark\[thai\]'"):
        L.LanguageMap.of({"*": "en", "news": "th"})
    assert L.LanguageMap.of({"*": "ru"}).default == "ru"


def test_the_command_line_refuses_the_testbed_under_english_before_spark(tmp_path):
    """``qarla run`` of the Russian/Chinese testbed under the default en:
    exit status 1, both tasks and the fix named, before Spark starts (in
    seconds; ``qarla validate``: without Java at all); an unknown code is a
    configuration error."""
    import time

    from test_bad_input import qarla_without_java
    started = time.time()
    done = qarla_without_java(["run", str(FIXTURE), "--bootstrap", "0",
                               "--out", str(tmp_path / "out")], tmp_path, java=True)
    assert time.time() - started < 30 and "spark session" not in done.stderr
    assert done.returncode == 1, done.stderr
    for task in ("ru", "zh"):
        assert f"task '{task}' (language en)" in done.stderr + done.stdout
        assert f"--language {task}" in done.stderr + done.stdout
    assert not (tmp_path / "out").exists()
    done = qarla_without_java(["validate", str(FIXTURE)], tmp_path)
    assert done.returncode == 1 and "--language zh" in done.stdout
    done = qarla_without_java(["validate", str(FIXTURE), "--language", "rus"], tmp_path)
    assert done.returncode == 2 and "unknown language 'rus'" in done.stderr


@pytest.mark.spark
def test_the_spark_battery_uses_each_task_s_language(spark):
    """Through Spark (the executors' kernels): each task's topics in its
    language; R-1.a of every task varies; under en it would not."""
    import pandas as pd

    from qarla_spark.stages.similarity_plan import compute_similarities
    frame = pd.DataFrame(_fixture())[["task", "topic", "summarizer", "role", "text"]]
    summaries = spark.createDataFrame(frame)
    sims = compute_similarities(summaries, ["R-1.a", "R-1.b", "TVM.4"],
                                options={"languages": {"ru": "ru", "zh": "zh"}},
                                n_partitions=2).toPandas()
    spread = sims.groupby(["task", "metric"])["value"].std()
    assert len(spread) == 6 and (spread > 0).all()
    row = sims[(sims.task == "zh") & (sims.topic == "t1") & (sims.metric == "R-1.a")
               & (sims.summarizer_s == "ref0") & (sims.summarizer_r == "ref1")]
    texts = {r["summarizer"]: r["text"] for r in _fixture()
             if r["task"] == "zh" and r["topic"] == "t1"}
    direct = topic_similarities([texts["ref0"], texts["ref1"]], ["R-1.a"], language="zh")
    assert row["value"].iloc[0] == direct.values[0, 0]
