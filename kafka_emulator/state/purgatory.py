"""DeleteRecords purgatory: requests waiting for the low watermark to reach the requested offsets.

Mirrors Kafka's DelayedDeleteRecords as DelayedOperationPurgatory.tryCompleteElseWatch and
checkAndComplete run it: pending partitions start as REQUEST_TIMED_OUT with the low watermark computed at
local-delete time; every one is checked when the request is parked (a partition already at or past its
offset answers NONE at once), and the request as a whole on every trigger of one of its partitions (a
follower report raising the low watermark or the high watermark); on expiry the current statuses are the
answer. A broker that lost leadership of a partition gets no more triggers for it; a check that runs for
another partition of the request answers it NOT_LEADER_OR_FOLLOWER, as Kafka's tryComplete does.
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
    # Pending partitions whose leader moved since the last check: the next check settles them.
    moved: set[Partition] = field(default_factory=set)
    future: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    timer: asyncio.TimerHandle | None = None


class DeletePurgatory:
    def __init__(self) -> None:
        self._watchers: dict[Partition, list[DeleteWaiter]] = {}

    async def wait(self, waiter: DeleteWaiter, timeout_ms: int) -> None:
        """Park ``waiter`` until every pending partition completes or ``timeout_ms`` passes.

        Every partition is checked before parking, as tryCompleteElseWatch's first tryComplete does: a
        request whose partitions all reached their offsets answers at once, whatever ``timeout_ms``.
        """
        for partition in list(waiter.pending):
            self._settle(waiter, partition)
        if not waiter.pending or timeout_ms <= 0:
            self._finish(waiter)
            return
        for partition in waiter.pending:
            self._watchers.setdefault(partition, []).append(waiter)
        waiter.timer = asyncio.get_running_loop().call_later(timeout_ms / 1000, self._finish, waiter)
        await waiter.future

    def check(self, partition: Partition) -> None:
        """A trigger on ``partition``: check every request watching it at its leader, whole.

        A pending partition's answer changes only with its low watermark, which calls ``check`` for that
        partition, or with its leader, which ``leader_moved`` records. So settling ``partition`` plus the
        partitions whose leader moved gives what Kafka's whole-request tryComplete gives, at a cost that
        does not grow with the request.
        """
        for waiter in list(self._watchers.get(partition, ())):
            if waiter.broker != partition.leader:
                continue
            self._settle(waiter, partition)
            for moved in waiter.moved:
                self._settle(waiter, moved)
            waiter.moved.clear()
            if not waiter.pending:
                self._finish(waiter)

    def leader_moved(self, partition: Partition) -> None:
        """``partition`` has a new leader (or none): no trigger reaches its old leader's waiters any more,
        but their next check answers it NOT_LEADER_OR_FOLLOWER."""
        for waiter in self._watchers.get(partition, ()):
            if waiter.broker != partition.leader:
                waiter.moved.add(partition)

    def _settle(self, waiter: DeleteWaiter, partition: Partition) -> None:
        """DelayedDeleteRecords.tryComplete for one partition: NONE once the low watermark covers the
        offset, NOT_LEADER_OR_FOLLOWER once ``waiter``'s broker no longer leads it, else still pending."""
        outcome = waiter.pending.get(partition)
        if outcome is None:
            return
        if partition.leader != waiter.broker:
            outcome.error, outcome.low_watermark = ErrorCode.NOT_LEADER_OR_FOLLOWER, -1
        else:
            low_watermark = partition.low_watermark()
            if low_watermark < outcome.requested_offset:
                return
            outcome.error, outcome.low_watermark = ErrorCode.NONE, low_watermark
        del waiter.pending[partition]
        self._unwatch(waiter, partition)

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
