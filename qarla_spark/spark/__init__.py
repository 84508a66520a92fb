"""Spark runtime only: the session and its profiles, Java checks,
partitioning, rounds (the few Spark jobs a stage is made of), cached plans,
run directories and table writes, the package shipped to executors. Stage
plans are :mod:`qarla_spark.stages`'; numpy kernels :mod:`qarla_spark.measures`'."""
