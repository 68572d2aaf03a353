"""``kafka-purge certificate`` as a subprocess against the real service process and an emulator process:
fetch a finished deletion's certificate, then verify it offline from a saved JWK set or the service's
``/signing-keys``, and refuse changed, foreign and malformed ones with a clear message and exit 5."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from helpers.cli import Service, cli_env, cli_service, run_cli

from app.audit.checkpoints import generate_private_key
from app.cli.exits import Exit
from app.signing import SigningKey

SIGNING_KEY = generate_private_key()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp("certificates")
    with cli_service(tmp, {"orders": 2}, PURGE_AUDIT_SIGNING_KEY=SIGNING_KEY) as running:
        yield running


@pytest.fixture(scope="module")
def deletion_id(service: Service) -> str:
    result = run_cli(
        service,
        "delete",
        "orders",
        "-o",
        "4",
        "--reason",
        "erasure request 42",
        "--yes",
        "--wait",
        "--format",
        "json",
    )
    assert result.returncode == Exit.OK, result.stderr
    return str(json.loads(result.stdout)["id"])


def test_a_fetched_certificate_verifies_offline(service: Service, deletion_id: str) -> None:
    out = service.dir / "erasure.jws"
    fetched = run_cli(service, "certificate", deletion_id, "--out", str(out))
    assert fetched.returncode == Exit.OK, fetched.stderr
    assert f"written to {out}" in fetched.stderr
    jwks = service.dir / "signing-keys.json"
    jwks.write_text(httpx.get(f"{service.url}/signing-keys").text, encoding="utf-8")
    # No service address, no credentials: verification needs the files only.
    offline = {k: v for k, v in cli_env(service).items() if not k.startswith("PURGE_")}
    verified = run_cli(service, "certificate", "verify", str(out), "--jwks", str(jwks), env=offline)
    assert verified.returncode == Exit.OK, verified.stderr
    assert f"verified: signed by key {SigningKey(SIGNING_KEY).key_id} (Ed25519)" in verified.stdout
    assert f"deletion {deletion_id} on cluster demo: succeeded, requested by User:admin" in verified.stdout
    assert "reason: erasure request 42" in verified.stdout
    assert "approvers: none" in verified.stdout
    rows = [line.split() for line in verified.stdout.splitlines()]
    assert ["orders", "0", "succeeded", "4", "4"] in rows, verified.stdout
    assert "audit completed: deletion.completed event" in verified.stdout
    by_url = run_cli(
        service,
        "certificate",
        "verify",
        str(out),
        "--jwks",
        f"{service.url}/signing-keys",
        "--format",
        "json",
    )
    assert by_url.returncode == Exit.OK, by_url.stderr
    claims = json.loads(by_url.stdout)["claims"]
    assert [
        (p["partition"], p["resolved_offset"], p["low_watermark"]) for p in claims["deletion"]["partitions"]
    ] == [
        (0, 4, 4),
        (1, 4, 4),
    ]


def test_a_certificate_on_stdout_is_the_jws(service: Service, deletion_id: str) -> None:
    fetched = run_cli(service, "certificate", deletion_id)
    assert fetched.returncode == Exit.OK, fetched.stderr
    assert fetched.stdout.count(".") == 2
    assert fetched.stdout.startswith("eyJ")


def test_changed_foreign_and_malformed_certificates_do_not_verify(service: Service, deletion_id: str) -> None:
    token = run_cli(service, "certificate", deletion_id).stdout.strip()
    jwks = service.dir / "keys.json"
    jwks.write_text(httpx.get(f"{service.url}/signing-keys").text, encoding="utf-8")
    header, payload, signature = token.split(".")
    middle = len(payload) // 2
    changed = payload[:middle] + ("A" if payload[middle] != "A" else "B") + payload[middle + 1 :]
    other = service.dir / "other-keys.json"
    other.write_text(
        json.dumps({"keys": [SigningKey(generate_private_key()).public_jwk()]}), encoding="utf-8"
    )
    cases = [
        (f"{header}.{changed}.{signature}", jwks, "its signature does not verify"),
        (token, other, "which the JWK set does not hold"),
        ("this is not a certificate\n", jwks, "not a compact JWS"),
    ]
    for text, keys, reason in cases:
        path = service.dir / "suspect.jws"
        path.write_text(text, encoding="utf-8")
        result = run_cli(service, "certificate", "verify", str(path), "--jwks", str(keys))
        assert result.returncode == Exit.FAILED, (reason, result.stdout, result.stderr)
        assert result.stderr.startswith(f"kafka-purge: {path} does NOT verify: "), result.stderr
        assert reason in result.stderr
        assert result.stdout == ""


def test_usage_errors_and_refusals(service: Service) -> None:
    missing = service.dir / "nowhere.jws"
    result = run_cli(service, "certificate", "verify", str(missing), "--jwks", str(missing))
    assert result.returncode == Exit.USAGE
    assert result.stderr == f"kafka-purge: certificate file {missing} does not exist\n"
    no_jwks = run_cli(service, "certificate", "verify", str(missing))
    assert no_jwks.returncode == Exit.USAGE
    assert "--jwks" in no_jwks.stderr
    unknown = run_cli(service, "certificate", "no-such-deletion")
    assert unknown.returncode == Exit.REFUSED
    assert "answered 404" in unknown.stderr
