# Topic-map pipeline. `make all` sets up .venv and builds the report; `make test` runs the tests.
#   make all CONFIG=configs/corpora2023.yaml   # another config, into its own output_dir
# Every target below is a real file, so Make reruns only what is stale. Each stage depends on
# its input tables, a parameter stamp holding only the config sections it reads
# ($(OUT)/.params/<stage>.json, rewritten only when they change), and its code: CODE_<stage>,
# the stage's module and every module it imports, generated from the imports (.build/deps.mk).

SHELL := /bin/bash
.DELETE_ON_ERROR:
.SUFFIXES:

CONFIG ?= configs/default.yaml
PYTHON ?= python3
# Stages that do not wait for each other (metrics, compare, export; render, csv) run side by
# side, one per core; JOBS=1 runs one at a time (less memory at once on very large corpora).
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
MAKEFLAGS += --jobs=$(JOBS)
VENV := .venv
PY := $(VENV)/bin/python
VENV_DONE := $(VENV)/.installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: all test test-fast coverage mutate lint lock bench clean clean-all venv help stability baseline quality refit figures
.DEFAULT_GOAL := all

help:
	@echo "make all [CONFIG=...]        build the report and the map (default: $(CONFIG))"
	@echo "make test                    run the test suite"
	@echo "make test-fast               the unit tests: no model, UMAP, build or browser"
	@echo "make coverage                the suite with branch coverage of pipeline/ (subprocesses too)"
	@echo "make mutate                  mutation testing of the pure cores and ground modules"
	@echo "make lint                    ruff and biome (the pages' scripts): lint and format check"
	@echo "make lock                    resolve the dependencies again into requirements.lock"
	@echo "make clean [CONFIG=...]      remove that config's outputs"
	@echo "make stability [CONFIG=...]  + the topics' agreement across seeds, in the report"
	@echo "make baseline [CONFIG=...]   + BERTopic defaults' figures, in the report"
	@echo "make quality [CONFIG=...]    both"
	@echo "make refit [CONFIG=...]      fit a new topic model instead of adding papers to the saved one"
	@echo "make figures [CONFIG=...]    the map as figures/map.png (300 dpi), map.svg and map.pdf"
	@echo "make bench [CONFIG=...]      speed figures (tools/bench.py)"
	@echo "make screenshots             the README's pictures of the map and report (docs/images/)"

venv: $(VENV_DONE)

# The environment is the lock: every package at the exact version and hash recorded in
# $(LOCK) (torch the 2.13.0 CPU build), then this project itself without its dependencies.
LOCK := requirements.lock
$(VENV_DONE): $(LOCK) pyproject.toml
	@echo "make: installing the environment into $(VENV): about 2.2 GB, a few minutes the first time"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --require-hashes --progress-bar on -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# Resolve pyproject.toml's dependencies (all extras) again into $(LOCK), with hashes, by
# pip-tools in a venv of its own; then `make` installs the new lock.
LOCK_TOOLS := .build/lock-tools
lock:
	test -x $(LOCK_TOOLS)/bin/pip-compile || { $(PYTHON) -m venv $(LOCK_TOOLS) && \
		$(LOCK_TOOLS)/bin/pip install --quiet "pip-tools==7.6.2"; }
	CUSTOM_COMPILE_COMMAND="make lock" $(LOCK_TOOLS)/bin/pip-compile --quiet --generate-hashes \
		--allow-unsafe --all-extras --no-strip-extras --no-emit-index-url --no-emit-find-links \
		--output-file $(LOCK) pyproject.toml

# Make variables for this config (OUT, INPUT_FILES, INPUT_GLOBS); writing them also refreshes
# the parameter stamps. Make rebuilds these files when their sources change, then restarts.
CONFIG_MK := .build/$(subst /,_,$(CONFIG)).mk
DEPS_MK := .build/deps.mk
ifneq ($(filter-out help clean-all venv test test-fast coverage mutate lint lock bench,$(or $(MAKECMDGOALS),all)),)
include $(CONFIG_MK) $(DEPS_MK)
endif

