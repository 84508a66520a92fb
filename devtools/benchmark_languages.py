"""The battery's speed per language (issue 38): pairs per second of
``topic_similarities`` on topics of the bundled SummEval (English) and on
the same topics with every English token replaced by a Russian word or a
Chinese character (the same number of tokens and sentences per summary), in
one process, no Spark.

``python -m devtools.benchmark_languages [--topics N]`` prints, per
language, the pairs/s of the metrics every language computes (R and Rpre of
variants a and b, TVM, AVLS) and of the language's whole default battery
(English 59; Russian without GRAMSIM; Chinese without GRAMSIM and variant c),
and the ratio to English.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Dict, List

from qarla_spark.metrics.battery import topic_similarities
from qarla_spark.metrics.registry import DEFAULT_BATTERY
from qarla_spark.text.tokenize import split_sentences, tokenize

RUSSIAN = ("москва столица город совет бюджет школа дорога мэр депутат голосование шторм "
           "побережье свет дом деревня порт ветер дерево учёный лягушка лес экспедиция журнал "
           "сборная финал гол минута болельщик тренер игрок капитан кубок аэропорт").split()
CHINESE = list("市政府公布新预算教育支出增加倍议员讨论道路维修长称公平合理反对派要求进行审计投票周举行"
               "强烈风暴袭击沿海地区数千户家庭停电救援人疏散村民港口关闭")


def topics(n: int) -> List[List[dict]]:
    from qarla_spark.io import bundled_inputs, read_records
    by_topic: Dict[str, List[dict]] = {}
    for rec in read_records(bundled_inputs()):
        if rec["kind"] == "summary":
            by_topic.setdefault(rec["topic"], []).append(rec)
    return [by_topic[t] for t in sorted(by_topic)[:n]]


def translated(text: str, words: List[str], joiner: str, end: str) -> str:
    """``text`` with each token replaced by a word of ``words`` (a fixed map
    per English word), sentence by sentence."""
    out = []
    for sentence in split_sentences(text):
        toks = tokenize(sentence)
        if toks:
            out.append(joiner.join(words[hash_word(t) % len(words)] for t in toks) + end)
    return "\n".join(out)


def hash_word(word: str) -> int:
    import zlib
    return zlib.crc32(word.encode())


def measure(topic_texts, roles, metrics, language: str, repeat: int) -> float:
    pairs = sum(len(t) * (len(t) - 1) for t in topic_texts)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()    # CPU time: the machine may be loaded
        for texts, rl in zip(topic_texts, roles):
            topic_similarities(texts, metrics, roles=rl, language=language)
        best = min(best, time.process_time() - t0)
    return pairs / best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    data = topics(args.topics)
    roles = [[r["role"] for r in t] for t in data]
    texts = {"en": [[r["text"] for r in t] for t in data],
             "ru": [[translated(r["text"], RUSSIAN, " ", ".") for r in t] for t in data],
             "zh": [[translated(r["text"], CHINESE, "", "。") for r in t] for t in data]}
    common = [m for m in DEFAULT_BATTERY if m.endswith((".a", ".b")) or m.startswith(
        ("TVM", "AVLS"))]
    full = {"en": list(DEFAULT_BATTERY),
            "ru": [m for m in DEFAULT_BATTERY if m != "GRAMSIM"],
            "zh": [m for m in DEFAULT_BATTERY if m != "GRAMSIM" and not m.endswith(".c")]}
    # warm: numba's compiled kernels, the stemmers' caches are per process
    for code in texts:
        measure(texts[code][:1], roles[:1], full[code], code, 1)
    result = {}
    for name, chosen in (("common", {c: common for c in texts}), ("full", full)):
        # interleaved, the best of each: the machine's other load hits all alike
        rates = dict.fromkeys(texts, 0.0)
        for _ in range(args.repeat):
            for code in texts:
                rates[code] = max(rates[code], measure(texts[code], roles, chosen[code],
                                                       code, 1))
        result[name] = {code: {"metrics": len(chosen[code]), "pairs_per_s": round(r),
                               "ratio_to_en": round(rates["en"] / r, 3)}
                        for code, r in rates.items()}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
