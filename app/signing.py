"""The service's signing key: an Ed25519 or P-256 private key (PEM or JWK) with its JWS algorithm
(``Ed25519`` or ``ES256``) and key id (the key's RFC 7638 thumbprint).

A leaf module: the settings check a configured key with it at start-up, the audit checkpoints sign with it.
"""

from __future__ import annotations

import json
from typing import Any

from joserfc.errors import JoseError
from joserfc.jwk import ECKey, OKPKey, import_key

_ALGORITHMS = {("OKP", "Ed25519"): "Ed25519", ("EC", "P-256"): "ES256"}
REFUSED = "the audit signing key must be an Ed25519 or P-256 private key (PEM or JWK)"


class SigningKey:
    """A private key that signs JWS; ``ValueError`` for anything else."""

    def __init__(self, private_key: str) -> None:
        self.key = _import(private_key)
        crv = str(self.key.as_dict(private=False).get("crv"))
        algorithm = _ALGORITHMS.get((self.key.key_type, crv))
        if algorithm is None:
            raise ValueError(REFUSED)
        self.algorithm = algorithm
        self.key_id = self.key.thumbprint()

    def public_jwk(self) -> dict[str, Any]:
        return {**self.key.as_dict(private=False), "kid": self.key_id, "alg": self.algorithm, "use": "sig"}


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
