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

.PHONY: all test lint clean clean-all venv help
.DEFAULT_GOAL := all

help:
	@echo "make all [CONFIG=...]   build the topic map (default: $(CONFIG))"
	@echo "make test               run the test suite"
	@echo "make lint               ruff check"
	@echo "make clean [CONFIG=...] remove that config's outputs"

venv: $(VENV_DONE)

$(VENV_DONE): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)" -e ".[test]"
	touch $@

# Make variables for this config (OUT, INPUT_FILES, INPUT_GLOBS); writing them also refreshes
# the parameter stamps. Make rebuilds this file when the config changes and then restarts.
CONFIG_MK := .build/$(subst /,_,$(CONFIG)).mk
ifeq ($(filter-out help clean-all venv test lint,$(or $(MAKECMDGOALS),all)),)
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

$(OUT)/clusters.parquet: $(OUT)/documents.parquet $(OUT)/embeddings.parquet pipeline/cluster.py $(COMMON) $(call STAMP,cluster) | $(VENV_DONE)
	$(RUN) cluster --config $(CONFIG) --documents $< --embeddings $(OUT)/embeddings.parquet --out $@

$(OUT)/topics.parquet: $(OUT)/documents.parquet $(OUT)/clusters.parquet pipeline/label.py $(COMMON) $(call STAMP,label) | $(VENV_DONE)
	$(RUN) label --config $(CONFIG) --documents $< --clusters $(OUT)/clusters.parquet --out $@

$(OUT)/index.html $(OUT)/plotly.min.js &: $(OUT)/documents.parquet $(OUT)/clusters.parquet $(OUT)/topics.parquet pipeline/render.py $(COMMON) $(call STAMP,render) | $(VENV_DONE)
	$(RUN) render --config $(CONFIG) --documents $(OUT)/documents.parquet --clusters $(OUT)/clusters.parquet --topics $(OUT)/topics.parquet --out $(OUT)/index.html

test: $(VENV_DONE)
	$(PY) -m pytest -q

lint: $(VENV_DONE)
	$(PY) -m ruff check pipeline tests
	$(PY) -m ruff format --check pipeline tests

clean:
	rm -rf $(OUT) $(CONFIG_MK)

clean-all:
	rm -rf outputs .build $(VENV)
