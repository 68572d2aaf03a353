"""A typed wrapper over aiokafka's ``AIOKafkaClient`` for one cluster.

Every call here has its own deadline. aiokafka applies one ``request_timeout_ms`` to every request of
a connection, but a DeleteRecords may legitimately wait ``TimeoutMs`` in the broker's purgatory, which
can be longer than a metadata request should ever take. So aiokafka's own timer is set out of the way
(``_TRANSPORT_CEILING_MS``) and each call is bounded here instead.

A broker answers the requests of one connection one at a time, in order, so a DeleteRecords held in
its purgatory would hold back every request sent after it on that connection: an API request's
Metadata or ListOffsets could wait the whole ``TimeoutMs`` behind the executor's deletion (and fail
with a 503). Requests the broker may hold (``purgatory=True``) therefore travel over a second connection
to each broker (aiokafka's second connection group), and everything else over the first.

Failures come out as ``BrokerFailure`` with the Kafka error name the outcome should carry
(``NETWORK_EXCEPTION`` for a broker that cannot be reached, ``REQUEST_TIMED_OUT`` for one that does
not answer in time), or ``VersionUnsupported`` when nothing was sent.

Callers asking for the same read while one is in flight share its answer (``SingleFlight``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Generic, TypeVar

from aiokafka.client import AIOKafkaClient, ConnectionGroup
from aiokafka.conn import CloseReason
from aiokafka.errors import IncompatibleBrokerVersion, KafkaError, RequestTimedOutError

from app.adapters.kafka.codecs.topic_metadata import Metadata, TopicMetadataRequest
from app.adapters.kafka.error_codes import VersionUnsupported
from app.errors import ServiceUnavailable
from app.settings import ClusterSettings

log = logging.getLogger(__name__)

_TRANSPORT_CEILING_MS = 2**31 - 1
# The connections for requests the broker may hold in its purgatory (DeleteRecords), and for the rest.
_HELD, _PROMPT = ConnectionGroup.COORDINATION, ConnectionGroup.DEFAULT

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BrokerFailure(Exception):
    """A request to one broker failed on the client side; ``error`` is the Kafka error name to report."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


class ClusterUnreachable(Exception):
    """No broker of the cluster answered."""


class ReadFailed(Exception):
    """A fact of the cluster (a topic's, a broker's, a group's) could not be read completely."""


@asynccontextmanager
async def unavailable(cluster: str) -> AsyncIterator[None]:
    """A cluster that cannot be reached or a fact that cannot be read completely is a
    ``ServiceUnavailable``: callers never decide on partial data."""
    try:
        yield
    except (ClusterUnreachable, ReadFailed) as exc:
        raise ServiceUnavailable(f"cluster {cluster!r}: {exc}") from exc


class SingleFlight(Generic[K, V]):
    """Callers asking for ``key`` while a call for it is in flight share that call's answer (or error).
    A cancelled caller does not cancel the call; once the answer is in, the next caller calls again."""

    def __init__(self) -> None:
        self.pending: dict[K, asyncio.Future[V]] = {}

    async def run(self, key: K, call: Callable[[], Awaitable[V]]) -> V:
        pending = self.pending.get(key)
        if pending is None:
            pending = asyncio.ensure_future(call())
            self.pending[key] = pending
            pending.add_done_callback(partial(self._settled, key))
        return await asyncio.shield(pending)

    def _settled(self, key: K, done: asyncio.Future[V]) -> None:
        if self.pending.get(key) is done:
            del self.pending[key]
        if not done.cancelled():
            done.exception()  # retrieved here too: every waiter may have been cancelled meanwhile


def _ssl_context(settings: ClusterSettings) -> ssl.SSLContext | None:
    if settings.security_protocol not in ("SSL", "SASL_SSL"):
        return None
    return ssl.create_default_context(cafile=settings.ssl_cafile)


