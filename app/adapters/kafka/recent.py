"""Sharing reads of a cluster: identical requests in flight share one answer (``SingleFlight``), and
accepting a deletion may use topic metadata and configs answered a moment ago (``RecentTopics``).

What accepting reads from a recent answer, and why that is safe: that each named partition exists, and
each topic's ``cleanup.policy``. Both are looked up fresh whenever the recent answer would refuse the
request (a topic or partition index not known, a compact-only topic), so a topic created or a partition
added is accepted at once. A recent answer can only let through a request that a fresh one would refuse,
and then the broker refuses it at send time and the executor records that outcome for the partition:
a topic deleted meanwhile fails with ``UNKNOWN_TOPIC_OR_PARTITION``, a policy changed to compact-only
with ``POLICY_VIOLATION``. The offsets themselves (high watermarks, log start offsets, committed
offsets) and the consumer groups are never taken from here; ListOffsets and DeleteRecords are only
*routed* with the remembered leaders, as Kafka's clients do, and a partition whose leader refuses is
asked again with fresh metadata (a broker that is not the leader deletes nothing, and resending a
concrete offset is harmless). What each named partition and policy is, is taken from answers up to
``ClusterSettings.metadata_max_age_ms`` old (``metadata``); where to send is taken from answers up to
``ROUTING_MAX_AGE_S`` old (``routes``), Kafka's own clients' ``metadata.max.age.ms``: a request then
asks its leaders while the fresh metadata it reads for its checks is still on its way, instead of after.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable, Sequence
from functools import partial
from typing import Generic, TypeVar

from app.adapters.kafka.metadata import Metadata, TopicMetadata

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# Forget entries older than both ages once the memory holds this many topics.
PRUNE_ABOVE = 10_000
# Leaders are remembered for routing this long: Kafka's clients' metadata.max.age.ms default.
ROUTING_MAX_AGE_S = 300.0


class SingleFlight(Generic[K, V]):
    """Callers asking for ``key`` while a call for it is in flight share that call's answer (or error).
    A cancelled caller does not cancel the call; once the answer is in, the next caller calls again."""

    def __init__(self) -> None:
        self.pending: dict[K, asyncio.Future[V]] = {}

    async def run(self, key: K, call: Callable[[], Awaitable[V]]) -> V:
        pending = self.pending.get(key)
        if pending is None:
            pending = asyncio.ensure_future(call())
            self.pending[key] = pending
            pending.add_done_callback(partial(self._settled, key))
        return await asyncio.shield(pending)

    def _settled(self, key: K, done: asyncio.Future[V]) -> None:
        if self.pending.get(key) is done:
            del self.pending[key]
        if not done.cancelled():
            done.exception()  # retrieved here too: every waiter may have been cancelled meanwhile


class RecentTopics:
    """Per topic of one cluster: its metadata and configs as last answered, with the time they were asked
    (the time the request was sent, so the age is never understated)."""

    def __init__(self, max_age_s: float) -> None:
        self.max_age_s = max_age_s
        self._topics: dict[str, tuple[float, TopicMetadata]] = {}
        self._configs: dict[tuple[str, tuple[str, ...]], tuple[float, dict[str, str]]] = {}

    def learn_metadata(self, asked_at: float, topics: Iterable[str], metadata: Metadata) -> None:
        """Remember the topics asked about; one the answer lacks or reports an error for is forgotten,
        with its configs (a topic created again under that name may have others)."""
        for name in topics:
            topic = metadata.topics.get(name)
            if topic is not None and topic.error == "NONE":
                self._topics[name] = (asked_at, topic)
            elif self._topics.pop(name, None) is not None:
                self._configs = {key: value for key, value in self._configs.items() if key[0] != name}
        if len(self._topics) > PRUNE_ABOVE:
            oldest = time.monotonic() - max(2 * self.max_age_s, ROUTING_MAX_AGE_S)
            self._topics = {name: entry for name, entry in self._topics.items() if entry[0] >= oldest}
            self._configs = {key: entry for key, entry in self._configs.items() if entry[0] >= oldest}

    def metadata(self, topics: Sequence[str]) -> dict[str, TopicMetadata] | None:
        """Every topic's metadata if each is known and at most ``max_age_s`` old, else None."""
        return self._known(topics, self.max_age_s)

    def routes(self, topics: Sequence[str]) -> dict[str, TopicMetadata] | None:
        """Every topic's metadata to route ListOffsets and DeleteRecords with (a leader that moved
        refuses, and its partitions are asked again on fresh metadata), if each is known and at most
        ``ROUTING_MAX_AGE_S`` old; None also when this memory is off (``max_age_s`` 0)."""
        return self._known(topics, max(self.max_age_s, ROUTING_MAX_AGE_S) if self.max_age_s > 0 else 0)

    def _known(self, topics: Sequence[str], max_age_s: float) -> dict[str, TopicMetadata] | None:
        if max_age_s <= 0:
            return None
        oldest = time.monotonic() - max_age_s
        known: dict[str, TopicMetadata] = {}
        for name in topics:
            entry = self._topics.get(name)
            if entry is None or entry[0] < oldest:
                return None
            known[name] = entry[1]
        return known

    def learn_configs(
        self, asked_at: float, names: Sequence[str], configs: dict[str, dict[str, str]]
    ) -> None:
        key = tuple(names)
        for topic, values in configs.items():
            self._configs[(topic, key)] = (asked_at, values)

    def configs(self, topics: Sequence[str], names: Sequence[str]) -> dict[str, dict[str, str]] | None:
        """Every topic's values of ``names`` if each is known and young enough, else None."""
        if self.max_age_s <= 0:
            return None
        oldest, key = time.monotonic() - self.max_age_s, tuple(names)
        known: dict[str, dict[str, str]] = {}
        for topic in topics:
            entry = self._configs.get((topic, key))
            if entry is None or entry[0] < oldest:
                return None
            known[topic] = entry[1]
        return known
