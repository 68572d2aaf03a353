"""Record batch (magic v2) parsing: just what a broker needs to store, index and search batches."""

from __future__ import annotations

import gzip
import struct
from collections.abc import Callable
from dataclasses import dataclass

import cramjam
import crc32c

from kafka_emulator.state.producers import INT32_MAX, ProducerBatch

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
_LENGTH_AND_EPOCH = struct.Struct(">qii")
_RECORDS_START = HEADER_SIZE
_COMPRESSION_MASK = 0x07
_CONTROL_FLAG = 0x20
# Byte positions in the batch header: CRC (covering attributes to the end), attributes, max timestamp.
_CRC, _ATTRIBUTES, _MAX_TIMESTAMP = 17, 21, 35
_INT16 = struct.Struct(">h")
_INT64 = struct.Struct(">q")
_UINT32 = struct.Struct(">I")
TIMESTAMP_TYPE_FLAG = 0x08  # set: LogAppendTime


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


def rebase(
    blob: bytes, start: int, end: int, base_offset: int, leader_epoch: int, log_append_time: int | None = None
) -> bytes:
    """Copy one batch with a new base offset and leader epoch; the CRC does not cover either. With
    ``log_append_time`` (a LogAppendTime topic) the batch is stamped as Kafka's LogValidator does for v2
    batches: timestamp type LogAppendTime and max timestamp = the append time, CRC recomputed."""
    data = bytearray(blob[start:end])
    length = _LENGTH_AND_EPOCH.unpack_from(data, 0)[1]
    _LENGTH_AND_EPOCH.pack_into(data, 0, base_offset, length, leader_epoch)
    if log_append_time is not None:
        attributes = _INT16.unpack_from(data, _ATTRIBUTES)[0]
        _INT16.pack_into(data, _ATTRIBUTES, attributes | TIMESTAMP_TYPE_FLAG)
        _INT64.pack_into(data, _MAX_TIMESTAMP, log_append_time)
        _UINT32.pack_into(data, _CRC, crc32c.crc32c(bytes(data[_ATTRIBUTES:])))
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


# snappy-java's stream framing, which Kafka's Java clients write: magic, version, compatible version,
# then (length, raw snappy block) chunks. librdkafka may write raw snappy instead.
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = 16
_INT32 = struct.Struct(">i")


def _snappy(body: bytes) -> bytes:
    if not body.startswith(_XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(body))
    chunks, pos = [], _XERIAL_HEADER
    while pos < len(body):
        (length,) = _INT32.unpack_from(body, pos)
        pos += 4
        chunks.append(bytes(cramjam.snappy.decompress_raw(body[pos : pos + length])))
        pos += length
    return b"".join(chunks)


def _lz4(body: bytes) -> bytes:
    return bytes(cramjam.lz4.decompress(body))  # the LZ4 frame format (Kafka's KafkaLZ4BlockInputStream)


def _zstd(body: bytes) -> bytes:
    return bytes(cramjam.zstd.decompress(body))


_CODECS: dict[int, Callable[[bytes], bytes]] = {1: gzip.decompress, 2: _snappy, 3: _lz4, 4: _zstd}


def _records_payload(data: bytes) -> bytes:
    """The batch's records, decompressed (RecordBatch attributes bits 0-2 name the codec)."""
    attributes = HEADER.unpack_from(data, 0)[5]
    codec = attributes & _COMPRESSION_MASK
    body = data[_RECORDS_START:]
    if codec == 0:
        return body
    decompress = _CODECS.get(codec)
    if decompress is None:
        raise CorruptBatchError(f"unknown compression codec {codec}")
    return decompress(body)


def batch_producer(data: bytes, start: int = 0) -> ProducerBatch:
    """Producer id, epoch, sequence range and base offset (as the header has it) of the batch at ``start``.
    Sequences wrap at the int32 maximum (``DefaultRecordBatch.incrementSequence``)."""
    fields = HEADER.unpack_from(data, start)
    base_offset, last_delta, producer_id, epoch, base_seq = (
        fields[0],
        fields[6],
        fields[9],
        fields[10],
        fields[11],
    )
    last_seq = (base_seq + last_delta) % (INT32_MAX + 1) if base_seq >= 0 else base_seq
    return ProducerBatch(producer_id, epoch, base_seq, last_seq, base_offset)


def batch_leader_epoch(batch: StoredBatch) -> int:
    """The batch's PartitionLeaderEpoch: the epoch of the leader that appended it."""
    return int(_LENGTH_AND_EPOCH.unpack_from(batch.data, 0)[2])


def record_timestamps(batch: StoredBatch) -> list[tuple[int, int]]:
    """(offset, timestamp) per record, decompressing the batch. A LogAppendTime batch's records all carry
    the batch's max timestamp (the broker's append time), as Kafka's ``DefaultRecordBatch`` reads them."""
    fields = HEADER.unpack_from(batch.data, 0)
    attributes, base_ts, max_ts, count = fields[5], fields[7], fields[8], fields[12]
    if attributes & _CONTROL_FLAG:
        return []
    payload = _records_payload(batch.data)
    log_append_time = attributes & TIMESTAMP_TYPE_FLAG
    out: list[tuple[int, int]] = []
    pos = 0
    for _ in range(count):
        length, pos = _read_varint(payload, pos)
        end = pos + length
        pos += 1  # record attributes
        ts_delta, pos = _read_varint(payload, pos)
        offset_delta, pos = _read_varint(payload, pos)
        out.append((batch.base_offset + offset_delta, max_ts if log_append_time else base_ts + ts_delta))
        pos = end
    return out
