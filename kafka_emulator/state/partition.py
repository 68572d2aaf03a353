"""A partition: replica assignment, leadership, and the leader's view of its followers."""

from __future__ import annotations

import asyncio

from kafka_emulator.state.log import ReplicaLog

UNKNOWN_OFFSET = -1


class Partition:
    """Replica logs plus what the leader learned from follower fetches (reported LSO and LEO).

    ``alive`` is the cluster's shared set of alive broker ids. ``paused`` maps a paused follower to the
    monotonic time it was paused; a paused follower neither fetches nor reports. ``in_sync`` is the ISR
    as Kafka keeps it: a follower leaves when its broker stops or it has not fetched for longer than the
    lag limit (it was paused), and rejoins once a fetch brings it up to the leader's high watermark. The
    last member is never removed, so an offline partition remembers who may lead it.
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
        self.in_sync: set[int] = {b for b in replicas if b in alive} or set(replicas)
        self.unvalidated: set[int] = set()
        self.change_waiters: set[asyncio.Future[None]] = set()
        # The leader's LEO when it became leader: ListOffsets answers OFFSET_NOT_AVAILABLE while the HW
        # is below it (Partition.fetchOffsetForTimestamp).
        self.epoch_start_offset = 0
        # Until this monotonic time no follower fetches from the leader (a lagging new leader).
        self.hold_until = 0.0

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.index

    def leader_log(self) -> ReplicaLog | None:
        return self.logs[self.leader] if self.leader >= 0 else None

    def become_leader(self, broker: int) -> None:
        """New leader epoch; the new leader knows nothing of its followers until they fetch."""
        self.leader = broker
        self.leader_epoch += 1
        log = self.logs[broker]
        self.epoch_start_offset = log.log_end_offset
        log.assign_epoch(self.leader_epoch, log.log_end_offset)  # Partition.makeLeader
        self.follower_lso = {b: UNKNOWN_OFFSET for b in self.replicas if b != broker}
        self.follower_leo = dict(self.follower_lso)
        self.unvalidated = set(self.follower_lso)

    def followers(self) -> list[int]:
        return [b for b in self.replicas if b != self.leader]

    def isr(self) -> list[int]:
        """The in-sync replicas in assignment order."""
        return [b for b in self.replicas if b in self.in_sync]

    def leave_isr(self, broker: int) -> None:
        if broker in self.in_sync and len(self.in_sync) > 1:
            self.in_sync.discard(broker)

    def shrink_isr(self, now: float, max_lag_s: float) -> None:
        """Followers that stopped fetching (paused) longer than the lag limit leave the ISR."""
        for broker, paused_at in self.paused.items():
            if broker != self.leader and now - paused_at > max_lag_s:
                self.leave_isr(broker)

    def low_watermark(self) -> int:
        """min(leader LSO, LSO last reported by every alive follower); -1 before a first fetch."""
        lw = self.logs[self.leader].log_start_offset
        alive = self.alive
        for broker, reported in self.follower_lso.items():
            if reported < lw and broker in alive:
                lw = reported
        return lw

    def maybe_raise_high_watermark(self, now: float, max_lag_s: float) -> bool:
        """Leader HW = min LEO over the ISR; it never goes down. True if it rose."""
        if self.paused:
            self.shrink_isr(now, max_lag_s)
        log = self.logs[self.leader]
        candidate = log.log_end_offset
        for broker, leo in self.follower_leo.items():
            if leo < candidate and broker in self.in_sync:
                candidate = leo
        if candidate > log.high_watermark:
            log.high_watermark = candidate
            return True
        return False

    def go_offline(self) -> None:
        """No replica can lead: leader -1, and the leader epoch moves on (KRaft's partition change)."""
        if self.leader >= 0:
            self.leader_epoch += 1
        self.leader = UNKNOWN_OFFSET

    def high_watermark_lags(self) -> bool:
        """The leader's HW is still below the offset its epoch began at (OFFSET_NOT_AVAILABLE)."""
        return self.leader >= 0 and self.epoch_start_offset > self.logs[self.leader].high_watermark

    def has_records_for(self, broker: int) -> bool:
        """The leader answers ``broker``'s fetch at once: records to copy, or a truncation to make."""
        leader = self.logs[self.leader]
        log = self.logs[broker]
        return (
            broker in self.unvalidated
            or log.log_end_offset != leader.log_end_offset
            or log.log_end_offset < leader.log_start_offset
        )

    def has_news_for(self, broker: int) -> bool:
        """``broker`` has records but not yet the leader's LSO or HW (or the leader not its report)."""
        leader = self.logs[self.leader]
        log = self.logs[broker]
        return (
            log.log_start_offset < leader.log_start_offset
            or log.high_watermark < min(leader.high_watermark, log.log_end_offset)
            or self.follower_lso.get(broker) != log.log_start_offset
            or self.follower_leo.get(broker) != log.log_end_offset
        )

    def follower_fetch(self, broker: int) -> bool:
        """The leader answers ``broker``'s fetch, which then at once sends its next fetch.

        That next fetch reports the follower's new LSO and LEO to the leader, so one round is one
        follower round trip. Returns True while the follower has not caught up with the leader.
        Runs for every follower of every changed partition, hence the plain, lookup-saving style.
        """
        leader = self.logs[self.leader]
        log = self.logs[broker]
        if (
            broker in self.unvalidated
            or not leader.log_start_offset <= log.log_end_offset <= leader.log_end_offset
        ) and self._realign(broker, leader, log):
            return True
        if log.log_end_offset < leader.log_end_offset:
            log.copy_from(leader)
        end = log.log_end_offset
        start = log.log_start_offset
        high_watermark = leader.high_watermark
        # Kafka bounds a follower's HW to [its LSO, its LEO] (UnifiedLog.maybeUpdateHighWatermark).
        log.high_watermark = (
            start if high_watermark < start else (end if end < high_watermark else high_watermark)
        )
        leader_start = leader.log_start_offset
        if leader_start > start:
            log.increment_log_start_offset(min(leader_start, log.high_watermark))
            start = log.log_start_offset
        self.follower_lso[broker] = start
        self.follower_leo[broker] = end
        if end >= high_watermark and broker not in self.in_sync:
            self.in_sync.add(broker)
        # A follower may keep a higher LSO than a new leader that had not caught up: LSOs never go back.
        return end != leader.log_end_offset or start < leader_start

    def _realign(self, broker: int, leader: ReplicaLog, log: ReplicaLog) -> bool:
        """Truncations before a fetch can be served; True if the follower must fetch again."""
        if broker in self.unvalidated:
            # First fetch under a new leader epoch: drop any tail the new leader does not have.
            self.unvalidated.discard(broker)
            common = log.common_end(leader)
            if common < log.log_end_offset:
                log.truncate_to(common)
                return True
        if log.log_end_offset > leader.log_end_offset:
            log.truncate_to(leader.log_end_offset)
            return True
        if log.log_end_offset < leader.log_start_offset:
            # The leader answers OFFSET_OUT_OF_RANGE without recording the fetch; the follower
            # truncates fully and starts at the leader's log start offset.
            log.truncate_fully(leader.log_start_offset)
            return True
        return False

    def notify_change(self) -> None:
        """Wake long-polling fetches and acks=all produces waiting on this partition."""
        if self.change_waiters:
            for waiter in self.change_waiters:
                if not waiter.done():
                    waiter.set_result(None)
            self.change_waiters.clear()
