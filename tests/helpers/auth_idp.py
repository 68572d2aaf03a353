"""A fake identity provider for the tests: RSA signing keys and a JWKS served over real local HTTP."""

from __future__ import annotations

import base64
import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

ISSUER = "https://idp.test/"
AUDIENCE = "kafka-purge"


# RSA key generation costs ~0.1 s; a round-robin pool keeps the suite fast. Consecutive draws are
# distinct keys (fewer than POOL_SIZE per test), so an "attacker" key never equals a trusted one.
POOL_SIZE = 8
_pool: list[RSAKey] = []
_draws = itertools.count()


def new_key(kid: str) -> RSAKey:
    index = next(_draws) % POOL_SIZE
    if index == len(_pool):
        _pool.append(RSAKey.generate_key(2048))
    material = _pool[index]
    return RSAKey.import_key(material.as_dict(private=True), {"kid": kid, "alg": "RS256", "use": "sig"})


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def raw_token(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    """A hand-built compact JWS, for headers joserfc itself refuses to produce."""
    return ".".join([b64(json.dumps(header).encode()), b64(json.dumps(claims).encode()), b64(signature)])


def good_claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "alice",
        "iat": now,
        "nbf": now,
        "exp": now + 300,
    }
    claims.update(overrides)
    return {k: v for k, v in claims.items() if v is not None}


class FakeIdP:
    """Serves ``/jwks`` from the keys in ``published``, and ``discovery`` (when set) at
    ``/.well-known/openid-configuration``; counts every request it gets."""

    def __init__(self) -> None:
        self.keys = {"k1": new_key("k1"), "k2": new_key("k2")}
        self.published = ["k1", "k2"]
        self.hits = 0
        self.fail = False
        self.discovery: Any = None
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/jwks"

    def start(self) -> FakeIdP:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_key(self, kid: str) -> None:
        self.keys[kid] = new_key(kid)

    def jwks(self) -> dict[str, Any]:
        return dict(KeySet([self.keys[k] for k in self.published]).as_dict(private=False))

    def sign(self, claims: dict[str, Any], kid: str = "k1", **header: Any) -> str:
        return jwt.encode(
            {"alg": "RS256", "kid": kid, **header}, claims, self.keys[kid], algorithms=["RS256"]
        )

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        idp = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                idp.hits += 1
                if idp.fail:
                    self.send_error(503)
                    return
                document = idp.discovery if self.path == "/.well-known/openid-configuration" else idp.jwks()
                body = json.dumps(document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
