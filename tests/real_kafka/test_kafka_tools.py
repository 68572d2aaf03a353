"""``kafka-purge delete --file`` and Kafka's own ``kafka-delete-records`` (``DeleteRecordsCommand``) read
the same offset JSON format: given the same offsets on two topics of identical content, both leave the
same log start offsets (``-1`` being the high watermark for both)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers.kafka_cluster import KafkaCluster
from helpers.real_kafka import CLUSTER, log_start_offsets, topic_with_records
from helpers.real_kafka_specs import DELETE_RECORDS_COMMAND
from helpers.service_processes import CLIENT, ROOT, SECRET, Service

OFFSETS = {0: 12, 1: -1, 2: 0}  # partition: offset, as a kafka-delete-records file says it


def offset_json(folder: Path, topic: str) -> Path:
    document = {
        "partitions": [{"topic": topic, "partition": p, "offset": offset} for p, offset in OFFSETS.items()],
        "version": 1,
    }
    path = folder / f"{topic}.json"
    path.write_text(json.dumps(document))
    return path


def test_cli_file_and_kafka_delete_records_leave_the_same_log_start_offsets(
    kafka_cluster: KafkaCluster, purge_service: Service, tmp_path: Path
) -> None:
    for topic in ("tools-purge", "tools-kafka"):
        topic_with_records(kafka_cluster, topic, 3, 30)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    cli = subprocess.run(
        [
            *(sys.executable, "-m", "app", "delete", "--file", str(offset_json(tmp_path, "tools-purge"))),
            *("--reason", "same file as kafka-delete-records", "--yes", "--wait", "--format", "json"),
            *("--url", str(purge_service.base), "--cluster", CLUSTER, "--client-id", CLIENT),
        ],
        env={**env, "PYTHONPATH": str(ROOT), "PURGE_CLIENT_SECRET": SECRET},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert cli.returncode == 0, cli.stdout + cli.stderr
    kafka = kafka_cluster.java(
        DELETE_RECORDS_COMMAND,
        *("--bootstrap-server", kafka_cluster.bootstrap),
        *("--command-config", str(kafka_cluster.admin_properties)),
        *("--offset-json-file", str(offset_json(tmp_path, "tools-kafka"))),
    )
    assert kafka.returncode == 0, kafka.stdout + kafka.stderr
    expected = {0: 12, 1: 30, 2: 0}
    assert log_start_offsets(kafka_cluster, "tools-purge", 3) == expected
    assert log_start_offsets(kafka_cluster, "tools-kafka", 3) == expected
