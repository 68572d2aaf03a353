"""A partition: replica assignment, leadership, and the leader's view of its followers."""

from __future__ import annotations

import asyncio

from kafka_emulator.state.log import ReplicaLog

UNKNOWN_OFFSET = -1


class Partition:
    """Replica logs plus what the leader learned from follower fetches (reported LSO and LEO).

    ``alive`` is the cluster's shared set of alive broker ids. ``paused`` maps a paused follower to the
    monotonic time it was paused; a paused follower neither fetches nor reports.
    """

    def __init__(self, topic: str, index: int, replicas: list[int], alive: set[int]) -> None:
        self.topic = topic
        self.index = index
        self.replicas = replicas
        self.alive = alive
        self.logs = {broker: ReplicaLog() for broker in replicas}
        self.leader = UNKNOWN_OFFSET
        self.leader_epoch = -1
        self.paused: dict[int, float] = {}
        self.follower_lso: dict[int, int] = {}
        self.follower_leo: dict[int, int] = {}
        self.change_waiters: set[asyncio.Future[None]] = set()

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.index

    def leader_log(self) -> ReplicaLog | None:
        return self.logs[self.leader] if self.leader >= 0 else None

    def become_leader(self, broker: int) -> None:
        """New leader epoch; the new leader knows nothing of its followers until they fetch."""
        self.leader = broker
        self.leader_epoch += 1
        self.follower_lso = {b: UNKNOWN_OFFSET for b in self.replicas if b != broker}
        self.follower_leo = dict(self.follower_lso)

    def followers(self) -> list[int]:
        return [b for b in self.replicas if b != self.leader]

    def in_sync(self, broker: int, now: float, max_lag_s: float) -> bool:
        """ISR membership, simplified: alive and not paused for longer than ``max_lag_s``."""
        if broker == self.leader:
            return True
        if broker not in self.alive:
            return False
        paused_at = self.paused.get(broker)
        return paused_at is None or now - paused_at <= max_lag_s

    def isr(self, now: float, max_lag_s: float) -> list[int]:
        return [b for b in self.replicas if self.in_sync(b, now, max_lag_s)]

    def low_watermark(self) -> int:
        """min(leader LSO, LSO last reported by every alive follower); -1 before a first fetch."""
        log = self.logs[self.leader]
        lw = log.log_start_offset
        for broker, reported in self.follower_lso.items():
            if broker in self.alive and reported < lw:
                lw = reported
        return lw

    def maybe_raise_high_watermark(self, now: float, max_lag_s: float) -> bool:
        """Leader HW = min LEO over the ISR; it never goes down. True if it rose."""
        log = self.logs[self.leader]
        candidate = log.log_end_offset
        for broker, leo in self.follower_leo.items():
            if leo < candidate and self.in_sync(broker, now, max_lag_s):
                candidate = leo
        if candidate > log.high_watermark:
            log.high_watermark = candidate
            return True
        return False

    def share_high_watermark(self) -> None:
        """Followers waiting in a fetch learn a raised HW at once (Kafka completes their delayed fetch)."""
        high_watermark = self.logs[self.leader].high_watermark
        for broker in self.replicas:
            if broker != self.leader and broker in self.alive and broker not in self.paused:
                log = self.logs[broker]
                log.high_watermark = max(log.high_watermark, min(high_watermark, log.log_end_offset))

    def follower_fetch(self, broker: int) -> bool:
        """The leader answers ``broker``'s fetch, which then at once sends its next fetch.

        That next fetch reports the follower's new LSO and LEO to the leader, so one round is one
        follower round trip. Returns True while the follower has not caught up with the leader.
        """
        leader = self.logs[self.leader]
        log = self.logs[broker]
        leader_end = leader.log_end_offset
        if log.log_end_offset > leader_end:
            log.truncate_to(leader_end)
            return True
        if log.log_end_offset < leader.log_start_offset:
            # The leader answers OFFSET_OUT_OF_RANGE without recording the fetch; the follower
            # truncates fully and starts at the leader's log start offset.
            log.truncate_fully(leader.log_start_offset)
            return True
        if log.log_end_offset < leader_end:
            log.copy_from(leader)
        end = log.log_end_offset
        high_watermark = leader.high_watermark
        log.high_watermark = high_watermark if high_watermark < end else end
        leader_start = leader.log_start_offset
        if leader_start > log.log_start_offset:
            log.increment_log_start_offset(min(leader_start, log.high_watermark))
        self.follower_lso[broker] = log.log_start_offset
        self.follower_leo[broker] = end
        return end != leader_end or log.log_start_offset != leader_start

    def notify_change(self) -> None:
        """Wake long-polling fetches and acks=all produces waiting on this partition."""
        if self.change_waiters:
            for waiter in self.change_waiters:
                if not waiter.done():
                    waiter.set_result(None)
            self.change_waiters.clear()
