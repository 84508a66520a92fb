"""The languages of the battery: a tokenizer, a sentence splitter, a stop
list and a stemmer per language (issue 38; SPEC §2 and DECISIONS, "Every
language").

``en`` (the default) is ROUGE-1.5.5's own processing, bit for bit
(:mod:`~qarla_spark.text.tokenize`, :mod:`~qarla_spark.text.stem`, the SMART
stop list). Every other language of :data:`LANGUAGES` is processed thus:

- **tokens**: the text is NFKC-normalised (full-width Latin letters and
  digits become ASCII ones, ligatures are split); a token is a maximal run
  of letters, combining marks and decimal digits of any script (Unicode
  properties ``L``, ``M``, ``Nd``), case-folded (Turkish and Azerbaijani:
  ``I`` → ``ı``, ``İ`` → ``i`` first); hyphens, apostrophes and every other
  character separate tokens, except an apostrophe between two letters in
  the languages that write it inside words (Ukrainian, Belarusian:
  ``м'ясо``). Scripts written without spaces: every Han, Hiragana and
  Katakana character is a token of its own (Chinese, Japanese: characters
  as tokens, as XL-Sum's multilingual ROUGE does for Chinese); a run of
  Thai letters is segmented into words by PyThaiNLP's ``newmm``
  (dictionary-based maximal matching, its dictionary inside the wheel) in
  Thai; in another language it stays one token.
- **sentences**: a non-blank line is a sentence when the text has
  newlines (as in English); otherwise a sentence ends after every
  whitespace-delimited word ending with ``. ! ? …`` or another script's
  sentence end (``؟ ۔ । ॥ ። ။ ;``), closing quotes and brackets after it
  included, and after every full-width or ideographic end ``。！？｡．``
  wherever it stands (Chinese and Japanese put no space after them).
- **variant b**: the tokens in the language's list of stopwords-iso
  (``stopwordsiso``, entries normalised and case-folded the same way)
  removed; a language without a list has no variant b.
- **variant c**: variant b's tokens stemmed by the language's Snowball
  stemmer (``snowballstemmer``, its pure-Python stemmers: the same stems on
  every machine, with or without PyStemmer), every token whatever its
  length; a language without a stemmer has no variant c.

Metrics of a variant a language lacks are refused for its tasks
(:func:`missing_variants`), as is GRAMSIM (its tagger is English's):
never silently equal to variant ``a``. TVM's terms are the language's
most processed tokens (variant c, else b, else a).

Every list and model comes from an installed package: nothing is
downloaded at run time.
"""

from __future__ import annotations

import difflib
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from qarla_spark.errors import ConfigError

__all__ = [
    "ENGLISH",
    "DEFAULT_KEY",
    "Language",
    "LANGUAGES",
    "LanguageMap",
    "language",
    "check_code",
    "check_installed",
    "normalise",
    "has_token",
    "has_any_token",
    "letter_profile",
    "script_of",
    "suggest",
    "SCRIPT_LANGUAGES",
    "unicode_tokenize",
    "unicode_sentences",
    "stop_list",
    "stemmer",
    "missing_variants",
    "signature",
    "describe",
    "markdown_list",
]

#: the default language: ROUGE-1.5.5's processing, unchanged
ENGLISH = "en"
#: the key of the default language in a language map (``--language LANG``)
DEFAULT_KEY = "*"


@dataclass(frozen=True)
class Language:
    """What the battery knows of one language."""

    code: str
    name: str
    #: the Unicode scripts its letters are written in (validation counts
    #: the letters outside them)
    scripts: Tuple[str, ...]
    #: its Snowball stemmer (``snowballstemmer`` algorithm name), if any
    snowball: Optional[str] = None
    #: stopwords-iso has a list for it
    stop_list: bool = False
    #: an apostrophe between two letters is part of a word
    apostrophe: bool = False
    #: how its words are found: ``rouge155`` (English), ``words`` (Unicode
    #: word runs), ``characters`` (Han and kana characters as tokens),
    #: ``thai`` (PyThaiNLP's newmm)
    segmentation: str = "words"
    #: GRAMSIM has a part-of-speech tagger for it
    tagger: bool = False

    @property
    def variants(self) -> Tuple[str, ...]:
        """The variants of SPEC §2 this language has."""
        if self.segmentation == "rouge155":
            return ("a", "b", "c")
        out = ["a"]
        if self.stop_list:
            out.append("b")
            if self.snowball:
                out.append("c")
        return tuple(out)


