"""Spark Structured Streaming as a consumer of Kafka data for consumed-data retention, service side.

- ``checkpoint``: reads the offsets a query has committed from its checkpoint (pull mode), without Spark.
- ``checkpoint_roots``: where the service may read checkpoints from.

The Spark side (the progress listener that pushes offsets, the audit report job) is its own
distribution, ``kafka-purge-spark`` in ``clients/spark/``: the service never imports pyspark.
"""
