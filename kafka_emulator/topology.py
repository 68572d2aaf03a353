"""The ``--config`` file of ``python -m kafka_emulator``: cluster options plus topics to create at start.

brokers: 3
delete_records_max_version: 2        # Kafka 3.9's; 3 = the LeaderOnly draft, or per broker: {1: 3, 2: 2}
replication_interval_ms: 5
replica_fetch_wait_max_ms: 500       # replica.fetch.wait.max.ms
broker_session_timeout_ms: 9000      # broker.session.timeout.ms
sasl_users: {alice: alice-secret}
super_users: ["User:admin"]
acl_authorizer: false
offsets_partitions: 3
request_log_max: 10000
request_log_apis: [DeleteRecords]
request_log_max_partitions: 500000
topics:
  - {name: orders, partitions: 6, replication_factor: 3, configs: {cleanup.policy: delete}}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_CLUSTER_KEYS: dict[str, type | tuple[type, ...]] = {
    "brokers": int,
    "port": int,
    "replication_interval_ms": (int, float),
    "replica_fetch_wait_max_ms": (int, float),
    "broker_session_timeout_ms": (int, float),
    "delete_records_max_version": (int, dict),
    "sasl_users": dict,
    "super_users": list,
    "acl_authorizer": bool,
    "offsets_partitions": int,
    "request_log_max": int,
    "request_log_apis": list,
    "request_log_max_partitions": int,
}


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int = 1
    replication_factor: int | None = None
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Topology:
    cluster: dict[str, Any] = field(default_factory=dict)  # EmulatedCluster keyword arguments
    topics: tuple[TopicSpec, ...] = ()


def _topic(raw: object) -> TopicSpec:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ValueError("every topic needs a name")
    unknown = set(raw) - {"name", "partitions", "replication_factor", "configs"}
    if unknown:
        raise ValueError(f"unknown topic keys: {sorted(unknown)}")
    configs = {str(k): str(v) for k, v in (raw.get("configs") or {}).items()}
    partitions = raw.get("partitions", 1)
    replication_factor = raw.get("replication_factor")
    rf_ok = replication_factor is None or isinstance(replication_factor, int)
    if not isinstance(partitions, int) or not rf_ok:
        raise ValueError(f"topic {raw['name']}: partitions and replication_factor must be integers")
    return TopicSpec(raw["name"], partitions, replication_factor, configs)


def parse_topology(raw: object) -> Topology:
    if raw is None:
        return Topology()
    if not isinstance(raw, dict):
        raise ValueError("the topology file must be a mapping")
    unknown = set(raw) - set(_CLUSTER_KEYS) - {"topics"}
    if unknown:
        raise ValueError(f"unknown topology keys: {sorted(unknown)}")
    cluster: dict[str, Any] = {}
    for key, kind in _CLUSTER_KEYS.items():
        if key in raw and raw[key] is not None:
            if not isinstance(raw[key], kind):
                raise ValueError(f"{key} has the wrong type")
            cluster[key] = raw[key]
    return Topology(cluster, tuple(_topic(t) for t in raw.get("topics") or []))


def load_topology(path: Path) -> Topology:
    raw: object = yaml.safe_load(path.read_text(encoding="utf-8"))
    return parse_topology(raw)