def _languages() -> Dict[str, Language]:
    latin = ("Latin",)
    rows = [
        # code, name, scripts, snowball, stop list, extra
        ("af", "Afrikaans", latin, None, True),
        ("am", "Amharic", ("Ethiopic",), None, False),
        ("ar", "Arabic", ("Arabic",), "arabic", True),
        ("az", "Azerbaijani", latin, None, False),
        ("bg", "Bulgarian", ("Cyrillic",), None, True),
        ("bn", "Bengali", ("Bengali",), None, True),
        ("br", "Breton", latin, None, True),
        ("ca", "Catalan", latin, "catalan", True),
        ("cs", "Czech", latin, "czech", True),
        ("cy", "Welsh", latin, None, False),
        ("da", "Danish", latin, "danish", True),
        ("de", "German", latin, "german", True),
        ("el", "Greek", ("Greek",), "greek", True),
        ("eo", "Esperanto", latin, "esperanto", True),
        ("es", "Spanish", latin, "spanish", True),
        ("et", "Estonian", latin, "estonian", True),
        ("eu", "Basque", latin, "basque", True),
        ("fa", "Persian", ("Arabic",), "persian", True),
        ("fi", "Finnish", latin, "finnish", True),
        ("fr", "French", latin, "french", True),
        ("ga", "Irish", latin, "irish", True),
        ("gd", "Scottish Gaelic", latin, None, False),
        ("gl", "Galician", latin, None, True),
        ("gu", "Gujarati", ("Gujarati",), None, True),
        ("ha", "Hausa", latin, None, True),
        ("he", "Hebrew", ("Hebrew",), None, True),
        ("hi", "Hindi", ("Devanagari",), "hindi", True),
        ("hr", "Croatian", latin, None, True),
        ("hu", "Hungarian", latin, "hungarian", True),
        ("hy", "Armenian", ("Armenian",), "armenian", True),
        ("id", "Indonesian", latin, "indonesian", True),
        ("ig", "Igbo", latin, None, False),
        ("it", "Italian", latin, "italian", True),
        ("ja", "Japanese", ("Han", "Hiragana", "Katakana"), None, True),
        ("ka", "Georgian", ("Georgian",), None, False),
        ("kn", "Kannada", ("Kannada",), None, False),
        ("ko", "Korean", ("Hangul", "Han"), None, True),
        ("ku", "Kurdish", latin, None, True),
        ("ky", "Kyrgyz", ("Cyrillic",), None, False),
        ("la", "Latin", latin, None, True),
        ("lt", "Lithuanian", latin, "lithuanian", True),
        ("lv", "Latvian", latin, None, True),
        ("ml", "Malayalam", ("Malayalam",), None, False),
        ("mr", "Marathi", ("Devanagari",), None, True),
        ("ms", "Malay", latin, None, True),
        ("ne", "Nepali", ("Devanagari",), "nepali", False),
        ("nl", "Dutch", latin, "dutch", True),
        ("no", "Norwegian", latin, "norwegian", True),
        ("om", "Oromo", latin, None, False),
        ("pa", "Punjabi", ("Gurmukhi",), None, False),
        ("pcm", "Nigerian Pidgin", latin, None, False),
        ("pl", "Polish", latin, "polish", True),
        ("ps", "Pashto", ("Arabic",), None, False),
        ("pt", "Portuguese", latin, "portuguese", True),
        ("rn", "Kirundi", latin, None, False),
        ("ro", "Romanian", latin, "romanian", True),
        ("ru", "Russian", ("Cyrillic",), "russian", True),
        ("si", "Sinhala", ("Sinhala",), None, False),
        ("sk", "Slovak", latin, None, True),
        ("sl", "Slovenian", latin, None, True),
        ("so", "Somali", latin, None, True),
        ("sr", "Serbian", ("Cyrillic", "Latin"), "serbian", False),
        ("st", "Sesotho", latin, "sesotho", True),
        ("sv", "Swedish", latin, "swedish", True),
        ("sw", "Swahili", latin, None, True),
        ("ta", "Tamil", ("Tamil",), "tamil", False),
        ("te", "Telugu", ("Telugu",), None, False),
        ("th", "Thai", ("Thai",), None, True),
        ("ti", "Tigrinya", ("Ethiopic",), None, False),
        ("tl", "Tagalog", latin, None, True),
        ("tr", "Turkish", latin, "turkish", True),
        ("uk", "Ukrainian", ("Cyrillic",), None, True),
        ("ur", "Urdu", ("Arabic",), None, True),
        ("uz", "Uzbek", latin, None, False),
        ("vi", "Vietnamese", latin, None, True),
        ("yi", "Yiddish", ("Hebrew",), "yiddish", False),
        ("yo", "Yoruba", latin, None, True),
        ("zh", "Chinese", ("Han",), None, True),
        ("zu", "Zulu", latin, None, True),
    ]
    out = {ENGLISH: Language(ENGLISH, "English", ("ASCII letters",), None, True,
                             segmentation="rouge155", tagger=True)}
    special = {"ja": "characters", "zh": "characters", "th": "thai"}
    for code, name, scripts, snowball, stop in rows:
        out[code] = Language(code, name, scripts, snowball, stop,
                             apostrophe=code in ("uk", "be"),
                             segmentation=special.get(code, "words"))
    return dict(sorted(out.items()))


