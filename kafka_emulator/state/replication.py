"""The simulated follower fetch loop, driven by events so an idle cluster costs no CPU.

Kafka followers long-poll their leader; here a partition is marked dirty whenever something a
follower must learn changes (append, log start offset, high watermark, leadership, resume, restart).
Every ``interval`` the loop runs one fetch round for each alive, unpaused follower of each dirty
partition: the follower reports its LSO and LEO (as Kafka's Fetch request does) and then applies the
response (copies batches, adopts the leader's HW and LSO). The leader then recomputes its HW and low
watermark and triggers the DeleteRecords purgatory. A partition stays dirty until leader and
followers agree. A follower sends its next fetch as soon as it processed a response (as Kafka's fetcher
does), so a new LSO reaches the leader's low watermark within one round.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from kafka_emulator.state.partition import Partition
from kafka_emulator.state.purgatory import DeletePurgatory

log = logging.getLogger("kafka_emulator.replication")


class Replicator:
    def __init__(self, interval_ms: float, max_lag_ms: float, purgatory: DeletePurgatory) -> None:
        self._interval_s = interval_ms / 1000
        self.max_lag_s = max_lag_ms / 1000
        self._purgatory = purgatory
        self._dirty: dict[Partition, None] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._wake = asyncio.Event()
            if self._dirty:
                self._wake.set()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="replication")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    @property
    def pending(self) -> int:
        """Partitions waiting for a replication round (0 once the cluster is idle)."""
        return len(self._dirty)

    def mark(self, partition: Partition) -> None:
        self._dirty[partition] = None
        self._wake.set()

    def mark_later(self, partition: Partition, delay_s: float) -> None:
        asyncio.get_running_loop().call_later(delay_s, self.mark, partition)

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(self._interval_s)
            self._wake.clear()
            dirty, self._dirty = self._dirty, {}
            now = time.monotonic()
            for partition in dirty:
                try:
                    if self.run_round(partition, now):
                        self._dirty[partition] = None
                except Exception:
                    # A bug in one partition's round must not stop replication for the others.
                    log.exception("replication round failed for %s-%s", partition.topic, partition.index)
            if self._dirty:
                self._wake.set()

    def run_round(self, partition: Partition, now: float) -> bool:
        """One fetch round for every follower that fetches; True while not converged.

        The purgatory is re-checked after every round on a partition it watches; completion depends
        only on the current low watermark, so checking more often than Kafka's triggers changes nothing.
        """
        leader = partition.leader
        alive = partition.alive
        if leader < 0 or leader not in alive:
            return False
        paused = partition.paused
        busy = False
        for broker in partition.replicas:
            if broker != leader and broker in alive and broker not in paused:
                busy = partition.follower_fetch(broker) or busy
        if partition.maybe_raise_high_watermark(now, self.max_lag_s):
            partition.share_high_watermark()
            partition.notify_change()
        self._purgatory.check(partition)
        return busy
