"""The simulated follower fetch loop, with Kafka's fetch purgatory timing, driven by events.

Each follower broker keeps one fetch outstanding to each leader broker it follows partitions of (one
fetcher per source broker in Kafka), covering all those partitions. The leader answers it at once when
it has records the follower lacks (or the follower must truncate); otherwise the fetch waits in the
leader's fetch purgatory until an append wakes it or ``replica.fetch.wait.max.ms`` (``fetch_wait_max_ms``,
default 500) passes (``DelayedFetch``: a log start offset or high watermark change does not wake it).
The follower applies the answer (copies batches, adopts the leader's HW and LSO) and sends its next
fetch at once, reporting its new LSO and LEO; the leader then recomputes its HW and low watermark and
triggers the DeleteRecords purgatory.

So a follower learns a new log start offset (or HW) only when its waiting fetch returns: on the next
append to any partition it fetches from that leader, or at the fetch's expiry. Expiries are computed,
not polled: a fetch sent at ``t`` expires at ``t + k * wait``; a timer is set only while a follower has
something to learn, so an idle cluster costs no CPU. Fetches that have records to carry run in rounds
every ``interval`` (a simulated network round trip).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time

from kafka_emulator.state.partition import Partition
from kafka_emulator.state.purgatory import DeletePurgatory

log = logging.getLogger("kafka_emulator.replication")

Pair = tuple[int, int]  # (follower broker, leader broker): one fetch session


class Replicator:
    def __init__(
        self,
        interval_ms: float,
        max_lag_ms: float,
        purgatory: DeletePurgatory,
        fetch_wait_max_ms: float = 500.0,
    ) -> None:
        self._interval_s = interval_ms / 1000
        self.max_lag_s = max_lag_ms / 1000
        self.fetch_wait_s = fetch_wait_max_ms / 1000
        self._purgatory = purgatory
        self._dirty: dict[Partition, None] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._started_at = time.monotonic()
        # When each follower's fetch to a leader was last answered (its next one was sent then).
        self._sent_at: dict[Pair, float] = {}
        # Partitions whose follower waits for the pair's parked fetch to return, and its expiry timer.
        self._waiting: dict[Pair, dict[Partition, None]] = {}
        self._timers: dict[Pair, asyncio.TimerHandle] = {}
        self.crashed: set[int] = set()

    def start(self) -> None:
        if self._task is None:
            self._wake = asyncio.Event()
            if self._dirty:
                self._wake.set()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="replication")

    async def stop(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    @property
    def pending(self) -> int:
        """Partitions waiting for a replication round or a fetch expiry (0 once the cluster is idle)."""
        return len(self._dirty) + sum(len(waiting) for waiting in self._waiting.values())

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

    def _fetching(self, partition: Partition) -> list[int]:
        """Followers that fetch now: alive, not paused, not crashed, and the leader can answer."""
        leader = partition.leader
        if leader < 0 or leader not in partition.alive or leader in self.crashed:
            return []
        if partition.hold_until and time.monotonic() < partition.hold_until:
            return []
        alive, paused, crashed = partition.alive, partition.paused, self.crashed
        return [
            b
            for b in partition.replicas
            if b != leader and b in alive and b not in paused and b not in crashed
        ]

    def run_round(self, partition: Partition, now: float) -> bool:
        """Answer the fetches that have records to carry; park the others. True while records remain.

        The purgatory is re-checked after every round on a partition it watches; completion depends
        only on the current low watermark, so checking more often than Kafka's triggers changes nothing.
        """
        busy = False
        leader = partition.leader
        for broker in self._fetching(partition):
            if partition.has_records_for(broker):
                busy = partition.follower_fetch(broker) or busy
                self._answered((broker, leader), now)
            elif partition.has_news_for(broker):
                self._park(partition, (broker, leader), now)
        self._settle(partition, now)
        return busy

    def _settle(self, partition: Partition, now: float) -> None:
        if partition.leader in partition.alive and partition.maybe_raise_high_watermark(now, self.max_lag_s):
            partition.notify_change()
            self.mark(partition)  # the other followers have a HW to learn
        self._purgatory.check(partition)

    def _answered(self, pair: Pair, now: float) -> None:
        """The pair's fetch returned with records: every partition it waited on learns its news too."""
        self._sent_at[pair] = now
        waiting = self._waiting.pop(pair, None)
        timer = self._timers.pop(pair, None)
        if timer is not None:
            timer.cancel()
        if waiting:
            for partition in waiting:
                self._dirty[partition] = None
            self._wake.set()

    def _park(self, partition: Partition, pair: Pair, now: float) -> None:
        self._waiting.setdefault(pair, {})[partition] = None
        if pair in self._timers:
            return
        sent = self._sent_at.get(pair, self._started_at)
        periods = max(1, math.ceil((now - sent) / self.fetch_wait_s)) if self.fetch_wait_s > 0 else 0
        expiry = sent + periods * self.fetch_wait_s
        loop = asyncio.get_running_loop()
        self._timers[pair] = loop.call_later(max(0.0, expiry - now), self._expire, pair, expiry)

    def _expire(self, pair: Pair, expiry: float) -> None:
        """The parked fetch's wait ran out: it returns the leader's HW and LSO without records."""
        self._timers.pop(pair, None)
        self._sent_at[pair] = expiry
        follower, leader = pair
        now = time.monotonic()
        for partition in self._waiting.pop(pair, {}):
            if partition.leader != leader or follower not in self._fetching(partition):
                self.mark(partition)
                continue
            try:
                if partition.follower_fetch(follower):
                    self.mark(partition)
                self._settle(partition, now)
            except Exception:
                log.exception("fetch expiry failed for %s-%s", partition.topic, partition.index)
