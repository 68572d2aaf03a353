"""Erasure certificates signed and verified offline (``app.certificates``), and the service's public keys:
current and retired (``app.signing``), with their settings."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from joserfc.jwk import ECKey
from pydantic import ValidationError

from app.audit.checkpoints import CheckpointKey, generate_private_key
from app.certificates import (
    BadSignature,
    InvalidCertificate,
    InvalidKeySet,
    MalformedCertificate,
    UnknownKey,
    key_set,
    sign_certificate,
    verify_certificate,
)
from app.settings import Settings
from app.signing import ServiceKeys, SigningKey, public_jwks

BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
CLAIMS = {"iss": "http://127.0.0.1:8080", "sub": "d-1", "iat": 1, "deletion": {"id": "d-1", "partitions": []}}


def p256_private_key() -> str:
    return ECKey.generate_key("P-256").as_pem(private=True).decode("ascii")


def keys_of(*signing: SigningKey) -> dict[str, Any]:
    return key_set({"keys": [key.public_jwk() for key in signing]})


def changed(token: str, index: int, char: str) -> str:
    return token[:index] + char + token[index + 1 :]


@pytest.mark.parametrize(
    "private_key", [generate_private_key(), p256_private_key()], ids=["Ed25519", "ES256"]
)
def test_a_certificate_verifies_and_no_byte_of_it_can_change(private_key: str) -> None:
    key = SigningKey(private_key)
    token = sign_certificate(key, CLAIMS)
    verified = verify_certificate(token, keys_of(key))
    assert (verified.key_id, verified.algorithm, verified.claims) == (key.key_id, key.algorithm, CLAIMS)
    # Every character replaced by another one; the last character of each part (where a base64url
    # character carries bits past the bytes it encodes) by every other one.
    header, payload, _ = token.split(".")
    ends = {len(header) - 1, len(header) + len(payload), len(token) - 1}
    for index, char in enumerate(token):
        replacements = BASE64URL + "." if index in ends else ["A" if char != "A" else "B"]
        for other in replacements:
            if other != char:
                with pytest.raises(InvalidCertificate):
                    verify_certificate(changed(token, index, other), keys_of(key))
    for cut in (token[:-1], token + "A", token.replace(".", "", 1), f"{header}.{payload}."):
        with pytest.raises(InvalidCertificate):
            verify_certificate(cut, keys_of(key))


def test_each_way_of_failing_says_why() -> None:
    key, other = SigningKey(generate_private_key()), SigningKey(generate_private_key())
    token = sign_certificate(key, CLAIMS)
    with pytest.raises(UnknownKey, match=key.key_id):
        verify_certificate(token, keys_of(other))
    header, payload, _signature = token.split(".")
    forged = sign_certificate(other, CLAIMS).split(".")[2]
    with pytest.raises(BadSignature, match="does not verify"):
        verify_certificate(f"{header}.{payload}.{forged}", keys_of(key))
    for garbage in ("", "hello", "a.b", "not a jws at all.x.y"):
        with pytest.raises(MalformedCertificate):
            verify_certificate(garbage, keys_of(key))


def test_an_audit_checkpoint_of_the_same_key_is_no_certificate() -> None:
    private_key = generate_private_key()
    checkpoint = CheckpointKey(private_key).sign(7, "ab" * 32, datetime.now(UTC)).jws
    with pytest.raises(MalformedCertificate, match="not an erasure certificate"):
        verify_certificate(checkpoint, keys_of(SigningKey(private_key)))


def test_a_jwk_set_must_hold_jwks_with_a_kid() -> None:
    for bad in ([], {"keys": {}}, {"keys": [{"kty": "OKP"}]}, {"keys": [{"kid": "k", "kty": "OKP"}]}):
        with pytest.raises(InvalidKeySet):
            key_set(bad)


def test_retired_keys_are_public_keys_in_any_usual_form() -> None:
    old, older = SigningKey(generate_private_key()), SigningKey(p256_private_key())
    kids = [old.key_id, older.key_id]
    as_set = json.dumps({"keys": [old.public_jwk(), older.public_jwk()]})
    as_list = json.dumps([old.public_jwk(), older.public_jwk()])
    as_pem = "".join(k.key.as_pem(private=False).decode("ascii") for k in (old, older))
    for text in (as_set, as_list, as_pem):
        assert [jwk["kid"] for jwk in public_jwks(text)] == kids
    assert public_jwks(json.dumps(old.public_jwk()))[0]["alg"] == "Ed25519"
    for refused in (
        generate_private_key(),
        json.dumps(old.key.as_dict(private=True)),
        '{"kty": "RSA", "n": "x", "e": "AQAB"}',
        "not a key",
        "{not json",
    ):
        with pytest.raises(ValueError, match="retired keys"):
            public_jwks(refused)


def test_the_published_set_lists_the_current_key_first_and_each_key_once() -> None:
    current, retired = SigningKey(generate_private_key()), SigningKey(generate_private_key())
    jwks = json.dumps([retired.public_jwk(), current.public_jwk()])
    private_key = generate_private_key()
    alone = ServiceKeys.of(private_key, None)
    assert [jwk["kid"] for jwk in alone.jwks()["keys"]] == [SigningKey(private_key).key_id]
    both = ServiceKeys(current, public_jwks(jwks))
    assert [jwk["kid"] for jwk in both.jwks()["keys"]] == [current.key_id, retired.key_id]
    assert ServiceKeys.of(None, jwks).jwks()["keys"][1]["kid"] == current.key_id
    assert ServiceKeys.of(None, None).jwks() == {"keys": []}


def test_retired_keys_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PURGE_AUTH_DEV_ISSUER", "true")
    old = SigningKey(generate_private_key())
    jwks = json.dumps({"keys": [old.public_jwk()]})
    monkeypatch.setenv("PURGE_AUDIT_RETIRED_KEYS", jwks)
    assert Settings().audit.retired_keys_text() == jwks
    keys_file = tmp_path / "retired.json"
    keys_file.write_text(jwks)
    monkeypatch.delenv("PURGE_AUDIT_RETIRED_KEYS")
    monkeypatch.setenv("PURGE_AUDIT_RETIRED_KEYS_FILE", str(keys_file))
    assert Settings().audit.retired_keys_text() == jwks
    monkeypatch.setenv("PURGE_AUDIT_RETIRED_KEYS", jwks)
    with pytest.raises(ValidationError, match="not both"):
        Settings()
    monkeypatch.delenv("PURGE_AUDIT_RETIRED_KEYS_FILE")
    secret = generate_private_key()
    monkeypatch.setenv("PURGE_AUDIT_RETIRED_KEYS", secret)
    with pytest.raises(ValidationError, match="public keys only") as refused:
        Settings()
    assert secret.splitlines()[1] not in str(refused.value)
