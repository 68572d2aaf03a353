"""sarama, the Go client, as a reference: ``tests/helpers/sarama_partitions`` (built by ``make sarama``
from the Go module proxy) prints the partition sarama's default hash partitioner gives each key."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PROGRAM = Path(
    os.environ.get(
        "KAFKA_PURGE_SARAMA_PARTITIONS", Path.home() / ".cache" / "kafka-purge" / "sarama-partitions"
    )
)


def sarama_partitions(keys: list[bytes], partitions: int) -> list[int]:
    if not PROGRAM.exists():
        raise FileNotFoundError(f"{PROGRAM} is missing: run `make sarama` (sarama from the Go module proxy)")
    answer = subprocess.run(
        [str(PROGRAM), str(partitions)],
        input="".join(f"{key.hex()}\n" for key in keys),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [int(line) for line in answer.stdout.split()]
