"""SSL clusters: the CA from ``ssl_cafile`` is trusted, the broker's certificate and name are checked."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from helpers.kafka_gateway import delete_records
from helpers.scripted_broker import ScriptedBroker

from app.adapters.kafka import KafkaClusters
from app.domain.ports import TopicPartition
from app.settings import ClusterSettings


def _certificate(
    subject: str, issuer_key: Any, issuer: x509.Name | None, key: Any, ca: bool
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer or name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
        builder = builder.add_extension(san, critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _tls_files(tmp_path: Path) -> tuple[Path, ssl.SSLContext]:
    """A throw-away CA (written to ca.pem) and a server context with a certificate for 127.0.0.1."""
    ca_key, server_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("test-ca", ca_key, None, ca_key, ca=True)
    server = _certificate("broker", ca_key, ca.subject, server_key, ca=False)
    (tmp_path / "ca.pem").write_bytes(_pem(ca))
    key_pem = server_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (tmp_path / "server.pem").write_bytes(_pem(server) + key_pem)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "server.pem")
    return tmp_path / "ca.pem", context


def _ok(body: dict[str, Any]) -> dict[str, Any]:
    partitions = [{"PartitionIndex": 0, "LowWatermark": 2, "LeaderLogStartOffset": 2, "ErrorCode": 0}]
    return {"ThrottleTimeMs": 0, "Topics": [{"Name": "t", "Partitions": partitions}]}


async def test_ssl_cluster_with_configured_ca(tmp_path: Path) -> None:
    ca_file, server_context = _tls_files(tmp_path)
    async with ScriptedBroker("t", 1, _ok, tls=server_context) as broker:
        trusted = ClusterSettings(
            bootstrap_servers=broker.bootstrap,
            security_protocol="SSL",
            ssl_cafile=str(ca_file),
            request_timeout_ms=2_000,
        )
        untrusted = trusted.model_copy(update={"ssl_cafile": None})
        gateway = KafkaClusters({"tls": trusted, "untrusted": untrusted})
        try:
            outcomes = await delete_records(
                gateway, "tls", {TopicPartition("t", 0): 2}, leader_only=True, timeout_ms=1_000
            )
            assert await gateway.ping("untrusted") is False
        finally:
            await gateway.close()

    assert outcomes[TopicPartition("t", 0)].error == "NONE"
    assert len(broker.delete_requests) == 1
