"""DeleteRecords responses v0-v3, decoded straight into typed results.

aiokafka calls ``RESPONSE_TYPE.decode(buffer)`` on the class a request struct names and hands the
result back to the caller, so the decoders below return ``DeleteRecordsAnswer`` directly. Every
partition of the response is read; the flexible versions (v2+) skip tagged fields as Kafka does. A
partition costs one precompiled ``struct`` unpack, which keeps a 10,000-partition answer cheap.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from io import BytesIO
from typing import NamedTuple

from app.adapters.kafka.wire import WireReader
from app.domain.ports import TopicPartition

DELETE_RECORDS_KEY = 21
# PartitionIndex, LowWatermark, [LeaderLogStartOffset (v3+)], ErrorCode
_PARTITION = {
    0: struct.Struct(">iqh"),
    1: struct.Struct(">iqh"),
    2: struct.Struct(">iqh"),
    3: struct.Struct(">iqqh"),
}


class DeletedPartition(NamedTuple):
    """One partition of a DeleteRecords response, as the broker sent it (a tuple: cheap to build)."""

    low_watermark: int
    leader_log_start_offset: int  # -1 below v3
    error_code: int


@dataclass(frozen=True)
class DeleteRecordsAnswer:
    version: int
    partitions: dict[tuple[str, int], DeletedPartition]  # keyed by (topic, partition)

    def get(self, tp: TopicPartition) -> DeletedPartition | None:
        return self.partitions.get((tp.topic, tp.partition))


def decode_delete_records(buf: bytes, pos: int, version: int) -> DeleteRecordsAnswer:
    """A DeleteRecords response body (after the response header) at ``version`` 0-3."""
    try:
        partitions = _decode(WireReader(buf, pos), version)
    except (struct.error, IndexError, ValueError) as exc:
        raise ValueError(f"DeleteRecords response truncated: {exc}") from exc
    return DeleteRecordsAnswer(version, partitions)


def _decode(reader: WireReader, version: int) -> dict[tuple[str, int], DeletedPartition]:
    flexible, layout = version >= 2, _PARTITION[version]
    buf, size = reader.buf, layout.size
    results: dict[tuple[str, int], DeletedPartition] = {}
    reader.int32()  # ThrottleTimeMs
    for _ in range(reader.count(flexible)):
        name = reader.string(flexible)
        for _ in range(reader.count(flexible)):
            fields = layout.unpack_from(buf, reader.pos)
            reader.pos += size
            if flexible:
                reader.skip_tags()
            if version >= 3:
                results[name, fields[0]] = DeletedPartition(fields[1], fields[2], fields[3])
            else:
                results[name, fields[0]] = DeletedPartition(fields[1], -1, fields[2])
        if flexible:
            reader.skip_tags()
    if flexible:
        reader.skip_tags()
    if reader.pos != len(buf):
        raise ValueError(f"DeleteRecords response has {len(buf) - reader.pos} unread bytes")
    return results


def response_type(version: int) -> type:
    """The ``RESPONSE_TYPE`` of the request struct at ``version``."""

    def decode(cls: type, data: BytesIO) -> DeleteRecordsAnswer:
        return decode_delete_records(data.getvalue(), data.tell(), version)

    namespace = {"API_KEY": DELETE_RECORDS_KEY, "API_VERSION": version, "decode": classmethod(decode)}
    return type(f"DeleteRecordsResponseV{version}", (), namespace)


def read_response(response: object) -> DeleteRecordsAnswer:
    if not isinstance(response, DeleteRecordsAnswer):
        raise TypeError(f"expected a decoded DeleteRecords answer, got {type(response).__name__}")
    return response
