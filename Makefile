# Layerwise — one command to build the book, one to test it. See README.md.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SCALE ?= default
CH ?=
P ?=
SEED ?= 0
DEVICE ?= auto
EXECUTOR ?= local
SCHEDULER ?=
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml requirements.txt 2>/dev/null | cksum | cut -d' ' -f1)
PARAMS := $(foreach p,$(P),-p $(p))
# where simulation blocks run: local, or EXECUTOR=dask (SCHEDULER=tcp://host:8786, else a LocalCluster here)
EXEC := --executor $(EXECUTOR)$(if $(strip $(SCHEDULER)), --scheduler $(strip $(SCHEDULER)),)

SEEDS ?= 0-19
KERNELS ?= native avx2

.PHONY: help venv book chapters html pdf evidence chapter test unit sync bench bench-dask browser clean robustness

help:
	@echo "make book [SCALE=ci|default|paper]      set up, execute every chapter, render _build/html"
	@echo "  ... EXECUTOR=dask [SCHEDULER=tcp://host:8786]   (book, chapters, chapter) simulation blocks on a Dask cluster"
	@echo "make test                               set up, then unit tests + pair check + chapters at ci + HTML build + browser check"
	@echo "make chapter CH=07 [SCALE=ci] [P='width=300 n_nets=4']   execute one chapter"
	@echo "make html                               re-render _build/html from the executed chapters"
	@echo "make pdf                                the whole book as one PDF: _build/pdf/layerwise-<scale>.pdf (offline)"
	@echo "make evidence SCALE=default             copy this machine's ledgers at SCALE into the tracked evidence/ folder"
	@echo "make robustness [SEEDS=0-19] [KERNELS='native avx2'] [SCALE=ci] [CH='06 07']   every claim over seeds x CPU kernel sets"
	@echo "make bench                              benchmarks -> results/bench/"
	@echo "make bench-dask [QUICK=1|BENCH_SIZE=default]  Dask overhead here + paper time on 1/8/64 workers -> results/bench/dask-*"
	@echo "make sync                               re-pair notebooks/*.py -> .ipynb (jupytext)"
	@echo "make clean                              remove build outputs and results (keeps .venv)"

# The environment: created once, re-installed when pyproject.toml (the one dependency list) changes.
venv: $(STAMP)
$(STAMP):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[book,test]' 
	$(VENV)/bin/python -m ipykernel install --sys-prefix --name python3 > /dev/null
	@rm -f $(VENV)/.installed-*; touch $@

book: venv browser
	$(PY) -m layerwise book all --scale $(SCALE) --seed $(SEED) --device $(DEVICE) $(EXEC) $(PARAMS)

chapters: venv
	$(PY) -m layerwise book run --scale $(SCALE) --seed $(SEED) --device $(DEVICE) $(EXEC) $(PARAMS)

html: venv
	$(PY) -m layerwise book build

pdf: venv browser
	$(PY) -m layerwise book pdf

evidence: venv
	$(PY) -m layerwise book evidence --scale $(SCALE) --command "make book SCALE=$(SCALE) SEED=$(SEED) DEVICE=$(DEVICE)"

chapter: venv
	@test -n "$(CH)" || { echo "error: CH is required, e.g. make chapter CH=07 (chapters: $$($(PY) -m layerwise book list | tr '\n' ' '))"; exit 2; }
	$(PY) -m layerwise book run --chapters $(CH) --scale $(SCALE) --seed $(SEED) --device $(DEVICE) $(EXEC) $(PARAMS)

# The ci book over many seeds and both torch CPU kernel sets; table in results/robustness/<scale>/table.md.
robustness: venv
	$(PY) -m layerwise book robustness --seeds $(SEEDS) --kernels $(KERNELS) --scale $(if $(filter command line,$(origin SCALE)),$(SCALE),ci) $(if $(CH),--chapters $(CH),)

# Headless Chromium for the rendered-page test and the PDF, poppler's pdftotext to read the PDF
# back (Debian packages; installed when missing).
browser:
	@command -v chromium > /dev/null && command -v chromedriver > /dev/null && command -v pdftotext > /dev/null || { \
	  echo "installing chromium + chromium-driver + poppler-utils (apt)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver poppler-utils > /dev/null; }

test: venv browser
	$(PY) -m pytest -q -p no:cacheprovider

unit: venv
	$(PY) -m pytest -q -p no:cacheprovider -m "not slow and not browser"

sync: venv
	$(VENV)/bin/jupytext --sync notebooks/[0-9][0-9]_*.py

bench: venv
	@mkdir -p results/bench
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# the Dask path's overhead on this machine and each chapter's projected paper time on k workers
bench-dask: venv
	@mkdir -p results/bench
	$(PY) benchmarks/bench_dask.py $(if $(QUICK),--quick,) $(if $(BENCH_SIZE),--size $(BENCH_SIZE),)

clean:
	rm -rf _build book/chapters book/dashboard.md book/_static_mathjax results .pytest_cache
	find . -name __pycache__ -not -path "./$(VENV)/*" -prune -exec rm -rf {} +
