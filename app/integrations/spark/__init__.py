"""Spark Structured Streaming as a consumer of Kafka data for consumed-data retention.

- ``checkpoint``: pure Python (no pyspark), reads the offsets a query has committed from its checkpoint.
- ``listener``: a PySpark ``StreamingQueryListener`` that reports each batch's end offsets to the service.
- ``audit_report``: a PySpark batch job over an audit export.

This package's ``__init__`` imports nothing so that the web app can use ``checkpoint`` without pyspark.
"""
