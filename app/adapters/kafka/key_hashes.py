"""The partition a producer's client picks for a key (see ``app.domain.partitioners``)."""

from __future__ import annotations

import zlib

from aiokafka.partitioner import murmur2

from app.domain.partitioners import Partitioner

FNV1A_OFFSET_BASIS = 0x811C9DC5
FNV1A_PRIME = 0x01000193


def fnv1a_32(key: bytes) -> int:
    """FNV-1a, 32 bits (Go's ``hash/fnv.New32a``, librdkafka's ``rd_fnv1a``), as an unsigned integer."""
    value = FNV1A_OFFSET_BASIS
    for byte in key:
        value = ((value ^ byte) * FNV1A_PRIME) & 0xFFFFFFFF
    return value


def _signed_32(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


def partition_for_key(partitioner: Partitioner, key: bytes, partitions: int) -> int:
    """The partition a producer using ``partitioner`` writes ``key`` to, on a topic of ``partitions``."""
    if partitions < 1:
        raise ValueError("a topic has at least one partition")
    if partitioner is Partitioner.MURMUR2:
        hashed: int = murmur2(key)
        return (hashed & 0x7FFFFFFF) % partitions
    if partitioner is Partitioner.CRC32:
        return zlib.crc32(key) % partitions
    # sarama takes the remainder of the signed hash (Go's % truncates toward zero) and negates a
    # negative one, which is the remainder of the hash's absolute value.
    return abs(_signed_32(fnv1a_32(key))) % partitions
