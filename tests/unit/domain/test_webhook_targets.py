"""Webhook targets without I/O: URL syntax, every spelling of a special-purpose address read as the
client and resolver read it, the host allow-list and the networks the operator opens."""

from __future__ import annotations

import ipaddress

import pytest

from app.domain.webhook_targets import (
    HostAllowList,
    TargetPolicy,
    TargetRefused,
    check_target,
    parse_networks,
    parse_target,
    special,
)

# Each URL reaches a loopback, link-local, private, unique-local, multicast, reserved or unspecified
# address; the second item is the address the client would connect to.
SPECIAL_SPELLINGS = [
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
    ("http://2852039166/", "169.254.169.254"),
    ("http://0xa9fea9fe/", "169.254.169.254"),
    ("http://127.0.0.1:9/", "127.0.0.1"),
    ("http://[::1]:9/", "::1"),
    ("http://0x7f000001:9/", "127.0.0.1"),
    ("http://0x7f000002/", "127.0.0.2"),
    ("http://2130706434/", "127.0.0.2"),
    ("http://127.2/", "127.0.0.2"),
    ("http://127.1/", "127.0.0.1"),
    ("http://0177.0.0.2/", "127.0.0.2"),
    ("http://0/", "0.0.0.0"),
    ("http://127.0.0.1./", "127.0.0.1"),
    ("http://127\u30020\u30020\u30022/", "127.0.0.2"),  # ideographic full stops
    ("http://127\uff0e0\uff0e0\uff0e2/", "127.0.0.2"),  # full-width full stops
    ("http://\uff11\uff12\uff17.0.0.1/", "127.0.0.1"),  # full-width digits
    ("http://[::ffff:127.0.0.1]/", "127.0.0.1"),
    ("http://[::ffff:7f00:1]/", "127.0.0.1"),
    ("http://[::127.0.0.1]/", "::7f00:1"),
    ("http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1"),
    ("http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe"),
    ("http://[2002:7f00:1::]/", "2002:7f00:1::"),
    ("http://[fd00:ec2::254]/", "fd00:ec2::254"),
    ("http://[fe80::1]/", "fe80::1"),
    ("http://[::]/", "::"),
    ("http://[ff02::1]/", "ff02::1"),
    ("http://10.0.0.1/", "10.0.0.1"),
    ("http://172.16.0.1/", "172.16.0.1"),
    ("http://192.168.1.1/", "192.168.1.1"),
    ("http://100.64.0.1/", "100.64.0.1"),
    ("http://224.0.0.1/", "224.0.0.1"),
    ("http://240.0.0.1/", "240.0.0.1"),
    ("http://255.255.255.255/", "255.255.255.255"),
    ("http://0.0.0.0/", "0.0.0.0"),
]
LOOPBACK_NAMES = [
    "http://localhost:9/",
    "http://LOCALHOST./",
    "http://api.localhost/",
    "http://Local\uff28ost/",
]


@pytest.mark.parametrize(("url", "address"), SPECIAL_SPELLINGS)
def test_every_spelling_is_read_as_its_address(url: str, address: str) -> None:
    target = parse_target(url)
    assert target.address is not None
    assert (target.host, str(target.address)) == (address, address)
    assert special(target.address)


@pytest.mark.parametrize("allowed_hosts", ["", "*.hooks.internal,hooks.example.com,localhost"])
@pytest.mark.parametrize("url", [u for u, _ in SPECIAL_SPELLINGS] + LOOPBACK_NAMES)
def test_special_addresses_are_refused_by_default(url: str, allowed_hosts: str) -> None:
    policy = TargetPolicy(HostAllowList.parse(allowed_hosts))
    with pytest.raises(TargetRefused):
        policy.check(parse_target(url))


def test_an_opened_network_admits_its_addresses_in_every_spelling() -> None:
    policy = TargetPolicy(networks=parse_networks("127.0.0.0/8, ::1/128"))
    for url in ["http://127.0.0.1:9/", "http://0x7f000002/", "http://[::ffff:127.0.0.1]/", "http://[::1]/"]:
        policy.check(parse_target(url))
    policy.check(parse_target("http://localhost:9/"))
    with pytest.raises(TargetRefused):
        policy.check(parse_target("http://169.254.169.254/"))
    with pytest.raises(TargetRefused):
        policy.check(parse_target("http://10.0.0.1/"))


