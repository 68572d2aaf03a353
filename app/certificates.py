"""Erasure certificates: a compact JWS (``application/jose``) over what a finished deletion erased, signed
with the service's signing key, and their verification against a JWK set, offline.

The header names the algorithm (``Ed25519`` or ``ES256``), the key id (the key's RFC 7638 thumbprint) and
the type ``kafka-purge-erasure-certificate``: the same key signs audit checkpoints, and the type keeps one
from passing for the other. The payload is canonical JSON of JWT-like claims (``iss``, ``sub``: the
deletion's id, ``jti``, ``iat``) with the ``deletion`` (who asked, why, who approved, every partition's
resolved offset and the offsets Kafka reported after the deletion) and its ``audit`` anchors (chain
position and hash of the events that requested and completed it).

A leaf module (the command line verifies certificates without the service's database or settings).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from joserfc import jws
from joserfc.errors import BadSignatureError, JoseError
from joserfc.jwk import ECKey, OKPKey, import_key

from app.signing import SigningKey, algorithm_of

CERTIFICATE_TYPE = "kafka-purge-erasure-certificate"
MEDIA_TYPE = "application/jose"
_COMPACT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")


class InvalidCertificate(ValueError):
    """Not an erasure certificate that verifies: malformed, signed by an unknown key, or tampered with."""


class MalformedCertificate(InvalidCertificate):
    """Not a compact JWS carrying an erasure certificate."""


class UnknownKey(InvalidCertificate):
    """Signed by a key the JWK set does not hold."""


class BadSignature(InvalidCertificate):
    """A well-formed certificate whose signature does not verify under the key it names."""


class InvalidKeySet(ValueError):
    """Not a JWK set of public keys this service signs with."""


@dataclass(frozen=True)
class VerifiedCertificate:
    key_id: str
    algorithm: str
    claims: dict[str, Any]


def sign_certificate(key: SigningKey, claims: Mapping[str, Any]) -> str:
    """The compact JWS of ``claims`` (canonical JSON) signed with ``key``."""
    header = {"alg": key.algorithm, "kid": key.key_id, "typ": CERTIFICATE_TYPE}
    payload = json.dumps(claims, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return jws.serialize_compact(header, payload, key.key, algorithms=[key.algorithm])


def key_set(jwks: Any) -> dict[str, OKPKey | ECKey]:
    """The public keys of a JWK set (``{"keys": [...]}``) by ``kid``; ``InvalidKeySet`` otherwise."""
    keys = jwks.get("keys") if isinstance(jwks, dict) else None
    if not isinstance(keys, list):
        raise InvalidKeySet('not a JWK set: expected a JSON object {"keys": [...]}')
    found: dict[str, OKPKey | ECKey] = {}
    for index, jwk in enumerate(keys):
        if not isinstance(jwk, dict) or not isinstance(jwk.get("kid"), str):
            raise InvalidKeySet(f"key {index} of the JWK set is not a JWK with a kid")
        try:
            key = import_key({name: value for name, value in jwk.items() if name != "kid"})
        except (JoseError, ValueError, TypeError) as exc:
            raise InvalidKeySet(f"key {jwk['kid']!r} of the JWK set cannot be read: {exc}") from None
        if isinstance(key, OKPKey | ECKey) and algorithm_of(key) is not None:
            found[jwk["kid"]] = key
    return found


def verify_certificate(token: str, keys: Mapping[str, OKPKey | ECKey]) -> VerifiedCertificate:
    """The certificate's claims once its signature verifies under the key of ``keys`` its header names."""
    token = token.strip()
    if _COMPACT.fullmatch(token) is None:
        raise MalformedCertificate("not a compact JWS (three base64url parts separated by dots)")
    try:
        header = jws.extract_compact(token.encode("ascii")).headers()
    except (JoseError, ValueError, UnicodeError):
        raise MalformedCertificate("its header is not a JWS header") from None
    if header.get("typ") != CERTIFICATE_TYPE:
        raise MalformedCertificate(f"not an erasure certificate (typ {str(header.get('typ'))[:64]!r})")
    kid = str(header.get("kid"))[:128]
    key = keys.get(kid)
    if key is None:
        raise UnknownKey(f"signed by key {kid!r}, which the JWK set does not hold")
    algorithm = algorithm_of(key)
    if header.get("alg") != algorithm:
        raise BadSignature(f"not signed with {algorithm}, the algorithm of key {kid!r}")
    if not _canonical(token.rsplit(".", 1)[1]):
        raise BadSignature("its signature is not canonical base64url")
    try:
        payload = jws.deserialize_compact(token, key, algorithms=[str(algorithm)]).payload
    except BadSignatureError:
        raise BadSignature("its signature does not verify") from None
    except (JoseError, ValueError):
        raise MalformedCertificate("not a compact JWS") from None
    return VerifiedCertificate(kid, str(algorithm), _claims(payload))


def _canonical(segment: str) -> bool:
    """Whether ``segment`` is the one base64url spelling of its bytes: a changed padding bit in its last
    character decodes to the same bytes, and any change to a certificate must fail."""
    try:
        decoded = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except ValueError:
        return False
    return base64.urlsafe_b64encode(decoded).rstrip(b"=").decode("ascii") == segment


def _claims(payload: bytes) -> dict[str, Any]:
    try:
        claims = json.loads(payload)
    except ValueError:
        raise MalformedCertificate("its payload is not JSON") from None
    if not isinstance(claims, dict) or not isinstance(claims.get("deletion"), dict):
        raise MalformedCertificate("its payload is not an erasure certificate")
    return claims
