"""Scenario steps on the cluster and its groups: Metadata, CreateTopics, DescribeConfigs, ACLs,
ApiVersions, OffsetCommit/OffsetFetch, DescribeGroups (raw requests, the fields a client hides kept), a
consumer group's commit (aiokafka), and a leader change (the leader's broker stopped and started)."""

from __future__ import annotations

import asyncio
from typing import Any

from helpers.referee.leadership import move_leader
from helpers.referee.log_actions import list_offsets
from helpers.referee.session import Session, error_name, metadata_body
from kafka_emulator.protocol import messages

Observed = dict[str, Any]
RESOURCE_TYPES = {"topic": 2, "group": 3, "cluster": 4, "broker": 4}
CONFIG_SOURCES = {
    1: "DYNAMIC_TOPIC_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
}


async def metadata(s: Session, topics: list[str] | None, version: int = 12, user: str = "admin") -> Observed:
    """Raw Metadata: per topic its error, internal flag, and per partition error, replica and ISR counts,
    leader epoch and whether a leader is known. (Node ids and ports differ by nature: left out.)"""
    answer = await s.request("Metadata", version, metadata_body(topics), user=user)
    observed: Observed = {"brokers": len(answer["Brokers"])}
    for topic in answer["Topics"]:
        if topics is None and topic["Name"] != s.topic:
            continue
        observed[topic["Name"]] = {
            "error": error_name(topic["ErrorCode"]),
            "internal": topic["IsInternal"],
            "topic_id": "set" if any(topic["TopicId"]) else "zero",
            "partitions": [
                {
                    "error": error_name(p["ErrorCode"]),
                    "replicas": len(p["ReplicaNodes"]),
                    "isr": len(p["IsrNodes"]),
                    "leader_epoch": p["LeaderEpoch"],
                    "leader": "known" if p["LeaderId"] >= 0 else p["LeaderId"],
                }
                for p in sorted(topic["Partitions"], key=lambda p: p["PartitionIndex"])
            ],
        }
    return observed


async def create_topics(
    s: Session, topics: list[dict[str, Any]], validate_only: bool = False, version: int = 7
) -> Observed:
    """Raw CreateTopics: per topic its error, partition count and replication factor as answered."""
    body = {
        "Topics": [
            {
                "Name": t["name"],
                "NumPartitions": t.get("partitions", -1),
                "ReplicationFactor": t.get("replication_factor", -1),
                "Assignments": [],
                "Configs": [{"Name": k, "Value": v} for k, v in t.get("configs", {}).items()],
            }
            for t in topics
        ],
        "TimeoutMs": 30_000,
        "validateOnly": validate_only,
    }
    answer = await s.request("CreateTopics", version, body)
    return {
        t["Name"]: {
            "error": error_name(t["ErrorCode"]),
            "partitions": t.get("NumPartitions"),
            "replication_factor": t.get("ReplicationFactor"),
        }
        for t in answer["Topics"]
    }


async def describe_configs(
    s: Session,
    resource: str = "topic",
    name: str | None = None,
    keys: list[str] | None = None,
    version: int = 4,
    synonyms: bool = True,
    user: str = "admin",
) -> Observed:
    """Raw DescribeConfigs: per config its value, source, read-only and sensitive flags, type, and the
    synonyms' names and sources."""
    target = name or (s.topic if resource == "topic" else "1")
    body = {
        "Resources": [
            {"ResourceType": RESOURCE_TYPES[resource], "ResourceName": target, "ConfigurationKeys": keys}
        ],
        "IncludeSynonyms": synonyms,
        "IncludeDocumentation": False,
    }
    answer = await s.request("DescribeConfigs", version, body, user=user)
    result = answer["Results"][0]
    return {
        "error": error_name(result["ErrorCode"]),
        "configs": {
            c["Name"]: {
                "value": c["Value"],
                "source": CONFIG_SOURCES.get(c["ConfigSource"], c["ConfigSource"]),
                "read_only": c["ReadOnly"],
                "sensitive": c["IsSensitive"],
                "type": c.get("ConfigType"),
                "synonyms": [
                    (y["Name"], CONFIG_SOURCES.get(y["Source"], y["Source"])) for y in c["Synonyms"]
                ],
            }
            for c in result["Configs"]
        },
    }


