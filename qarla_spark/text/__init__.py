"""Text processing of SPEC §2, as ROUGE-1.5.5 does it (pure Python, no Spark).

- :mod:`~qarla_spark.text.tokenize`: ROUGE-1.5.5 tokens, SPEC sentence split;
- :mod:`~qarla_spark.text.stem`: ROUGE-1.5.5's ``-m`` stemming (WordNet 2.0
  exceptions, then its own Porter variant);
- :mod:`~qarla_spark.text.variants`: the ``a``/``b``/``c`` variants of a
  summary, prepared once;
- :mod:`~qarla_spark.text.languages`: every other language's tokens,
  sentences, stop list and stemmer (issue 38; ``en`` is the above).

The tokenizer function is not re-exported here, so that
``qarla_spark.text.tokenize`` stays the module; use
``from qarla_spark.text.tokenize import tokenize``.

The data files (stop list, WordNet 2.0 exception lists) and their provenance
and licences are in ``qarla_spark/text/data/`` (see its ``README.md``).
"""

from qarla_spark.text.stem import porter_stem, stem_token
from qarla_spark.text.tokenize import split_sentences, tokenize_sentences
from qarla_spark.text.variants import VARIANTS, PreparedSummary, prepare, prepare_many, stopwords

__all__ = [
    "VARIANTS",
    "PreparedSummary",
    "porter_stem",
    "prepare",
    "prepare_many",
    "split_sentences",
    "stem_token",
    "stopwords",
    "tokenize_sentences",
]
