"""DeleteRecords over the wire, mirroring kafka-semantics.md §1.12, with aiokafka low-level requests
(every version v0-v3) and librdkafka's AdminClient.delete_records as the independent referee."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaClient
from helpers.emulator.aiokafka_requests import delete_records, list_offsets
from helpers.emulator.dataplane_clients import confluent_delete, confluent_list_offsets, lsos, produce, until

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol.errors import ErrorCode

VERSIONS = [0, 1, 2, 3]


@pytest.fixture
async def client(cluster: EmulatedCluster) -> AsyncIterator[AIOKafkaClient]:
    started = AIOKafkaClient(bootstrap_servers=cluster.bootstrap)
    await started.bootstrap()
    yield started
    await started.close()


@pytest.mark.parametrize("version", VERSIONS)
async def test_happy_case(cluster: EmulatedCluster, client: AIOKafkaClient, version: int) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    leader = cluster.model.leader_of("t", 0)
    result = await delete_records(client, leader, [("t", 0, 2)], version)
    assert result[("t", 0)][:2] == (0, 2)
    if version == 3:
        assert result[("t", 0)][2] == 2
    await until(lambda: set(lsos(cluster, "t", 0).values()) == {2})


async def test_happy_case_confluent(cluster: EmulatedCluster) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 2)]) == {("t", 0): 2}
    await until(lambda: set(lsos(cluster, "t", 0).values()) == {2})


@pytest.mark.parametrize("version", VERSIONS)
async def test_offset_above_high_watermark(
    cluster: EmulatedCluster, client: AIOKafkaClient, version: int
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    result = await delete_records(client, cluster.model.leader_of("t", 0), [("t", 0, 15)], version)
    assert result[("t", 0)][:2] == (ErrorCode.OFFSET_OUT_OF_RANGE, -1)
    if version == 3:
        assert result[("t", 0)][2] == -1
    outcome = await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 20)])
    assert outcome == {("t", 0): "OFFSET_OUT_OF_RANGE"}
    assert set(lsos(cluster, "t", 0).values()) == {0}


async def test_unknown_topic_and_partition(cluster: EmulatedCluster, client: AIOKafkaClient) -> None:
    cluster.create_topic("t", 1, 3)
    result = await delete_records(client, 1, [("missing", 0, 0), ("t", 5, 0)], 2)
    assert result == {("missing", 0): (3, -1), ("t", 5): (3, -1)}


async def test_seek_after_delete_and_high_watermark_sentinel(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    leader = cluster.model.leader_of("t", 0)
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 5)]) == {("t", 0): 5}
    assert (await list_offsets(client, leader, [("t", 0, -2)]))[("t", 0)] == (0, -1, 5)
    assert await asyncio.to_thread(confluent_list_offsets, cluster.bootstrap, [("t", 0, -2)]) == {("t", 0): 5}
    assert (await delete_records(client, leader, [("t", 0, -1)], 1))[("t", 0)] == (0, 10)
    assert await asyncio.to_thread(confluent_list_offsets, cluster.bootstrap, [("t", 0, -2)]) == {
        ("t", 0): 10
    }


async def test_below_log_start_offset_is_a_no_op_answering_the_low_watermark(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    leader = cluster.model.leader_of("t", 0)
    assert (await delete_records(client, leader, [("t", 0, 5)], 2))[("t", 0)] == (0, 5)
    assert (await delete_records(client, leader, [("t", 0, 0)], 3))[("t", 0)] == (0, 5, 5)
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 1)]) == {("t", 0): 5}


async def test_policy_and_internal_topic_errors(cluster: EmulatedCluster, client: AIOKafkaClient) -> None:
    cluster.create_topic("compacted", 1, 3, {"cleanup.policy": "compact"})
    cluster.create_topic("mixed", 1, 3, {"cleanup.policy": "compact,delete"})
    await produce(cluster, "mixed", 0, 4)
    leader = cluster.model.leader_of("compacted", 0)
    assert (await delete_records(client, leader, [("compacted", 0, 99)], 2))[("compacted", 0)] == (44, -1)
    offsets_leader = cluster.model.leader_of("__consumer_offsets", 0)
    internal = await delete_records(client, offsets_leader, [("__consumer_offsets", 0, 0)], 2)
    assert internal[("__consumer_offsets", 0)] == (ErrorCode.INVALID_TOPIC_EXCEPTION, -1)
    referee = await asyncio.to_thread(
        confluent_delete, cluster.bootstrap, [("compacted", 0, 0), ("mixed", 0, 2)]
    )
    assert referee == {("compacted", 0): "POLICY_VIOLATION", ("mixed", 0): 2}


async def test_follower_answers_not_leader(cluster: EmulatedCluster, client: AIOKafkaClient) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 3)
    follower = next(b for b in (1, 2, 3) if b != cluster.model.leader_of("t", 0))
    result = await delete_records(client, follower, [("t", 0, 1)], 3)
    assert result[("t", 0)] == (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1)


async def test_one_request_per_leader_for_many_partitions(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("many", 6, 3)
    for partition in range(6):
        await produce(cluster, "many", partition, 4)
    by_leader: dict[int, list[tuple[str, int, int]]] = {}
    for partition in range(6):
        by_leader.setdefault(cluster.model.leader_of("many", partition), []).append(("many", partition, 3))
    results = await asyncio.gather(*(delete_records(client, b, o, 2) for b, o in by_leader.items()))
    merged = {k: v for r in results for k, v in r.items()}
    assert merged == {("many", p): (0, 3) for p in range(6)}


async def test_broker_limited_to_v2_advertises_it(cluster: EmulatedCluster) -> None:
    cluster.set_delete_records_max_version(2, 2)
    client = AIOKafkaClient(bootstrap_servers=cluster.bootstrap)
    await client.bootstrap()
    try:
        versions = {}
        for broker in (1, 2):
            await client.ready(broker)
            versions[broker] = client._conns[(broker, 0)]._versions[21]
        assert versions == {1: (0, 3), 2: (0, 2)}
    finally:
        await client.close()


@pytest.mark.parametrize("version", [2, 3])
async def test_partition_already_past_its_offset_does_not_hold_a_waiting_one(
    cluster: EmulatedCluster, client: AIOKafkaClient, version: int
) -> None:
    """kafka-semantics.md §1.2 step 6: DelayedDeleteRecords is checked whole when parked and on every
    trigger. A partition whose log start offset is already past its offset answers NONE, and the request
    answers once the other partition's followers fetched, long before TimeoutMs: a request held to its
    timeout would answer the waiting partition REQUEST_TIMED_OUT."""
    cluster.create_topic("mixed", 4, 3)
    leaders = {p: cluster.model.leader_of("mixed", p) for p in range(4)}
    done, waiting = next((a, b) for a in range(4) for b in range(a + 1, 4) if leaders[a] == leaders[b])
    for partition in (done, waiting):
        await produce(cluster, "mixed", partition, 60)
    leader = leaders[done]
    assert (await delete_records(client, leader, [("mixed", done, 50)], 2))[("mixed", done)] == (0, 50)
    await until(lambda: set(lsos(cluster, "mixed", done).values()) == {50})

    offsets = [("mixed", done, 10), ("mixed", waiting, 50)]
    result = await delete_records(client, leader, offsets, version, timeout_ms=30_000)

    assert {key: answer[:2] for key, answer in result.items()} == {
        ("mixed", done): (0, 50),
        ("mixed", waiting): (0, 50),
    }
    assert set(lsos(cluster, "mixed", waiting).values()) == {50}
