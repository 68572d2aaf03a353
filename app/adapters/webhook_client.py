"""The HTTP client of webhook deliveries: httpcore's connection pool over a network backend that
connects only to checked addresses.

Each new connection resolves the target's host itself, checks every address it resolved to against the
target policy (``TargetPolicy.check_connection``) and connects to those addresses, never to a second
lookup of the name: DNS rebinding cannot switch the address between the check and the connection. The
request still names the host (``Host`` header, TLS SNI and certificate check). No redirect is followed,
no proxy from the environment is used, and an attempt is bounded as a whole by its timeout.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable, Mapping

import httpcore

from app.domain.webhook_targets import Address, Target, TargetPolicy, TargetRefused, normal_host

SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]


class CheckedNetwork(httpcore.AsyncNetworkBackend):
    """TCP connections to addresses the target policy permits (``TargetRefused`` otherwise)."""

    def __init__(self, policy: TargetPolicy) -> None:
        self._policy = policy
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        name, address = normal_host(host)
        addresses = [address] if address is not None else await _resolve(name, port)
        self._policy.check_connection(Target("http", name, address, port, "/"), addresses)
        failure: Exception = TargetRefused("the URL's host resolved to no address")
        for checked in addresses:
            try:
                return await self._backend.connect_tcp(
                    str(checked), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise TargetRefused("webhooks are delivered over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


async def _resolve(name: str, port: int) -> list[Address]:
    """The addresses ``name`` resolves to, in the resolver's order, without repeats."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise httpcore.ConnectError(f"resolving the host failed: {exc}") from None
    found: dict[Address, None] = {}
    for info in infos:
        found[ipaddress.ip_address(str(info[4][0]).split("%")[0])] = None
    return list(found)


class WebhookClient:
    """POSTs deliveries to their targets under ``policy``, each attempt within ``timeout_seconds``."""

    def __init__(self, policy: TargetPolicy, *, timeout_seconds: float, max_connections: int) -> None:
        self._timeout = timeout_seconds
        self._pool = httpcore.AsyncConnectionPool(
            max_connections=max_connections,
            keepalive_expiry=30.0,
            network_backend=CheckedNetwork(policy),
        )

    async def post(self, target: Target, body: bytes, headers: Mapping[str, str]) -> int:
        """The HTTP status the target answered (its body is not read)."""
        url = httpcore.URL(
            scheme=target.scheme.encode(), host=target.host.encode(), port=target.port, target=target.path
        )
        sent = [
            (b"host", target.authority.encode()),
            (b"content-length", str(len(body)).encode()),
            *((name.encode(), value.encode()) for name, value in headers.items()),
        ]
        timeouts = dict.fromkeys(("connect", "read", "write", "pool"), self._timeout)
        async with asyncio.timeout(self._timeout):
            async with self._pool.stream(
                "POST", url, headers=sent, content=body, extensions={"timeout": timeouts}
            ) as response:
                return response.status

    async def aclose(self) -> None:
        await self._pool.aclose()