def _acl(binding: dict[str, Any]) -> dict[str, Any]:
    return {
        "ResourceType": RESOURCE_TYPES[binding.get("resource", "topic")],
        "ResourceName": binding["name"],
        "ResourcePatternType": binding.get("pattern", 3),  # LITERAL
        "Principal": binding["principal"],
        "Host": "*",
        "Operation": binding.get("operation", 3),  # READ
        "PermissionType": binding.get("permission", 3),  # ALLOW
    }


async def create_acls(s: Session, bindings: list[dict[str, Any]], user: str = "admin") -> Observed:
    """Raw CreateAcls; once created, waits until every broker describes them (Kafka's brokers apply
    ACLs from the metadata log after the controller has answered)."""
    answer = await s.request("CreateAcls", 3, {"Creations": [_acl(b) for b in bindings]}, user=user)
    errors = [error_name(r["ErrorCode"]) for r in answer["Results"]]
    if set(errors) == {"NONE"}:
        for principal in {b["principal"] for b in bindings}:
            wanted = sum(b["principal"] == principal for b in bindings)
            for broker in s.target.addresses:
                await _visible(s, principal, wanted, broker)
    return {"errors": errors}


async def _visible(s: Session, principal: str, count: int, broker: int) -> None:
    deadline = asyncio.get_running_loop().time() + 30
    while len((await describe_acls(s, principal, broker=broker))["bindings"]) < count:
        assert asyncio.get_running_loop().time() < deadline, f"ACLs of {principal} not on broker {broker}"
        await asyncio.sleep(0.05)


async def describe_acls(
    s: Session, principal: str | None, user: str = "admin", version: int = 3, broker: int | None = None
) -> Observed:
    """Raw DescribeAcls filtered on ``principal`` (any resource): the error and the bindings found."""
    body = {
        "ResourceTypeFilter": 1,  # ANY
        "ResourceNameFilter": None,
        "PatternTypeFilter": 1,  # ANY
        "PrincipalFilter": principal,
        "HostFilter": None,
        "Operation": 1,
        "PermissionType": 1,
    }
    answer = await s.request("DescribeAcls", version, body, broker, user)
    bindings = sorted(
        (
            r["ResourceType"],
            r["ResourceName"],
            r["PatternType"],
            a["Principal"],
            a["Operation"],
            a["PermissionType"],
        )
        for r in answer["Resources"]
        for a in r["Acls"]
    )
    return {"error": error_name(answer["ErrorCode"]), "bindings": [list(b) for b in bindings]}


async def api_versions(s: Session, apis: list[str], version: int = 3) -> Observed:
    """Raw ApiVersions: the advertised range of each API named."""
    body = {"ClientSoftwareName": "referee", "ClientSoftwareVersion": "1"}
    answer = await s.request("ApiVersions", version, body)
    ranges = {k["ApiKey"]: [k["MinVersion"], k["MaxVersion"]] for k in answer["ApiKeys"]}
    return {api: ranges.get(messages.api_key(api), "absent") for api in apis}


async def leader_change(s: Session, partition: int = 0) -> Observed:
    """Moves the leadership to a follower (``leadership.move_leader``) and reads, from the new leader,
    the leader epoch and ISR once it leads and its high watermark has reached the offset its epoch began
    at. (Until its followers' first fetches it answers ListOffsets LATEST with OFFSET_NOT_AVAILABLE, which
    clients retry; that window lasts a few replication round trips on either cluster.)"""
    before = (await s.partitions())[partition]
    new = await s.follower(partition)
    await move_leader(s, partition, new)
    deadline = asyncio.get_running_loop().time() + 30
    while (entry := (await s.partitions(broker=new))[partition])["LeaderId"] != new:
        assert asyncio.get_running_loop().time() < deadline, "the leadership did not move"
        await asyncio.sleep(0.05)
    while (await list_offsets(s, {partition: "latest"}))[str(partition)]["error"] == "OFFSET_NOT_AVAILABLE":
        assert asyncio.get_running_loop().time() < deadline, "the new leader's high watermark lags"
        await asyncio.sleep(0.05)
    return {
        "epoch_before": before["LeaderEpoch"],
        "epoch_after": entry["LeaderEpoch"],
        "isr": len(entry["IsrNodes"]),
    }
