"""Where a producer puts a keyed record: the partitioners of the Kafka clients that erasures must follow.

A record's partition is chosen by its producer's client, not by the broker, so finding a key without
reading the whole topic needs the partitioner its producers used. Every keyed partitioner of the common
clients maps the key's serialized bytes to ``hash(key) mod partitions``; they differ in the hash:

- ``murmur2``: Kafka's Java client (``BuiltInPartitioner.partitionForKey``), aiokafka, kafka-python and
  librdkafka's ``murmur2_random``: ``(murmur2(key) & 0x7fffffff) % partitions``.
- ``crc32``: librdkafka's default ``consistent_random`` (confluent-kafka, kcat) and ``consistent``:
  ``crc32(key) % partitions``.
- ``fnv1a``: sarama's default hash partitioner and librdkafka's ``fnv1a_random``: the 32-bit FNV-1a
  hash read as a signed integer, ``abs(hash % partitions)``.

A topic's partitions can grow, and a record stays where it was written, so a partitioner only says where
a key went while the partition count was what it is now; a scan of the partitions is the answer that
holds whatever happened before.
"""

from __future__ import annotations

from enum import StrEnum


class Partitioner(StrEnum):
    MURMUR2 = "murmur2"
    CRC32 = "crc32"
    FNV1A = "fnv1a"
