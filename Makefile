# One entry point for people and CI. `make run` brings up the demo on a fresh machine;
# `make test` runs every check CI runs (lint, types, OpenAPI drift, the whole test suite, and the Spark
# client's tests on each supported PySpark line, each in its own venv), first installing and starting
# what the tests need when it is missing: PostgreSQL, Chromium and a JDK.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# clients/spark (kafka-purge-spark) supports PySpark 3.5 and 4.x: one venv per line.
SPARK_LINES := 35 4
PYSPARK_35 := pyspark>=3.5,<3.6
PYSPARK_4 := pyspark>=4,<5

# Apache Kafka from Maven Central: the newest 4.x line that resolves with its dependencies.
KAFKA_VERSION := 4.4.0
MAVEN_REPO ?= $(HOME)/.m2/repository
MAVEN_DEPENDENCY_PLUGIN := org.apache.maven.plugins:maven-dependency-plugin:3.8.1

.PHONY: run test check lint typecheck openapi openapi-check pytest spark-client bench clean \
	postgres chromium jdk maven-check

# The service's own Spark tests (pull mode, push mode end to end) use the Spark client too.
$(STAMP): pyproject.toml clients/spark/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]' -e ./clients/spark
	touch $(STAMP)

.venv-spark%/.installed: clients/spark/pyproject.toml
	$(PYTHON) -m venv .venv-spark$*
	.venv-spark$*/bin/pip install --quiet --upgrade pip
	.venv-spark$*/bin/pip install --quiet -e './clients/spark[test]' '$(PYSPARK_$*)'
	touch $@

run: $(STAMP)
	$(BIN)/kafka-purge demo

test: check

check: lint typecheck openapi-check pytest spark-client

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

# The tests' PostgreSQL at 127.0.0.1:5432 (trust auth, roles postgres and root).
postgres:
	scripts/postgres

# Debian's Chromium for the browser tests; Playwright drives it and never downloads a browser.
chromium:
	scripts/apt-install chromium

# The Spark client's tests compile a test-only source against PySpark's jars: a JDK, not only a JRE.
jdk:
	command -v javac >/dev/null || scripts/apt-install openjdk-17-jdk-headless

# Resolves Apache Kafka's broker artifact (with its dependencies) into Maven's local repository and
# prints the jar's path: the check that Maven Central answers.
maven-check:
	@log=$$(mktemp); mvn -B -q -Dmaven.repo.local=$(MAVEN_REPO) $(MAVEN_DEPENDENCY_PLUGIN):get \
		-Dartifact=org.apache.kafka:kafka_2.13:$(KAFKA_VERSION) >$$log 2>&1 \
		|| { cat $$log; echo "maven-check: Maven could not resolve kafka_2.13 $(KAFKA_VERSION)" >&2; exit 1; }; \
		rm -f $$log
	@jar=$(MAVEN_REPO)/org/apache/kafka/kafka_2.13/$(KAFKA_VERSION)/kafka_2.13-$(KAFKA_VERSION).jar; \
		test -f $$jar && echo $$jar || { echo "maven-check: $$jar is missing" >&2; exit 1; }

pytest: $(STAMP) postgres chromium jdk
	$(BIN)/pytest -q -p no:cacheprovider

spark-client: jdk $(foreach line,$(SPARK_LINES),.venv-spark$(line)/.installed)
	for line in $(SPARK_LINES); do \
		venv=$(CURDIR)/.venv-spark$$line; \
		$$venv/bin/python -c 'import pyspark; print("== kafka-purge-spark on PySpark", pyspark.__version__)' \
		&& (cd clients/spark && $$venv/bin/pytest -q -p no:cacheprovider) || exit 1; \
	done

bench: $(STAMP)
	$(BIN)/python bench/emulator_bench.py
	$(BIN)/python bench/authorizer_bench.py
	$(BIN)/python bench/service_bench.py

clean:
	rm -rf $(VENV) .venv-spark* data .pytest_cache .mypy_cache .ruff_cache
