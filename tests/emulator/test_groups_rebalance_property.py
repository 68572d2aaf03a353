"""Random join / leave / heartbeat sequences never break the group's invariants and always settle.

Each example drives the coordinator's handlers from several simulated clients that, like real ones,
rejoin when told REBALANCE_IN_PROGRESS, and let the leader hand out assignments.
"""

from __future__ import annotations

import asyncio

from helpers.emulator.groups import HEARTBEAT, JOIN, LEAVE, SYNC, Harness, join_request, make_harness
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emulator.groups.group import GroupState
from kafka_emulator.protocol.errors import ErrorCode

GROUP = "prop"
CLIENTS = 3


class Client:
    def __init__(self, harness: Harness, index: int) -> None:
        self.h = harness
        self.index = index
        self.member_id = ""
        self.generation = -1
        self.task: asyncio.Task[None] | None = None

    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    async def _join(self) -> None:
        broker = self.h.broker_of(GROUP)
        request = dict(join_request(GROUP, self.member_id, session_ms=5_000), RebalanceTimeoutMs=150)
        answer = await self.h.call(JOIN, 5, request, broker)
        if answer["ErrorCode"] == ErrorCode.MEMBER_ID_REQUIRED:
            answer = await self.h.call(JOIN, 5, dict(request, MemberId=answer["MemberId"]), broker)
        if answer["ErrorCode"] != ErrorCode.NONE:
            self.member_id, self.generation = "", -1
            return
        self.member_id, self.generation = answer["MemberId"], answer["GenerationId"]
        plan = [{"MemberId": m["MemberId"], "Assignment": m["MemberId"].encode()} for m in answer["Members"]]
        sync = {
            "GroupId": GROUP,
            "GenerationId": self.generation,
            "MemberId": self.member_id,
            "GroupInstanceId": None,
            "Assignments": plan,
        }
        synced = await self.h.call(SYNC, 3, sync, broker)
        if synced["ErrorCode"] == ErrorCode.NONE:
            assert synced["Assignment"] in (b"", self.member_id.encode())

    def join(self) -> None:
        if not self.busy():
            self.task = asyncio.create_task(self._join())

    async def leave(self) -> None:
        if self.member_id and not self.busy():
            members = [{"MemberId": self.member_id, "GroupInstanceId": None}]
            await self.h.call(LEAVE, 3, {"GroupId": GROUP, "Members": members}, self.h.broker_of(GROUP))
            self.member_id, self.generation = "", -1

    async def heartbeat(self) -> None:
        if not self.member_id or self.busy():
            return
        request = {"GroupId": GROUP, "GenerationId": self.generation, "MemberId": self.member_id}
        code = (await self.h.call(HEARTBEAT, 2, request, self.h.broker_of(GROUP)))["ErrorCode"]
        assert code in (ErrorCode.NONE, ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.UNKNOWN_MEMBER_ID)
        if code == ErrorCode.REBALANCE_IN_PROGRESS:
            self.join()
        elif code == ErrorCode.UNKNOWN_MEMBER_ID:
            self.member_id, self.generation = "", -1


def check_invariants(harness: Harness, last_generation: int) -> int:
    group = harness.coordinator.group(GROUP)
    if group is None:
        return last_generation
    assert group.generation >= last_generation
    if group.members:
        assert group.leader_id in group.members
        assert group.state != GroupState.EMPTY
    else:
        assert group.state in (GroupState.EMPTY, GroupState.PREPARING_REBALANCE)
    return group.generation


async def run(steps: list[tuple[str, int]]) -> None:
    harness = await make_harness(initial_rebalance_delay_ms=5, min_session_timeout_ms=10)
    clients = [Client(harness, i) for i in range(CLIENTS)]
    generation = 0
    try:
        for action, index in steps:
            client = clients[index % CLIENTS]
            if action == "join":
                client.join()
            elif action == "leave":
                await client.leave()
            elif action == "heartbeat":
                await client.heartbeat()
            else:
                await asyncio.sleep(index / 1000)
            generation = check_invariants(harness, generation)
        await settle(harness, clients)
    finally:
        harness.coordinator.close()


async def settle(harness: Harness, clients: list[Client]) -> None:
    """Clients heartbeat while others join and rejoin, as real ones do, until the group is Stable with all."""
    for _ in range(300):
        for client in clients:
            if not client.member_id:
                client.join()  # dropped by a rebalance timeout on a slow machine: rejoin as a new member
            await client.heartbeat()
        group = harness.coordinator.group(GROUP)
        members = {c.member_id for c in clients}
        busy = any(c.busy() for c in clients)
        if (
            group is not None
            and group.state == GroupState.STABLE
            and set(group.members) == members
            and not busy
        ):
            assert all(m.assignment == m.member_id.encode() for m in group.members.values())
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"group never settled: {harness.coordinator.snapshot()[GROUP]}")


steps = st.lists(
    st.tuples(
        st.sampled_from(["join", "leave", "heartbeat", "sleep"]), st.integers(min_value=0, max_value=20)
    ),
    max_size=25,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_random_membership_changes_keep_invariants_and_settle(steps: list[tuple[str, int]]) -> None:
    asyncio.run(run(steps))