class ClusterClient:
    """One started ``AIOKafkaClient`` for one configured cluster."""

    def __init__(self, name: str, settings: ClusterSettings) -> None:
        self.name = name
        self.settings = settings
        self._client: Any = None
        self._preferred_node: Any = None
        # The coordinator last found for each consumer group (``group_queries.py``), kept until a request
        # to it fails, as Kafka's clients do.
        self.coordinators: dict[str, int] = {}

    @property
    def timeout_s(self) -> float:
        return self.settings.request_timeout_ms / 1000

    async def start(self) -> None:
        """Connect and read the cluster's brokers; raises ClusterUnreachable.

        Bootstrap servers are tried one at a time, each within the request timeout: with aiokafka's own
        timer out of the way, one silent address must not use up the time of the others.
        """
        errors: list[str] = []
        for server in self.settings.bootstrap_servers.split(","):
            client = self._new_client(server.strip())
            try:
                async with asyncio.timeout(self.timeout_s):
                    await client.bootstrap()
            except (KafkaError, OSError, TimeoutError) as exc:
                await client.close()
                errors.append(f"{server.strip()}: {exc!r}")
                continue
            except BaseException:  # cancelled: leave no connection behind
                await client.close()
                raise
            self._client = client
            return
        raise ClusterUnreachable(f"cluster {self.name!r}: cannot bootstrap ({'; '.join(errors)})")

    def _new_client(self, bootstrap_server: str) -> Any:
        s = self.settings
        return AIOKafkaClient(
            bootstrap_servers=bootstrap_server,
            client_id=s.client_id,
            request_timeout_ms=_TRANSPORT_CEILING_MS,
            security_protocol=s.security_protocol,
            ssl_context=_ssl_context(s),
            sasl_mechanism=s.sasl_mechanism or "PLAIN",
            sasl_plain_username=s.sasl_username,
            sasl_plain_password=s.sasl_password.get_secret_value() if s.sasl_password else None,
        )

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    async def connect_all(self) -> None:
        """Open a connection to every broker the client knows (versions negotiated), each within the
        request timeout; a broker that cannot be reached is skipped."""
        if self._client is None:
            return
        for node in self.nodes():
            try:
                async with asyncio.timeout(self.timeout_s):
                    for group in (_PROMPT, _HELD):
                        await self._client.ready(node, group=group)
            except (KafkaError, OSError, TimeoutError):
                continue

    def nodes(self) -> list[Any]:
        """The brokers the client knows, the one that last answered metadata first, the others shuffled."""
        if self._client is None:
            return []
        nodes = [broker.nodeId for broker in self._client.cluster.brokers()]
        random.shuffle(nodes)
        if self._preferred_node in nodes:
            nodes.remove(self._preferred_node)
            nodes.insert(0, self._preferred_node)
        return nodes

    async def metadata(self, topics: Sequence[str]) -> Metadata:
        """Fresh metadata for ``topics`` from the first broker that answers; raises ClusterUnreachable."""
        errors: list[str] = []
        for node in self.nodes():
            try:
                metadata = await self.send(node, TopicMetadataRequest(topics), timeout_s=self.timeout_s)
            except (BrokerFailure, VersionUnsupported) as exc:
                errors.append(f"broker {node}: {exc}")
                continue
            assert isinstance(metadata, Metadata)  # what TopicMetadataRequest's decoder returns
            self._preferred_node = node
            await self._learn_brokers(metadata)
            return metadata
        raise ClusterUnreachable(f"cluster {self.name!r}: no broker answered metadata ({'; '.join(errors)})")

    async def _learn_brokers(self, metadata: Metadata) -> None:
        """aiokafka connects only to brokers it knows; when the broker set changed (a broker came back),
        let it refresh its own view before a request goes to a leader it has not seen."""
        if self._client is None:
            return
        known = {broker.nodeId for broker in self._client.cluster.brokers()}
        if set(metadata.brokers) <= known:
            return
        try:
            async with asyncio.timeout(self.timeout_s):
                await self._client.force_metadata_update()
        except TimeoutError:
            log.warning("cluster %r: broker list refresh timed out", self.name)

    async def send(self, node_id: Any, request: Any, *, timeout_s: float, purgatory: bool = False) -> Any:
        """Send one request to one broker and return aiokafka's decoded response struct; ``purgatory``:
        the broker may hold it there (it goes over the broker's second connection)."""
        if self._client is None:  # closed meanwhile (service stopping, or the cluster was unreachable)
            raise BrokerFailure("NETWORK_EXCEPTION", f"cluster {self.name!r}: the client was closed")
        group = _HELD if purgatory else _PROMPT
        try:
            async with asyncio.timeout(timeout_s):
                return await self._client.send(node_id, request, group=group)
        except VersionUnsupported:
            raise
        except (IncompatibleBrokerVersion, NotImplementedError) as exc:
            raise VersionUnsupported(f"broker {node_id}: {exc}") from exc
        except (TimeoutError, RequestTimedOutError) as exc:
            self._drop_connection(node_id, group)
            raise BrokerFailure(
                "REQUEST_TIMED_OUT", f"broker {node_id} did not answer within {timeout_s * 1000:.0f} ms"
            ) from exc
        except (KafkaError, OSError) as exc:
            raise BrokerFailure(
                "NETWORK_EXCEPTION", f"broker {node_id} could not be reached: {exc!r}"
            ) from exc

    def _drop_connection(self, node_id: Any, group: ConnectionGroup) -> None:
        """After a client-side timeout the connection still owes an answer that may never come, and
        aiokafka matches answers in order; close it, as aiokafka does on its own timeout."""
        conn = self._client._conns.get((node_id, group)) if self._client else None
        if conn is not None:
            conn.close(reason=CloseReason.CONNECTION_TIMEOUT)
