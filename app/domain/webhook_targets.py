"""Where webhooks may send: a target URL's syntax, its host read as the HTTP client and the resolver read
it, and the policy that decides which hosts and addresses deliveries may reach.

A target is an absolute http(s) URL without user info, fragment, whitespace or control characters. Its
host is normalised as the client and the operating system would: IDNA (UTS #46) maps full-width and
other dots, digits and letters to ASCII, a trailing dot goes, and a numeric host is read with
``inet_aton``'s legacy rules (``2852039166``, ``0x7f000001``, ``0177.0.0.2``, ``127.1`` and ``0`` are
addresses). What is checked is therefore what is connected to.

The policy (``TargetPolicy``) has two parts, both of which a target must pass:

- ``hosts`` (``PURGE_WEBHOOKS_ALLOWED_HOSTS``): the hosts a URL may name, as names, ``*.suffix`` names
  and CIDRs; empty, any host. A name matched only by a CIDR entry must resolve into those networks.
- ``networks`` (``PURGE_WEBHOOKS_ALLOWED_NETWORKS``): the special-purpose address space a target may
  reach. Every loopback, link-local (metadata endpoints included), private, unique-local, shared,
  multicast, reserved, documentation and unspecified address is refused unless one of these networks
  holds it; an allowed *name* opens no network.

A target is checked when it is set (``check``: its host, and its address when it is one; ``localhost``
and ``*.localhost`` names count as loopback, RFC 6761; other names are not resolved then) and at every
delivery after resolving it (``check_connection``: every address the name resolved to), and the
delivery connects to a checked address.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import idna

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_PORTS = {"http": 80, "https": 443}
LOOPBACK = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
_URL_SAFE = "!$%&'()*+,/:;=?@[]~"
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?")
# Address space that is not a public receiver (IANA's IPv4 and IPv6 special-purpose registries, and
# multicast). ``ipaddress``'s own flags are consulted as well; this list does not depend on their
# Python version.
SPECIAL_NETWORKS: tuple[Network, ...] = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "::/96",  # unspecified, loopback and the IPv4-compatible addresses
        "::ffff:0:0/96",
        "64:ff9b:1::/48",
        "100::/64",
        "2001::/23",
        "2001:db8::/32",
        "3fff::/20",
        "5f00::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    )
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class TargetRefused(ValueError):
    """A webhook target URL the service will not call."""


@dataclass(frozen=True)
class Target:
    """A target URL as it is called: ``host`` normalised (ASCII, lower case, no trailing dot; an address
    in its canonical form, IPv6 without brackets), ``address`` when the host is one."""

    scheme: str
    host: str
    address: Address | None
    port: int
    path: str  # the request target: path and query

    @property
    def authority(self) -> str:
        """The ``Host`` header: the host (IPv6 in brackets) and a port other than the scheme's."""
        host = f"[{self.host}]" if self.address is not None and self.address.version == 6 else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def loopback_name(self) -> bool:
        return self.address is None and (self.host == "localhost" or self.host.endswith(".localhost"))