def test_public_addresses_and_names_pass_by_default() -> None:
    policy = TargetPolicy()
    for url in [
        "https://hooks.example.com/purge?team=orders",
        "http://8.8.8.8/",
        "http://[2606:4700::1111]/",
        "http://[64:ff9b::808:808]/",  # DNS64's answer for a public IPv4 host
        "http://b\u00fccher.example/",
    ]:
        policy.check(parse_target(url))


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.2\t.hooks.internal/",
        "http://hooks.internal\r\n.evil/",
        "http://hooks.internal/a\nb",
        "http://hooks.internal/a b",
        "http://hooks.internal/?q=\x00",
        "http://hooks.internal/\x7f",
        "http://hooks.internal/\u00a0",
        "http://hooks.internal/\u200b",
        " http://hooks.internal/",
        "http://hooks.internal/\x0b",
    ],
)
def test_whitespace_and_control_characters_are_refused(url: str) -> None:
    with pytest.raises(TargetRefused, match="whitespace or control characters"):
        check_target(url)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "gopher://example.com",
        "javascript:alert(1)",
        "//example.com/x",
        "https://alice:secret@example.com/x",
        "https://token@example.com/x",
        "https://@example.com/x",
        "http://hooks.example.com\\@127.0.0.1/",
        "http://example.com:99999/x",
        "http://example.com:0/x",
        "https://example.com/x#fragment",
        "http://[fe80::1%25eth0]/",
        "http://ex%61mple.com/",
        "http://exa_mple..com/",
        "http://-bad.example/",
    ],
)
def test_other_targets_are_refused(url: str) -> None:
    with pytest.raises(TargetRefused):
        check_target(url)


def test_the_target_as_it_is_called() -> None:
    target = parse_target("https://Hooks.Example.COM./purge?team=orders")
    assert (target.host, target.port, target.path, target.authority) == (
        "hooks.example.com",
        443,
        "/purge?team=orders",
        "hooks.example.com",
    )
    assert parse_target('https://hooks.example.com/b\u00fcro?q=a"b').path == "/b%C3%BCro?q=a%22b"
    assert parse_target("http://[::FFFF:8.8.8.8]:8080").authority == "8.8.8.8:8080"
    assert parse_target("http://[2606:4700::1]:8080").authority == "[2606:4700::1]:8080"


def test_the_allow_list() -> None:
    allowed = TargetPolicy(
        HostAllowList.parse("hooks.example.com, *.internal.example, 10.1.0.0/16"),
        parse_networks("10.1.0.0/16"),
    )
    for url in ["https://HOOKS.example.com/", "http://ci.internal.example/", "http://10.1.2.3/"]:
        allowed.check(parse_target(url))
    for url in ["http://10.2.0.1/", "http://8.8.8.8/"]:
        with pytest.raises(TargetRefused, match="PURGE_WEBHOOKS_ALLOWED_HOSTS"):
            allowed.check(parse_target(url))
    # A name matched only by a CIDR entry is decided by what it resolves to, at each delivery.
    other = parse_target("http://internal.example.evil/")
    allowed.check(other)
    allowed.check_connection(other, [ipaddress.ip_address("10.1.9.9")])
    with pytest.raises(TargetRefused, match="PURGE_WEBHOOKS_ALLOWED_HOSTS"):
        allowed.check_connection(other, [ipaddress.ip_address("10.1.9.9"), ipaddress.ip_address("8.8.8.8")])
    with pytest.raises(TargetRefused):
        allowed.check_connection(other, [])
    with pytest.raises(ValueError, match="CIDR"):
        HostAllowList.parse("bad/host")
    with pytest.raises(ValueError, match="CIDR"):
        parse_networks("localhost")


def test_an_allowed_name_opens_no_network() -> None:
    """A name the allow-list admits still reaches only permitted addresses."""
    policy = TargetPolicy(HostAllowList.parse("hooks.example.com,localhost"))
    target = parse_target("https://hooks.example.com/")
    policy.check(target)
    policy.check_connection(target, [ipaddress.ip_address("93.184.215.14")])
    for resolved in ["127.0.0.1", "169.254.169.254", "::ffff:10.0.0.1", "fd00:ec2::254"]:
        with pytest.raises(TargetRefused, match="PURGE_WEBHOOKS_ALLOWED_NETWORKS"):
            policy.check_connection(
                target, [ipaddress.ip_address("93.184.215.14"), ipaddress.ip_address(resolved)]
            )
    opened = TargetPolicy(HostAllowList.parse("hooks.example.com"), parse_networks("10.0.0.0/8"))
    opened.check_connection(
        target, [ipaddress.ip_address("10.0.0.1"), ipaddress.ip_address("::ffff:10.0.0.2")]
    )
