"""Record batch (magic v2) parsing: just what a broker needs to store, index and search batches."""

from __future__ import annotations

import gzip
import struct
from dataclasses import dataclass

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
_LENGTH_AND_EPOCH = struct.Struct(">qii")
_RECORDS_START = HEADER_SIZE
_COMPRESSION_MASK = 0x07
_CONTROL_FLAG = 0x20


class CorruptBatchError(ValueError):
    """The produced bytes are not a sequence of well-formed v2 record batches."""


class UnsupportedMagicError(ValueError):
    """A batch uses the v0/v1 message format, which the emulator does not store."""


@dataclass(slots=True)
class StoredBatch:
    """One record batch as the log keeps it: bytes with the broker-assigned base offset."""

    base_offset: int
    last_offset: int
    first_timestamp: int
    max_timestamp: int
    data: bytes

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1


def split_batches(blob: bytes) -> list[tuple[int, int, int, int, int]]:
    """(start, end, last_offset_delta, base_timestamp, max_timestamp) of every batch in a produce payload."""
    found: list[tuple[int, int, int, int, int]] = []
    pos, size = 0, len(blob)
    while pos < size:
        if size - pos < HEADER_SIZE:
            raise CorruptBatchError("truncated record batch header")
        fields = HEADER.unpack_from(blob, pos)
        length, magic = fields[1], fields[3]
        end = pos + 12 + length
        if magic != 2:
            raise UnsupportedMagicError(f"magic {magic}")
        if length < HEADER_SIZE - 12 or end > size:
            raise CorruptBatchError("bad record batch length")
        last_delta, base_ts, max_ts = fields[6], fields[7], fields[8]
        if last_delta < 0:
            raise CorruptBatchError("negative last offset delta")
        found.append((pos, end, last_delta, base_ts, max_ts))
        pos = end
    if not found:
        raise CorruptBatchError("empty record set")
    return found


def rebase(blob: bytes, start: int, end: int, base_offset: int, leader_epoch: int) -> bytes:
    """Copy one batch with a new base offset and leader epoch; the CRC does not cover either."""
    data = bytearray(blob[start:end])
    length = _LENGTH_AND_EPOCH.unpack_from(data, 0)[1]
    _LENGTH_AND_EPOCH.pack_into(data, 0, base_offset, length, leader_epoch)
    return bytes(data)


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7


def _records_payload(data: bytes) -> bytes | None:
    attributes = HEADER.unpack_from(data, 0)[5]
    codec = attributes & _COMPRESSION_MASK
    body = data[_RECORDS_START:]
    if codec == 0:
        return body
    if codec == 1:
        return gzip.decompress(body)
    return None


def record_timestamps(batch: StoredBatch) -> list[tuple[int, int]] | None:
    """(offset, timestamp) per record, or None when the codec cannot be decoded here."""
    fields = HEADER.unpack_from(batch.data, 0)
    attributes, base_ts, count = fields[5], fields[7], fields[12]
    if attributes & _CONTROL_FLAG:
        return []
    payload = _records_payload(batch.data)
    if payload is None:
        return None
    out: list[tuple[int, int]] = []
    pos = 0
    for _ in range(count):
        length, pos = _read_varint(payload, pos)
        end = pos + length
        pos += 1  # record attributes
        ts_delta, pos = _read_varint(payload, pos)
        offset_delta, pos = _read_varint(payload, pos)
        out.append((batch.base_offset + offset_delta, base_ts + ts_delta))
        pos = end
    return out
