"""Idempotent producers' state on one replica, as Kafka's ``ProducerStateManager`` keeps it: per producer
id, the epoch and the sequence ranges of its last 5 batches (``ProducerStateEntry``), built from the
batches the replica appends, so a follower that becomes leader knows it too.

``check`` is ``ProducerAppendInfo``'s validation of a produce payload: a batch already written (same
epoch and sequence range) is a duplicate, answered with its original offset and not appended again; an
older epoch is ``INVALID_PRODUCER_EPOCH``; a new epoch must start at sequence 0 and the same epoch must
continue at last sequence + 1, else ``OUT_OF_ORDER_SEQUENCE_NUMBER``. A producer the replica has no entry
for may write any sequence (Kafka accepts it: its records may have been deleted by retention or
DeleteRecords).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from kafka_emulator.protocol.errors import ErrorCode

NO_PRODUCER_ID = -1
KEPT_BATCHES = 5  # ProducerStateEntry.NUM_BATCHES_TO_RETAIN
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class ProducerBatch:
    """What the producer state needs of one appended batch."""

    producer_id: int
    epoch: int
    first_seq: int
    last_seq: int
    base_offset: int = -1


@dataclass(slots=True)
class _Entry:
    epoch: int
    batches: deque[ProducerBatch] = field(default_factory=lambda: deque(maxlen=KEPT_BATCHES))


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


def _sequence_error(known: tuple[int, int], batch: ProducerBatch) -> ErrorCode | None:
    epoch, last_seq = known
    if batch.epoch < epoch:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if batch.epoch > epoch and batch.first_seq != 0:
        return ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    if batch.epoch == epoch and not _in_sequence(last_seq, batch.first_seq):
        return ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    return None


class Producers:
    def __init__(self) -> None:
        self._entries: dict[int, _Entry] = {}

    def check(self, batches: list[ProducerBatch]) -> ErrorCode | int | None:
        """None: append them all; an offset: the first batch already written (append nothing); an error:
        refuse the payload. Batches are checked in order, each against the state the earlier ones left."""
        pending: dict[int, tuple[int, int]] = {}  # producer id -> (epoch, last sequence) after earlier
        for batch in batches:
            if batch.producer_id == NO_PRODUCER_ID:
                continue
            known = pending.get(batch.producer_id)
            entry = self._entries.get(batch.producer_id)
            if known is None and entry is not None:
                duplicate = self._duplicate(entry, batch)
                if duplicate is not None:
                    return duplicate
                known = (entry.epoch, entry.batches[-1].last_seq)
            if known is not None and (error := _sequence_error(known, batch)) is not None:
                return error
            pending[batch.producer_id] = (batch.epoch, batch.last_seq)
        return None

    @staticmethod
    def _duplicate(entry: _Entry, batch: ProducerBatch) -> int | None:
        if batch.epoch != entry.epoch:
            return None
        for kept in entry.batches:
            if (kept.first_seq, kept.last_seq) == (batch.first_seq, batch.last_seq):
                return kept.base_offset
        return None

    def record(self, batch: ProducerBatch) -> None:
        """An appended batch (leader or follower) becomes the producer's latest."""
        if batch.producer_id == NO_PRODUCER_ID:
            return
        entry = self._entries.get(batch.producer_id)
        if entry is None or entry.epoch != batch.epoch:
            entry = self._entries[batch.producer_id] = _Entry(batch.epoch)
        entry.batches.append(batch)

    def clear(self) -> None:
        self._entries.clear()