def parse_target(url: str) -> Target:
    """``url`` as it is called; ``TargetRefused`` unless it is an absolute http(s) URL with a host and
    without credentials, fragment, whitespace or control characters."""
    if any(c.isspace() or unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Zs") for c in url):
        raise TargetRefused("the URL must not contain whitespace or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise TargetRefused(f"not a valid URL: {exc}") from None
    if parts.scheme not in DEFAULT_PORTS:
        raise TargetRefused("only http and https URLs are allowed")
    if "@" in parts.netloc or parts.username is not None:
        raise TargetRefused("the URL must not carry credentials (the deliveries are signed instead)")
    if not parts.hostname:
        raise TargetRefused("the URL needs a host")
    if parts.fragment:
        raise TargetRefused("the URL must not have a fragment")
    if port == 0:
        raise TargetRefused("the URL's port must not be 0")
    host, address = normal_host(parts.hostname)
    # Percent-encoded as the HTTP client would: the request line carries ASCII only.
    path = quote((parts.path or "/") + (f"?{parts.query}" if parts.query else ""), safe=_URL_SAFE)
    return Target(parts.scheme, host, address, port or DEFAULT_PORTS[parts.scheme], path)


def check_target(url: str) -> str:
    """``url`` if ``parse_target`` takes it; else ``TargetRefused``."""
    parse_target(url)
    return url


def normal_host(text: str) -> tuple[str, Address | None]:
    """A URL's host as the client and resolver read it, and the address it is (None: a name)."""
    if "%" in text:
        raise TargetRefused("the URL's host must not carry a zone id or percent-encoding")
    if ":" in text:  # only an IPv6 literal has one (urlsplit has taken the port off)
        try:
            address: Address = ipaddress.IPv6Address(text)
        except ValueError:
            raise TargetRefused("the URL's host is not a valid IPv6 address") from None
        return _plain(address).compressed, _plain(address)
    try:
        host = idna.uts46_remap(text, std3_rules=False, transitional=False).removesuffix(".")
    except idna.IDNAError:
        raise TargetRefused("the URL's host is not a valid host name") from None
    try:
        address = ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return _name(host), None
    return str(address), address


def _name(host: str) -> str:
    try:
        name = idna.encode(host, uts46=False).decode() if not host.isascii() else host
    except idna.IDNAError:
        raise TargetRefused("the URL's host is not a valid host name") from None
    if len(name) > 253 or not all(len(label) <= 63 and _LABEL.fullmatch(label) for label in name.split(".")):
        raise TargetRefused("the URL's host is not a valid host name")
    return name


def _plain(address: Address) -> Address:
    """An IPv4-mapped IPv6 address as the IPv4 address it reaches; any other as it is."""
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return mapped or address


def special(address: Address) -> bool:
    """Whether ``address`` is not a public receiver's: any special-purpose address, or an IPv6 address
    that carries one (IPv4-compatible, NAT64, 6to4)."""
    address = _plain(address)
    if address in NAT64:  # what a DNS64 resolver answers for an IPv4 host: judged by that host
        return special(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if any(address in network for network in SPECIAL_NETWORKS):
        return True
    if not address.is_global or address.is_multicast or address.is_reserved:
        return True
    sixtofour = address.sixtofour if isinstance(address, ipaddress.IPv6Address) else None
    return sixtofour is not None and special(sixtofour)


def parse_networks(text: str) -> tuple[Network, ...]:
    """Comma-separated CIDRs (``PURGE_WEBHOOKS_ALLOWED_NETWORKS``); ``ValueError`` on anything else."""
    networks = []
    for entry in (e.strip() for e in text.split(",")):
        if entry:
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise ValueError(f"not a CIDR network: {entry!r}") from None
    return tuple(networks)


@dataclass(frozen=True)
class HostAllowList:
    """Which hosts webhooks may name (``PURGE_WEBHOOKS_ALLOWED_HOSTS``): exact names, ``*.suffix``
    names, and IP networks (CIDR). Empty: every host."""

    names: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, text: str) -> HostAllowList:
        names: set[str] = set()
        suffixes: list[str] = []
        networks: list[Network] = []
        for entry in (e.strip().lower() for e in text.split(",")):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
                continue
            except ValueError:
                pass
            try:
                host, address = normal_host(entry.removeprefix("*."))
            except TargetRefused:
                raise ValueError(f"not a host name, *.suffix or CIDR: {entry!r}") from None
            if address is not None and entry.startswith("*."):
                raise ValueError(f"not a host name, *.suffix or CIDR: {entry!r}")
            if address is not None:
                networks.append(ipaddress.ip_network(address))
            elif entry.startswith("*."):
                suffixes.append("." + host)
            else:
                names.add(host)
        return cls(frozenset(names), tuple(suffixes), tuple(networks))

    @property
    def open(self) -> bool:
        return not (self.names or self.suffixes or self.networks)

    def allows_name(self, target: Target) -> bool:
        """Whether the target's host is allowed without resolving it."""
        if self.open or target.host in self.names or target.host.endswith(self.suffixes):
            return True
        return target.address is not None and self.allows_addresses([target.address])

    def allows_addresses(self, addresses: Iterable[Address]) -> bool:
        """Whether every address (what a host name resolved to) lies in an allowed network."""
        found = [_plain(a) for a in addresses]
        return bool(found) and all(any(a in network for network in self.networks) for a in found)

    def needs_resolving(self, target: Target) -> bool:
        """Whether deciding on the target's host takes resolving it: a name matched by no name entry,
        with networks listed."""
        return target.address is None and bool(self.networks) and not self.allows_name(target)


@dataclass(frozen=True)
class TargetPolicy:
    """The hosts a target may name and the special-purpose networks it may reach (module docstring)."""

    hosts: HostAllowList = HostAllowList()
    networks: tuple[Network, ...] = ()

    def permits(self, address: Address) -> bool:
        address = _plain(address)
        return not special(address) or any(address in network for network in self.networks)

    def check(self, target: Target) -> None:
        """``TargetRefused`` unless the target may be set: its host allowed (or left to resolving), its
        address (or a ``localhost`` name's loopback) permitted."""
        if not (self.hosts.allows_name(target) or self.hosts.needs_resolving(target)):
            raise TargetRefused("the URL's host is not in PURGE_WEBHOOKS_ALLOWED_HOSTS")
        if target.address is not None and not self.permits(target.address):
            raise TargetRefused(_NOT_PERMITTED)
        if target.loopback_name and not any(self.permits(a) for a in LOOPBACK):
            raise TargetRefused(_NOT_PERMITTED)

    def check_connection(self, target: Target, addresses: Iterable[Address]) -> None:
        """``TargetRefused`` unless a delivery may connect to the target, whose host resolved to
        ``addresses``: the host allowed, every address permitted."""
        found = list(addresses)
        if not found:
            raise TargetRefused("the URL's host resolved to no address")
        if not (self.hosts.allows_name(target) or self.hosts.allows_addresses(found)):
            raise TargetRefused("the URL's host is not in PURGE_WEBHOOKS_ALLOWED_HOSTS")
        if not all(self.permits(a) for a in found):
            raise TargetRefused(_NOT_PERMITTED)


_NOT_PERMITTED = (
    "the URL's host is a loopback, private, link-local or other special-purpose address, "
    "not in PURGE_WEBHOOKS_ALLOWED_NETWORKS"
)
