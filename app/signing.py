"""The service's signing keys: the current one, an Ed25519 or P-256 private key (PEM or JWK) with its JWS
algorithm (``Ed25519`` or ``ES256``) and key id (the key's RFC 7638 thumbprint), and the retired ones,
public keys that stay published so that what they signed still verifies.

A leaf module: the settings check configured keys with it at start-up, the audit checkpoints and the
erasure certificates sign with the current key, and the JWK set of all of them is public.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from joserfc.errors import JoseError
from joserfc.jwk import ECKey, OKPKey, import_key

_ALGORITHMS = {("OKP", "Ed25519"): "Ed25519", ("EC", "P-256"): "ES256"}
REFUSED = "the audit signing key must be an Ed25519 or P-256 private key (PEM or JWK)"
RETIRED_REFUSED = (
    "retired keys must be Ed25519 or P-256 public keys: a JWK set, a JSON list of JWKs, or PEM public keys"
)
_PEM_BLOCK = re.compile(r"-----BEGIN [A-Z ]+-----.+?-----END [A-Z ]+-----", re.DOTALL)


class SigningKey:
    """A private key that signs JWS; ``ValueError`` for anything else."""

    def __init__(self, private_key: str) -> None:
        self.key = _import(private_key)
        algorithm = algorithm_of(self.key)
        if algorithm is None:
            raise ValueError(REFUSED)
        self.algorithm = algorithm
        self.key_id = self.key.thumbprint()

    def public_jwk(self) -> dict[str, Any]:
        return public_jwk(self.key)


def algorithm_of(key: OKPKey | ECKey) -> str | None:
    """The JWS algorithm this service signs with for ``key``'s type and curve (None: not one it uses)."""
    return _ALGORITHMS.get((key.key_type, str(key.as_dict(private=False).get("crv"))))


def public_jwk(key: OKPKey | ECKey) -> dict[str, Any]:
    """``key``'s public half as a JWK with its ``kid`` (RFC 7638 thumbprint), ``alg`` and ``use``."""
    return {**key.as_dict(private=False), "kid": key.thumbprint(), "alg": algorithm_of(key), "use": "sig"}


class ServiceKeys:
    """The current signing key (None when none is configured) and the retired public keys (JWKs)."""

    def __init__(self, current: SigningKey | None, retired: Sequence[dict[str, Any]] = ()) -> None:
        self.current = current
        self.retired = [jwk for jwk in retired if current is None or jwk["kid"] != current.key_id]

    @classmethod
    def of(cls, private_key: str | None, retired_keys: str | None) -> ServiceKeys:
        current = SigningKey(private_key) if private_key is not None else None
        return cls(current, public_jwks(retired_keys) if retired_keys is not None else [])

    def jwks(self) -> dict[str, list[dict[str, Any]]]:
        """The JWK set (RFC 7517) of every key that verifies what this service signed: current first."""
        current = [self.current.public_jwk()] if self.current is not None else []
        return {"keys": [*current, *self.retired]}


def public_jwks(text: str) -> list[dict[str, Any]]:
    """Public keys as JWKs from a JWK set, a JSON list of JWKs, one JWK, or PEM public keys; ``ValueError``
    for anything else, private keys included (a retired private key has no business being published)."""
    text = text.strip()
    if not text:
        return []
    items: list[Any]
    if text[0] in "{[":
        try:
            data = json.loads(text)
        except ValueError:
            raise ValueError(f"{RETIRED_REFUSED} (not valid JSON)") from None
        items = data.get("keys", [data]) if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise ValueError(RETIRED_REFUSED)
    else:
        items = _PEM_BLOCK.findall(text)
        if not items:
            raise ValueError(RETIRED_REFUSED)
    found: dict[str, dict[str, Any]] = {}
    for item in items:
        jwk = public_jwk(_import_public(item))
        found[jwk["kid"]] = jwk
    return list(found.values())


def _import_public(item: Any) -> OKPKey | ECKey:
    if isinstance(item, dict):
        item = {name: value for name, value in item.items() if name != "kid"}
    for key_type in ("OKP", "EC"):
        if isinstance(item, dict) and item.get("kty") != key_type:
            continue
        try:
            key = import_key(item, key_type)
        except (JoseError, ValueError, TypeError):
            continue
        if not isinstance(key, OKPKey | ECKey) or algorithm_of(key) is None:
            break
        if key.is_private:
            raise ValueError("retired keys are published: give their public keys only, never a private key")
        return key
    raise ValueError(RETIRED_REFUSED)


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
    raise ValueError(REFUSED)
