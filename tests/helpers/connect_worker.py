"""A real Kafka Connect worker in distributed mode, on the real cluster of ``helpers.kafka_cluster``: the
class ``bin/connect-distributed.sh`` runs (``ConnectDistributed``), from the class path ``make kafka``
writes for jvm/connect/pom.xml (Connect 4.3.1's runtime, file connectors and basic-auth REST extension;
that file says why 4.3.1 on 4.4.0 brokers).

Configured as a secured deployment is, on loopback: the worker, its producers, consumers and admin
clients log in to the brokers over SASL/SCRAM-SHA-512 as their own user ``connect``, whose Kafka ACLs
(granted with ``helpers.real_kafka.grant``) allow what Connect does: create, read and write topics
(its three internal topics, replication factor 3, and the topics sinks read), read any group (the
worker's own group, ``connect-<name>`` and the groups connectors choose with
``consumer.override.group.id``, which ``connector.client.config.override.policy=All`` allows) and
describe the cluster. The REST API listens on a free loopback port behind Connect's basic-auth REST
extension (a JAAS ``PropertyFileLoginModule`` over a credentials file). Sink tasks commit their
offsets every 500 ms (``offset.flush.interval.ms``) instead of every minute.

A sink task is made to fail on demand with a ``FileStreamSinkConnector`` whose ``file`` lies in a missing
folder: the task's ``start()`` cannot open it and throws (root may write anywhere else).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from confluent_kafka.admin import (
    AclOperation,
    AdminClient,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from helpers.kafka_cluster import MECHANISM, KafkaCluster, free_port
from helpers.real_kafka import grant

CLASSPATH_FILE = Path(
    os.environ.get(
        "KAFKA_PURGE_CONNECT_CLASSPATH", Path.home() / ".cache" / "kafka-purge" / "connect.classpath"
    )
)

WORKER_USER = ("connect", "connect-secret")
# The REST API's one user: the service reads Connect as it.
REST_USER = ("purge", "purge-connect-secret")
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
WORKER_ACLS = [
    *((ResourceType.TOPIC, "*", operation) for operation in (
        AclOperation.CREATE, AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE,
        AclOperation.DESCRIBE_CONFIGS,
    )),
    (ResourceType.GROUP, "*", AclOperation.READ),
    (ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE),
]  # fmt: skip
JVM_OPTIONS = ["-Xms128m", "-Xmx512m", "-XX:+UseG1GC", "-Djava.awt.headless=true"]
LOG4J = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
"""
JAAS = """\
KafkaConnect {{
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
  file="{credentials}";
}};
"""
# Every worker the tests started, for the terminal summary (tests/real_kafka/conftest.py).
STARTED: list[ConnectWorker] = []
# What Connect answers while the worker group rebalances (a request to try again).
REBALANCING = {409, 500, 503}


class ConnectError(RuntimeError):
    """The worker did not start or a connector did not reach the awaited state; names the log."""


def classpath() -> str:
    """The class path ``make kafka`` wrote for Connect, every jar of it present."""
    if not CLASSPATH_FILE.exists():
        raise ConnectError(
            f"{CLASSPATH_FILE} is missing: run `make kafka` (Kafka Connect from Maven Central)"
        )
    jars = CLASSPATH_FILE.read_text().strip()
    missing = [jar for jar in jars.split(os.pathsep) if not Path(jar).exists()]
    if missing:
        raise ConnectError(f"{len(missing)} jars of {CLASSPATH_FILE} are missing: run `make kafka`")
    return jars


def add_scram_user(cluster: KafkaCluster, user: str, password: str, timeout: float = 60.0) -> None:
    """A SCRAM-SHA-512 user created with Kafka's Admin API, once every node lets it log in."""
    admin = AdminClient(cluster.client_config())
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)
    for future in admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion(user, info, password.encode())]
    ).values():
        future.result(timeout=30)
    login = {**cluster.client_config(), "sasl.username": user, "sasl.password": password, "log_level": 0}
    deadline = time.monotonic() + timeout
    for node in cluster.nodes:
        while True:
            try:
                AdminClient({**login, "bootstrap.servers": node.address}).list_topics(timeout=5)
                break
            except Exception:  # the credential has not reached this node yet
                if time.monotonic() > deadline:
                    raise ConnectError(f"node {node.node_id} refuses the new user {user}") from None
                time.sleep(0.2)


def file_sink(
    file: Path, topics: str | None = None, *, regex: str | None = None, **extra: str
) -> dict[str, str]:
    """A ``FileStreamSinkConnector`` config appending the records it reads to ``file``."""
    config = {"connector.class": FILE_SINK, "tasks.max": "1", "file": str(file), **extra}
    if topics is not None:
        config["topics"] = topics
    if regex is not None:
        config["topics.regex"] = regex
    return config


