"""A real Apache Kafka cluster on loopback: 3 KRaft nodes (each broker and controller) from the jars
Maven resolved (``make kafka`` writes their class path), started with the classes Kafka's own ``bin/``
scripts run: ``kafka.tools.StorageTool`` formats each node's log folder, ``kafka.Kafka`` runs it.

Configured as a production cluster is, on loopback: SASL/SCRAM-SHA-512 on the client and inter-broker
listener, the ``StandardAuthorizer`` with the super user ``admin``, replication factor 3 and
``min.insync.replicas=2``; Kafka's defaults otherwise (``replica.fetch.wait.max.ms=500``, ...). The
controller listener is PLAINTEXT on loopback, so the brokers' controller requests carry the principal
``User:ANONYMOUS``, a super user too; clients reach only the SASL listener.

Nodes can be stopped (SIGTERM), killed (SIGKILL) and started again on the same ports and log folders.
"""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka.admin import AdminClient

CLASSPATH_FILE = Path(
    os.environ.get("KAFKA_PURGE_KAFKA_CLASSPATH", Path.home() / ".cache" / "kafka-purge" / "kafka.classpath")
)
SUPER_USER = ("admin", "admin-secret")
# SCRAM users created when the nodes are formatted: the service's own principal and test clients.
USERS = {SUPER_USER[0]: SUPER_USER[1], "purge": "purge-secret", "alice": "alice-secret", "bob": "bob-secret"}
MECHANISM = "SCRAM-SHA-512"
NODES = 3
# Kafka's bin/kafka-run-class.sh options. The heap (``KafkaCluster.heap``) is by default half of what
# kafka-server-start.sh gives (1 GiB): three nodes share a 2-core test machine.
JVM_OPTIONS = [
    "-Xms256m",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-Djava.awt.headless=true",
]
LOG4J = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {folder}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.authorizer.name = kafka.authorizer.logger
logger.authorizer.level = WARN
"""


class ClusterError(RuntimeError):
    """The cluster did not start or answer; the message names the node and where its log is."""


def classpath() -> str:
    """The class path ``make kafka`` wrote, every jar of it present in Maven's local repository."""
    if not CLASSPATH_FILE.exists():
        raise ClusterError(f"{CLASSPATH_FILE} is missing: run `make kafka` (Apache Kafka from Maven Central)")
    jars = CLASSPATH_FILE.read_text().strip()
    missing = [jar for jar in jars.split(os.pathsep) if not Path(jar).exists()]
    if missing:
        raise ClusterError(
            f"{len(missing)} jars of {CLASSPATH_FILE} are missing (first {missing[0]}): run `make kafka`"
        )
    return jars


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Node:
    node_id: int
    port: int
    controller_port: int
    folder: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.folder / "server.log"