# A new measurement of the embedding modes (`make bench --sections modes`) may change the
# precision `embed.precision: auto` stands for: the stamps are written again.
$(CONFIG_MK): $(CONFIG) pipeline/config.py pipeline/commands.py pipeline/cli.py pipeline/encoder.py $(wildcard $(EMBED_MODES)) | $(VENV_DONE)
	@mkdir -p $(@D)
	$(PY) -m pipeline makevars --config $(CONFIG) --out $@

$(DEPS_MK): $(shell find pipeline -type f -not -path '*/__pycache__/*') | $(VENV_DONE)
	@mkdir -p $(@D)
	$(PY) -m pipeline deps --out $@

INPUTS := $(INPUT_FILES) $(wildcard $(INPUT_GLOBS))
STAMP = $(OUT)/.params/$(1).json
RUN := $(PY) -m pipeline

# `make stability` and `make baseline` cost extra runs (minutes on 3,401 papers), so `all`
# leaves them out; asked for, their figures reach the report as declared prerequisites.
QUALITY_RUNS := $(sort $(filter stability baseline,$(MAKECMDGOALS)) \
	$(if $(filter quality,$(MAKECMDGOALS)),stability baseline))
REPORT_EXTRAS := $(foreach r,$(QUALITY_RUNS),$(OUT)/$(r).json)

CSV_TABLES := $(OUT)/topic_info.csv $(OUT)/document_info.csv $(OUT)/rejected.csv
# every page file is a goal: Make runs a grouped recipe for a missing member only when asked for it
PAGES = $(addprefix $(OUT)/,$(PAGE_FILES))
all: $(PAGES) $(OUT)/bertopic/topics.json $(CSV_TABLES)
stability baseline: %: $(OUT)/%.json $(PAGES)
quality: $(OUT)/stability.json $(OUT)/baseline.json $(PAGES)

# A stamp is created here only when missing; the makevars step keeps it current.
$(OUT)/.params/%.json: | $(VENV_DONE)
	$(RUN) stamps --config $(CONFIG)

$(OUT)/documents.parquet $(OUT)/rejected.parquet &: $(INPUTS) $(CODE_ingest) $(call STAMP,ingest) | $(VENV_DONE)
	$(RUN) ingest --config $(CONFIG) --documents $(OUT)/documents.parquet --rejected $(OUT)/rejected.parquet

# With engine: ray (ENGINE, from the config) the Ray workers read the documents as Parquet
# shards: documents.shards/, named by its manifest, written by the shards command alone. They
# are an order-only prerequisite of the embed stage: made before it when missing or stale, but
# new shards rerun nothing, since they hold the rows documents.parquet holds.
SHARDS := $(OUT)/documents.shards/manifest.json
EMBED_SHARDS := $(if $(filter ray,$(ENGINE)),$(SHARDS))
$(SHARDS): $(OUT)/documents.parquet $(CODE_shards) $(call STAMP,shards) | $(VENV_DONE)
	$(RUN) shards --config $(CONFIG) --documents $< --document-shards $@

$(OUT)/embeddings.parquet: $(OUT)/documents.parquet $(CODE_embed) $(call STAMP,embed) | $(VENV_DONE) $(EMBED_SHARDS)
	$(RUN) embed --config $(CONFIG) --documents $< --embeddings $@ $(if $(EMBED_SHARDS),--document-shards $(EMBED_SHARDS))

# The cluster stage also keeps the topic model it fitted (model/): a later build whose inputs
# only gained papers places the new ones into it; `make refit` fits a new one.
CLUSTER_ARGS = --config $(CONFIG) --documents $(OUT)/documents.parquet --embeddings $(OUT)/embeddings.parquet --clusters $(OUT)/clusters.parquet
$(OUT)/clusters.parquet $(OUT)/model/fit.json &: $(OUT)/documents.parquet $(OUT)/embeddings.parquet $(CODE_cluster) $(call STAMP,cluster) | $(VENV_DONE)
	$(RUN) cluster $(CLUSTER_ARGS)

refit: $(OUT)/embeddings.parquet | $(VENV_DONE)
	$(RUN) cluster --refit $(CLUSTER_ARGS)
	$(MAKE) --no-print-directory all CONFIG=$(CONFIG)

