"""Group coordinator logic through its handlers, on a real ClusterState (no sockets)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from helpers.emulator.groups import (
    COMMIT,
    DESCRIBE,
    FETCH,
    FIND,
    HEARTBEAT,
    JOIN,
    LEAVE,
    LIST,
    SYNC,
    Harness,
    join_request,
    make_harness,
)

from kafka_emulator.acls import AclBinding, AclStore, Operation, PatternType, Permission, ResourceType
from kafka_emulator.groups import GroupCoordinator, java_string_hash, partition_for, register_group_handlers
from kafka_emulator.groups.coordinator import OFFSETS_TOPIC
from kafka_emulator.protocol.api import AllowAll, HandlerRegistry, Message
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    h = await make_harness(initial_rebalance_delay_ms=20, min_session_timeout_ms=10)
    yield h
    h.coordinator.close()


async def join(h: Harness, group: str, session_ms: int = 10_000, meta: bytes = b"m") -> Message:
    """A v5 client's join: first MEMBER_ID_REQUIRED, then the real join with that id."""
    broker = h.broker_of(group)
    first = await h.call(JOIN, 5, join_request(group, session_ms=session_ms, meta=meta), broker)
    assert first["ErrorCode"] == ErrorCode.MEMBER_ID_REQUIRED
    return await h.call(JOIN, 5, join_request(group, first["MemberId"], session_ms, meta), broker)


async def sync(
    h: Harness, group: str, joined: Message, assignments: dict[str, bytes] | None = None
) -> Message:
    request = {
        "GroupId": group,
        "GenerationId": joined["GenerationId"],
        "MemberId": joined["MemberId"],
        "GroupInstanceId": None,
        "Assignments": [{"MemberId": m, "Assignment": a} for m, a in (assignments or {}).items()],
    }
    return await h.call(SYNC, 3, request, h.broker_of(group))


async def heartbeat(h: Harness, group: str, joined: Message) -> int:
    request = {"GroupId": group, "GenerationId": joined["GenerationId"], "MemberId": joined["MemberId"]}
    response = await h.call(HEARTBEAT, 2, request, h.broker_of(group))
    return int(response["ErrorCode"])


def test_java_string_hash_matches_java() -> None:
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("polygenelubricants") == -(2**31)
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00  # a surrogate pair is two UTF-16 units
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("hello", 50) == 99162322 % 50


async def test_find_coordinator_single_and_batched(harness: Harness) -> None:
    group = "payments"
    node = harness.broker_of(group)
    expected_partition = partition_for(group, 3)
    assert node == harness.state.leader_of(OFFSETS_TOPIC, expected_partition)
    v0 = await harness.call(FIND, 0, {"Key": group})
    assert (v0["ErrorCode"], v0["NodeId"], v0["Port"]) == (0, node, 9000 + node)
    v1 = await harness.call(FIND, 1, {"Key": group, "KeyType": 0})
    assert (v1["ErrorCode"], v1["NodeId"], v1["Host"], v1["Port"]) == (0, node, "127.0.0.1", 9000 + node)
    v4 = await harness.call(FIND, 4, {"KeyType": 0, "CoordinatorKeys": [group, "other"]})
    assert [c["Key"] for c in v4["Coordinators"]] == [group, "other"]
    assert v4["Coordinators"][1]["NodeId"] == harness.broker_of("other")
    tx = await harness.call(FIND, 4, {"KeyType": 1, "CoordinatorKeys": ["tx"]})
    assert tx["Coordinators"][0]["ErrorCode"] == ErrorCode.COORDINATOR_NOT_AVAILABLE


async def test_find_coordinator_without_leader() -> None:
    state = ClusterState([1, 2])
    state.create_topic(OFFSETS_TOPIC, 1, 1, {"cleanup.policy": "compact"})
    state.set_listener(1, "127.0.0.1", 1)
    state.set_listener(2, "127.0.0.1", 2)
    registry = HandlerRegistry()
    coordinator = GroupCoordinator(state)
    register_group_handlers(registry, coordinator, AllowAll())
    h = Harness(state, coordinator, registry)
    state.stop_broker(state.leader_of(OFFSETS_TOPIC, 0))
    answer = await h.call(FIND, 2, {"Key": "g", "KeyType": 0})
    assert (answer["ErrorCode"], answer["NodeId"], answer["Port"]) == (
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        -1,
        -1,
    )


