"""The Spark side of kafka-purge, installed on its own (``pip install kafka-purge-spark``).

- ``PurgeProgressListener`` (``listener``): reports each batch's consumed Kafka offsets to the service.
- ``ClientCredentials`` (``tokens``): the OAuth 2 client-credentials grant the listener authenticates with.
- ``audit_report``: a PySpark batch job that turns an audit export into a compliance report.
"""

from kafka_purge_spark.listener import PurgeProgressListener, report_from_progress
from kafka_purge_spark.sender import ProgressReport, ProgressSender
from kafka_purge_spark.tokens import ClientCredentials

__all__ = [
    "ClientCredentials",
    "ProgressReport",
    "ProgressSender",
    "PurgeProgressListener",
    "report_from_progress",
]