$(OUT)/topics.parquet $(OUT)/themes.parquet &: $(OUT)/documents.parquet $(OUT)/clusters.parquet $(OUT)/embeddings.parquet $(CODE_label) $(call STAMP,label) | $(VENV_DONE)
	$(RUN) label --config $(CONFIG) --documents $< --clusters $(OUT)/clusters.parquet --embeddings $(OUT)/embeddings.parquet --topics $(OUT)/topics.parquet --themes $(OUT)/themes.parquet

TOPIC_TABLES := $(OUT)/documents.parquet $(OUT)/clusters.parquet $(OUT)/topics.parquet $(OUT)/themes.parquet
TOPIC_ARGS := --documents $(OUT)/documents.parquet --clusters $(OUT)/clusters.parquet --topics $(OUT)/topics.parquet --themes $(OUT)/themes.parquet

$(OUT)/metrics.json: $(TOPIC_TABLES) $(CODE_metrics) | $(VENV_DONE)
	$(RUN) metrics --config $(CONFIG) $(TOPIC_ARGS) --metrics $@

$(OUT)/venue_topics.parquet $(OUT)/venue_years.parquet &: $(TOPIC_TABLES) $(CODE_compare) $(call STAMP,compare) | $(VENV_DONE)
	$(RUN) compare --config $(CONFIG) $(TOPIC_ARGS) --venue-topics $(OUT)/venue_topics.parquet --venue-years $(OUT)/venue_years.parquet

$(OUT)/stability.json: $(OUT)/documents.parquet $(OUT)/embeddings.parquet $(OUT)/clusters.parquet $(CODE_stability) $(call STAMP,stability) | $(VENV_DONE)
	$(RUN) stability --config $(CONFIG) --documents $< --embeddings $(OUT)/embeddings.parquet --clusters $(OUT)/clusters.parquet --stability $@

$(OUT)/baseline.json: $(OUT)/documents.parquet $(OUT)/embeddings.parquet $(CODE_baseline) $(call STAMP,baseline) | $(VENV_DONE)
	$(RUN) baseline --config $(CONFIG) --documents $< --embeddings $(OUT)/embeddings.parquet --baseline $@

# The map as a still image for a paper or a talk (the figures section of the config), not part
# of `all`: PNG, SVG and PDF from one drawing, in figures/.
FIGURES := $(addprefix $(OUT)/figures/map.,png svg pdf)
figures: $(FIGURES)
$(FIGURES) &: $(TOPIC_TABLES) $(CODE_figure) $(call STAMP,figure) | $(VENV_DONE)
	$(RUN) figure --config $(CONFIG) $(TOPIC_ARGS) --figure $(OUT)/figures/map.png

# The tables as BERTopic's get_topic_info() / get_document_info() give them, and the ledger, as CSV.
$(CSV_TABLES) &: $(TOPIC_TABLES) $(OUT)/rejected.parquet $(OUT)/venue_topics.parquet $(OUT)/model/fit.json $(CODE_csv) | $(VENV_DONE)
	$(RUN) csv --config $(CONFIG) $(TOPIC_ARGS) --registry $(OUT)/model/registry.parquet --rejected $(OUT)/rejected.parquet --venue-topics $(OUT)/venue_topics.parquet --topic-info $(OUT)/topic_info.csv --document-info $(OUT)/document_info.csv --rejected-csv $(OUT)/rejected.csv

# The build as a BERTopic model (BERTopic.load(path)), made from the fitted papers and labels.
$(OUT)/bertopic/topics.json: $(OUT)/documents.parquet $(OUT)/embeddings.parquet $(OUT)/clusters.parquet $(OUT)/topics.parquet $(OUT)/model/fit.json $(CODE_export) | $(VENV_DONE)
	$(RUN) export --config $(CONFIG) --documents $(OUT)/documents.parquet --embeddings $(OUT)/embeddings.parquet --clusters $(OUT)/clusters.parquet --topics $(OUT)/topics.parquet --model $(OUT)/model/papers.parquet --bertopic $@

