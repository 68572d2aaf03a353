"""Erasure certificates of deletions executed against the Kafka emulator (SQLite and PostgreSQL): they
verify offline with the published keys and fail after any change, still verify once their key is retired,
and exist only for finished deletions the caller may see."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from helpers.offsets import body, produce, wait_until
from pydantic import SecretStr

from app.audit.checkpoints import generate_private_key
from app.certificates import InvalidCertificate, key_set, verify_certificate
from app.main import create_app
from app.settings import AuditSettings, Settings
from app.signing import SigningKey

Headers = Callable[[httpx.AsyncClient], Awaitable[dict[str, str]]]
FINISHED = ("succeeded", "partially_failed", "failed", "cancelled")


@pytest.fixture
def super_users() -> str:
    """Only alice: bob holds no binding, so he may not see alice's deletions."""
    return "User:alice"


def signing(settings: Settings, private_key: str | None, retired: str | None = None) -> Settings:
    key = SecretStr(private_key) if private_key is not None else None
    return settings.model_copy(update={"audit": AuditSettings(signing_key=key, retired_keys=retired)})


@asynccontextmanager
async def serving(settings: Settings, *, run_executor: bool = True) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, run_executor=run_executor)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client


async def bearer(client: httpx.AsyncClient, who: str) -> dict[str, str]:
    grant = await client.post(
        "/oauth/token", data={"grant_type": "client_credentials"}, auth=(who, f"{who}-secret")
    )
    assert grant.status_code == 200, grant.text
    return {"Authorization": f"Bearer {grant.json()['access_token']}"}


async def finished_deletion(
    client: httpx.AsyncClient, headers: dict[str, str], *entries: dict[str, Any]
) -> str:
    accepted = await client.post("/v1/deletions", json=body(*entries, allow_unconsumed=True), headers=headers)
    assert accepted.status_code == 202, accepted.text
    deletion_id = str(accepted.json()["id"])

    async def finished() -> bool:
        got = await client.get(f"/v1/deletions/{deletion_id}", headers=headers)
        return bool(got.json()["status"] in FINISHED)

    await wait_until(finished)
    return deletion_id


