# Two entry points (see README): `make demo` and `make test`. Both create .venv if needed and
# install torch 2.13.0 first (a CPU wheel here; see environment.yml for CUDA), then cselab.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Local copy of the data in SentEval layout; without it `cselab data fetch` downloads.
MIRROR ?= ../shared/data
export CSELAB_DATA ?= $(CURDIR)/data
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false
# papermill parameters for the quickstart, e.g. make demo DEMO_ARGS="-p max_steps 50"
DEMO_ARGS ?=
# make reproduce STUDY=name PROFILE=cpu REPRODUCE_ARGS="--jobs 2 --dry-run" (docs/studies.md)
STUDY ?=
PROFILE ?= cpu
REPRODUCE_ARGS ?=

.PHONY: demo test test-all data benchmark notebooks reproduce clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install torch==2.13.0

$(VENV)/.installed-%: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -e ".[$*]"
	touch $@

data: $(VENV)/.installed-notebooks
	if [ -d "$(MIRROR)/downstream" ]; then $(BIN)/cselab data fetch --mirror "$(MIRROR)"; else $(BIN)/cselab data fetch; fi

demo: data
	mkdir -p notebooks/executed
	$(BIN)/jupytext --to ipynb --output notebooks/executed/quickstart.source.ipynb notebooks/quickstart.py
	$(BIN)/papermill --cwd . -k python3 notebooks/executed/quickstart.source.ipynb notebooks/executed/quickstart.ipynb $(DEMO_ARGS)
	@echo "executed notebook: notebooks/executed/quickstart.ipynb; figures: figures/quickstart/"

reproduce: data
	@if [ -z "$(STUDY)" ]; then echo "usage: make reproduce STUDY=name-or-file [PROFILE=cpu|gpu] [REPRODUCE_ARGS=...]"; exit 2; fi
	$(BIN)/cselab reproduce "$(STUDY)" --profile "$(PROFILE)" --data-dir "$(CSELAB_DATA)" $(REPRODUCE_ARGS)

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q

test-all: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q -m "slow or not slow"

benchmark: $(VENV)/.installed-dev
	$(BIN)/pip install -q -e ".[dev,bench]"
	$(BIN)/python benchmarks/speed.py

clean:
	rm -rf $(VENV) notebooks/executed
