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

# Apache Kafka from Maven Central, pinned in jvm/pom.xml (which says why that release).
KAFKA_VERSION := $(shell sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' jvm/pom.xml)
MAVEN_REPO ?= $(HOME)/.m2/repository
KAFKA_CLASSPATH := $(HOME)/.cache/kafka-purge/kafka.classpath
# Kafka Connect, pinned in jvm/connect/pom.xml (which says why its release differs from the brokers').
CONNECT_VERSION := $(shell sed -n 's:.*<connect.version>\(.*\)</connect.version>.*:\1:p' jvm/connect/pom.xml)
CONNECT_CLASSPATH := $(HOME)/.cache/kafka-purge/connect.classpath
SARAMA_PARTITIONS := $(HOME)/.cache/kafka-purge/sarama-partitions

.PHONY: run test check lint typecheck openapi openapi-check pytest spark-client bench clean \
	postgres chromium jdk kafka spark-kafka sarama

# The service's own Spark tests (tests/real_kafka/test_spark_queries.py) use the Spark client too.
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

# Spark, Kafka and Maven run on Java 17: Debian's headless JDK when no javac is there.
jdk:
	command -v javac >/dev/null || scripts/apt-install openjdk-17-jdk-headless

# Apache Kafka's broker and tools (jvm/pom.xml) and Kafka Connect (jvm/connect/pom.xml) resolved from
# Maven Central into Maven's local repository, once; their class paths are written outside the
# repository, where tests/helpers/kafka_cluster.py and tests/helpers/connect_worker.py read them. Fails
# loudly when Maven Central does not answer.
kafka: $(KAFKA_CLASSPATH) $(CONNECT_CLASSPATH)

$(CONNECT_CLASSPATH): jvm/connect/pom.xml
	@mkdir -p $(dir $@)
	@log=$$(mktemp); mvn -B -q -f jvm/connect/pom.xml -Dmaven.repo.local=$(MAVEN_REPO) dependency:build-classpath \
		-Dmdep.outputFile=$@.tmp >$$log 2>&1 \
		|| { cat $$log; echo "make kafka: Maven could not resolve Kafka Connect $(CONNECT_VERSION)" >&2; exit 1; }; \
		rm -f $$log; mv $@.tmp $@; echo "Kafka Connect $(CONNECT_VERSION): class path in $@"

$(KAFKA_CLASSPATH): jvm/pom.xml
	@mkdir -p $(dir $@)
	@log=$$(mktemp); mvn -B -q -f jvm/pom.xml -Dmaven.repo.local=$(MAVEN_REPO) dependency:build-classpath \
		-Dmdep.outputFile=$@.tmp >$$log 2>&1 \
		|| { cat $$log; echo "make kafka: Maven could not resolve Apache Kafka $(KAFKA_VERSION)" >&2; exit 1; }; \
		rm -f $$log; mv $@.tmp $@; echo "Apache Kafka $(KAFKA_VERSION): class path in $@"

# sarama, the Go client, as the tests' reference for its hash partitioner: a small program built from
# the Go module proxy (tests/helpers/sarama_partitions, versions pinned by its go.sum), outside the
# repository. Fails loudly when the proxy does not answer.
sarama: $(SARAMA_PARTITIONS)

$(SARAMA_PARTITIONS): tests/helpers/sarama_partitions/main.go tests/helpers/sarama_partitions/go.mod tests/helpers/sarama_partitions/go.sum
	@mkdir -p $(dir $@)
	cd tests/helpers/sarama_partitions && go build -mod=readonly -o $@.tmp . && mv $@.tmp $@

# Spark's own Kafka connector (jvm/spark-kafka/pom.xml) for the PySpark lines tests/real_kafka runs
# Spark queries on: the main venv's (4.x) and .venv-spark35's (3.5); resolved from Maven Central, each
# class path written outside the repository (~/.cache/kafka-purge/spark-kafka-<pyspark version>.classpath).
spark-kafka: $(STAMP) .venv-spark35/.installed
	scripts/spark-kafka-classpath $(BIN)/python .venv-spark35/bin/python

# Two workers on the 2-core machines CI runs on: the tests wait on brokers, processes and timers more than
# they compute. tests/conftest.py keeps a file's tests on one worker and the real-Kafka folder on one, and
# orders the groups longest first; --no-loadscope-reorder keeps that order (pytest-xdist would otherwise
# hand out the groups with the most tests first, which left one-test files of a minute for the end).
PYTEST_WORKERS ?= 2

pytest: $(STAMP) postgres chromium jdk kafka spark-kafka sarama
	$(BIN)/pytest -q -p no:cacheprovider --durations=30 -n $(PYTEST_WORKERS) --dist loadgroup --no-loadscope-reorder

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
