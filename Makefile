# Entry points (README; docs/getting-started.md): `make demo` (the cpu-demo study), `make notebooks`, `make test`. Both create .venv if needed and
# install torch 2.13.0 first (a CPU wheel here; see environment.yml for CUDA), then cselab.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Local copy of the data in SentEval layout; without it `cselab data fetch` downloads.
MIRROR ?= ../shared/data
export CSELAB_DATA ?= $(CURDIR)/data
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false
# papermill parameters for the quickstart, e.g. make quickstart QUICKSTART_ARGS="-p max_steps 50"
QUICKSTART_ARGS ?=
# runs, then notebooks, at once: two one-thread processes get more from 2 cores than one two-thread
# process (docs/performance.md, "The demo's time"); e.g. make demo DEMO_JOBS=1 DEMO_ARGS="--dry-run"
DEMO_JOBS ?= 2
DEMO_ARGS ?=
# e.g. make lab LAB_ARGS="--port 8890 --no-browser" (jupyter lab's options)
LAB_ARGS ?=
# make reproduce STUDY=name PROFILE=cpu REPRODUCE_ARGS="--jobs 2 --dry-run" (docs/studies.md)
STUDY ?=
PROFILE ?= cpu
REPRODUCE_ARGS ?=

.PHONY: findings demo demo-figures quickstart notebooks lab test test-all data benchmark reproduce docs docs-serve clean install-locked lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install torch==2.13.0

$(VENV)/.installed-%: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -e ".[$*]"
	touch $@

data: $(VENV)/.installed-notebooks
	if [ -d "$(MIRROR)/downstream" ]; then $(BIN)/cselab data fetch --mirror "$(MIRROR)"; else $(BIN)/cselab data fetch; fi

# Every method and every figure kind on the offline backbone: runs in runs/, executed notebooks and
# the index page in reports/cpu-demo/, figures in reports/figures/cpu-demo/ (docs/studies.md). All three
# are ignored by git: the demo leaves a clone's tracked files as they were (the committed PNGs in
# figures/cpu-demo/, which the README shows, differ in their bytes from one CPU kind to another).
# `make demo-figures` is the demo writing figures/cpu-demo/ instead: the way to update the committed PNGs.
DEMO_FIGURES ?= reports/figures
demo: data
	$(BIN)/cselab reproduce cpu-demo --profile cpu --data-dir "$(CSELAB_DATA)" --jobs $(DEMO_JOBS) \
		--figures-dir "$(DEMO_FIGURES)" $(DEMO_ARGS)

demo-figures:
	$(MAKE) demo DEMO_FIGURES=figures
	@echo "figures/cpu-demo/ rewritten: review with git status / git diff before committing"

# One SimCSE run and its figures, in one notebook.
quickstart: data
	mkdir -p notebooks/executed
	# no jupytext metadata: a plain .ipynb, which JupyterLab opens (with the .py's pairing it refuses to)
	$(BIN)/jupytext --to ipynb --update-metadata '{"jupytext": null}' --output notebooks/executed/quickstart.source.ipynb \
		notebooks/quickstart.py
	$(BIN)/papermill --cwd . -k python3 notebooks/executed/quickstart.source.ipynb notebooks/executed/quickstart.ipynb $(QUICKSTART_ARGS)
	@echo "executed notebook: notebooks/executed/quickstart.ipynb; figures: figures/quickstart/"

# Every notebook in notebooks/: the cpu-demo study executes train (once per run) and the ten analysis
# notebooks on its runs (trained first when missing, reused otherwise), then the quickstart.
notebooks: demo quickstart

# JupyterLab on the project (docs/usage.md, "Exploring runs in JupyterLab"): the repository's Jupyter settings
# (.jupyter/: notebooks/*.py open as notebooks, kernels talk encrypted), relative paths from here.
# PYTHONSAFEPATH=1 reaches every kernel: JupyterLab starts a notebook's kernel in its folder, and without
# it Python and IPython put that folder on sys.path ahead of site-packages, so a notebook named like a
# package (notebooks/umap.py once) is imported in its place (Python >= 3.11 and IPython >= 9.7 honour
# it, as the lockfile's do; tests/test_notebooks.py keeps such names out of notebooks/).
# As root, jupyter lab refuses to start unless given --allow-root (containers often run as root): the
# target passes it then, and says so.
lab: $(VENV)/.installed-notebooks
	@echo "JupyterLab on $(CURDIR): open the http://127.0.0.1:.../lab?token=... address it prints below (Ctrl-C stops it)"
	@if [ "$$(id -u)" = 0 ]; then echo "running as root: passing --allow-root to jupyter lab"; fi
	JUPYTER_CONFIG_PATH="$(CURDIR)/.jupyter$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" CSELAB_ROOT="$(CURDIR)" \
		PYTHONSAFEPATH=1 $(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir="$(CURDIR)" \
		$$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS)

