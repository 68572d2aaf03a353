"""The HTTP control API of an EmulatedCluster, driven with httpx over a real socket."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from helpers.emulator.factories import RawFactory

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol.errors import ErrorCode


@pytest.fixture
async def control(cluster: EmulatedCluster) -> AsyncIterator[httpx.AsyncClient]:
    url = await cluster.start_control_api()
    assert url.startswith("http://127.0.0.1:")
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        yield client


async def test_state_lists_brokers_topics_groups_and_acls(control: httpx.AsyncClient) -> None:
    response = await control.get("/state")
    assert response.status_code == 200
    state = response.json()
    assert set(state["listeners"]) == {"1", "2", "3"}
    assert "__consumer_offsets" in state["topics"]
    assert {"groups", "acls", "faults"} <= set(state)


async def test_create_topic_then_read_it_back(control: httpx.AsyncClient) -> None:
    body = {
        "name": "ctl-orders",
        "partitions": 2,
        "replication_factor": 2,
        "configs": {"cleanup.policy": "delete"},
    }
    created = await control.post("/topics", json=body)
    assert created.status_code == 200, created.text
    topic = (await control.get("/state")).json()["topics"]["ctl-orders"]
    assert len(topic["partitions"]) == 2
    assert all(len(p["replicas"]) == 2 for p in topic["partitions"])
    duplicate = await control.post("/topics", json=body)
    assert duplicate.status_code == 400
    assert "TOPIC_ALREADY_EXISTS" in duplicate.json()["error"]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"partitions": 1}, 400),
        ({"name": "x", "partitions": "two"}, 400),
        ({"name": "x", "partitions": 1, "configs": {"cleanup.policy": 5}}, 400),
        ({"name": "bad name!", "partitions": 1}, 400),
        ({"name": "x", "partitions": 1, "replication_factor": 9}, 400),
    ],
)
async def test_create_topic_rejects_bad_input(
    control: httpx.AsyncClient, body: dict[str, object], status: int
) -> None:
    response = await control.post("/topics", json=body)
    assert response.status_code == status
    assert response.json()["error"]


async def test_malformed_json_and_unknown_routes(control: httpx.AsyncClient) -> None:
    bad = await control.post("/topics", content=b"{not json", headers={"Content-Type": "application/json"})
    assert bad.status_code == 400
    assert (await control.get("/nowhere")).status_code == 404
    assert (await control.get("/topics")).status_code == 405
    assert (await control.post("/brokers/9/stop")).status_code == 404
    assert (await control.post("/brokers/x/stop")).status_code == 404


async def test_stop_and_start_a_broker(cluster: EmulatedCluster, control: httpx.AsyncClient) -> None:
    port = cluster.brokers[3][1]
    assert (await control.post("/brokers/3/stop")).status_code == 200
    assert 3 not in cluster.model.alive_brokers()
    assert (await control.post("/brokers/3/start")).status_code == 200
    assert 3 in cluster.model.alive_brokers()
    assert cluster.brokers[3][1] == port


async def test_kill_keeps_a_broker_registered_until_start(
    cluster: EmulatedCluster, control: httpx.AsyncClient
) -> None:
    assert (await control.post("/brokers/3/kill")).status_code == 200
    brokers = {b["id"]: b for b in (await control.get("/state")).json()["brokers"]}
    assert (brokers[3]["alive"], brokers[3]["crashed"]) == (True, True)
    assert (await control.post("/brokers/3/start")).status_code == 200
    brokers = {b["id"]: b for b in (await control.get("/state")).json()["brokers"]}
    assert (brokers[3]["alive"], brokers[3]["crashed"]) == (True, False)


async def test_move_leader_with_a_lagging_high_watermark(
    cluster: EmulatedCluster, control: httpx.AsyncClient
) -> None:
    cluster.create_topic("ctl-lag", 1, replication_factor=3)
    follower = next(b for b in (1, 2, 3) if b != cluster.model.leader_of("ctl-lag", 0))
    body = {"broker": follower, "high_watermark": 0, "catch_up_ms": 200}
    assert (await control.post("/topics/ctl-lag/partitions/0/leader", json=body)).status_code == 200
    assert cluster.model.leader_of("ctl-lag", 0) == follower
    negative = {"broker": 1, "catch_up_ms": -1}
    assert (await control.post("/topics/ctl-lag/partitions/0/leader", json=negative)).status_code == 400


async def test_pause_resume_and_move_leader(cluster: EmulatedCluster, control: httpx.AsyncClient) -> None:
    cluster.create_topic("ctl-moves", 1, replication_factor=3)
    leader = cluster.model.leader_of("ctl-moves", 0)
    follower = next(b for b in (1, 2, 3) if b != leader)
    paused = await control.post(f"/topics/ctl-moves/partitions/0/followers/{follower}/pause")
    assert paused.status_code == 200, paused.text
    replicas = (await control.get("/state")).json()["topics"]["ctl-moves"]["partitions"][0]["replica_states"]
    assert replicas[str(follower)]["paused"] is True
    assert (
        await control.post(f"/topics/ctl-moves/partitions/0/followers/{follower}/resume")
    ).status_code == 200
    moved = await control.post("/topics/ctl-moves/partitions/0/leader", json={"broker": follower})
    assert moved.status_code == 200, moved.text
    assert cluster.model.leader_of("ctl-moves", 0) == follower
    unknown = await control.post("/topics/nope/partitions/0/leader", json={"broker": 1})
    assert unknown.status_code == 404
    missing_field = await control.post("/topics/ctl-moves/partitions/0/leader", json={})
    assert missing_field.status_code == 400


async def test_fault_injection_over_http(control: httpx.AsyncClient, raw: RawFactory) -> None:
    body = {"broker": 1, "api": "ApiVersions", "error": "KAFKA_STORAGE_ERROR", "count": 1, "delay_ms": 0}
    created = await control.post("/faults", json=body)
    assert created.status_code == 200, created.text
    assert created.json()["pending"][0]["api"] == "ApiVersions"
    response = await (await raw(1)).request("ApiVersions", 2)
    assert response["ErrorCode"] == ErrorCode.KAFKA_STORAGE_ERROR
    for bad in ({**body, "api": "NoSuchApi"}, {**body, "error": "NO_SUCH_ERROR"}, {**body, "count": 0}):
        assert (await control.post("/faults", json=bad)).status_code == 400
    assert (await control.post("/faults", json={**body, "broker": 7})).status_code == 404


async def test_drop_connections_and_max_version(control: httpx.AsyncClient, raw: RawFactory) -> None:
    connection = await raw(2)
    assert (await connection.request("ApiVersions", 0))["ErrorCode"] == 0
    assert (await control.post("/brokers/2/drop-connections")).status_code == 200
    assert await connection.closed_by_broker()
    changed = await control.post("/brokers/2/delete-records-max-version", json={"version": 2})
    assert changed.status_code == 200
    versions = (await (await raw(2)).request("ApiVersions", 0))["ApiKeys"]
    assert {k["ApiKey"]: k["MaxVersion"] for k in versions}[21] == 2
    assert (
        await control.post("/brokers/2/delete-records-max-version", json={"version": 4})
    ).status_code == 400


async def test_malformed_http_is_refused_and_the_server_keeps_serving(
    cluster: EmulatedCluster, control: httpx.AsyncClient
) -> None:
    port = int(str(control.base_url).rsplit(":", 1)[1].rstrip("/"))
    for raw_request, status in (
        (b"garbage\r\n\r\n", b"400"),
        (b"POST /topics HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", b"413"),
        (b"POST /topics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", b"411"),
    ):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(raw_request)
        await writer.drain()
        reply = await asyncio.wait_for(reader.read(), 10)  # the server closes after an error
        writer.close()
        assert reply.split(b" ", 2)[1] == status, reply
    assert (await control.get("/state")).status_code == 200
