"""Runs Canaille (a maintained OpenID Connect provider, from PyPI) as a process on loopback, for the
browser login test: ``python oidc_provider.py --service-url URL --user NAME:PASSWORD --group NAME``.

Canaille does the OpenID Connect work (discovery, its own login form, authorization code with PKCE,
JWT access tokens carrying the ``groups`` claim, CORS for the client's origin); this script only
configures it (in-memory storage, a fresh signing key) and registers what the test needs: the user
and their group, the public PKCE client Swagger UI logs in with (redirect URI
``<service URL>/docs/oauth2-redirect``), and a ``kafka-purge`` client that stands for the API, so
access tokens name it in ``aud``. Prints one JSON line with the issuer when it is ready.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
from typing import Any

from canaille import create_app
from canaille.app import models
from canaille.backends import Backend
from flask import Flask
from joserfc.jwk import RSAKey
from werkzeug.serving import make_server

UI_CLIENT_ID = "kafka-purge-ui"
API_CLIENT_ID = "kafka-purge"
SCOPES = ["openid", "profile", "groups"]


def configuration(issuer_host: str) -> dict[str, Any]:
    key = RSAKey.generate_key(2048, {"alg": "RS256", "use": "sig"})  # the service's default algorithm
    key.ensure_kid()
    return {
        "SECRET_KEY": secrets.token_hex(32),
        "SERVER_NAME": issuer_host,
        "PREFERRED_URL_SCHEME": "http",
        "CANAILLE": {
            "NAME": "Test identity provider",
            "DATABASE": "memory",
            "JAVASCRIPT": False,
            "ACL": {"DEFAULT": {"PERMISSIONS": ["use_oidc"]}},
        },
        # Swagger UI sends no nonce with the authorization code flow (the nonce is an ID token
        # replay check; the API only ever sees the access token).
        "CANAILLE_OIDC": {"ACTIVE_JWKS": [key.as_dict(private=True)], "REQUIRE_NONCE": False},
    }


def register(app: Flask, service_url: str, user: tuple[str, str], groups: list[str]) -> None:
    with app.app_context():
        backend = Backend.instance
        api = models.Client(client_id=API_CLIENT_ID, client_name="kafka-purge API", scope=[])
        backend.save(api)
        ui = models.Client(
            client_id=UI_CLIENT_ID,
            client_name="kafka-purge Swagger UI",
            client_uri=service_url,  # its origin may call the token endpoint (CORS)
            redirect_uris=[f"{service_url}/docs/oauth2-redirect"],
            grant_types=["authorization_code"],
            response_types=["code"],
            scope=SCOPES,
            token_endpoint_auth_method="none",  # a public client: PKCE instead of a secret
        )
        backend.save(ui)
        ui.audience = [ui, api]
        backend.save(ui)
        name, password = user
        person = models.User(user_name=name, password=password, formatted_name=name.title())
        backend.save(person)
        for group in groups:
            backend.save(models.Group(display_name=group, members=[person]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--service-url", required=True)
    parser.add_argument("--user", required=True, help="NAME:PASSWORD")
    parser.add_argument("--group", action="append", default=[])
    args = parser.parse_args()
    name, _, password = args.user.partition(":")

    # Bound before the app exists: the issuer names the port.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    host = f"127.0.0.1:{listener.getsockname()[1]}"
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain HTTP on loopback
    app = create_app(configuration(host))
    register(app, args.service_url.rstrip("/"), (name, password), args.group)
    server = make_server("127.0.0.1", 0, app, threaded=True, fd=listener.fileno())
    print(json.dumps({"issuer": f"http://{host}", "client_id": UI_CLIENT_ID}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