# The report and the map, with plotly.js, the static assets and the map's text shards beside
# them: PAGE_FILES is render's own list of what it writes (render.PAGE_FILES, in deps.mk),
# map-data/ standing as its first shard, so a page file deleted is rebuilt.
# The topic registry and the topics' snapshots (what changed) come with the model (fit.json).
$(PAGES) &: $(TOPIC_TABLES) $(OUT)/embeddings.parquet $(OUT)/venue_topics.parquet $(OUT)/venue_years.parquet $(OUT)/metrics.json $(OUT)/model/fit.json $(REPORT_EXTRAS) $(CODE_render) $(call STAMP,render) | $(VENV_DONE)
	$(RUN) render --config $(CONFIG) $(TOPIC_ARGS) --embeddings $(OUT)/embeddings.parquet --venue-topics $(OUT)/venue_topics.parquet --venue-years $(OUT)/venue_years.parquet --metrics $(OUT)/metrics.json --registry $(OUT)/model/registry.parquet --snapshots $(OUT)/model/snapshots.parquet $(foreach r,$(QUALITY_RUNS),--$(r) $(OUT)/$(r).json) --report $(OUT)/index.html

# Speed figures for this config's corpus (see tools/bench.py); BENCH_ARGS e.g.
#   make bench CONFIG=configs/corpora2023.yaml BENCH_ARGS="--runs 3 --scaling 10000,30000,100000"
BENCH_ARGS ?=
bench: $(VENV_DONE)
	$(PY) tools/bench.py --config $(CONFIG) $(BENCH_ARGS)

test: $(VENV_DONE)
	$(PY) -m pytest -q

# The edit-test loop: tests marked neither slow (model, UMAP, a build) nor browser, on two
# processes (pytest-xdist): on two idle cores 26 s against 31 s in one.
test-fast: $(VENV_DONE)
	$(PY) -m pytest -q -m "not slow and not browser" -n 2

# The whole suite under coverage (branches; Python processes it starts are measured too, see
# [tool.coverage.run]), then the floors of tools/coverage_floor.py.
COVERAGE_DIR := .build/coverage
coverage: $(VENV_DONE)
	rm -rf $(COVERAGE_DIR) && mkdir -p $(COVERAGE_DIR)
	$(PY) -m pytest -q --cov --cov-report=term --cov-report=json:$(COVERAGE_DIR)/coverage.json
	$(PY) tools/coverage_floor.py $(COVERAGE_DIR)/coverage.json

# Mutation testing (mutmut, in the `mutate` extra and the lock) of the modules in
# tools/mutate.py, each with its own fast tests; survivors must be listed with a reason in
# tests/mutants-surviving.md.
mutate: $(VENV_DONE)
	$(PY) tools/mutate.py $(MUTATE_ARGS)

# The pages' JavaScript tools (biome), at the versions package-lock.json pins, into
# node_modules/ (npm ci reaches the npm registry; `make lint` then runs offline).
NODE_DONE := node_modules/.installed
$(NODE_DONE): package-lock.json package.json
	npm ci --no-audit --no-fund
	touch $@

# ruff for the Python, then biome for the map's and report's scripts (lint, then format check;
# biome.jsonc: the assets only, plotly's vendored bundles left out).
BIOME := node_modules/.bin/biome
lint: $(VENV_DONE) $(NODE_DONE)
	$(PY) -m ruff check pipeline tests tools
	$(PY) -m ruff format --check pipeline tests tools
	$(BIOME) lint --error-on-warnings pipeline/stages/render/assets
	$(BIOME) format pipeline/stages/render/assets

clean:
	rm -rf $(OUT) $(CONFIG_MK)

clean-all:
	rm -rf outputs .build $(VENV) node_modules

# The README's pictures: the config's map and report (the bundled corpus by default) as they
# open, taken from disk by Playwright with Debian's chromium (tools/screenshots.py).
.PHONY: screenshots
screenshots: $(OUT)/index.html $(OUT)/map.html | $(VENV_DONE)
	$(PY) tools/screenshots.py --site $(OUT) --out docs/images
