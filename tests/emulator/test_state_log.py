"""ReplicaLog: offsets assigned on append, reads of whole batches, LSO moves, timestamp search."""

from __future__ import annotations

import struct

import pytest
from helpers.emulator.record_batches import GZIP, LZ4, SNAPPY, ZSTD, batch

from kafka_emulator.state.log import ReplicaLog
from kafka_emulator.state.records import CorruptBatchError, UnsupportedMagicError


def base_offsets(data: bytes) -> list[int]:
    found, pos = [], 0
    while pos < len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        found.append(base)
        pos += 12 + length
    return found


def test_append_assigns_consecutive_base_offsets_and_keeps_crc_bytes() -> None:
    log = ReplicaLog()
    first = batch(3)
    assert log.append_produced(first, leader_epoch=4) == 0
    assert log.append_produced(batch(2) + batch(5), leader_epoch=4) == 3
    assert log.log_end_offset == 10
    data = log.read(0, 1 << 20, upper_bound=10)
    assert base_offsets(data) == [0, 3, 5]
    # Only BaseOffset and PartitionLeaderEpoch change; CRC and everything after it are as produced.
    assert data[17 : len(first)] == first[17:]
    assert struct.unpack_from(">i", data, 12)[0] == 4


def test_read_returns_the_batch_containing_the_offset_and_stops_at_the_bound() -> None:
    log = ReplicaLog()
    for _ in range(4):
        log.append_produced(batch(5), 0)
    assert base_offsets(log.read(7, 1 << 20, upper_bound=15)) == [5, 10]
    assert base_offsets(log.read(7, 1, upper_bound=20)) == [5]  # first batch even when too big
    assert log.read(20, 1 << 20, upper_bound=20) == b""


def test_log_start_offset_moves_forward_only_and_drops_whole_batches_below_it() -> None:
    log = ReplicaLog()
    for _ in range(3):
        log.append_produced(batch(5), 0)
    log.high_watermark = 15
    log.increment_log_start_offset(7)
    log.increment_log_start_offset(2)
    assert log.log_start_offset == 7
    assert log.batch_count == 2
    assert base_offsets(log.read(7, 1 << 20, 15)) == [5, 10]


def test_follower_copy_after_full_truncation_inside_a_batch_takes_that_batch() -> None:
    leader = ReplicaLog()
    for _ in range(3):
        leader.append_produced(batch(5), 0)
    leader.high_watermark = 15
    leader.increment_log_start_offset(7)
    follower = ReplicaLog()
    follower.truncate_fully(7)
    follower.copy_from(leader)
    assert follower.log_end_offset == 15
    assert base_offsets(follower.read(7, 1 << 20, 15)) == [5, 10]


def test_truncate_to_drops_batches_at_or_above_the_offset() -> None:
    log = ReplicaLog()
    for _ in range(3):
        log.append_produced(batch(5), 0)
    log.high_watermark = 15
    log.truncate_to(10)
    assert (log.log_end_offset, log.high_watermark, log.batch_count) == (10, 10, 2)


@pytest.mark.parametrize("compression", [0, GZIP, SNAPPY, LZ4, ZSTD])
def test_timestamp_search_is_per_record_and_respects_lso_and_bound(compression: int) -> None:
    log = ReplicaLog()
    log.append_produced(batch(5, first_timestamp=100, step=10, compression=compression), 0)  # ts 100..140
    log.append_produced(batch(5, first_timestamp=150, step=10, compression=compression), 3)  # ts 150..190
    log.high_watermark = 10
    # (offset, timestamp, leader epoch of the record's batch)
    assert log.offset_for_timestamp(0, 10) == (0, 100, 0)
    assert log.offset_for_timestamp(125, 10) == (3, 130, 0)
    assert log.offset_for_timestamp(155, 10) == (6, 160, 3)
    assert log.offset_for_timestamp(191, 10) is None
    assert log.offset_for_timestamp(155, 6) is None  # beyond the bound (HW for consumers)
    log.increment_log_start_offset(4)
    assert log.offset_for_timestamp(0, 10) == (4, 140, 0)
    assert log.max_timestamp_offset(10) == (9, 190, 3)


def test_max_timestamp_is_the_first_record_with_the_largest_timestamp_even_past_a_deletion() -> None:
    log = ReplicaLog()
    log.append_produced(batch(4, first_timestamp=100, step=100, compression=LZ4), 0)  # ts 100..400
    log.append_produced(batch(3, first_timestamp=150, step=50, compression=ZSTD), 1)  # ts 150..250
    log.append_produced(batch(2, first_timestamp=400, step=0), 2)  # ts 400, 400: not above the max
    assert log.max_timestamp_offset(9) == (3, 400, 0)
    assert log.max_timestamp_offset(3) is None  # at or above the bound: no answer, not a lower record
    log.high_watermark = 9
    log.increment_log_start_offset(8)  # Kafka's active segment still holds the largest timestamp
    assert log.max_timestamp_offset(9) == (3, 400, 0)
    log.truncate_to(8)
    assert log.max_timestamp_offset(9) == (3, 400, 0)
    log.truncate_fully(20)
    assert log.max_timestamp_offset(30) is None


def test_leader_epoch_cache_follows_appends_leadership_and_the_log_start_offset() -> None:
    log = ReplicaLog()
    assert log.earliest_epoch == -1  # nothing assigned yet
    log.assign_epoch(0, 0)
    log.append_produced(batch(5), 0)
    log.assign_epoch(2, 5)  # became leader again at LEO 5
    log.append_produced(batch(5), 2)
    assert log.epochs == [(0, 0), (2, 5)]
    log.high_watermark = 10
    log.increment_log_start_offset(7)
    assert (log.epochs, log.earliest_epoch) == ([(2, 7)], 2)
    log.truncate_fully(12)
    assert log.earliest_epoch == -1


def test_malformed_payloads_are_refused() -> None:
    log = ReplicaLog()
    good = batch(2)
    with pytest.raises(CorruptBatchError):
        log.append_produced(good[:-3], 0)
    with pytest.raises(CorruptBatchError):
        log.append_produced(b"", 0)
    old_magic = bytearray(good)
    old_magic[16] = 1
    with pytest.raises(UnsupportedMagicError):
        log.append_produced(bytes(old_magic), 0)
    assert log.log_end_offset == 0
