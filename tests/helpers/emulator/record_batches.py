"""Builds real v2 record batches with aiokafka's client-side builder (an independent encoder)."""

from __future__ import annotations

from aiokafka.record.default_records import DefaultRecordBatchBuilder

GZIP, SNAPPY, LZ4, ZSTD = 1, 2, 3, 4  # RecordBatch attributes' compression codes


def batch(
    count: int, first_timestamp: int = 1_000, step: int = 1, compression: int = 0, size: int = 8
) -> bytes:
    """``count`` records with timestamps first_timestamp, +step, ...; values of ``size`` bytes."""
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 24,
    )
    for i in range(count):
        builder.append(i, timestamp=first_timestamp + i * step, key=None, value=bytes(size), headers=[])
    return bytes(builder.build())
