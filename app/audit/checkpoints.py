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

from joserfc import jws
from joserfc.errors import BadSignatureError, JoseError
from joserfc.jwk import OKPKey

from app.audit.chain import canonical_json, rfc3339
from app.signing import SigningKey

CHECKPOINT_TYPE = "kafka-purge-audit-checkpoint"


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


class CheckpointKey:
    """The service's checkpoint signing key, and the verification of checkpoints against it."""

    def __init__(self, private_key: str) -> None:
        signing = SigningKey(private_key)
        self._key, self.algorithm, self.key_id = signing.key, signing.algorithm, signing.key_id
        self.public_jwk = signing.public_jwk

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


def load_checkpoint_key(text: str | None) -> CheckpointKey | None:
    """The configured key (its text), or None: then no checkpoints are signed (no key is ever made up
    here)."""
    return CheckpointKey(text) if text is not None else None


def generate_private_key() -> str:
    """A new Ed25519 private key as PEM (for the demo and tests; a deployment brings its own)."""
    return OKPKey.generate_key("Ed25519", auto_kid=False).as_pem(private=True).decode("ascii")