reproduce: data
	@if [ -z "$(STUDY)" ]; then echo "usage: make reproduce STUDY=name-or-file [PROFILE=cpu|gpu] [REPRODUCE_ARGS=...]"; exit 2; fi
	$(BIN)/cselab reproduce "$(STUDY)" --profile "$(PROFILE)" --data-dir "$(CSELAB_DATA)" $(REPRODUCE_ARGS)

# The findings pages' generated blocks (docs/cpu-papers.md, docs/findings-methods.md, docs/cpu-compare.md,
# README.md) and the overview figure (figures/cpu-papers/overview.png) from the
# committed study records (figures/*/record.jsonl): after a study adds runs to its record
# (tests/test_findings.py fails until this is run and the pages committed)
findings: $(VENV)/.installed-dev
	$(BIN)/python -m cselab.workbench.paper_tables.record_report docs/cpu-papers.md docs/findings-methods.md docs/cpu-compare.md README.md

# The documentation site (mkdocs.yml): README.md as the home page, docs/, the API reference from the
# docstrings and the notebooks as pages, into site/ (open site/index.html). --strict: a broken link, a
# missing page or a renamed function fails the build (tests/test_docs.py runs the same build). Offline.
# Building it needs the docs extra alone: mkdocstrings reads cselab's source without importing it and
# mkdocs-jupyter never executes a notebook, so neither torch nor cselab is installed for it. It builds
# with .venv's mkdocs when .venv has one (the dev and docs extras), else in a venv of its own holding
# the docs extra only (pyproject.toml's list, read here so that it is written once).
DOCS_VENV ?= .venv-docs
DOCS_BIN = $(if $(wildcard $(BIN)/mkdocs),$(BIN),$(DOCS_VENV)/bin)
# (the requirements hold no space, so the shell's word splitting of $$(...) gives one argument each)
DOCS_EXTRA = $(PYTHON) -c 'import ast, re; text = open("pyproject.toml").read(); \
	print(" ".join(ast.literal_eval(re.search(r"^docs = (\[.*\])$$", text, re.M).group(1))))'
docs: | $(DOCS_BIN)/mkdocs
	NO_MKDOCS_2_WARNING=1 $(DOCS_BIN)/mkdocs build --strict --site-dir site

$(DOCS_VENV)/bin/mkdocs:
	$(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/pip install $$($(DOCS_EXTRA))

# site/ served on this machine: its pages also read as files (site/index.html), but the search loads its
# index with a request that browsers refuse to file:// pages. e.g. make docs-serve DOCS_PORT=8001
DOCS_PORT ?= 8000
docs-serve: docs
	@echo "the site: http://127.0.0.1:$(DOCS_PORT)/ (Ctrl-C stops it)"
	$(BIN)/python -m http.server --bind 127.0.0.1 --directory site $(DOCS_PORT)

# lint-imports: the layer contract of pyproject.toml (docs/architecture.md), before the tests;
# the tests in 2 processes (pytest-xdist), each test file in one of them (its fixtures built once)
# Two workers of one intra-op thread each (and the kernels they start): with torch's default of one
# thread per core, two workers on 2 cores spin-wait for each other's cores (measured: 25 CPU-minutes
# for the default run with the default threads, 17 with one).
# --durations=25: every run ends with its slowest tests (the default run's 10-minute budget, measured)
# NATIVE_BF16=on runs the suite as a machine with native bf16 runs it (emulated bf16 where this CPU
# lacks it), NATIVE_BF16=off as one without; empty: as this machine is (what CI runs).
NATIVE_BF16 ?=
test: $(VENV)/.installed-dev
	$(BIN)/lint-imports --no-cache
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=25 $(if $(NATIVE_BF16),--native-bf16 $(NATIVE_BF16))

test-all: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q -m "slow or not slow"

benchmark: $(VENV)/.installed-dev
	$(BIN)/pip install -q -e ".[dev,bench]"
	$(BIN)/python benchmarks/speed.py

# The tested environment exactly (cselab/model/locks/cpu.txt: every package pinned, CPU torch), then cselab
# itself without resolving anything else; `make lock` rewrites the lockfile from .venv.
LOCKFILE := cselab/model/locks/cpu.txt
install-locked: | $(BIN)/python
	$(BIN)/pip install -r $(LOCKFILE)
	$(BIN)/pip install --no-deps -e .
	touch $(VENV)/.installed-dev $(VENV)/.installed-notebooks $(VENV)/.installed-docs

lock: | $(BIN)/python
	{ sed -n '/^#/p;/^--/p' $(LOCKFILE); $(BIN)/pip freeze --exclude-editable | grep -v '^cselab=='; } > $(LOCKFILE).tmp
	mv $(LOCKFILE).tmp $(LOCKFILE)

clean:
	rm -rf $(VENV) $(DOCS_VENV) notebooks/executed site
