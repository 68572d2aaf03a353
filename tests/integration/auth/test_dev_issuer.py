"""The development token issuer: OAuth2 client-credentials grant (RFC 6749 §4.4) and its JWKS."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote_plus

import httpx
import pytest
from helpers.auth import ClientFactory, assert_unauthenticated, dev_settings, idp_settings
from helpers.auth_idp import FakeIdP
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from pydantic import SecretStr

GRANT = {"grant_type": "client_credentials"}


async def whoami(client: httpx.AsyncClient, token: str) -> dict[str, Any]:
    response = await client.get("/test/whoami", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def test_basic_auth_grant_issues_a_working_token(client_for: ClientFactory) -> None:
    async with client_for(dev_settings()) as (client, _):
        response = await client.post("/oauth/token", data=GRANT, auth=("orders-team", "orders-secret"))
        assert response.status_code == 200, response.text
        body = response.json()
        me = await whoami(client, body["access_token"])
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 3600
    assert response.headers["cache-control"] == "no-store"
    assert me["names"] == ["User:orders-team", "Group:orders", "Group:eu"]


async def test_form_auth_grant_issues_a_working_token(client_for: ClientFactory) -> None:
    # As Swagger UI sends it with "request body" client authentication.
    form = {**GRANT, "client_id": "admin", "client_secret": "admin-secret", "scope": ""}
    async with client_for(dev_settings()) as (client, _):
        response = await client.post("/oauth/token", data=form)
        assert response.status_code == 200, response.text
        me = await whoami(client, response.json()["access_token"])
    assert me["names"] == ["User:admin"]


async def test_token_claims_and_jwks(client_for: ClientFactory) -> None:
    settings = dev_settings(public_url="http://purge.example:8080/")
    async with client_for(settings) as (client, _):
        token = (await client.post("/oauth/token", data=GRANT, auth=("admin", "admin-secret"))).json()
        jwks = (await client.get("/.well-known/jwks.json")).json()
    assert all("d" not in key and "p" not in key for key in jwks["keys"])
    decoded = jwt.decode(token["access_token"], KeySet.import_key_set(jwks), algorithms=["RS256"])
    assert decoded.header["alg"] == "RS256"
    assert decoded.claims["iss"] == "http://purge.example:8080/dev-issuer"
    assert decoded.claims["aud"] == "kafka-purge"
    assert decoded.claims["exp"] - decoded.claims["iat"] == 3600


@pytest.mark.parametrize(
    ("auth", "form"),
    [
        (("admin", "wrong"), {}),
        (("nobody", "admin-secret"), {}),
        (None, {"client_id": "admin", "client_secret": "wrong"}),
        (None, {"client_id": "admin"}),
        (None, {}),
    ],
)
async def test_bad_client_credentials_are_invalid_client(
    client_for: ClientFactory, auth: tuple[str, str] | None, form: dict[str, str]
) -> None:
    async with client_for(dev_settings()) as (client, _):
        response = await client.post("/oauth/token", data={**GRANT, **form}, auth=auth)
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert "access_token" not in response.text
    if auth is not None:
        assert response.headers["www-authenticate"].startswith("Basic")


async def test_malformed_basic_header_is_invalid_client(client_for: ClientFactory) -> None:
    async with client_for(dev_settings()) as (client, _):
        for value in ("Basic !!!", f"Basic {base64.b64encode(b'no-colon').decode()}"):
            response = await client.post("/oauth/token", data=GRANT, headers={"Authorization": value})
            assert response.status_code == 401
            assert response.json()["error"] == "invalid_client"


async def test_grant_errors_are_400(client_for: ClientFactory) -> None:
    creds = ("admin", "admin-secret")
    async with client_for(dev_settings()) as (client, _):
        password = await client.post("/oauth/token", data={"grant_type": "password"}, auth=creds)
        missing = await client.post("/oauth/token", data={}, auth=creds)
        as_json = await client.post("/oauth/token", json=GRANT, auth=creds)
        both = await client.post(
            "/oauth/token", data={**GRANT, "client_id": "admin", "client_secret": "admin-secret"}, auth=creds
        )
        repeated = await client.post(
            "/oauth/token",
            content="grant_type=client_credentials&grant_type=client_credentials",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            auth=creds,
        )
    assert (password.status_code, password.json()["error"]) == (400, "unsupported_grant_type")
    for response in (missing, as_json, both, repeated):
        assert (response.status_code, response.json()["error"]) == (400, "invalid_request")


async def test_dev_tokens_are_rejected_by_another_instance(client_for: ClientFactory) -> None:
    async with client_for(dev_settings()) as (first, _):
        token = (await first.post("/oauth/token", data=GRANT, auth=("admin", "admin-secret"))).json()
    async with client_for(dev_settings()) as (second, _):
        response = await second.get(
            "/test/whoami", headers={"Authorization": f"Bearer {token['access_token']}"}
        )
    assert_unauthenticated(response)


async def test_swagger_ui_is_wired_to_the_token_endpoint(client_for: ClientFactory) -> None:
    async with client_for(dev_settings()) as (client, app):
        schema = (await client.get("/openapi.json")).json()
        docs = await client.get("/docs")
    scheme = schema["components"]["securitySchemes"]["OAuth2"]
    assert scheme["flows"]["clientCredentials"]["tokenUrl"] == "/oauth/token"
    assert schema["paths"]["/test/whoami"]["get"]["security"] == [{"OAuth2": []}]
    assert "/oauth/token" in schema["paths"]
    assert docs.status_code == 200
    assert "initOAuth" in docs.text
    assert app.swagger_ui_init_oauth is not None


async def test_external_idp_documents_a_plain_bearer_scheme(client_for: ClientFactory) -> None:
    idp = FakeIdP()
    async with client_for(idp_settings(idp)) as (client, _):
        schema = (await client.get("/openapi.json")).json()
        token_endpoint = await client.post("/oauth/token", data=GRANT, auth=("admin", "admin-secret"))
    assert schema["components"]["securitySchemes"]["OAuth2"] == {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
    }
    assert token_endpoint.status_code in (404, 405)


async def test_basic_credentials_raw_or_form_encoded(client_for: ClientFactory) -> None:
    settings = dev_settings()
    settings.auth.dev_clients["odd client"] = SecretStr("p+ss%w0rd:x")

    def basic(user: str, secret: str) -> dict[str, str]:
        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()}

    async with client_for(settings) as (client, _):
        raw = await client.post("/oauth/token", data=GRANT, headers=basic("odd client", "p+ss%w0rd:x"))
        encoded = await client.post(
            "/oauth/token", data=GRANT, headers=basic(quote_plus("odd client"), quote_plus("p+ss%w0rd:x"))
        )
        named_in_body = await client.post(
            "/oauth/token", data={**GRANT, "client_id": "admin"}, auth=("admin", "admin-secret")
        )
        other_in_body = await client.post(
            "/oauth/token", data={**GRANT, "client_id": "orders-team"}, auth=("admin", "admin-secret")
        )
    assert raw.status_code == 200, raw.text
    assert encoded.status_code == 200, encoded.text
    assert named_in_body.status_code == 200, named_in_body.text
    assert (other_in_body.status_code, other_in_body.json()["error"]) == (400, "invalid_request")


async def test_a_dev_token_is_never_a_production_token(idp: FakeIdP, client_for: ClientFactory) -> None:
    # The worst case: a production issuer named like the service, whose JWKS even publishes the dev key.
    public_url = "http://purge.example:8080"
    async with client_for(dev_settings(public_url=public_url)) as (client, app):
        token = (await client.post("/oauth/token", data=GRANT, auth=("admin", "admin-secret"))).json()
        dev_key = app.state.auth.dev_issuer.key
    idp.keys[dev_key.kid] = RSAKey.import_key(dev_key.as_dict(private=False), {"kid": dev_key.kid})
    idp.published.append(dev_key.kid)
    production = idp_settings(idp, issuer=public_url).model_copy(update={"public_url": public_url})
    async with client_for(production) as (client, _):
        me = await client.get("/test/whoami", headers={"Authorization": f"Bearer {token['access_token']}"})
    assert_unauthenticated(me)
