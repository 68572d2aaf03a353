"""`EmulatedCluster`: builds the model, groups and ACL parts, one listener per broker, and the controls.

Controls that open or close sockets (`stop_broker`, `kill_broker`, `start_broker`, `drop_connections`) are
coroutines;
the others change the model synchronously.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType
from typing import Any

from kafka_emulator.acls import AclStore, register_acl_handlers
from kafka_emulator.control import ControlServer
from kafka_emulator.dispatch import Dispatcher
from kafka_emulator.faults import FaultInjector
from kafka_emulator.groups import GROUP_API_MAX_VERSIONS, GroupCoordinator, register_group_handlers
from kafka_emulator.handlers import register_data_handlers
from kafka_emulator.protocol import messages
from kafka_emulator.protocol.api import HandlerRegistry
from kafka_emulator.request_log import (
    DEFAULT_MAX_PARTITIONS,
    DEFAULT_MAX_REQUESTS,
    LoggedRequest,
    RequestLog,
)
from kafka_emulator.server import BrokerServer
from kafka_emulator.state import ClusterState

OFFSETS_TOPIC = "__consumer_offsets"
DELETE_RECORDS = 21


class EmulatedCluster:
    def __init__(
        self,
        brokers: int = 3,
        host: str = "127.0.0.1",
        port: int = 0,
        replication_interval_ms: float = 5.0,
        replica_fetch_wait_max_ms: float = 500.0,
        broker_session_timeout_ms: float = 9_000.0,
        delete_records_max_version: int | dict[int, int] = 2,
        sasl_users: dict[str, str] | None = None,
        super_users: Iterable[str] = (),
        acl_authorizer: bool = False,
        offsets_partitions: int = 3,
        request_log_max: int = DEFAULT_MAX_REQUESTS,
        request_log_apis: Iterable[str | int] = ("DeleteRecords",),
        request_log_max_partitions: int = DEFAULT_MAX_PARTITIONS,
    ) -> None:
        if brokers < 1:
            raise ValueError("a cluster needs at least one broker")
        broker_ids = list(range(1, brokers + 1))
        self.host = host
        self.model = ClusterState(
            broker_ids,
            replication_interval_ms=replication_interval_ms,
            replica_fetch_wait_max_ms=replica_fetch_wait_max_ms,
            broker_session_timeout_ms=broker_session_timeout_ms,
        )
        for broker in broker_ids:
            version = (
                delete_records_max_version.get(broker, 2)
                if isinstance(delete_records_max_version, dict)
                else delete_records_max_version
            )
            self.set_delete_records_max_version(broker, version)
        self.acls = AclStore(super_users=list(super_users), enabled=acl_authorizer)
        self.groups = GroupCoordinator(self.model)
        self.faults = FaultInjector()
        self.requests = RequestLog(request_log_max, request_log_apis, request_log_max_partitions)
        registry = HandlerRegistry()
        register_data_handlers(registry, self.model, self.acls)
        register_group_handlers(registry, self.groups, self.acls)
        register_acl_handlers(registry, self.acls, self.acls)
        self.model.create_topic(OFFSETS_TOPIC, offsets_partitions, None, {"cleanup.policy": "compact"})
        dispatcher = Dispatcher(registry, self.faults, sasl_users, self._version_limit, self.requests)
        self._servers = {
            broker: BrokerServer(broker, dispatcher, host, port + broker - 1 if port else 0)
            for broker in broker_ids
        }
        self._control: ControlServer | None = None
        self._started = False

    async def __aenter__(self) -> EmulatedCluster:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        messages.precompile()
        await self.model.start()
        for broker, server in self._servers.items():
            await server.start()
            self.model.set_listener(broker, server.host, server.port)
        self._started = True

    async def stop(self) -> None:
        if self._control is not None:
            await self._control.stop()
            self._control = None
        for server in self._servers.values():
            await server.stop()
        self.groups.close()
        if self._started:
            await self.model.stop()
            self._started = False

    @property
    def brokers(self) -> dict[int, tuple[str, int]]:
        return {broker: (server.host, server.port) for broker, server in self._servers.items()}

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{host}:{port}" for host, port in self.brokers.values())

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int | None = None,
        configs: dict[str, str] | None = None,
    ) -> None:
        self.model.create_topic(name, partitions, replication_factor, configs)

    async def stop_broker(self, broker: int) -> None:
        """The broker stops counting as alive (leadership moves) and its listener and connections close."""
        server = self._server(broker)
        self.model.stop_broker(broker)
        await server.stop()

    async def kill_broker(self, broker: int) -> None:
        """A crash (no controlled shutdown): the listener and connections close at once, but the broker
        stays registered, its replicas counted alive, until ``broker_session_timeout_ms`` passes."""
        server = self._server(broker)
        self.model.kill_broker(broker)
        await server.stop()

    async def start_broker(self, broker: int) -> None:
        """Reopens the listener on the same port; the broker rejoins as a follower and catches up."""
        server = self._server(broker)
        await server.start()
        self.model.start_broker(broker)

    def pause_follower(self, topic: str, partition: int, broker: int) -> None:
        self.model.pause_follower(topic, partition, broker)

    def resume_follower(self, topic: str, partition: int, broker: int) -> None:
        self.model.resume_follower(topic, partition, broker)

    def move_leader(
        self,
        topic: str,
        partition: int,
        broker: int,
        high_watermark: int | None = None,
        catch_up_ms: float = 0.0,
    ) -> None:
        """Elect ``broker``; optionally with a lagging high watermark for ``catch_up_ms``."""
        self.model.move_leader(topic, partition, broker, high_watermark, catch_up_ms)

    def inject_fault(
        self, broker: int, api: str | int, error: str | int | None = None, count: int = 1, delay_ms: float = 0
    ) -> None:
        """Delay and/or fail the next ``count`` requests of ``api`` on ``broker``."""
        self._server(broker)
        self.faults.add(broker, api, error, count, delay_ms)

    async def drop_connections(self, broker: int | None = None) -> None:
        """Abruptly close the client connections of one broker (or of all brokers)."""
        servers = self._servers.values() if broker is None else [self._server(broker)]
        for server in servers:
            await server.drop_connections()

    def set_delete_records_max_version(self, broker: int, version: int) -> None:
        low, high = messages.supported_versions(DELETE_RECORDS)
        if not low <= version <= high:
            raise ValueError(f"DeleteRecords version must be within {low}..{high}")
        if broker not in self.model.broker_ids:
            raise KeyError(f"unknown broker {broker}")
        self.model.max_delete_records_version[broker] = version

    def request_log(
        self, api: str | int | None = "DeleteRecords", client_id: str | None = None
    ) -> list[LoggedRequest]:
        """Recorded requests of ``api`` (None: every recorded API), optionally of one client id, oldest
        first. Only the APIs given as ``request_log_apis`` are recorded."""
        return list(self.requests.entries(api, client_id))

    def clear_request_log(self) -> None:
        self.requests.clear()

    def state(self) -> dict[str, Any]:
        snapshot = dict(self.model.snapshot())
        snapshot["listeners"] = {str(b): {"host": h, "port": p} for b, (h, p) in self.brokers.items()}
        snapshot["groups"] = self.groups.snapshot()
        snapshot["acls"] = self.acls.snapshot()
        snapshot["faults"] = self.faults.pending()
        return snapshot

    async def start_control_api(self, port: int = 0) -> str:
        """Serve the HTTP control API on loopback; returns its base URL."""
        if self._control is None:
            self._control = ControlServer(self, self.host)
            await self._control.start(port)
        return self._control.url

    def _server(self, broker: int) -> BrokerServer:
        try:
            return self._servers[broker]
        except KeyError:
            raise KeyError(f"unknown broker {broker}") from None

    def _version_limit(self, broker: int, api_key: int) -> int | None:
        if api_key == DELETE_RECORDS:
            return self.model.max_delete_records_version.get(broker)
        return GROUP_API_MAX_VERSIONS.get(api_key)
