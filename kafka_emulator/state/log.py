"""One replica's log: stored batches, log start offset, log end offset and high watermark."""

from __future__ import annotations

from bisect import bisect_right

from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state.producers import Producers
from kafka_emulator.state.records import (
    StoredBatch,
    batch_leader_epoch,
    batch_producer,
    rebase,
    record_timestamps,
    split_batches,
)


class ProducerRefused(ValueError):
    """An idempotent producer's batch is out of sequence or from a fenced epoch (the error to answer)."""

    def __init__(self, error: ErrorCode) -> None:
        super().__init__(error.name)
        self.error = error


# (offset, timestamp, leader epoch of the batch holding the record)
Found = tuple[int, int, int]


class ReplicaLog:
    """Batches in offset order. Offsets below the log start offset are gone for readers.

    Batches entirely below the log start offset are dropped at once (Kafka keeps segment files until
    the retention task runs, but nothing can read them, so the difference is invisible to clients).
    The log is one active segment, as a Kafka log below ``segment.bytes`` is: its largest timestamp so
    far (``_max_batch``, what MAX_TIMESTAMP answers) outlives a deletion past that record.
    ``epochs`` is Kafka's leader epoch cache: (epoch, start offset) per epoch, from appended batches and
    from ``assign_epoch`` when the replica becomes leader.
    """

    __slots__ = (
        "_bases",
        "_batches",
        "_epochs",
        "_max_batch",
        "high_watermark",
        "log_end_offset",
        "log_start_offset",
        "producers",
    )

    def __init__(self) -> None:
        self._batches: list[StoredBatch] = []
        self._bases: list[int] = []
        self._max_batch: StoredBatch | None = None
        self._epochs: list[tuple[int, int]] = []
        self.producers = Producers()
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.high_watermark = 0

    @property
    def batch_count(self) -> int:
        return len(self._batches)

    def append_produced(self, blob: bytes, leader_epoch: int, log_append_time: int | None = None) -> int:
        """Append a produce payload (one or more batches), assigning offsets; returns the first offset.
        ``log_append_time`` (ms) stamps every batch with it, for a LogAppendTime topic. Idempotent
        producers' batches are checked first (``Producers.check``): a duplicate returns its original
        offset and appends nothing; a sequence or epoch error raises ``ProducerRefused``."""
        found = split_batches(blob)
        verdict = self.producers.check([batch_producer(blob, start) for start, *_ in found])
        if isinstance(verdict, ErrorCode):
            raise ProducerRefused(verdict)
        if verdict is not None:
            return verdict
        first = self.log_end_offset
        next_offset = first
        for start, end, last_delta, base_ts, produced_max_ts in found:
            data = rebase(blob, start, end, next_offset, leader_epoch, log_append_time)
            max_ts = produced_max_ts if log_append_time is None else log_append_time
            self._push(StoredBatch(next_offset, next_offset + last_delta, base_ts, max_ts, data))
            next_offset += last_delta + 1
        return first

    def _push(self, batch: StoredBatch) -> None:
        self._batches.append(batch)
        self._bases.append(batch.base_offset)
        self.log_end_offset = batch.next_offset
        if self._max_batch is None or batch.max_timestamp > self._max_batch.max_timestamp:
            self._max_batch = batch
        self.assign_epoch(batch_leader_epoch(batch), batch.base_offset)
        self.producers.record(batch_producer(batch.data))

    def assign_epoch(self, epoch: int, start_offset: int) -> None:
        """A new leader epoch starts at ``start_offset`` (``LeaderEpochFileCache.assign``)."""
        epochs = self._epochs
        if epoch >= 0 and (not epochs or epoch > epochs[-1][0]):
            epochs.append((epoch, start_offset))

    @property
    def epochs(self) -> list[tuple[int, int]]:
        """The epoch cache as Kafka keeps it after ``truncateFromStart(log start offset)``: the last entry
        at or below the log start offset starts there, the ones before it are gone. Computed when read
        (ListOffsets EARLIEST, OffsetForLeaderEpoch), so a DeleteRecords on 10,000 partitions does not pay
        for it."""
        start = self.log_start_offset
        epochs = self._epochs
        below = 0
        while below < len(epochs) and epochs[below][1] <= start:
            below += 1
        if below == 0:
            return list(epochs)
        return [(epochs[below - 1][0], start), *epochs[below:]]

    @property
    def earliest_epoch(self) -> int:
        """The epoch EARLIEST answers: the cache's first entry if it starts at or below the log start
        offset, else -1 (``UnifiedLog.fetchOffsetByTimestamp``)."""
        if self.epochs and self.epochs[0][1] <= self.log_start_offset:
            return self.epochs[0][0]
        return -1

    def copy_from(self, leader: ReplicaLog) -> None:
        """What a follower fetch brings over: every leader batch from this log's end offset."""
        index = leader._index_of(self.log_end_offset)
        for batch in leader._batches[index:]:
            # After a full truncation the end offset may sit inside the leader's first batch; Kafka's
            # follower then takes that whole batch too (UnexpectedAppendOffsetException handling).
            if batch.base_offset >= self.log_end_offset or not self._batches:
                self._push(batch)

    def _index_of(self, offset: int) -> int:
        """Index of the batch holding ``offset`` (or the first batch after it)."""
        index = bisect_right(self._bases, offset) - 1
        if index < 0:
            return 0
        if self._batches[index].last_offset < offset:
            return index + 1
        return index

    def read(self, offset: int, max_bytes: int, upper_bound: int) -> bytes:
        """Whole batches from the one containing ``offset``, below ``upper_bound``, about ``max_bytes``.

        The first batch is returned even if it is larger than ``max_bytes`` (KIP-74), so a consumer
        always makes progress.
        """
        chunks: list[bytes] = []
        size = 0
        for batch in self._batches[self._index_of(offset) :]:
            if batch.base_offset >= upper_bound:
                break
            if chunks and size + len(batch.data) > max_bytes:
                break
            chunks.append(batch.data)
            size += len(batch.data)
        return b"".join(chunks)

    def increment_log_start_offset(self, offset: int) -> None:
        """Raise the log start offset (never lowers it) and drop batches that end below it."""
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = offset
        if self.high_watermark < offset:
            self.high_watermark = offset
        batches = self._batches
        if batches and batches[0].last_offset < offset:
            drop = 1
            while drop < len(batches) and batches[drop].last_offset < offset:
                drop += 1
            del batches[:drop]
            del self._bases[:drop]

    def truncate_fully(self, offset: int) -> None:
        """A follower that fell below the leader's log start offset restarts its log there."""
        self._batches.clear()
        self._bases.clear()
        self._max_batch = None
        self._epochs = []
        self.producers.clear()
        self.log_start_offset = self.log_end_offset = self.high_watermark = offset

    def common_end(self, leader: ReplicaLog) -> int:
        """End of the longest prefix this log shares with ``leader`` (the offset Kafka's leader-epoch
        validation truncates a follower to). Followers hold the leader's batch objects, so sharing is
        identity; logs only diverge at their tails, after a leader change."""
        for batch in reversed(self._batches):
            index = leader._index_of(batch.base_offset)
            if index < len(leader._batches) and leader._batches[index] is batch:
                return batch.next_offset
        return self.log_start_offset

    def truncate_to(self, offset: int) -> None:
        """Drop batches at or above ``offset`` (a former leader holding records the new leader lacks)."""
        if offset < self.log_start_offset:
            self.truncate_fully(offset)
            return
        index = bisect_right(self._bases, offset - 1)
        while index > 0 and self._batches[index - 1].last_offset >= offset:
            index -= 1
        del self._batches[index:]
        del self._bases[index:]
        self.log_end_offset = self._batches[-1].next_offset if self._batches else self.log_start_offset
        self.high_watermark = min(self.high_watermark, self.log_end_offset)
        self._epochs = [entry for entry in self._epochs if entry[1] < offset]
        self.producers.clear()
        for kept in self._batches:
            self.producers.record(batch_producer(kept.data))
        if self._max_batch is not None and self._max_batch.base_offset >= offset:
            self._max_batch = max(self._batches, key=lambda b: b.max_timestamp, default=None)

    def offset_for_timestamp(self, timestamp: int, upper_bound: int) -> Found | None:
        """The first record with offset >= log start, ts >= ``timestamp`` and offset < bound, searched
        record by record inside each batch whose max timestamp reaches ``timestamp`` (compressed batches
        are decompressed), as ``FileRecords.searchForTimestamp`` does."""
        start = self.log_start_offset
        for batch in self._batches:
            if batch.base_offset >= upper_bound:
                return None
            if batch.max_timestamp < timestamp:
                continue
            for offset, ts in record_timestamps(batch):
                if ts >= timestamp and offset >= start:
                    return (offset, ts, batch_leader_epoch(batch)) if offset < upper_bound else None
        return None

    def max_timestamp_offset(self, upper_bound: int) -> Found | None:
        """The first record carrying the largest timestamp the log has held (``offsetOfMaxTimestamp``
        of its batch), or None when it is at or above ``upper_bound`` (the HW, for consumers)."""
        batch = self._max_batch
        if batch is None:
            return None
        for offset, ts in record_timestamps(batch):
            if ts == batch.max_timestamp:
                return (offset, ts, batch_leader_epoch(batch)) if offset < upper_bound else None
        return None