@dataclass
class ConnectWorker:
    """One worker of the Connect cluster ``group_id``; ``start()`` runs it, ``close()`` stops it."""

    cluster: KafkaCluster
    folder: Path
    group_id: str = "kafka-purge-connect"
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    started_in: float = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.folder / "connect.log"

    def properties(self) -> str:
        login = "org.apache.kafka.common.security.scram.ScramLoginModule required"
        sasl = {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": MECHANISM,
            "sasl.jaas.config": f'{login} username="{WORKER_USER[0]}" password="{WORKER_USER[1]}";',
        }
        internal = {
            f"{kind}.storage.{key}": value
            for kind in ("config", "offset", "status")
            for key, value in (("topic", f"{self.group_id}-{kind}s"), ("replication.factor", "3"))
        }
        config = {
            "bootstrap.servers": self.cluster.bootstrap,
            "group.id": self.group_id,
            **internal,
            "offset.storage.partitions": "3",
            "status.storage.partitions": "1",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.flush.interval.ms": "500",
            "listeners": f"http://127.0.0.1:{self.port}",
            "rest.advertised.host.name": "127.0.0.1",
            "rest.advertised.port": str(self.port),
            "rest.extension.classes": (
                "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
            ),
            "connector.client.config.override.policy": "All",
            # Every plugin here has a ServiceLoader manifest: no reflective scan of the class path.
            "plugin.discovery": "service_load",
            **sasl,
            **{
                f"{client}.{key}": value
                for client in ("producer", "consumer", "admin")
                for key, value in sasl.items()
            },
        }
        return "".join(f"{key}={value}\n" for key, value in config.items())

    def start(self, timeout: float = 180.0) -> None:
        began = time.monotonic()
        self.folder.mkdir(parents=True, exist_ok=True)
        add_scram_user(self.cluster, *WORKER_USER)
        grant(self.cluster, f"User:{WORKER_USER[0]}", WORKER_ACLS)
        credentials = self.folder / "rest-credentials.properties"
        credentials.write_text(f"{REST_USER[0]}: {REST_USER[1]}\n")
        (self.folder / "connect-jaas.conf").write_text(JAAS.format(credentials=credentials))
        (self.folder / "log4j2.properties").write_text(LOG4J.format(log=self.log))
        (self.folder / "worker.properties").write_text(self.properties())
        out = (self.folder / "stdout.log").open("ab")
        command = [
            "java", *JVM_OPTIONS,
            f"-Dlog4j2.configurationFile={self.folder / 'log4j2.properties'}",
            f"-Djava.security.auth.login.config={self.folder / 'connect-jaas.conf'}",
            "-cp", classpath(),
            "org.apache.kafka.connect.cli.ConnectDistributed", str(self.folder / "worker.properties"),
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        out.close()
        self._wait_ready(timeout)
        self.started_in = time.monotonic() - began

    def _wait_ready(self, timeout: float) -> None:
        """Until the REST API lists connectors, which it does once the worker has joined its group."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise ConnectError(
                    f"the Connect worker exited with {self.process.returncode}: see {self.log}"
                )
            try:
                if self.rest("GET", "/connectors").status_code == 200:
                    return
            except httpx.TransportError:
                pass  # not listening yet
            if time.monotonic() > deadline:
                raise ConnectError(f"the Connect worker is not ready after {timeout:.0f} s: see {self.log}")
            time.sleep(0.5)

    def rest(self, method: str, path: str, body: Any = None) -> httpx.Response:
        """One request to Connect's REST API as its basic-auth user."""
        return httpx.request(method, f"{self.url}{path}", json=body, auth=REST_USER, timeout=30)

    def _answered(self, method: str, path: str, body: Any = None, timeout: float = 60.0) -> httpx.Response:
        """A request repeated while the worker group rebalances; any other error status fails."""
        deadline = time.monotonic() + timeout
        while True:
            response = self.rest(method, path, body)
            if response.status_code not in REBALANCING or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if response.is_error:
            raise ConnectError(f"{method} {path} answered {response.status_code}: {response.text}")
        return response

    def put_connector(self, name: str, config: dict[str, str]) -> None:
        """Create the connector or replace its config (Connect restarts it with the new one)."""
        self._answered("PUT", f"/connectors/{quote(name, safe='')}/config", config)

    def pause(self, name: str) -> None:
        self._answered("PUT", f"/connectors/{quote(name, safe='')}/pause")

    def resume(self, name: str) -> None:
        self._answered("PUT", f"/connectors/{quote(name, safe='')}/resume")

    def delete(self, name: str) -> None:
        """Remove the connector; one already gone is left so."""
        path = f"/connectors/{quote(name, safe='')}"
        if self.rest("GET", path).status_code != 404:
            self._answered("DELETE", path)

    def states(self, name: str) -> tuple[str, tuple[str, ...]] | None:
        """The connector's state and its tasks' states, as ``GET /connectors/{name}/status`` has them."""
        response = self.rest("GET", f"/connectors/{quote(name, safe='')}/status")
        if response.status_code != 200:
            return None
        status = response.json()
        return status["connector"]["state"], tuple(task["state"] for task in status["tasks"])

    def wait_states(
        self, name: str, connector: str, tasks: tuple[str, ...] | None = None, timeout: float = 90.0
    ) -> None:
        """Until the connector is in state ``connector`` and its tasks in ``tasks`` (default: one task
        in the connector's state)."""
        wanted = (connector, tasks if tasks is not None else (connector,))
        deadline = time.monotonic() + timeout
        while (found := self.states(name)) != wanted:
            if time.monotonic() > deadline:
                raise ConnectError(f"connector {name} is {found}, not {wanted}: see {self.log}")
            time.sleep(0.25)

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """The worker stopped (SIGSTOP) for the block: its port takes connections, nothing answers."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(self.process.pid, signal.SIGCONT)

    def close(self) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None
