"""ROUGE-1.5.5 tokenizer and the SPEC §2 sentence splitter.

Tokens (SPEC §2, ROUGE-1.5.5 ``readText``/``tokenizeText``): the text is
lower-cased (ASCII only, Perl's ``tr/A-Z/a-z/``), ``-`` becomes `` - ``,
every character outside ``[A-Za-z0-9-]`` becomes a space, the text is split
on whitespace and only the tokens that start with ``[a-z0-9$]`` are kept.
After the substitution a token is either ``-`` (dropped: it does not start
with a letter or digit) or a run of ``[a-z0-9]``, so the tokens are exactly
the maximal runs of ASCII letters and digits, lower-cased. ``$`` cannot
survive the substitution, so ROUGE's ``$`` in the start test never fires.

ROUGE-1.5.5 reads bytes, so a non-ASCII letter (several UTF-8 bytes, all
outside ``[A-Za-z0-9-]``) separates tokens: ``café`` gives ``caf``. Here the
input is a Python ``str``; the result is the same because the character
class is matched on code points that are never ASCII letters, and lower-casing
is applied to the ASCII tokens only (``str.lower`` on the whole text would
turn e.g. the Kelvin sign U+212A into ``k``, which ROUGE never does).

Sentences (SPEC §2; they matter only for ROUGE-L and ROUGE-W): if the text
contains a newline, each line that is not blank is a sentence; otherwise a
sentence ends after every whitespace-delimited token that ends with ``.``,
``!`` or ``?``. ROUGE-1.5.5 itself has no sentence splitter (it takes one
sentence per line in its SPL format); this rule is the project's, and it is
what the golden tests feed to ROUGE-1.5.5 as SPL lines. ``\\r\\n`` and a lone
``\\r`` count as newlines (as in Python's universal-newline mode);
"whitespace-delimited" uses :meth:`str.split`, i.e. Unicode whitespace.
"""

from __future__ import annotations

import re
from typing import List

__all__ = ["tokenize", "has_token", "split_sentences", "tokenize_sentences"]

# Maximal runs of ASCII letters/digits == ROUGE-1.5.5's kept tokens (see the
# module docstring for why this is equivalent to its three substitutions).
_TOKEN_RE = re.compile(r"[A-Za-z0-9]+")
_SENTENCE_END = (".", "!", "?")


def tokenize(text: str) -> List[str]:
    """ROUGE-1.5.5 tokens of ``text`` (no stop-word removal, no stemming).

    >>> tokenize("Merson's call-up: 83rd minute, café!")
    ['merson', 's', 'call', 'up', '83rd', 'minute', 'caf']
    """
    return [t.lower() for t in _TOKEN_RE.findall(text)]


def has_token(text: str) -> bool:
    """Whether ``text`` has at least one ROUGE-1.5.5 token."""
    return _TOKEN_RE.search(text) is not None


def split_sentences(text: str) -> List[str]:
    """Split ``text`` into sentences with the SPEC §2 rule.

    With a newline in the text: the lines that contain something other than
    whitespace, each stripped. Without: whitespace-delimited tokens are
    grouped into sentences, a sentence ending after every token that ends
    with ``.``, ``!`` or ``?``; each sentence is returned as its tokens
    joined by one space. A text with no non-whitespace character has no
    sentence.

    >>> split_sentences("One. Two ! three")
    ['One.', 'Two !', 'three']
    >>> split_sentences("first line\\n\\n second. line \\n")
    ['first line', 'second. line']
    """
    if "\n" in text or "\r" in text:
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        return [line.strip() for line in lines if line.strip()]
    sentences: List[str] = []
    current: List[str] = []
    for word in text.split():
        current.append(word)
        if word.endswith(_SENTENCE_END):
            sentences.append(" ".join(current))
            current = []
    if current:
        sentences.append(" ".join(current))
    return sentences


def tokenize_sentences(text: str) -> List[List[str]]:
    """The ROUGE-1.5.5 tokens of each SPEC sentence of ``text``.

    Sentences without any token are kept as empty lists here; see
    :func:`qarla_spark.text.variants.prepare` for the prepared form.
    """
    return [tokenize(s) for s in split_sentences(text)]
