"""The small multilingual testbed of the README and the tests (issue 38):
two tasks, Russian (``ru``) and Chinese (``zh``), 4 topics each, 5 model
summaries and 4 systems per topic, built so that the references agree (each
model says most of its topic's facts; a system says fewer of them, padded
with words of other topics), so that a metric that reads the text ranks the
references first.

``python -m devtools.multilingual`` writes ``tests/data/multilingual.jsonl``
(the committed file; ``tests/test_languages.py`` checks it is this
generator's output).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Dict, List

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "multilingual.jsonl"

#: per task: its topics' facts (short sentences), filler sentences, the
#: sentence end and the word separator
FACTS: Dict[str, Dict[str, List[str]]] = {
    "ru": {
        "t1": ["Городской совет утвердил новый бюджет", "Расходы на школы выросли вдвое",
               "Депутаты спорили о ремонте дорог", "Мэр назвал бюджет честным",
               "Оппозиция потребовала новых проверок", "Голосование прошло в среду"],
        "t2": ["Сильный шторм обрушился на побережье", "Тысячи домов остались без света",
               "Спасатели эвакуировали жителей деревни", "Порт закрыли до воскресенья",
               "Ветер повалил сотни деревьев", "Синоптики обещают похолодание"],
        "t3": ["Учёные открыли новый вид лягушек", "Лягушки живут в горных лесах",
               "Экспедиция длилась три месяца", "Находку описали в научном журнале",
               "Виду грозит исчезновение", "Лес нужно срочно охранять"],
        "t4": ["Сборная выиграла финал чемпионата", "Решающий гол забили на последней минуте",
               "Болельщики праздновали всю ночь", "Тренер похвалил молодых игроков",
               "Капитан поднял кубок над головой", "Команду встретили в аэропорту"],
    },
    "zh": {
        "t1": ["市政府公布了新的预算", "教育支出增加了一倍", "议员们讨论了道路维修",
               "市长称预算公平合理", "反对派要求进行审计", "投票在周三举行"],
        "t2": ["强烈风暴袭击了沿海地区", "数千户家庭停电", "救援人员疏散了村民",
               "港口关闭到周日", "大风吹倒了数百棵树", "气象部门预报降温"],
        "t3": ["科学家发现了一种新青蛙", "这种青蛙生活在山区森林", "考察持续了三个月",
               "研究结果发表在科学期刊上", "该物种面临灭绝危险", "森林需要紧急保护"],
        "t4": ["国家队赢得了锦标赛决赛", "制胜球在最后一分钟打进", "球迷们庆祝了一整夜",
               "教练称赞了年轻球员", "队长高高举起奖杯", "球队在机场受到欢迎"],
    },
}
END = {"ru": ".", "zh": "。"}
SEPARATOR = {"ru": " ", "zh": ""}
MODELS, PEERS = 5, 4


def records(seed: int = 38) -> List[dict]:
    """The testbed's records, in a fixed order."""
    rng = random.Random(seed)
    out = []
    for task, topics in FACTS.items():
        for topic, facts in topics.items():
            others = [f for t, fs in topics.items() if t != topic for f in fs]
            for k in range(MODELS):
                said = rng.sample(facts, 5)
                out.append(_record(task, topic, f"ref{k}", "model", said))
            for k in range(PEERS):
                said = rng.sample(facts, 1 + k % 2) + rng.sample(others, 3)
                rng.shuffle(said)
                out.append(_record(task, topic, f"sys{k}", "peer", said))
    return out


def _record(task: str, topic: str, summarizer: str, role: str, sentences: List[str]) -> dict:
    text = SEPARATOR[task].join(s + END[task] for s in sentences)
    return {"task": task, "topic": topic, "summarizer": summarizer, "role": role,
            "text": text}


def text() -> str:
    """The JSONL file's text."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records())


def main() -> int:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text(), encoding="utf-8")
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
