"""Who is calling: the authenticated principal, and the client address it called from."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import lru_cache

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Principal:
    """An authenticated caller, named the way Kafka names principals (``User:alice``, ``Group:ops``).

    ``groups_reported``: the token carried a groups claim, so ``groups`` are every group the identity
    provider puts them in (an empty claim: none); without one the service does not know their groups."""

    user: str
    groups: tuple[str, ...]
    client_host: str
    groups_reported: bool = False

    @property
    def name(self) -> str:
        return f"User:{self.user}"

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *(f"Group:{group}" for group in self.groups))


@lru_cache(maxsize=64)
def _networks(trusted: frozenset[str]) -> tuple[IpNetwork, ...]:
    networks: list[IpNetwork] = []
    for entry in trusted:
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            continue  # a host name: matched literally by _is_trusted
    return tuple(networks)


def _is_trusted(host: str, trusted: frozenset[str]) -> bool:
    if host in trusted:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in _networks(trusted))


def client_host(peer: str | None, forwarded_for: list[str], trusted: frozenset[str]) -> str:
    """The caller's address: the socket peer, unless that peer is a trusted proxy.

    Behind trusted proxies the right-most ``X-Forwarded-For`` entry that is not itself a trusted proxy
    is the first address no trusted party vouches for; anything left of it may be forged by the client.
    """
    host = peer or "unknown"
    if not trusted or not _is_trusted(host, trusted):
        return host
    entries = [e.strip() for header in forwarded_for for e in header.split(",") if e.strip()]
    for entry in reversed(entries):
        if not _is_trusted(entry, trusted):
            return entry
    return entries[0] if entries else host
