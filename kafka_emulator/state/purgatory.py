"""DeleteRecords purgatory: requests waiting for the low watermark to reach the requested offsets.

Mirrors Kafka's DelayedDeleteRecords: pending partitions start as REQUEST_TIMED_OUT with the low
watermark computed at local-delete time; a trigger (follower report raising the low watermark or the
high watermark) re-checks them; on expiry the current statuses are the answer. Triggers are evaluated
only for waiters that were accepted by the partition's current leader: a broker that lost leadership
no longer gets triggers for that partition, so its waiters expire, as in Kafka.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state.partition import Partition


@dataclass(slots=True)
class PartitionOutcome:
    """One partition's DeleteRecords outcome: error, low watermark, the offset after the -1 replacement,
    and the partition when the local delete succeeded (to wait on it and read the leader's LSO)."""

    error: ErrorCode
    low_watermark: int = -1
    requested_offset: int = -1
    partition: Partition | None = None


@dataclass(eq=False)
class DeleteWaiter:
    broker: int
    pending: dict[Partition, PartitionOutcome]
    future: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    timer: asyncio.TimerHandle | None = None


class DeletePurgatory:
    def __init__(self) -> None:
        self._watchers: dict[Partition, list[DeleteWaiter]] = {}

    async def wait(self, waiter: DeleteWaiter, timeout_ms: int) -> None:
        """Park ``waiter`` until every pending partition completes or ``timeout_ms`` passes.

        Callers enter right after the local delete without yielding to the loop, so nothing changed
        since the low watermarks were computed: Kafka's first tryComplete would find the same values.
        """
        if not waiter.pending or timeout_ms <= 0:
            self._finish(waiter)
            return
        for partition in waiter.pending:
            self._watchers.setdefault(partition, []).append(waiter)
        waiter.timer = asyncio.get_running_loop().call_later(timeout_ms / 1000, self._finish, waiter)
        await waiter.future

    def check(self, partition: Partition) -> None:
        """A trigger on ``partition`` at its leader: complete what can be completed."""
        waiters = self._watchers.get(partition)
        if not waiters:
            return
        low_watermark = partition.low_watermark()
        for waiter in list(waiters):
            if waiter.broker != partition.leader:
                continue
            outcome = waiter.pending.get(partition)
            if outcome is not None and low_watermark >= outcome.requested_offset:
                outcome.error = ErrorCode.NONE
                outcome.low_watermark = low_watermark
                del waiter.pending[partition]
                self._unwatch(waiter, partition)
                if not waiter.pending:
                    self._finish(waiter)

    def fail_partition(self, partition: Partition, error: ErrorCode) -> None:
        """The partition vanished (topic deleted): pending waiters learn it at once."""
        for waiter in list(self._watchers.get(partition, [])):
            outcome = waiter.pending.pop(partition, None)
            if outcome is not None:
                outcome.error = error
                outcome.low_watermark = -1
                outcome.partition = None
                self._unwatch(waiter, partition)
                if not waiter.pending:
                    self._finish(waiter)

    def expire_broker(self, broker: int) -> None:
        """A stopped broker answers nothing more; release its waiters with their current statuses."""
        for waiters in list(self._watchers.values()):
            for waiter in list(waiters):
                if waiter.broker == broker:
                    self._finish(waiter)

    def _finish(self, waiter: DeleteWaiter) -> None:
        if waiter.timer is not None:
            waiter.timer.cancel()
        for partition in waiter.pending:
            self._unwatch(waiter, partition)
        if not waiter.future.done():
            waiter.future.set_result(None)

    def _unwatch(self, waiter: DeleteWaiter, partition: Partition) -> None:
        waiters = self._watchers.get(partition)
        if waiters and waiter in waiters:
            waiters.remove(waiter)
            if not waiters:
                del self._watchers[partition]
