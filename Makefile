# One entry point for people and CI. `make run` brings up the demo on a fresh machine;
# `make test` runs every check CI runs (lint, types, OpenAPI drift, the whole test suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test check lint typecheck openapi openapi-check pytest bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,spark]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/kafka-purge demo

test: check

check: lint typecheck openapi-check pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

openapi: $(STAMP)
	$(BIN)/python -m app.openapi > openapi/openapi.json

openapi-check: $(STAMP)
	$(BIN)/python -m app.openapi | diff -u openapi/openapi.json - \
		|| (echo "openapi/openapi.json is out of date: run 'make openapi'" >&2; exit 1)

pytest: $(STAMP)
	$(BIN)/pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(BIN)/python bench/emulator_bench.py
	$(BIN)/python bench/authorizer_bench.py
	$(BIN)/python bench/service_bench.py

clean:
	rm -rf $(VENV) data .pytest_cache .mypy_cache .ruff_cache