async def test_two_members_join_sync_and_heartbeat(harness: Harness) -> None:
    group = "g1"
    first, second = await asyncio.gather(join(harness, group, meta=b"a"), join(harness, group, meta=b"b"))
    assert first["GenerationId"] == second["GenerationId"] == 1
    leader = first if first["Leader"] == first["MemberId"] else second
    follower = second if leader is first else first
    assert {m["Metadata"] for m in leader["Members"]} == {b"a", b"b"}
    assert follower["Members"] == []
    plan = {leader["MemberId"]: b"L", follower["MemberId"]: b"F"}
    follower_sync = asyncio.create_task(sync(harness, group, follower))
    await asyncio.sleep(0.01)
    assert not follower_sync.done()  # followers wait for the leader's assignment
    leader_sync = await sync(harness, group, leader, plan)
    assert (leader_sync["Assignment"], (await follower_sync)["Assignment"]) == (b"L", b"F")
    assert await heartbeat(harness, group, follower) == ErrorCode.NONE
    stale = dict(follower, GenerationId=0)
    assert await heartbeat(harness, group, stale) == ErrorCode.ILLEGAL_GENERATION
    assert await heartbeat(harness, group, dict(follower, MemberId="nobody")) == ErrorCode.UNKNOWN_MEMBER_ID


async def test_new_member_triggers_rebalance_and_leave_rebalances_again(harness: Harness) -> None:
    group = "g2"
    first = await join(harness, group)
    await sync(harness, group, first, {first["MemberId"]: b"all"})
    newcomer = asyncio.create_task(join(harness, group))
    await asyncio.sleep(0.02)
    assert await heartbeat(harness, group, first) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoined = await harness.call(JOIN, 5, join_request(group, first["MemberId"]), harness.broker_of(group))
    second = await newcomer
    assert rejoined["GenerationId"] == second["GenerationId"] == 2
    leave = {"GroupId": group, "Members": [{"MemberId": second["MemberId"], "GroupInstanceId": None}]}
    left = await harness.call(LEAVE, 3, leave, harness.broker_of(group))
    assert left["Members"][0]["ErrorCode"] == ErrorCode.NONE
    assert await heartbeat(harness, group, rejoined) == ErrorCode.REBALANCE_IN_PROGRESS
    alone = await harness.call(JOIN, 5, join_request(group, first["MemberId"]), harness.broker_of(group))
    assert (alone["GenerationId"], alone["Leader"]) == (3, first["MemberId"])
    again = await harness.call(
        LEAVE, 1, {"GroupId": group, "MemberId": second["MemberId"]}, harness.broker_of(group)
    )
    assert again["ErrorCode"] == ErrorCode.UNKNOWN_MEMBER_ID


async def test_session_timeout_expires_member(harness: Harness) -> None:
    group = "g3"
    joined = await join(harness, group, session_ms=50)
    await sync(harness, group, joined, {joined["MemberId"]: b"x"})
    for _ in range(250):  # poll up to 5 s: the machine is shared and timers may run late
        if not harness.coordinator.groups[group].members:
            break
        await asyncio.sleep(0.02)
    assert harness.coordinator.snapshot()[group]["state"] == "Empty"
    assert await heartbeat(harness, group, joined) == ErrorCode.UNKNOWN_MEMBER_ID


