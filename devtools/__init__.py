"""Developer tools: the benchmarks, the event-log job lister, the
determinism and cluster checks, the synthetic testbeds and the run
comparer.

Not installed with the package (``pyproject.toml`` lists only
``qarla_spark`` and its subpackages); the one spark-submit entry point is
``jobs/qarla_run.py``. Run them from the repository root, as modules or
as scripts::

    python -m devtools.NAME [--help]
    python devtools/NAME.py [--help]

- :mod:`devtools.benchmark_similarities`, :mod:`devtools.benchmark_qarla`,
  :mod:`devtools.benchmark_hbr`, :mod:`devtools.benchmark_statistics`,
  :mod:`devtools.benchmark_scale` (``make bench``), with what they share in
  :mod:`devtools.bench_common`;
- :mod:`devtools.spark_jobs`: the Spark jobs of an event log, by call site;
- :mod:`devtools.determinism`: bit-identical tables under other masters and
  partitionings;
- :mod:`devtools.cluster_check`: a standalone cluster of this machine
  (``make cluster-check``);
- :mod:`devtools.testbeds`: larger text testbeds made from the bundled
  SummEval;
- :mod:`devtools.compare`: the tables of two runs compared bit for bit.

The tests import them as ``devtools.NAME`` (``pythonpath = ["."]`` in
``pyproject.toml``'s pytest options).
"""