#: every language the battery takes, by code (ISO 639-1, ``pcm`` ISO 639-3)
LANGUAGES: Dict[str, Language] = _languages()


def check_code(code: str, where: str = "--language") -> str:
    """``code`` if it names a language of :data:`LANGUAGES`, else a
    :class:`ConfigError` naming the closest codes and names."""
    if isinstance(code, str) and code in LANGUAGES:
        return code
    names = {lang.name.lower(): c for c, lang in LANGUAGES.items()}
    hint = ""
    if isinstance(code, str) and code.strip().lower() in LANGUAGES:
        hint = f"; did you mean {code.strip().lower()}?"
    elif isinstance(code, str) and code.strip().lower() in names:
        hint = f"; did you mean {names[code.strip().lower()]}?"
    elif isinstance(code, str):
        close = difflib.get_close_matches(code, list(LANGUAGES), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
    if code in ("my", "lo", "km", "bo", "dz"):
        hint = (": its script is written without spaces and no installed package segments it "
                "into words")
    raise ConfigError(f"{where}: unknown language {code!r}{hint} (languages: "
                      f"{', '.join(LANGUAGES)}; see the README's list)")


def check_installed(code: str) -> None:
    """A :class:`ConfigError` when ``code`` needs a package that is not
    installed (Thai: PyThaiNLP, the ``thai`` extra)."""
    import importlib.util
    if LANGUAGES[code].segmentation == "thai" and importlib.util.find_spec("pythainlp") is None:
        raise ConfigError(f"--language {code}: Thai is segmented into words by PyThaiNLP, which "
                          "is not installed: pip install 'qarla_spark[thai]' (or pythainlp)")


def language(code: str) -> Language:
    """The :class:`Language` of ``code`` (:func:`check_code`)."""
    return LANGUAGES[check_code(code)]


@dataclass(frozen=True)
class LanguageMap:
    """The language of each task: ``default`` for the tasks ``by_task``
    does not name."""

    default: str = ENGLISH
    by_task: Tuple[Tuple[str, str], ...] = ()

    @classmethod
    def of(cls, mapping: Optional[Mapping[str, str]]) -> "LanguageMap":
        """From the option's table (``{"*": default, task: code}``), every
        code checked."""
        mapping = dict(mapping or {})
        default = check_code(mapping.pop(DEFAULT_KEY, ENGLISH))
        for task, code in mapping.items():
            check_code(code, f"--language {task}={code}")
        for code in {default, *mapping.values()}:
            check_installed(code)
        return cls(default, tuple(sorted(mapping.items())))

    def of_task(self, task: str) -> str:
        return dict(self.by_task).get(task, self.default)

    def for_tasks(self, tasks: Sequence[str]) -> Dict[str, str]:
        """``{task: code}`` for the named ``tasks``."""
        named = dict(self.by_task)
        return {t: named.get(t, self.default) for t in tasks}

    def unknown_tasks(self, tasks: Sequence[str]) -> List[Tuple[str, List[str]]]:
        """The tasks the map names that are not among ``tasks``, each with
        the closest names."""
        known = list(tasks)
        return [(t, difflib.get_close_matches(t, known, n=3, cutoff=0.5))
                for t, _ in self.by_task if t not in known]

    def as_dict(self) -> Dict[str, str]:
        return {DEFAULT_KEY: self.default, **dict(self.by_task)}


# --------------------------------------------------------------------------
# tokens and sentences (every language but English)
# --------------------------------------------------------------------------

_NO_SPACE = r"\p{Han}\p{Hiragana}\p{Katakana}"
_WORD_CHAR = r"[\p{L}\p{M}\p{Nd}]"
_APOSTROPHES = "'\u2019\u02bc"
#: sentence ends of a whitespace-delimited word (SPEC's . ! ? and other scripts')
_WORD_ENDS = ".!?\u2026\u061f\u06d4\u0964\u0965\u1362\u104b\u037e\u0589"
#: sentence ends wherever they stand (no space follows them)
_ANYWHERE_ENDS = "\u3002\uff01\uff1f\uff61\uff0e"
_CLOSING = "\"'\u2019\u201d\u00bb\u300d\u300f\uff09)\\]}\u3011\u300b"


@lru_cache(maxsize=None)
def _patterns(apostrophe: bool, thai_runs: bool):
    import regex
    word = f"(?:(?![{_NO_SPACE}\\p{{Thai}}]){_WORD_CHAR})+"
    if apostrophe:
        word = f"{word}(?:[{_APOSTROPHES}]{word})*"
    thai = r"(?P<thai>[\p{Thai}]+)|" if thai_runs else r"[\p{Thai}]+|"
    return regex.compile(f"[{_NO_SPACE}]|{thai}{word}")


@lru_cache(maxsize=1)
def _thai_segmenter():
    from pythainlp.tokenize import word_tokenize
    return word_tokenize


@lru_cache(maxsize=1 << 16)
def _thai_words(run: str) -> Tuple[str, ...]:
    words = _thai_segmenter()(run, engine="newmm", keep_whitespace=False)
    return tuple(w for w in words if w.strip())


def _fold(token: str, code: str) -> str:
    if code in ("tr", "az"):
        token = token.replace("I", "\u0131").replace("\u0130", "i")
    return token.casefold()


def normalise(text: str) -> str:
    """The text as the tokenizer sees it (NFKC)."""
    return unicodedata.normalize("NFKC", text)


def unicode_tokenize(text: str, code: str) -> List[str]:
    """The tokens of ``text`` in language ``code`` (not English).

    >>> unicode_tokenize("Москва — столица России, 2024 год.", "ru")
    ['москва', 'столица', 'россии', '2024', 'год']
    >>> unicode_tokenize("北京是中国的首都。", "zh")
    ['北', '京', '是', '中', '国', '的', '首', '都']
    """
    return tokens_of_normalised(normalise(text), code)


def tokens_of_normalised(text: str, code: str) -> List[str]:
    """:func:`unicode_tokenize` of a text already normalised
    (:func:`normalise`): the whole text is case-folded, then cut (folding
    is per character, so this equals folding each token)."""
    lang = LANGUAGES[code]
    if lang.segmentation != "thai":
        return _patterns(lang.apostrophe, False).findall(_fold(text, code))
    out: List[str] = []
    for m in _patterns(lang.apostrophe, True).finditer(text):
        if m.group("thai"):
            out.extend(_thai_words(m.group("thai")))
        else:
            out.append(_fold(m.group(), code))
    return out


def has_token(text: str) -> bool:
    """Whether ``text`` yields a token in any language but English."""
    return _patterns(False, False).search(normalise(text)) is not None


def unicode_sentences(text: str) -> List[str]:
    """The sentences of ``text`` (any language but English): its non-blank
    lines when it has newlines, else cut after every whitespace-delimited
    word ending with a sentence end (closing quotes and brackets after it
    kept) and after every full-width end wherever it stands.

    >>> unicode_sentences("Он пришёл. Она ушла! Почему")
    ['Он пришёл.', 'Она ушла!', 'Почему']
    >>> unicode_sentences("今天下雨。我们不去了！好吗？")
    ['今天下雨。', '我们不去了！', '好吗？']
    """
    if "\n" in text or "\r" in text:
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        return [line.strip() for line in lines if line.strip()]
    cut = _sentence_cut()
    sentences: List[str] = []
    current: List[str] = []
    for word in text.split():
        pieces = [p for p in cut.findall(word) if p]
        for k, piece in enumerate(pieces):
            current.append(piece)
            ends = piece.rstrip(_CLOSING)[-1:]
            if ends and (ends in _ANYWHERE_ENDS or (k == len(pieces) - 1
                                                    and ends in _WORD_ENDS)):
                sentences.append(_join(current))
                current = []
    if current:
        sentences.append(_join(current))
    return sentences


def _join(pieces: List[str]) -> str:
    return " ".join(pieces)


@lru_cache(maxsize=1)
def _sentence_cut():
    import regex
    ends = regex.escape(_ANYWHERE_ENDS)
    closing = regex.escape(_CLOSING)
    return regex.compile(f"[^{ends}]*[{ends}]+[{closing}]*|[^{ends}]+")


# --------------------------------------------------------------------------
# which scripts a text is written in (validation, issue 38)
# --------------------------------------------------------------------------

#: scripts validation names, and the language it suggests for each
SCRIPT_LANGUAGES: Dict[str, Optional[str]] = {
    "Latin": None, "Cyrillic": "ru", "Greek": "el", "Arabic": "ar", "Hebrew": "he",
    "Han": "zh", "Hiragana": "ja", "Katakana": "ja", "Hangul": "ko", "Thai": "th",
    "Devanagari": "hi", "Bengali": "bn", "Gujarati": "gu", "Gurmukhi": "pa", "Tamil": "ta",
    "Telugu": "te", "Kannada": "kn", "Malayalam": "ml", "Sinhala": "si",
    "Armenian": "hy", "Georgian": "ka", "Ethiopic": "am",
}


@lru_cache(maxsize=None)
def _outside_pattern(code: str):
    import regex
    if code == ENGLISH:
        return regex.compile(r"(?V1)[\p{L}--[A-Za-z]]")
    scripts = set(LANGUAGES[code].scripts) | {"Latin", "Common", "Inherited"}
    inside = "".join(f"\\p{{Script={s}}}" for s in sorted(scripts))
    return regex.compile(f"(?V1)[\\p{{L}}--[{inside}]]")


@lru_cache(maxsize=1)
def _letters():
    import regex
    return regex.compile(r"\p{L}")


@lru_cache(maxsize=1 << 14)
def script_of(letter: str) -> str:
    """The script of a letter among :data:`SCRIPT_LANGUAGES` (``other``)."""
    import regex
    for script in SCRIPT_LANGUAGES:
        if regex.match(f"\\p{{Script={script}}}", letter):
            return script
    return "other"


def letter_profile(text: str, code: str) -> Tuple[int, Dict[str, int]]:
    """``(letters, {script: letters})`` of ``text``: how many letters it
    has, and those outside the scripts language ``code`` reads by script —
    for English every letter but ``A-Z a-z`` (ROUGE-1.5.5 reads no other);
    for another language every letter outside its scripts, Latin (names,
    acronyms) and the scripts shared by all (``Common``, ``Inherited``).

    >>> letter_profile("Москва is big", "en")
    (11, {'Cyrillic': 6})
    >>> letter_profile("Москва is big", "ru")
    (11, {})
    """
    text = normalise(text) if code != ENGLISH else text
    outside: Dict[str, int] = {}
    for letter in _outside_pattern(code).findall(text):
        script = script_of(letter)
        outside[script] = outside.get(script, 0) + 1
    return len(_letters().findall(text)), outside


def suggest(scripts: Mapping[str, int]) -> Optional[str]:
    """The language code the most frequent of ``scripts`` suggests (Han
    with kana: Japanese); ``None`` for Latin or an unnamed script."""
    if not scripts:
        return None
    top = max(sorted(scripts), key=lambda s: scripts[s])
    if top == "Han" and (scripts.get("Hiragana") or scripts.get("Katakana")):
        return "ja"
    return SCRIPT_LANGUAGES.get(top)


def has_any_token(text: str, code: str) -> bool:
    """Whether ``text`` yields at least one token in language ``code``."""
    if code == ENGLISH:
        from qarla_spark.text.tokenize import has_token as english
        return english(text)
    return has_token(text)


# --------------------------------------------------------------------------
# stop lists and stemmers
# --------------------------------------------------------------------------

@lru_cache(maxsize=None)
def stop_list(code: str) -> FrozenSet[str]:
    """The stopwords-iso list of ``code``, each entry normalised and folded
    as tokens are (entries that are not one token can never match)."""
    import stopwordsiso
    if not LANGUAGES[code].stop_list:
        raise ConfigError(f"language {code} has no stop list")
    return frozenset(_fold(normalise(w), code) for w in stopwordsiso.stopwords(code))


@lru_cache(maxsize=None)
def stemmer(code: str):
    """``stem(token) -> str`` of ``code``'s Snowball stemmer (the pure-Python
    one of ``snowballstemmer``), cached per token."""
    import importlib
    name = LANGUAGES[code].snowball
    if name is None:
        raise ConfigError(f"language {code} has no stemmer")
    module = importlib.import_module(f"snowballstemmer.{name}_stemmer")
    cls = getattr(module, "".join(p.capitalize() for p in name.split("_")) + "Stemmer")
    algorithm = cls()
    return lru_cache(maxsize=1 << 18)(algorithm.stemWord)


# --------------------------------------------------------------------------
# what a run records and refuses
# --------------------------------------------------------------------------

def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def describe(code: str) -> Dict[str, Optional[str]]:
    """The tokenizer, stemmer and stop list of ``code``, with their versions
    (run.json)."""
    lang = language(code)
    if code == ENGLISH:
        return {"language": code, "tokenizer": "ROUGE-1.5.5 (ASCII letters and digits)",
                "sentences": "SPEC §2", "stop_list": "ROUGE-1.5.5 SMART list",
                "stemmer": "ROUGE-1.5.5 -m (WordNet 2.0 exceptions, its Porter)"}
    regex_v = _version("regex")
    tokenizer = {"words": f"Unicode words (regex {regex_v})",
                 "characters": f"Unicode words, Han and kana characters as tokens "
                               f"(regex {regex_v})",
                 "thai": f"Unicode words, Thai by PyThaiNLP newmm (pythainlp "
                         f"{_version('pythainlp')}, regex {regex_v})"}[lang.segmentation]
    return {"language": code, "tokenizer": tokenizer, "sentences": "Unicode sentence ends",
            "stop_list": (f"stopwords-iso {code} (stopwordsiso {_version('stopwordsiso')})"
                          if lang.stop_list else None),
            "stemmer": (f"Snowball {lang.snowball} (snowballstemmer "
                        f"{_version('snowballstemmer')})" if lang.snowball else None)}


def signature(per_task: Mapping[str, str]) -> str:
    """What a run's signature adds for its tasks' languages: nothing when
    every task is English (ROUGE-1.5.5's processing is qarla_spark's own),
    else ``|lang:task=code,...|text:`` and the versions of the packages
    that process them."""
    if all(code == ENGLISH for code in per_task.values()):
        return ""
    used = {LANGUAGES[c] for c in per_task.values() if c != ENGLISH}
    packages = ["regex"]
    if any(lang.stop_list for lang in used):
        packages.append("stopwordsiso")
    if any(lang.snowball for lang in used):
        packages.append("snowballstemmer")
    if any(lang.segmentation == "thai" for lang in used):
        packages.append("pythainlp")
    return ("|lang:" + ",".join(f"{t}={c}" for t, c in sorted(per_task.items()))
            + "|text:" + ",".join(f"{p}-{_version(p)}" for p in packages))


def missing_variants(code: str) -> Dict[str, str]:
    """The variants ``code`` lacks, each with why (a sentence's end)."""
    lang = language(code)
    out = {}
    if "b" not in lang.variants:
        out["b"] = f"no stop list for {lang.name} ({code}) is installed"
    if "c" not in lang.variants:
        out["c"] = (f"no stemmer for {lang.name} ({code}) is installed" if lang.stop_list
                    else f"no stop list for {lang.name} ({code}) is installed")
    return out


def markdown_list() -> str:
    """The README's list of languages, grouped by the variants they have
    (generated; a test checks the README holds it)."""
    def code(lang: Language) -> str:
        how = {"characters": " (characters)",
               "thai": " (newmm: the `thai` extra)"}.get(lang.segmentation, "")
        return f"`{lang.code}`{how}"
    groups = [("ROUGE-1.5.5's a, b, c",
               [x for x in LANGUAGES.values() if x.segmentation == "rouge155"]),
              ("a, b and c", [x for x in LANGUAGES.values() if x.segmentation != "rouge155"
                              and x.variants == ("a", "b", "c")]),
              ("a and b", [x for x in LANGUAGES.values() if x.variants == ("a", "b")]),
              ("a only", [x for x in LANGUAGES.values() if x.variants == ("a",)])]
    words = []
    for title, langs in groups:
        items = [code(x) for x in langs]
        words += [f"**{title}**:"] + [w + "," for w in items[:-1]] + [items[-1] + ";"]
    words[-1] = words[-1].rstrip(";") + "."
    lines, line = [], ""
    for word in " ".join(words).split(" "):
        if line and len(line) + 1 + len(word) > 79:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(markdown_list())