async def test_join_validation(harness: Harness) -> None:
    broker = harness.broker_of("g4")
    wrong = next(b for b in (1, 2, 3) if b != broker)
    assert (await harness.call(JOIN, 5, join_request("g4"), wrong))["ErrorCode"] == ErrorCode.NOT_COORDINATOR
    assert (await harness.call(JOIN, 5, join_request("g4", "ghost"), broker))["ErrorCode"] == (
        ErrorCode.UNKNOWN_MEMBER_ID
    )
    bad_timeout = join_request("g4", session_ms=1)
    assert (await harness.call(JOIN, 5, bad_timeout, broker))[
        "ErrorCode"
    ] == ErrorCode.INVALID_SESSION_TIMEOUT
    old_client = await harness.call(JOIN, 3, join_request("g4"), broker)  # v3: no MEMBER_ID_REQUIRED round
    assert (old_client["ErrorCode"], old_client["GenerationId"]) == (ErrorCode.NONE, 1)
    other = dict(join_request("g4"), ProtocolType="connect")
    assert (await harness.call(JOIN, 3, other, broker))["ErrorCode"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def commit_request(group: str, offsets: dict[int, int], generation: int = -1, member: str = "") -> Message:
    partitions = [
        {"PartitionIndex": p, "CommittedOffset": o, "CommittedLeaderEpoch": -1, "CommittedMetadata": "meta"}
        for p, o in offsets.items()
    ]
    return {
        "GroupId": group,
        "GenerationIdOrMemberEpoch": generation,
        "MemberId": member,
        "GroupInstanceId": None,
        "Topics": [{"Name": "orders", "Partitions": partitions}],
    }


def fetched(response: Message) -> dict[tuple[str, int], tuple[int, int]]:
    return {
        (t["Name"], p["PartitionIndex"]): (p["CommittedOffset"], p["ErrorCode"])
        for t in response["Topics"]
        for p in t["Partitions"]
    }


async def test_simple_commit_and_fetch(harness: Harness) -> None:
    group = "offsets-only"
    broker = harness.broker_of(group)
    committed = await harness.call(COMMIT, 8, commit_request(group, {0: 42}), broker)
    assert committed["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.NONE
    all_partitions = await harness.call(FETCH, 7, {"GroupId": group, "Topics": None}, broker)
    assert fetched(all_partitions) == {("orders", 0): (42, 0)}
    explicit = {"GroupId": group, "Topics": [{"Name": "orders", "PartitionIndexes": [0, 1]}]}
    assert fetched(await harness.call(FETCH, 5, explicit, broker)) == {
        ("orders", 0): (42, 0),
        ("orders", 1): (-1, 0),
    }
    batched = {"Groups": [{"GroupId": group, "Topics": None}, {"GroupId": "nobody", "Topics": None}]}
    groups = (await harness.call(FETCH, 8, batched, broker))["Groups"]
    assert fetched(groups[0]) == {("orders", 0): (42, 0)}
    assert groups[1]["Topics"] == []
    assert harness.coordinator.snapshot()[group]["offsets"] == {"orders": {"0": 42}}


async def test_commit_errors(harness: Harness) -> None:
    group = "g5"
    broker = harness.broker_of(group)
    unknown = dict(
        commit_request(group, {0: 1}),
        Topics=[
            {
                "Name": "nope",
                "Partitions": [
                    {
                        "PartitionIndex": 0,
                        "CommittedOffset": 1,
                        "CommittedLeaderEpoch": -1,
                        "CommittedMetadata": None,
                    }
                ],
            }
        ],
    )
    result = await harness.call(COMMIT, 8, unknown, broker)
    assert result["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    generation_without_group = await harness.call(COMMIT, 8, commit_request(group, {0: 1}, 3, "m"), broker)
    assert generation_without_group["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.ILLEGAL_GENERATION
    joined = await join(harness, group)
    await sync(harness, group, joined, {joined["MemberId"]: b""})
    simple = await harness.call(COMMIT, 8, commit_request(group, {0: 1}), broker)
    assert simple["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.UNKNOWN_MEMBER_ID
    stale = await harness.call(COMMIT, 8, commit_request(group, {0: 1}, 0, joined["MemberId"]), broker)
    assert stale["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.ILLEGAL_GENERATION
    good = await harness.call(COMMIT, 8, commit_request(group, {0: 7}, 1, joined["MemberId"]), broker)
    assert good["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.NONE
    wrong = next(b for b in (1, 2, 3) if b != broker)
    moved = await harness.call(COMMIT, 8, commit_request(group, {0: 8}, 1, joined["MemberId"]), wrong)
    assert moved["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.NOT_COORDINATOR
    v1 = await harness.call(
        FETCH, 1, {"GroupId": group, "Topics": [{"Name": "orders", "PartitionIndexes": [0]}]}, wrong
    )
    assert fetched(v1) == {("orders", 0): (-1, ErrorCode.NOT_COORDINATOR)}
    v3 = await harness.call(FETCH, 3, {"GroupId": group, "Topics": None}, wrong)
    assert (v3["ErrorCode"], v3["Topics"]) == (ErrorCode.NOT_COORDINATOR, [])


async def test_offsets_survive_coordinator_move(harness: Harness) -> None:
    group = "mover"
    broker = harness.broker_of(group)
    await harness.call(COMMIT, 8, commit_request(group, {1: 99}), broker)
    harness.state.stop_broker(broker)
    new_broker = harness.broker_of(group)
    assert new_broker not in (-1, broker)
    answer = await harness.call(FETCH, 6, {"GroupId": group, "Topics": None}, new_broker)
    assert fetched(answer) == {("orders", 1): (99, 0)}
    listed = await harness.call(LIST, 4, {"StatesFilter": []}, new_broker)
    assert group in [g["GroupId"] for g in listed["Groups"]]


async def test_list_and_describe_groups(harness: Harness) -> None:
    joined = await join(harness, "active", meta=b"subscription")
    await sync(harness, "active", joined, {joined["MemberId"]: b"assigned"})
    await harness.call(COMMIT, 8, commit_request("passive", {0: 1}), harness.broker_of("passive"))
    listed: dict[str, Message] = {}
    for broker in (1, 2, 3):
        for g in (await harness.call(LIST, 4, {"StatesFilter": []}, broker))["Groups"]:
            assert harness.broker_of(g["GroupId"]) == broker  # only groups this broker coordinates
            listed[g["GroupId"]] = g
    assert (listed["active"]["GroupState"], listed["active"]["ProtocolType"]) == ("Stable", "consumer")
    assert (listed["passive"]["GroupState"], listed["passive"]["ProtocolType"]) == ("Empty", "")
    stable_only = await harness.call(LIST, 4, {"StatesFilter": ["stable"]}, harness.broker_of("passive"))
    assert "passive" not in [g["GroupId"] for g in stable_only["Groups"]]
    broker = harness.broker_of("active")
    ghost_id = next(f"ghost-{i}" for i in range(100) if harness.broker_of(f"ghost-{i}") == broker)
    elsewhere = next(f"far-{i}" for i in range(100) if harness.broker_of(f"far-{i}") != broker)
    request = {"Groups": ["active", ghost_id, elsewhere], "IncludeAuthorizedOperations": True}
    active, ghost, far = (await harness.call(DESCRIBE, 5, request, broker))["Groups"]
    assert (ghost["ErrorCode"], ghost["GroupState"], ghost["Members"]) == (0, "Dead", [])
    assert far["ErrorCode"] == ErrorCode.NOT_COORDINATOR
    assert (active["GroupState"], active["ProtocolData"]) == ("Stable", "range")
    member = active["Members"][0]
    assert (member["MemberMetadata"], member["MemberAssignment"], member["ClientHost"]) == (
        b"subscription",
        b"assigned",
        "/127.0.0.1",
    )
    assert active["AuthorizedOperations"] & (1 << 8)


async def test_acls_on_group_apis() -> None:
    store = AclStore(enabled=True)
    h = await make_harness(store)
    group = "secured"
    broker = h.broker_of(group)
    alice, bob = "User:alice", "User:bob"
    store.add(
        AclBinding(
            ResourceType.GROUP, group, PatternType.LITERAL, alice, "*", Operation.READ, Permission.ALLOW
        )
    )
    store.add(
        AclBinding(
            ResourceType.TOPIC, "orders", PatternType.LITERAL, alice, "*", Operation.READ, Permission.ALLOW
        )
    )
    ok = await h.call(COMMIT, 8, commit_request(group, {0: 5}), broker, alice)
    assert ok["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.NONE
    denied = await h.call(COMMIT, 8, commit_request(group, {0: 6}), broker, bob)
    assert denied["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.GROUP_AUTHORIZATION_FAILED
    fetch_all = {"GroupId": group, "Topics": None}
    assert (await h.call(FETCH, 7, fetch_all, broker, bob))[
        "ErrorCode"
    ] == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert fetched(await h.call(FETCH, 7, fetch_all, broker, alice)) == {("orders", 0): (5, 0)}
    store.add(
        AclBinding(
            ResourceType.GROUP, group, PatternType.LITERAL, bob, "*", Operation.DESCRIBE, Permission.ALLOW
        )
    )
    assert fetched(await h.call(FETCH, 7, fetch_all, broker, bob)) == {}  # topic silently dropped
    explicit = {"GroupId": group, "Topics": [{"Name": "orders", "PartitionIndexes": [0]}]}
    assert fetched(await h.call(FETCH, 7, explicit, broker, bob)) == {
        ("orders", 0): (-1, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    }
    found = await h.call(FIND, 4, {"KeyType": 0, "CoordinatorKeys": [group]}, broker, "User:eve")
    assert found["Coordinators"][0]["ErrorCode"] == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert (await h.call(LIST, 4, {"StatesFilter": []}, broker, "User:eve"))["Groups"] == []
    listed = (await h.call(LIST, 4, {"StatesFilter": []}, broker, bob))["Groups"]
    assert [g["GroupId"] for g in listed] == [group]


async def test_describe_hides_metadata_until_stable_and_types_filter(harness: Harness) -> None:
    group = "settling"
    broker = harness.broker_of(group)
    joined = await join(harness, group, meta=b"subscription")  # CompletingRebalance until the leader syncs
    described = (
        await harness.call(DESCRIBE, 4, {"Groups": [group], "IncludeAuthorizedOperations": False}, broker)
    )["Groups"][0]
    assert (described["GroupState"], described["ProtocolData"]) == ("CompletingRebalance", "")
    assert (described["Members"][0]["MemberMetadata"], described["Members"][0]["MemberAssignment"]) == (
        b"",
        b"",
    )
    assert described["AuthorizedOperations"] == -(2**31)
    classic = await harness.call(LIST, 5, {"StatesFilter": [], "TypesFilter": ["Classic"]}, broker)
    assert [g["GroupType"] for g in classic["Groups"]] == ["classic"]
    consumer = await harness.call(LIST, 5, {"StatesFilter": [], "TypesFilter": ["consumer"]}, broker)
    assert consumer["Groups"] == []
    await sync(harness, group, joined, {joined["MemberId"]: b"a"})
    assert (await heartbeat(harness, group, joined)) == ErrorCode.NONE


async def test_sync_errors(harness: Harness) -> None:
    group = "syncing"
    joined = await join(harness, group)
    assert (await sync(harness, "no-such-group", joined))["ErrorCode"] == ErrorCode.UNKNOWN_MEMBER_ID
    assert (await sync(harness, group, dict(joined, GenerationId=7)))[
        "ErrorCode"
    ] == ErrorCode.ILLEGAL_GENERATION
    v5 = {
        "GroupId": group,
        "GenerationId": joined["GenerationId"],
        "MemberId": joined["MemberId"],
        "GroupInstanceId": None,
        "ProtocolType": "consumer",
        "ProtocolName": "sticky",
        "Assignments": [],
    }
    answer = await harness.call(SYNC, 5, v5, harness.broker_of(group))
    assert answer["ErrorCode"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    ok = await harness.call(SYNC, 5, dict(v5, ProtocolName="range"), harness.broker_of(group))
    assert (ok["ErrorCode"], ok["ProtocolType"], ok["ProtocolName"]) == (0, "consumer", "range")


async def test_offsets_of_deleted_topics_are_forgotten(harness: Harness) -> None:
    harness.state.create_topic("doomed", 1, 3)
    broker = harness.broker_of("cleanup")
    doomed = dict(
        commit_request("cleanup", {0: 4}),
        Topics=[
            {
                "Name": "doomed",
                "Partitions": [
                    {
                        "PartitionIndex": 0,
                        "CommittedOffset": 4,
                        "CommittedLeaderEpoch": -1,
                        "CommittedMetadata": "",
                    }
                ],
            }
        ],
    )
    await harness.call(COMMIT, 8, doomed, broker)
    await harness.call(COMMIT, 8, commit_request("mixed", {0: 1}), harness.broker_of("mixed"))
    await harness.call(COMMIT, 8, dict(doomed, GroupId="mixed"), harness.broker_of("mixed"))
    harness.state.delete_topic("doomed")
    answer = await harness.call(FETCH, 7, {"GroupId": "mixed", "Topics": None}, harness.broker_of("mixed"))
    assert fetched(answer) == {("orders", 0): (1, 0)}
    listed = (await harness.call(LIST, 4, {"StatesFilter": []}, broker))["Groups"]
    assert "cleanup" not in [g["GroupId"] for g in listed]  # Empty and without offsets: the group is gone
    assert "cleanup" not in harness.coordinator.snapshot()
