"""Swagger UI's login: the OpenAPI document offers the issuer's authorization-code flow with PKCE, at the
endpoints its discovery document names (fetched over real HTTP, cached, and not trusted when it names
another issuer); without them the document keeps the plain bearer scheme."""

from __future__ import annotations

import re
from typing import Any

from helpers.auth import ClientFactory, idp_settings
from helpers.auth_idp import ISSUER, FakeIdP

from app.auth.discovery import OidcDiscovery

UI_CLIENT = "kafka-purge-ui"
BEARER = {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}


def discovery_of(idp: FakeIdP, **change: Any) -> dict[str, Any]:
    return {
        "issuer": idp.url,
        "authorization_endpoint": f"{idp.url}/authorize",
        "token_endpoint": f"{idp.url}/token",
        "jwks_uri": idp.jwks_url,
        **change,
    }


async def test_the_document_offers_the_discovered_login_flow(client_for: ClientFactory, idp: FakeIdP) -> None:
    idp.discovery = discovery_of(idp)
    settings = idp_settings(idp, issuer=idp.url, ui_client_id=UI_CLIENT, ui_scopes="openid groups")
    async with client_for(settings) as (client, _):
        first = (await client.get("/openapi.json")).json()
        second = (await client.get("/openapi.json")).json()
        docs = (await client.get("/docs")).text
    assert first == second
    assert first["components"]["securitySchemes"]["OAuth2"]["flows"] == {
        "authorizationCode": {
            "authorizationUrl": f"{idp.url}/authorize",
            "tokenUrl": f"{idp.url}/token",
            "scopes": {"openid": "", "groups": ""},
        }
    }
    assert first["paths"]["/v1/deletions"]["post"]["security"] == [{"OAuth2": []}]
    assert idp.hits == 1  # discovered once, then cached
    init_oauth = re.search(r"ui\.initOAuth\((\{.*?\})\)", docs, re.DOTALL)
    assert init_oauth is not None
    assert '"clientId": "kafka-purge-ui"' in init_oauth.group(1)
    assert '"usePkceWithAuthorizationCodeGrant": true' in init_oauth.group(1)
    assert '"scopes": "openid groups"' in init_oauth.group(1)
    assert "oauth2RedirectUrl: window.location.origin + '/docs/oauth2-redirect'" in docs


async def test_the_document_may_be_read_where_the_service_reaches_the_issuer(
    client_for: ClientFactory, idp: FakeIdP
) -> None:
    # The issuer's name is the address browsers use; the service reaches it at another one.
    idp.discovery = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}authorize",
        "token_endpoint": f"{ISSUER}token",
    }
    where = f"{idp.url}/.well-known/openid-configuration"
    async with client_for(idp_settings(idp, ui_client_id=UI_CLIENT, discovery_url=where)) as (client, _):
        schema = (await client.get("/openapi.json")).json()
    flow = schema["components"]["securitySchemes"]["OAuth2"]["flows"]["authorizationCode"]
    assert (flow["authorizationUrl"], flow["tokenUrl"]) == (f"{ISSUER}authorize", f"{ISSUER}token")


async def test_a_document_naming_another_issuer_offers_no_login(
    client_for: ClientFactory, idp: FakeIdP
) -> None:
    idp.discovery = discovery_of(idp, issuer="https://someone-else.example")
    async with client_for(idp_settings(idp, issuer=idp.url, ui_client_id=UI_CLIENT)) as (client, _):
        schema = (await client.get("/openapi.json")).json()
    assert schema["components"]["securitySchemes"]["OAuth2"] == BEARER


async def test_an_unreachable_issuer_leaves_the_bearer_scheme_and_is_not_asked_per_request(
    client_for: ClientFactory, idp: FakeIdP
) -> None:
    idp.discovery = discovery_of(idp)
    idp.fail = True
    async with client_for(idp_settings(idp, issuer=idp.url, ui_client_id=UI_CLIENT)) as (client, _):
        answers = [await client.get("/openapi.json") for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert all(a.json()["components"]["securitySchemes"]["OAuth2"] == BEARER for a in answers)
    assert idp.hits == 1


async def test_discovery_is_asked_again_after_a_failure_backoff_and_after_its_ttl(idp: FakeIdP) -> None:
    idp.discovery = discovery_of(idp)
    idp.fail = True
    now = [0.0]
    discovery = OidcDiscovery(idp.url, ttl=600, failure_backoff=30, clock=lambda: now[0])
    assert await discovery.endpoints() is None
    idp.fail = False
    now[0] = 29.0
    assert await discovery.endpoints() is None  # still backing off
    now[0] = 30.0
    found = await discovery.endpoints()
    assert found is not None
    assert found.token_endpoint == f"{idp.url}/token"
    now[0] = 629.0
    idp.fail = True
    assert await discovery.endpoints() == found  # fresh: not asked
    now[0] = 631.0
    assert await discovery.endpoints() == found  # stale, the issuer fails: the last good answer stays
    assert discovery.fetch_count == 3
