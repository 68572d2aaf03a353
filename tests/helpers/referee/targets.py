"""The two clusters the referee plays every scenario on, behind one interface: the Kafka emulator
(``python -m kafka_emulator``, 3 brokers, SASL/PLAIN, ACL authorizer, super user ``admin``) and the real
Apache Kafka cluster (3 KRaft nodes, SASL/SCRAM-SHA-512, StandardAuthorizer, super user ``admin``).

Both have the same users; only the SASL mechanism differs (the emulator speaks PLAIN only), so every
client authenticates as the same principal on both.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from helpers.emulator.wire_client import RawConnection
from helpers.kafka_cluster import USERS, KafkaCluster
from helpers.referee.sasl_login import PLAIN, SCRAM, login
from helpers.service_processes import ROOT, spawn

# The emulator configured as the service uses it: DeleteRecords v3 (the LeaderOnly draft) on, Kafka's
# replica.fetch.wait.max.ms (500 ms) so follower timing matches the real brokers'.
EMULATOR_TOPOLOGY = {
    "brokers": 3,
    "sasl_users": USERS,
    "super_users": ["User:admin"],
    "acl_authorizer": True,
    "delete_records_max_version": 3,
}


@dataclass
class Target:
    name: str
    bootstrap: str
    mechanism: str
    control: str | None = None  # the emulator's control API
    addresses: dict[int, tuple[str, int]] = field(default_factory=dict)

    def aiokafka_config(self, user: str = "admin") -> dict[str, str]:
        return {
            "bootstrap_servers": self.bootstrap,
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": self.mechanism,
            "sasl_plain_username": user,
            "sasl_plain_password": USERS[user],
        }

    def confluent_config(self, user: str = "admin") -> dict[str, str | int]:
        return {
            "bootstrap.servers": self.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": self.mechanism,
            "sasl.username": user,
            "sasl.password": USERS[user],
            "log_level": 0,
        }

    async def connect(self, broker: int | None = None, user: str = "admin") -> RawConnection:
        """An authenticated raw connection to ``broker`` (None: the first bootstrap address)."""
        if broker is None:
            host, port = self.bootstrap.split(",")[0].rsplit(":", 1)
            address = (host, int(port))
        else:
            address = self.addresses[broker]
        connection = await RawConnection.open(*address)
        await login(connection, self.mechanism, user, USERS[user])
        return connection

    async def learn_brokers(self) -> None:
        connection = await self.connect()
        try:
            answer = await connection.request("Metadata", 12, {"Topics": [], "AllowAutoTopicCreation": False})
        finally:
            await connection.close()
        self.addresses = {b["NodeId"]: (b["Host"], b["Port"]) for b in answer["Brokers"]}


def real_target(cluster: KafkaCluster) -> Target:
    return Target("kafka", cluster.bootstrap, SCRAM)


@contextmanager
def emulator_target(folder: Path) -> Iterator[Target]:
    config = folder / "referee-topology.yaml"
    config.write_text(json.dumps(EMULATOR_TOPOLOGY))
    args = [sys.executable, "-m", "kafka_emulator", "--config", str(config), "--log-level", "WARNING"]
    process = spawn(args, {**os.environ, "PYTHONPATH": str(ROOT)}, folder)
    try:
        ready = json.loads(process.wait_for(r"^\{.*\"bootstrap\".*\}$", 60).group(0))
        yield Target("emulator", ready["bootstrap"], PLAIN, ready["control"])
    finally:
        process.kill()
