"""Tests on a real Apache Kafka cluster (a package: its module names repeat those of other folders)."""
