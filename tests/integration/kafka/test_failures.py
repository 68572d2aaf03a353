"""Brokers that stop, partitions without a leader, clusters that cannot be reached, SASL."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from helpers.kafka_gateway import (
    CLUSTER,
    cluster_settings,
    delete_records,
    leader_of,
    log_start_offsets,
    produce,
    wait_followers_learned,
    wait_until,
)
from pydantic import SecretStr

from app.adapters.kafka import KafkaClusters
from app.adapters.kafka import gateway as gateway_module
from app.adapters.kafka.error_codes import Retry, classify
from app.domain.ports import TopicPartition
from app.errors import NotFound, ServiceUnavailable
from app.settings import ClusterSettings
from kafka_emulator import EmulatedCluster

TP = TopicPartition


async def test_leader_stopping_mid_request_then_success_on_new_leader(
    emulator: Any, gateway: KafkaClusters
) -> None:
    emulator.create_topic("events", 1, 3)
    await produce(emulator, "events", {0: 10})
    old = leader_of(emulator, "events", 0)
    emulator.inject_fault(old, "DeleteRecords", delay_ms=3_000)

    pending = asyncio.create_task(
        delete_records(gateway, CLUSTER, {TP("events", 0): 4}, leader_only=False, timeout_ms=5_000)
    )
    await wait_until(lambda: not emulator.state()["faults"])  # the request reached the broker
    await emulator.stop_broker(old)
    first = (await pending)[TP("events", 0)]

    assert first.error == "NETWORK_EXCEPTION"
    assert classify(first.error) == Retry(refresh_metadata=True)
    retried = await delete_records(
        gateway, CLUSTER, {TP("events", 0): 4}, leader_only=False, timeout_ms=5_000
    )
    assert retried[TP("events", 0)].error == "NONE"
    new = leader_of(emulator, "events", 0)
    assert new != old
    assert log_start_offsets(emulator, "events", 0)[new] == 4


async def test_stopped_leader_is_routed_around_with_fresh_metadata(
    emulator: Any, gateway: KafkaClusters
) -> None:
    emulator.create_topic("events", 1, 3)
    await produce(emulator, "events", {0: 10})
    await wait_followers_learned(emulator, "events", {0: 10})
    assert await gateway.ping(CLUSTER)  # the client knows the old leader
    old = leader_of(emulator, "events", 0)
    await emulator.stop_broker(old)

    outcomes = await delete_records(
        gateway, CLUSTER, {TP("events", 0): 2}, leader_only=False, timeout_ms=5_000
    )

    assert outcomes[TP("events", 0)].error == "NONE"
    assert leader_of(emulator, "events", 0) != old


async def test_partition_without_leader(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("single", 1, 1)
    await produce(emulator, "single", {0: 5})
    only = leader_of(emulator, "single", 0)
    await emulator.stop_broker(only)

    down = await delete_records(gateway, CLUSTER, {TP("single", 0): 1}, leader_only=False, timeout_ms=1_000)

    assert down[TP("single", 0)].error == "LEADER_NOT_AVAILABLE"
    assert classify("LEADER_NOT_AVAILABLE").retriable
    await emulator.start_broker(only)
    await wait_until(lambda: leader_of(emulator, "single", 0) == only)
    up = await delete_records(gateway, CLUSTER, {TP("single", 0): 1}, leader_only=False, timeout_ms=5_000)
    assert up[TP("single", 0)].error == "NONE"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_unreachable_cluster_is_reported_not_raised() -> None:
    settings = ClusterSettings(bootstrap_servers=f"127.0.0.1:{_closed_port()}", request_timeout_ms=1_000)
    gateway = KafkaClusters({"down": settings})
    try:
        assert gateway.has_cluster("down")
        assert not gateway.has_cluster("other")
        assert await gateway.ping("down") is False
        offsets = {TP("a", 0): 1, TP("b", 3): 2}
        outcomes = await delete_records(gateway, "down", offsets, leader_only=False, timeout_ms=1_000)
        assert {o.error for o in outcomes.values()} == {"NETWORK_EXCEPTION"}
        assert set(outcomes) == set(offsets)
        with pytest.raises(ServiceUnavailable):
            await gateway.topic_partitions("down", ["a"])
        with pytest.raises(ServiceUnavailable):
            await gateway.high_watermarks("down", [TP("a", 0)])
        with pytest.raises(NotFound):
            await gateway.ping("other")
    finally:
        await gateway.close()


async def test_sasl_plain_cluster() -> None:
    async with EmulatedCluster(
        brokers=3, sasl_users={"purge": "s3cret"}, delete_records_max_version=3
    ) as cluster:
        cluster.create_topic("events", 3, 3)
        good = cluster_settings(
            cluster,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_username="purge",
            sasl_password=SecretStr("s3cret"),
        )
        bad = good.model_copy(update={"sasl_password": SecretStr("wrong")})
        gateway = KafkaClusters({"good": good, "bad": bad})
        try:
            offsets = {TP("events", p): 0 for p in range(3)}
            ok = await delete_records(gateway, "good", offsets, leader_only=True, timeout_ms=5_000)
            assert {o.error for o in ok.values()} == {"NONE"}
            assert await gateway.topic_partitions("good", ["events"]) == {"events": 3}
            assert await gateway.ping("bad") is False
            refused = await delete_records(gateway, "bad", offsets, leader_only=True, timeout_ms=5_000)
            assert {o.error for o in refused.values()} == {"NETWORK_EXCEPTION"}
        finally:
            await gateway.close()


async def test_not_leader_answer_then_success_on_the_moved_leader(
    emulator: Any, gateway: KafkaClusters
) -> None:
    emulator.create_topic("events", 1, 3)
    await produce(emulator, "events", {0: 10})
    await wait_followers_learned(emulator, "events", {0: 10})
    old = leader_of(emulator, "events", 0)
    emulator.inject_fault(old, "DeleteRecords", error="NOT_LEADER_OR_FOLLOWER")

    first = await delete_records(gateway, CLUSTER, {TP("events", 0): 3}, leader_only=False, timeout_ms=5_000)

    assert first[TP("events", 0)].error == "NOT_LEADER_OR_FOLLOWER"
    assert classify("NOT_LEADER_OR_FOLLOWER") == Retry(refresh_metadata=True)
    new = next(b for b in (1, 2, 3) if b != old)
    emulator.move_leader("events", 0, new)
    retried = await delete_records(
        gateway, CLUSTER, {TP("events", 0): 3}, leader_only=False, timeout_ms=5_000
    )
    assert retried[TP("events", 0)].error == "NONE"
    assert log_start_offsets(emulator, "events", 0)[new] == 3


async def test_unknown_cluster_name(gateway: KafkaClusters) -> None:
    with pytest.raises(NotFound):
        await delete_records(gateway, "nope", {TP("a", 0): 1}, leader_only=False, timeout_ms=1_000)


async def test_service_principal_without_delete_acl() -> None:
    from kafka_emulator.acls.model import AclBinding, Operation, PatternType, Permission, ResourceType

    users = {"purge": "s3cret"}
    async with EmulatedCluster(brokers=3, sasl_users=users, acl_authorizer=True) as cluster:
        for topic in ("granted", "describe-only", "hidden"):
            cluster.create_topic(topic, 1, 3)
        grants = [("granted", Operation.DELETE), ("describe-only", Operation.DESCRIBE)]
        for topic, operation in grants:
            cluster.acls.add(
                AclBinding(
                    ResourceType.TOPIC,
                    topic,
                    PatternType.LITERAL,
                    "User:purge",
                    "*",
                    operation,
                    Permission.ALLOW,
                )
            )
        settings = cluster_settings(
            cluster,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_username="purge",
            sasl_password=SecretStr("s3cret"),
        )
        gateway = KafkaClusters({"acl": settings})
        try:
            offsets = {TP("granted", 0): 0, TP("describe-only", 0): 0, TP("hidden", 0): 0}
            outcomes = await delete_records(gateway, "acl", offsets, leader_only=False, timeout_ms=5_000)
        finally:
            await gateway.close()

    assert outcomes[TP("granted", 0)].error == "NONE"
    assert outcomes[TP("describe-only", 0)].error == "TOPIC_AUTHORIZATION_FAILED"
    assert outcomes[TP("hidden", 0)].error == "TOPIC_AUTHORIZATION_FAILED"
    assert outcomes[TP("describe-only", 0)].message is None  # the broker's answer: describe() says it all


async def test_silent_bootstrap_address_does_not_block_the_others(emulator: Any) -> None:
    emulator.create_topic("events", 1, 3)
    with socket.socket() as silent:  # accepts TCP connections (kernel backlog) but never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        host, port = silent.getsockname()
        settings = ClusterSettings(
            bootstrap_servers=f"{host}:{port},{emulator.bootstrap}", request_timeout_ms=1_000
        )
        gateway = KafkaClusters({"c": settings})
        try:
            assert await gateway.topic_partitions("c", ["events"]) == {"events": 1}
        finally:
            await gateway.close()


async def test_closing_during_a_request_reports_outcomes(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 1, 3)
    emulator.inject_fault(leader_of(emulator, "events", 0), "DeleteRecords", delay_ms=2_000)
    pending = asyncio.create_task(
        delete_records(gateway, CLUSTER, {TP("events", 0): 0}, leader_only=False, timeout_ms=5_000)
    )
    await wait_until(lambda: not emulator.state()["faults"])

    await gateway.close()

    assert (await pending)[TP("events", 0)].error == "NETWORK_EXCEPTION"
    after = await delete_records(gateway, CLUSTER, {TP("events", 0): 0}, leader_only=False, timeout_ms=5_000)
    assert after[TP("events", 0)].error == "NONE"  # a closed gateway reconnects on next use


async def test_ping_of_a_silent_cluster_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gateway_module, "PING_TIMEOUT_S", 0.5)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        host, port = silent.getsockname()
        gateway = KafkaClusters({"c": ClusterSettings(bootstrap_servers=f"{host}:{port}")})  # 40 s timeout
        try:
            started = asyncio.get_running_loop().time()
            assert await gateway.ping("c") is False
            assert asyncio.get_running_loop().time() - started < 5
        finally:
            await gateway.close()