async def certificate(client: httpx.AsyncClient, deletion_id: str, headers: dict[str, str]) -> str:
    answer = await client.get(f"/v1/deletions/{deletion_id}/certificate", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/jose"
    return answer.text


async def published_keys(client: httpx.AsyncClient) -> dict[str, Any]:
    """The JWK set at /signing-keys, fetched without a token: it is public."""
    answer = await client.get("/signing-keys")
    assert answer.status_code == 200, answer.text
    keys: dict[str, Any] = answer.json()
    return keys


async def test_a_certificate_of_a_real_deletion_verifies_offline_and_fails_when_changed(
    settings: Settings, emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=2, replication_factor=3)
    await produce(emulator, "orders", {0: 6, 1: 4})
    key = SigningKey(generate_private_key())
    async with serving(signing(settings, _pem(key))) as client:
        alice = await bearer(client, "alice")
        deletion_id = await finished_deletion(
            client,
            alice,
            {"topic": "orders", "partition": 0, "offset": 5},
            {"topic": "orders", "partition": 1, "offset": 3},
        )
        token = await certificate(client, deletion_id, alice)
        jwks = await published_keys(client)
        events = (await client.get("/v1/audit", params={"limit": 1000}, headers=alice)).json()["items"]
    # Offline from here: the JWK set and the certificate are all the verifier has.
    assert [jwk["kid"] for jwk in jwks["keys"]] == [key.key_id]
    verified = verify_certificate(token, key_set(json.loads(json.dumps(jwks))))
    assert verified.key_id == key.key_id
    claims = verified.claims
    assert (claims["sub"], claims["iss"]) == (deletion_id, settings.public_url)
    assert claims["jti"]
    assert isinstance(claims["iat"], int)
    deletion = claims["deletion"]
    assert (deletion["id"], deletion["cluster"], deletion["requester"]) == (deletion_id, "demo", "User:alice")
    assert (deletion["reason"], deletion["status"], deletion["approvers"]) == (
        "test erasure",
        "succeeded",
        [],
    )
    outcomes = [
        (p["topic"], p["partition"], p["status"], p["resolved_offset"], p["low_watermark"])
        for p in deletion["partitions"]
    ]
    assert outcomes == [("orders", 0, "succeeded", 5, 5), ("orders", 1, "succeeded", 3, 3)]
    chain = {event["id"]: event for event in events}
    for name, action in (("requested", "deletion.requested"), ("completed", "deletion.completed")):
        anchor = claims["audit"][name]
        assert anchor["action"] == action
        assert chain[anchor["event_id"]]["hash"] == anchor["hash"]
        assert chain[anchor["event_id"]]["deletion_id"] == deletion_id
    header, payload, signature = token.split(".")
    for index in (0, len(header) // 2, len(header) + 1 + len(payload) // 2, len(token) - len(signature) // 2):
        tampered = token[:index] + ("A" if token[index] != "A" else "B") + token[index + 1 :]
        with pytest.raises(InvalidCertificate):
            verify_certificate(tampered, key_set(jwks))


def _pem(key: SigningKey) -> str:
    return key.key.as_pem(private=True).decode("ascii")


async def test_a_certificate_still_verifies_once_its_key_is_retired(
    settings: Settings, emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    await produce(emulator, "orders", {0: 5})
    old, new = generate_private_key(), generate_private_key()
    async with serving(signing(settings, old)) as client:
        alice = await bearer(client, "alice")
        deletion_id = await finished_deletion(client, alice, {"topic": "orders", "partition": 0, "offset": 2})
        old_certificate = await certificate(client, deletion_id, alice)
        old_jwks = await published_keys(client)
    # The rotation: the new key signs, the old one's public key (the JWK set saved before) is retired.
    async with serving(signing(settings, new, retired=json.dumps(old_jwks))) as client:
        alice = await bearer(client, "alice")
        jwks = await published_keys(client)
        new_certificate = await certificate(client, deletion_id, alice)
        audit_keys = (await client.get("/v1/audit/keys", headers=alice)).json()
    old_kid, new_kid = SigningKey(old).key_id, SigningKey(new).key_id
    assert [jwk["kid"] for jwk in jwks["keys"]] == [new_kid, old_kid]
    assert audit_keys == jwks
    assert verify_certificate(old_certificate, key_set(jwks)).key_id == old_kid
    assert verify_certificate(new_certificate, key_set(jwks)).key_id == new_kid
    assert verify_certificate(new_certificate, key_set(jwks)).claims["sub"] == deletion_id
    with pytest.raises(InvalidCertificate, match="does not hold"):
        verify_certificate(new_certificate, key_set(old_jwks))


async def test_only_finished_deletions_the_caller_may_see_have_one(settings: Settings, emulator: Any) -> None:
    emulator.create_topic("orders", partitions=2, replication_factor=3)
    await produce(emulator, "orders", {0: 5, 1: 5})
    entries = (
        {"topic": "orders", "partition": 0, "offset": 2},
        {"topic": "orders", "partition": 1, "offset": 2},
    )
    async with serving(signing(settings, generate_private_key()), run_executor=False) as client:
        alice, bob = await bearer(client, "alice"), await bearer(client, "bob")
        accepted = await client.post("/v1/deletions", json=body(*entries), headers=alice)
        deletion_id = accepted.json()["id"]
        url = f"/v1/deletions/{deletion_id}/certificate"
        waiting = await client.get(url, headers=alice)
        assert waiting.status_code == 409, waiting.text
        assert waiting.headers["content-type"].startswith("application/problem+json")
        assert "pending" in waiting.json()["detail"]
        assert (await client.get(url, headers=bob)).status_code == 404
        assert (await client.get("/v1/deletions/no-such-id/certificate", headers=alice)).status_code == 404
        assert (await client.get(url)).status_code == 401
        cancelled = await client.post(f"/v1/deletions/{deletion_id}/cancel", headers=alice)
        assert cancelled.json()["status"] == "cancelled"
        assert (await client.get(url, headers=bob)).status_code == 404
        token = await certificate(client, deletion_id, alice)
        jwks = await published_keys(client)
    claims = verify_certificate(token, key_set(jwks)).claims
    assert claims["deletion"]["status"] == "cancelled"
    assert [p["status"] for p in claims["deletion"]["partitions"]] == ["cancelled", "cancelled"]
    assert claims["audit"]["completed"]["action"] == "deletion.cancelled"


async def test_without_a_signing_key_no_certificate_is_issued(settings: Settings, emulator: Any) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    await produce(emulator, "orders", {0: 5})
    async with serving(signing(settings, None)) as client:
        alice = await bearer(client, "alice")
        deletion_id = await finished_deletion(client, alice, {"topic": "orders", "partition": 0, "offset": 2})
        refused = await client.get(f"/v1/deletions/{deletion_id}/certificate", headers=alice)
        assert refused.status_code == 409, refused.text
        assert "PURGE_AUDIT_SIGNING_KEY" in refused.json()["detail"]
        assert await published_keys(client) == {"keys": []}
