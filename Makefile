# Topic-map pipeline. `make all` sets up .venv and builds the report; `make test` runs the tests.
#   make all CONFIG=configs/corpora2023.yaml   # another config, into its own output_dir
# Every target below is a real file, so Make reruns only what is stale. Each stage depends on its
# code, its inputs and a parameter stamp holding only its own config section
# ($(OUT)/.params/<stage>.json, rewritten only when that section changes).

SHELL := /bin/bash
.DELETE_ON_ERROR:
.SUFFIXES:

CONFIG ?= configs/default.yaml
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# torch is pinned in the same install so pip takes the CPU build, not a multi-GB CUDA one.
TORCH := torch==2.13.0
VENV_DONE := $(VENV)/.installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export PYTHONHASHSEED := 0

.PHONY: all test lint bench clean clean-all venv help
.DEFAULT_GOAL := all

help:
	@echo "make all [CONFIG=...]   build the topic map (default: $(CONFIG))"
	@echo "make test               run the test suite"
	@echo "make lint               ruff check"
	@echo "make clean [CONFIG=...] remove that config's outputs"
	@echo "make stability [CONFIG=...]  topics' agreement across seeds -> stability.json"
	@echo "make baseline [CONFIG=...]   BERTopic defaults' figures -> baseline.json"

venv: $(VENV_DONE)

$(VENV_DONE): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)" -e ".[test]"
	touch $@

# Make variables for this config (OUT, INPUT_FILES, INPUT_GLOBS); writing them also refreshes
# the parameter stamps. Make rebuilds this file when the config changes and then restarts.
CONFIG_MK := .build/$(subst /,_,$(CONFIG)).mk
ifeq ($(filter-out help clean-all venv test lint bench,$(or $(MAKECMDGOALS),all)),)
else
include $(CONFIG_MK)
endif

$(CONFIG_MK): $(CONFIG) pipeline/config.py pipeline/__main__.py | $(VENV_DONE)
	@mkdir -p $(@D)
	$(PY) -m pipeline makevars --config $(CONFIG) --out $@

INPUTS := $(INPUT_FILES) $(wildcard $(INPUT_GLOBS))
STAMP = $(OUT)/.params/$(1).json
RUN := $(PY) -m pipeline
COMMON := pipeline/__init__.py pipeline/__main__.py pipeline/tables.py pipeline/errors.py

all: $(OUT)/index.html

# A stamp is created here only when missing; the makevars step keeps it current.
$(OUT)/.params/%.json: | $(VENV_DONE)
	$(RUN) stamps --config $(CONFIG)

$(OUT)/documents.parquet $(OUT)/rejected.parquet &: $(INPUTS) pipeline/ingest.py $(COMMON) $(call STAMP,ingest) | $(VENV_DONE)
	$(RUN) ingest --config $(CONFIG) --out $(OUT)/documents.parquet --rejected $(OUT)/rejected.parquet

$(OUT)/embeddings.parquet: $(OUT)/documents.parquet pipeline/embed.py $(COMMON) $(call STAMP,embed) | $(VENV_DONE)
	$(RUN) embed --config $(CONFIG) --documents $< --out $@

$(OUT)/clusters.parquet: $(OUT)/documents.parquet $(OUT)/embeddings.parquet pipeline/cluster.py pipeline/embed.py $(COMMON) $(call STAMP,cluster) | $(VENV_DONE)
	$(RUN) cluster --config $(CONFIG) --documents $< --embeddings $(OUT)/embeddings.parquet --out $@

$(OUT)/topics.parquet: $(OUT)/documents.parquet $(OUT)/clusters.parquet $(OUT)/embeddings.parquet pipeline/label.py $(COMMON) $(call STAMP,label) | $(VENV_DONE)
	$(RUN) label --config $(CONFIG) --documents $< --clusters $(OUT)/clusters.parquet --embeddings $(OUT)/embeddings.parquet --out $@

