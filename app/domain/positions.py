"""One consumer's positions (committed or processed offsets), held per topic as a list indexed by partition.

``Positions`` is a read-only ``Mapping[TopicPartition, int]`` holding only real positions (an offset of -1
is Kafka's "no committed offset" and is not an entry). What it buys: a sweep lines a consumer's positions
up with a topic's partitions by slicing one list per topic (``column``), instead of one hash lookup per
(partition, consumer) pair: 20 million lookups, most of the planning time, for 100,000 partitions x 200
groups (``bench/retention_bench.py --scale``). OffsetFetch answers arrive per topic in partition order,
so building one costs no more than the dictionary it replaces.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TypeVar, overload

from app.domain.ports import TopicPartition

NONE = -1
T = TypeVar("T")


class Positions(Mapping[TopicPartition, int]):
    __slots__ = ("_topics",)

    def __init__(self, topics: Mapping[str, list[int]] | None = None) -> None:
        self._topics: dict[str, list[int]] = dict(topics or {})

    @classmethod
    def of(cls, offsets: Mapping[TopicPartition, int]) -> Positions:
        if isinstance(offsets, Positions):
            return offsets
        built = cls()
        for tp, offset in offsets.items():
            built.put(tp.topic, (tp.partition,), (offset,))
        return built

    def put(self, topic: str, indexes: Sequence[int], offsets: Iterable[int]) -> None:
        """Record ``offsets`` of ``topic``'s partitions ``indexes`` (-1: none)."""
        known = self._topics.get(topic)
        if known is None and list(indexes) == list(range(len(indexes))):
            self._topics[topic] = list(offsets)
            return
        known = known if known is not None else []
        for index, offset in zip(indexes, offsets, strict=True):
            if index >= len(known):
                known.extend([NONE] * (index + 1 - len(known)))
            known[index] = offset
        self._topics[topic] = known

    def column(self, topic: str, indexes: Sequence[int]) -> list[int]:
        """The positions on ``topic``'s partitions ``indexes`` (sorted, distinct), -1 where there is none."""
        known = self._topics.get(topic)
        if known is None or not indexes:
            return [NONE] * len(indexes)
        if indexes[-1] == len(indexes) - 1 and len(known) >= len(indexes):  # partitions 0..n-1
            return known[: len(indexes)]
        padded = known + [NONE] * max(0, indexes[-1] + 1 - len(known))
        return list(map(padded.__getitem__, indexes))

    def topics_with_positions(self) -> list[str]:
        # A consumer that committed on a topic nearly always did on its first partition.
        topics = self._topics.items()
        return [topic for topic, known in topics if known and (known[0] >= 0 or max(known) >= 0)]

    @overload
    def get(self, key: TopicPartition, /) -> int | None: ...

    @overload
    def get(self, key: TopicPartition, default: int | T, /) -> int | T: ...

    def get(self, key: TopicPartition, default: int | T | None = None, /) -> int | T | None:
        known = self._topics.get(key.topic)
        if known is None or not 0 <= key.partition < len(known) or known[key.partition] < 0:
            return default
        return known[key.partition]

    def __getitem__(self, key: TopicPartition) -> int:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[TopicPartition]:
        for topic, known in self._topics.items():
            for index, offset in enumerate(known):
                if offset >= 0:
                    yield TopicPartition(topic, index)

    def __len__(self) -> int:
        return sum(sum(map((0).__le__, known)) for known in self._topics.values())

    def __repr__(self) -> str:
        return f"Positions({dict(self.items())!r})"
