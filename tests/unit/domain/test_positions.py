"""Positions: a consumer's offsets per topic, read as a mapping and sliced as columns."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.domain.ports import TopicPartition
from app.domain.positions import Positions


def test_an_offset_fetch_answer_keeps_only_real_positions() -> None:
    positions = Positions()
    positions.put("t", [0, 1, 2], [5, -1, 7])
    assert dict(positions) == {TopicPartition("t", 0): 5, TopicPartition("t", 2): 7}
    assert len(positions) == 2
    assert positions.get(TopicPartition("t", 1), -1) == -1
    assert TopicPartition("t", 9) not in positions
    assert positions == {TopicPartition("t", 0): 5, TopicPartition("t", 2): 7}


def test_partitions_out_of_order_or_with_gaps_land_at_their_index() -> None:
    positions = Positions()
    positions.put("t", [4, 1], [40, 10])
    assert positions.column("t", [0, 1, 2, 3, 4, 5]) == [-1, 10, -1, -1, 40, -1]
    assert positions.column("t", [1, 4]) == [10, 40]
    assert positions.column("other", [0, 1]) == [-1, -1]


def test_topics_with_positions_leave_out_topics_without_a_commit() -> None:
    positions = Positions()
    positions.put("read", [0, 1], [-1, 3])
    positions.put("unread", [0, 1], [-1, -1])
    assert positions.topics_with_positions() == ["read"]


@given(st.dictionaries(st.tuples(st.sampled_from("ab"), st.integers(0, 20)), st.integers(0, 1000)))
def test_a_mapping_and_its_positions_agree(offsets: dict[tuple[str, int], int]) -> None:
    mapping = {TopicPartition(*key): offset for key, offset in offsets.items()}
    positions = Positions.of(mapping)
    assert positions == mapping
    for topic in "ab":
        indexes = list(range(25))
        expected = [mapping.get(TopicPartition(topic, i), -1) for i in indexes]
        assert positions.column(topic, indexes) == expected


def test_a_column_of_the_first_partitions_is_a_slice_of_the_answer() -> None:
    positions = Positions()
    positions.put("t", range(4), [5, -1, 7, 9])
    assert positions.column("t", [0, 1, 2, 3]) == [5, -1, 7, 9]
    assert positions.column("t", [0, 1]) == [5, -1]
    assert positions.column("t", [0, 1, 2, 3, 4]) == [5, -1, 7, 9, -1]
