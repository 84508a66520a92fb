"""QARLA measures on Spark (SPEC §3-5): sample masks, QUEEN, KING, ORANGE, JACK.

Every measure is computed inside a topic and for every task of the input at
once, as joins and grouped aggregations of the similarity table:

- :mod:`~qarla_spark.measures.masks`: the similarity vectors of each ordered
  pair, and one pass-mask per QUEEN sample (e, m, m', m'');
- :mod:`~qarla_spark.measures.queen`: QUEEN of every summary for many metric
  sets, with the full model set and jackknifed; system scores;
- :mod:`~qarla_spark.measures.king`: KING (with cases and a 95% interval) and
  ORANGE;
- :mod:`~qarla_spark.measures.jack`: JACK and its growth curve.
"""
