# qarla_spark: the two commands of the README's quick start.
#   make run    set up .venv, install, run the main job on the bundled SummEval
#   make test   set up .venv with the test tools, run the test suite: without
#               the tests marked slow locally (under 6 minutes on 2 idle
#               cores: docs/DECISIONS.md), all of it in CI (CI=true)
#   make test-all  the whole suite, slow tests included, anywhere
#   make bench  the similarity battery vs rouge-score; the QARLA stage with
#               KING of all subsets in one pass vs one subset at a time; the
#               HBR stage on SummEval and on a synthetic 1,000-topic testbed;
#               what the statistics stage adds to a SummEval run
#   make notebooks  re-execute notebooks/*.ipynb and save them with outputs
#   make cluster-check  the job on a standalone cluster of this machine, its
#               tables vs local[2], with and without a killed executor
# Needs Python >= 3.10 and Java >= 17 (checked first, with a clear message).

PYTHON ?= python3
VENV   ?= .venv
OUT    ?= runs/summeval
PIP    := $(VENV)/bin/python -m pip
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: run test test-all bench cluster-check check browser setup setup-dev clean notebooks

run: check $(VENV)/.installed
	$(VENV)/bin/qarla run --out $(OUT) --overwrite

# pytest leaves out the tests marked slow (addopts in pyproject.toml); a
# later -m "" replaces that filter, so with CI=true (what .ci/run sees in CI)
# `make test` runs every test, and elsewhere the fast part only.
PYTEST_MARKS := $(if $(filter true,$(CI)),-m "",)

# lint-imports checks the layers' contracts (.importlinter) first
test: check browser $(VENV)/.installed-dev
	$(VENV)/bin/lint-imports
	$(VENV)/bin/python -m pytest $(PYTEST_MARKS)

test-all: check browser $(VENV)/.installed-dev
	$(VENV)/bin/lint-imports
	$(VENV)/bin/python -m pytest -m ""

# tests/test_report_browser.py opens report.html in Debian's chromium. In CI
# (CI=true) it must run, so a missing chromium is installed here; elsewhere
# this does nothing (the test skips without chromium).
browser:
	@if [ "$$CI" = "true" ] && ! command -v chromium >/dev/null 2>&1; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; fi

# The benchmarks and the cluster check are devtools/ (not installed with the
# package), run as modules from the repository root.
bench: check $(VENV)/.installed-dev
	$(VENV)/bin/python -m devtools.benchmark_similarities
	$(VENV)/bin/python -m devtools.benchmark_qarla
	$(VENV)/bin/python -m devtools.benchmark_hbr
	$(VENV)/bin/python -m devtools.benchmark_statistics
	$(VENV)/bin/python -m devtools.benchmark_scale

# A standalone Master and two Workers on 127.0.0.1 from the pip pyspark; the
# job submitted as the README says; every table equal to local[2], also with
# an executor killed; nothing left running (about 10 minutes)
cluster-check: check $(VENV)/.installed-dev
	$(VENV)/bin/python -m devtools.cluster_check

# Execute notebooks/*.ipynb headless (a fresh kernel each, the bundled
# SummEval) and write them back with their outputs (a few minutes each);
# tests/test_notebooks.py checks the committed outputs match the code.
notebooks: check $(VENV)/.installed-dev
	$(VENV)/bin/python notebooks/execute.py --in-place --workdir runs/notebooks

check:
	@$(PYTHON) -m qarla_spark.spark.java

setup: check $(VENV)/.installed
setup-dev: check $(VENV)/.installed-dev

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(PIP) install --quiet --disable-pip-version-check -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(VENV)/bin/python
	$(PIP) install --quiet --disable-pip-version-check -e ".[dev]"
	@touch $@ $(VENV)/.installed

clean:
	rm -rf $(VENV) runs dist .pytest_cache *.egg-info
