# qarla_spark: the two commands of the README's quick start.
#   make run    set up .venv, install, run the main job on the bundled SummEval
#   make test   set up .venv with the test tools, run the whole test suite
#   make bench  the similarity battery vs rouge-score; the QARLA stage with
#               KING of all subsets in one pass vs one subset at a time; the
#               HBR stage on SummEval and on a synthetic 1,000-topic testbed;
#               what the statistics stage adds to a SummEval run
# Needs Python >= 3.10 and Java >= 17 (checked first, with a clear message).

PYTHON ?= python3
VENV   ?= .venv
OUT    ?= runs/summeval
PIP    := $(VENV)/bin/python -m pip
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: run test bench check setup setup-dev clean

run: check $(VENV)/.installed
	$(VENV)/bin/qarla run --out $(OUT) --overwrite

test: check $(VENV)/.installed-dev
	$(VENV)/bin/python -m pytest

bench: check $(VENV)/.installed-dev
	$(VENV)/bin/python jobs/benchmark_similarities.py
	$(VENV)/bin/python jobs/benchmark_qarla.py
	$(VENV)/bin/python jobs/benchmark_hbr.py
	$(VENV)/bin/python jobs/benchmark_statistics.py

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
	rm -rf $(VENV) runs .pytest_cache *.egg-info