# Quality figures (metrics.json, with stability.json's when present) and the venue comparison,
# every build; the report below waits for both.
$(OUT)/metrics.json: $(OUT)/documents.parquet $(OUT)/clusters.parquet $(OUT)/topics.parquet $(wildcard $(OUT)/stability.json) pipeline/metrics.py pipeline/label.py $(COMMON) | $(VENV_DONE)
	$(RUN) metrics --config $(CONFIG) --documents $< --clusters $(OUT)/clusters.parquet --topics $(OUT)/topics.parquet --out $@

$(OUT)/venue_topics.parquet: $(OUT)/documents.parquet $(OUT)/clusters.parquet $(OUT)/topics.parquet pipeline/compare.py $(COMMON) $(call STAMP,compare) | $(VENV_DONE)
	$(RUN) compare --config $(CONFIG) --documents $< --clusters $(OUT)/clusters.parquet --topics $(OUT)/topics.parquet --out $@

$(OUT)/index.html: $(OUT)/metrics.json $(OUT)/venue_topics.parquet

# Extra runs, not part of `all` (minutes on 3,401 papers); kept until their inputs change.
# stability: this pipeline rerun with each of quality.seeds; baseline: BERTopic's defaults.
.PHONY: stability baseline
stability: $(OUT)/stability.json
baseline: $(OUT)/baseline.json

$(OUT)/stability.json: $(OUT)/documents.parquet $(OUT)/embeddings.parquet $(OUT)/clusters.parquet pipeline/quality.py pipeline/cluster.py $(COMMON) $(call STAMP,cluster) $(call STAMP,quality) | $(VENV_DONE)
	$(RUN) stability --config $(CONFIG) --documents $< --embeddings $(OUT)/embeddings.parquet --clusters $(OUT)/clusters.parquet --out $@

$(OUT)/baseline.json: $(OUT)/documents.parquet $(OUT)/embeddings.parquet pipeline/quality.py pipeline/metrics.py pipeline/label.py $(COMMON) $(call STAMP,quality) | $(VENV_DONE)
	$(RUN) baseline --config $(CONFIG) --documents $< --embeddings $(OUT)/embeddings.parquet --out $@

# The report and the map, with plotly.js and the static assets beside them. Figures and venue
# statistics other targets leave in the output folder are shown when present (and rerender it).
RENDER_ASSETS := map.js report.js style.css
RENDER_OPTIONAL := $(wildcard $(addprefix $(OUT)/,metrics.json baseline.json stability.json venue_topics.parquet))
$(OUT)/index.html $(OUT)/map.html $(OUT)/plotly.min.js $(addprefix $(OUT)/,$(RENDER_ASSETS)) &: $(OUT)/documents.parquet $(OUT)/embeddings.parquet $(OUT)/clusters.parquet $(OUT)/topics.parquet $(RENDER_OPTIONAL) pipeline/render.py pipeline/embed.py $(addprefix pipeline/assets/,$(RENDER_ASSETS)) $(COMMON) $(call STAMP,render) | $(VENV_DONE)
	$(RUN) render --config $(CONFIG) --documents $(OUT)/documents.parquet --embeddings $(OUT)/embeddings.parquet --clusters $(OUT)/clusters.parquet --topics $(OUT)/topics.parquet --out $(OUT)/index.html

# Speed figures for this config's corpus (see pipeline/bench.py); BENCH_ARGS e.g.
#   make bench CONFIG=configs/corpora2023.yaml BENCH_ARGS="--runs 3 --scaling 10000,30000,100000"
BENCH_ARGS ?=
bench: $(VENV_DONE)
	$(PY) -m pipeline.bench --config $(CONFIG) $(BENCH_ARGS)

test: $(VENV_DONE)
	$(PY) -m pytest -q

lint: $(VENV_DONE)
	$(PY) -m ruff check pipeline tests
	$(PY) -m ruff format --check pipeline tests

clean:
	rm -rf $(OUT) $(CONFIG_MK)

clean-all:
	rm -rf outputs .build $(VENV)
