"""Spark profiles and run configurations of qarla_spark.

This folder is installed as the package ``qarla_spark.conf`` (see
``pyproject.toml``) so that an installed qarla_spark finds its profiles
without knowing where the source tree is. Edit the files here; pass your own
file with ``--profile PATH`` / ``--config PATH`` instead of editing them in a
site-packages copy.
"""