def new_cluster_id() -> str:
    """A cluster id as Kafka's ``Uuid.randomUuid`` makes it: 22 base64url characters, never starting with
    ``-`` (a command line would read such an id as an option, as ``kafka-storage format`` does)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode()[:22]
        if not cluster_id.startswith("-"):
            return cluster_id


@dataclass
class KafkaCluster:
    """Three KRaft nodes; ``start()`` formats and runs them, ``close()`` stops them."""

    folder: Path
    overrides: dict[str, str] = field(default_factory=dict)
    heap: str = "512m"  # each node's -Xmx
    nodes: list[Node] = field(default_factory=list)
    cluster_id: str = field(default_factory=new_cluster_id)
    started_in: float = 0.0

    def __post_init__(self) -> None:
        self.classpath = classpath()
        if not self.nodes:
            self.nodes = [
                Node(node_id, free_port(), free_port(), self.folder / f"node-{node_id}")
                for node_id in range(1, NODES + 1)
            ]

    @property
    def bootstrap(self) -> str:
        return ",".join(node.address for node in self.nodes)

    def node(self, node_id: int) -> Node:
        return next(node for node in self.nodes if node.node_id == node_id)

    def properties(self, node: Node) -> str:
        voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.nodes)
        login = "org.apache.kafka.common.security.scram.ScramLoginModule required"
        jaas = f'{login} username="{SUPER_USER[0]}" password="{SUPER_USER[1]}";'
        config = {
            "process.roles": "broker,controller",
            "node.id": str(node.node_id),
            "controller.quorum.voters": voters,
            "listeners": f"SASL_PLAINTEXT://127.0.0.1:{node.port},CONTROLLER://127.0.0.1:{node.controller_port}",
            "advertised.listeners": f"SASL_PLAINTEXT://127.0.0.1:{node.port}",
            "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": MECHANISM,
            "sasl.mechanism.inter.broker.protocol": MECHANISM,
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": jaas,
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": f"User:{SUPER_USER[0]};User:ANONYMOUS",
            "log.dirs": str(node.folder / "data"),
            "default.replication.factor": "3",
            "min.insync.replicas": "2",
            "offsets.topic.replication.factor": "3",
            "transaction.state.log.replication.factor": "3",
            "transaction.state.log.min.isr": "2",
            "share.coordinator.state.topic.replication.factor": "3",
            "share.coordinator.state.topic.min.isr": "2",
            # As Kafka's config/server.properties: a group's first rebalance is not delayed 3 s.
            "group.initial.rebalance.delay.ms": "0",
            # An idle cleaner thread looks for work again after 1 s, not Kafka's 15 s, so that the
            # erasure tests see a compaction within seconds (app.domain.compaction takes it as a parameter).
            "log.cleaner.backoff.ms": "1000",
            **self.overrides,
        }
        return "".join(f"{key}={value}\n" for key, value in config.items())

    def _java(self, node: Node, *arguments: str) -> list[str]:
        return [
            "java",
            *JVM_OPTIONS,
            f"-Xmx{self.heap}",
            f"-Dlog4j2.configurationFile={node.folder / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={node.folder}",
            "-cp",
            self.classpath,
            *arguments,
        ]

    def _format(self) -> None:
        scram = [
            f"--add-scram={MECHANISM}=[name={name},password={password}]" for name, password in USERS.items()
        ]
        formats = []
        for node in self.nodes:
            node.folder.mkdir(parents=True, exist_ok=True)
            (node.folder / "server.properties").write_text(self.properties(node))
            (node.folder / "log4j2.properties").write_text(LOG4J.format(folder=node.folder))
            command = self._java(
                node, "kafka.tools.StorageTool", "format", "--config", str(node.folder / "server.properties"),
                "--cluster-id", self.cluster_id, *scram,
            )  # fmt: skip
            formats.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        for node, process in zip(self.nodes, formats, strict=True):
            output, _ = process.communicate(timeout=120)
            if process.returncode != 0:
                raise ClusterError(
                    f"formatting node {node.node_id} failed: {output.decode(errors='replace')}"
                )

    def start(self, timeout: float = 120.0) -> None:
        began = time.monotonic()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.admin_properties.write_text(
            "security.protocol=SASL_PLAINTEXT\n"
            f"sasl.mechanism={MECHANISM}\n"
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{SUPER_USER[0]}" password="{SUPER_USER[1]}";\n'
        )
        self._format()
        for node in self.nodes:
            self.start_node(node.node_id)
        self.wait_ready(timeout)
        self.started_in = time.monotonic() - began

    def start_node(self, node_id: int) -> None:
        node = self.node(node_id)
        if node.process is not None and node.process.poll() is None:
            return
        out = (node.folder / "stdout.log").open("ab")
        node.process = subprocess.Popen(
            self._java(node, "kafka.Kafka", str(node.folder / "server.properties")),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()

    def stop_node(self, node_id: int, timeout: float = 60.0) -> None:
        """A clean shutdown (SIGTERM): the node hands its leaderships over first."""
        node = self.node(node_id)
        if node.process is None:
            return
        node.process.send_signal(signal.SIGTERM)
        try:
            node.process.wait(timeout)
        except subprocess.TimeoutExpired:
            node.process.kill()
            node.process.wait()
        node.process = None

    def kill_node(self, node_id: int) -> None:
        """``kill -9``: no shutdown; the controller fences the node after its session times out."""
        node = self.node(node_id)
        if node.process is None:
            return
        node.process.kill()
        node.process.wait()
        node.process = None

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until every running node answers a metadata request itself, listing every running node. (A
        node serves clients only once it has caught up with the metadata log and is unfenced.)"""
        running = [node for node in self.nodes if node.process is not None]
        deadline = time.monotonic() + timeout
        waiting = list(running)
        while waiting:
            node = waiting[0]
            if node.process is not None and node.process.poll() is not None:
                raise ClusterError(
                    f"node {node.node_id} exited with {node.process.returncode}: see {node.log}"
                )
            if self._serves(node, {n.node_id for n in running}):
                waiting.pop(0)
                continue
            if time.monotonic() > deadline:
                raise ClusterError(f"node {node.node_id} not ready after {timeout:.0f} s: see {node.log}")
            time.sleep(0.2)

    def _serves(self, node: Node, expected: set[int]) -> bool:
        # Only this node as bootstrap; refused connections are expected while it starts.
        admin = AdminClient({**self.client_config(), "bootstrap.servers": node.address, "log_level": 0})
        try:
            return expected <= set(admin.list_topics(timeout=2).brokers)
        except Exception:  # not answering yet
            return False

    def client_config(self, user: str = SUPER_USER[0]) -> dict[str, str]:
        """confluent-kafka (librdkafka) settings for ``user``."""
        return {
            "bootstrap.servers": self.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": MECHANISM,
            "sasl.username": user,
            "sasl.password": USERS[user],
        }

    def aiokafka_config(self, user: str = SUPER_USER[0]) -> dict[str, str]:
        """aiokafka settings for ``user``."""
        return {
            "bootstrap_servers": self.bootstrap,
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": MECHANISM,
            "sasl_plain_username": user,
            "sasl_plain_password": USERS[user],
        }

    def java(
        self, main_class: str, *arguments: str, stdin: str | None = None, timeout: float = 120.0
    ) -> subprocess.CompletedProcess[str]:
        """One of Kafka's own tools (say ``org.apache.kafka.tools.DeleteRecordsCommand``), fed ``stdin``,
        its output captured; ``admin_properties`` is the super user's ``--command-config``."""
        command = ["java", "-Xmx256m", "-cp", self.classpath, main_class, *arguments]
        return subprocess.run(
            command, input=stdin, capture_output=True, text=True, timeout=timeout, check=False
        )

    @property
    def admin_properties(self) -> Path:
        return self.folder / "admin.properties"

    def close(self) -> None:
        """SIGTERM to every node, SIGKILL after 5 s: the last nodes of a quorum would otherwise wait
        for the controllers that already left, and the logs die with the cluster anyway."""
        for node in self.nodes:
            if node.process is not None:
                node.process.send_signal(signal.SIGTERM)
        for node in self.nodes:
            if node.process is not None:
                try:
                    node.process.wait(5)
                except subprocess.TimeoutExpired:
                    node.process.kill()
                    node.process.wait()
                node.process = None


@contextmanager
def running_cluster(folder: Path, overrides: dict[str, str] | None = None) -> Iterator[KafkaCluster]:
    """A started cluster in ``folder``, stopped at the end (the folder is left to the caller)."""
    cluster = KafkaCluster(folder, overrides or {})
    with ExitStack() as stack:
        stack.callback(cluster.close)
        cluster.start()
        yield cluster
