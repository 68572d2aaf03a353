"""The request log through the HTTP control API (GET /requests paginated by seq, DELETE /requests), and
through ``python -m kafka_emulator`` options."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaClient
from helpers.emulator.aiokafka_requests import delete_records
from helpers.emulator.dataplane_clients import produce

from kafka_emulator import EmulatedCluster
from kafka_emulator.__main__ import cluster_options, parse_args
from kafka_emulator.topology import parse_topology


@pytest.fixture
async def control(cluster: EmulatedCluster) -> AsyncIterator[httpx.AsyncClient]:
    url = await cluster.start_control_api()
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        yield client


async def send(cluster: EmulatedCluster, client_id: str, offsets: list[int]) -> None:
    client = AIOKafkaClient(bootstrap_servers=cluster.bootstrap, client_id=client_id)
    await client.bootstrap()
    try:
        leader = cluster.model.leader_of("ctl", 0)
        for offset in offsets:
            await delete_records(client, leader, [("ctl", 0, offset)], 2)
    finally:
        await client.close()


async def pages(control: httpx.AsyncClient, **query: Any) -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = []
    after = 0
    while True:
        response = await control.get("/requests", params={**query, "after": after})
        assert response.status_code == 200, response.text
        page = response.json()
        requests.extend(page["requests"])
        if page["next_after"] is None:
            return requests
        after = page["next_after"]


async def test_get_requests_pages_through_the_log_and_filters_by_client(
    cluster: EmulatedCluster, control: httpx.AsyncClient
) -> None:
    cluster.create_topic("ctl", 1, 3)
    await produce(cluster, "ctl", 0, 10)
    await send(cluster, "one", [1, 2, 3])
    await send(cluster, "two", [4, 5])
    everything = await pages(control, limit=2)
    assert [r["partitions"][0]["offset"] for r in everything] == [1, 2, 3, 4, 5]
    first = everything[0]
    assert first["api"] == "DeleteRecords"
    assert first["api_version"] == 2
    assert first["client_id"] == "one"
    assert first["broker"] == cluster.model.leader_of("ctl", 0)
    assert first["partitions"] == [
        {"topic": "ctl", "partition": 0, "offset": 1, "error": 0, "low_watermark": 1}
    ]
    assert first["received"]["monotonic"] <= first["answered"]["monotonic"]
    assert first["received"]["wall"] <= first["answered"]["wall"]
    two = await pages(control, client_id="two", api="DeleteRecords")
    assert [r["partitions"][0]["offset"] for r in two] == [4, 5]
    assert await pages(control, api="*", client_id="nobody") == []

    cleared = await control.delete("/requests")
    assert cleared.status_code == 200
    assert (await control.get("/requests")).json() == {"requests": [], "next_after": None, "dropped": 0}


async def test_bad_query_parameters_are_rejected(control: httpx.AsyncClient) -> None:
    assert (await control.get("/requests", params={"limit": "x"})).status_code == 400
    assert (await control.get("/requests", params={"limit": 0})).status_code == 400
    assert (await control.get("/requests", params={"api": "Nope"})).status_code == 400
    assert (await control.get("/requests", params={"api": "Metadata"})).status_code == 400
    assert (await control.post("/requests")).status_code == 405


def test_command_line_and_topology_set_the_log_options() -> None:
    argv = ["--request-log-max", "50", "--request-log-apis", "DeleteRecords, Metadata"]
    args = parse_args([*argv, "--request-log-max-partitions", "9"])
    options = cluster_options(args, parse_topology({"request_log_max": 7}))
    assert options["request_log_max"] == 50
    assert options["request_log_max_partitions"] == 9
    assert options["request_log_apis"] == ["DeleteRecords", "Metadata"]
    topology = parse_topology({"request_log_max": 7, "request_log_apis": ["Fetch"]})
    assert topology.cluster == {"request_log_max": 7, "request_log_apis": ["Fetch"]}
    with pytest.raises(ValueError, match="wrong type"):
        parse_topology({"request_log_max": "many"})
