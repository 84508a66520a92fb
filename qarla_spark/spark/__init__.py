"""Spark runtime: the session, Java checks, partitioning, run directories."""
