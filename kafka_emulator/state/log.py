"""One replica's log: stored batches, log start offset, log end offset and high watermark."""

from __future__ import annotations

from bisect import bisect_right

from kafka_emulator.state.records import StoredBatch, rebase, record_timestamps, split_batches


class ReplicaLog:
    """Batches in offset order. Offsets below the log start offset are gone for readers.

    Batches entirely below the log start offset are dropped at once (Kafka keeps segment files until
    the retention task runs, but nothing can read them, so the difference is invisible to clients).
    """

    __slots__ = ("_bases", "_batches", "high_watermark", "log_end_offset", "log_start_offset")

    def __init__(self) -> None:
        self._batches: list[StoredBatch] = []
        self._bases: list[int] = []
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.high_watermark = 0

    @property
    def batch_count(self) -> int:
        return len(self._batches)

    def append_produced(self, blob: bytes, leader_epoch: int) -> int:
        """Append a produce payload (one or more batches), assigning offsets; returns the first offset."""
        first = self.log_end_offset
        next_offset = first
        for start, end, last_delta, base_ts, max_ts in split_batches(blob):
            data = rebase(blob, start, end, next_offset, leader_epoch)
            self._push(StoredBatch(next_offset, next_offset + last_delta, base_ts, max_ts, data))
            next_offset += last_delta + 1
        return first

    def _push(self, batch: StoredBatch) -> None:
        self._batches.append(batch)
        self._bases.append(batch.base_offset)
        self.log_end_offset = batch.next_offset

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

    def offset_for_timestamp(self, timestamp: int, upper_bound: int) -> tuple[int, int] | None:
        """First (offset, timestamp) with offset >= log start, ts >= ``timestamp`` and offset < bound."""
        for batch in self._batches:
            if batch.base_offset >= upper_bound:
                return None
            if batch.max_timestamp < timestamp:
                continue
            found = self._search_batch(batch, timestamp, upper_bound)
            if found is not None:
                return found
        return None

    def _search_batch(self, batch: StoredBatch, timestamp: int, upper_bound: int) -> tuple[int, int] | None:
        records = record_timestamps(batch)
        if records is None:  # codec not decodable here: batch-level answer
            return max(batch.base_offset, self.log_start_offset), batch.max_timestamp
        for offset, ts in records:
            if offset >= self.log_start_offset and ts >= timestamp and offset < upper_bound:
                return offset, ts
        return None

    def max_timestamp_offset(self, upper_bound: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the record with the largest timestamp below ``upper_bound``."""
        best: tuple[int, int] | None = None
        for batch in self._batches:
            if batch.base_offset >= upper_bound:
                break
            if best is None or batch.max_timestamp > best[1]:
                best = (batch.base_offset, batch.max_timestamp)
        if best is None:
            return None
        batch = self._batches[self._index_of(best[0])]
        records = record_timestamps(batch) or []
        for offset, ts in records:
            if ts == batch.max_timestamp and offset >= self.log_start_offset:
                return offset, ts
        return best
