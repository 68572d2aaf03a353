"""Signed checkpoints of the audit chain: a compact JWS over the head's event id and hash and the time.

The signing key is held outside the database (``PURGE_AUDIT_SIGNING_KEY`` or ``..._FILE``): someone who
can rewrite the database cannot sign a checkpoint for what they wrote. A checkpoint kept outside the
database (the log line written with each one) proves that the chain held event ``event_id`` with hash
``event_hash`` at ``signed_at``; verification against it detects a rewrite or a truncation of the chain up
to that event.

The JWS header names the algorithm (``Ed25519`` for an OKP key, ``ES256`` for a P-256 key) and the key
id (the key's RFC 7638 thumbprint); the payload is canonical JSON of ``event_id``, ``event_hash`` and
``signed_at`` (RFC 3339).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from joserfc import jws
from joserfc.errors import BadSignatureError, JoseError
from joserfc.jwk import ECKey, OKPKey, import_key

from app.audit.canonical import canonical_json, rfc3339
from app.settings import AuditSettings

CHECKPOINT_TYPE = "kafka-purge-audit-checkpoint"
_ALGORITHMS = {("OKP", "Ed25519"): "Ed25519", ("EC", "P-256"): "ES256"}


@dataclass(frozen=True)
class Checkpoint:
    event_id: int
    event_hash: str
    signed_at: datetime
    key_id: str
    jws: str


class InvalidCheckpoint(ValueError):
    """Not a checkpoint of this service: malformed, or its signature does not verify."""


class MalformedCheckpoint(InvalidCheckpoint):
    """Not a compact JWS carrying a checkpoint."""


class UnverifiedCheckpoint(InvalidCheckpoint):
    """A well-formed checkpoint whose signature does not verify under this service's key."""


def _import(text: str) -> OKPKey | ECKey:
    data: str | dict[str, Any] = text.strip()
    if isinstance(data, str) and data.startswith("{"):
        data = json.loads(data)
    for key_type in ("OKP", "EC"):
        if isinstance(data, dict) and data.get("kty") != key_type:
            continue
        try:
            key = import_key(data, key_type)
        except (JoseError, ValueError, TypeError):
            continue
        if isinstance(key, OKPKey | ECKey) and key.is_private:
            return key
    raise ValueError("the audit signing key must be an Ed25519 or P-256 private key (PEM or JWK)")


class CheckpointKey:
    """The service's checkpoint signing key, and the verification of checkpoints against it."""

    def __init__(self, private_key: str) -> None:
        self._key = _import(private_key)
        crv = str(self._key.as_dict(private=False).get("crv"))
        algorithm = _ALGORITHMS.get((self._key.key_type, crv))
        if algorithm is None:
            raise ValueError("the audit signing key must be an Ed25519 or P-256 private key")
        self.algorithm = algorithm
        self.key_id = self._key.thumbprint()

    def public_jwk(self) -> dict[str, Any]:
        return {**self._key.as_dict(private=False), "kid": self.key_id, "alg": self.algorithm, "use": "sig"}

    def sign(self, event_id: int, event_hash: str, signed_at: datetime) -> Checkpoint:
        payload = {"event_id": event_id, "event_hash": event_hash, "signed_at": rfc3339(signed_at)}
        header = {"alg": self.algorithm, "kid": self.key_id, "typ": CHECKPOINT_TYPE}
        token = jws.serialize_compact(header, canonical_json(payload), self._key, algorithms=[self.algorithm])
        return Checkpoint(event_id, event_hash, signed_at, self.key_id, token)

    def read(self, token: str) -> Checkpoint:
        """The checkpoint ``token`` carries, once its signature verifies under this key."""
        token = token.strip()
        try:
            header = jws.extract_compact(token.encode("ascii")).headers()
        except (JoseError, ValueError, UnicodeError) as exc:
            raise MalformedCheckpoint("not a compact JWS") from exc
        if header.get("typ") != CHECKPOINT_TYPE:
            raise MalformedCheckpoint("not an audit checkpoint")
        if header.get("kid") != self.key_id:
            raise UnverifiedCheckpoint(f"signed by another key (kid {str(header.get('kid'))[:64]!r})")
        if header.get("alg") != self.algorithm:
            raise UnverifiedCheckpoint(f"not signed with {self.algorithm}, the algorithm of this key")
        try:
            payload = jws.deserialize_compact(token, self._key, algorithms=[self.algorithm]).payload
        except BadSignatureError as exc:
            raise UnverifiedCheckpoint("its signature does not verify") from exc
        except (JoseError, ValueError) as exc:
            raise MalformedCheckpoint("not a compact JWS") from exc
        return _checkpoint(payload, self.key_id, token)


def _checkpoint(payload: bytes, key_id: str, token: str) -> Checkpoint:
    try:
        claims = json.loads(payload)
        event_id, event_hash = int(claims["event_id"]), str(claims["event_hash"])
        signed_at = datetime.fromisoformat(str(claims["signed_at"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise MalformedCheckpoint("its payload is not a checkpoint") from exc
    return Checkpoint(event_id, event_hash, signed_at, key_id, token)


def load_checkpoint_key(settings: AuditSettings) -> CheckpointKey | None:
    """The configured key, or None: then no checkpoints are signed (no key is ever made up here)."""
    text = settings.signing_key_text()
    return CheckpointKey(text) if text is not None else None


def generate_private_key() -> str:
    """A new Ed25519 private key as PEM (for the demo and tests; a deployment brings its own)."""
    return OKPKey.generate_key("Ed25519", auto_kid=False).as_pem(private=True).decode("ascii")
