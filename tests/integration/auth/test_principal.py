"""How a valid token becomes a principal, and where the client address comes from."""

from __future__ import annotations

from typing import Any

import httpx
from helpers.auth import ClientFactory, assert_unauthenticated, dev_settings, idp_settings
from helpers.auth_idp import FakeIdP, good_claims


async def whoami(client: httpx.AsyncClient, token: str, **headers: str) -> dict[str, Any]:
    response = await client.get("/test/whoami", headers={"Authorization": f"Bearer {token}", **headers})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def test_groups_claim_must_be_a_list_of_names(idp: FakeIdP, client_for: ClientFactory) -> None:
    async with client_for(idp_settings(idp)) as (client, _):
        me = await whoami(client, idp.sign(good_claims(groups=["ops", "eu-admins", "ops"])))
        refused = [
            await client.get("/test/whoami", headers={"Authorization": f"Bearer {idp.sign(claims)}"})
            for claims in (
                good_claims(groups="ops"),
                good_claims(groups=["ops", 7]),
                good_claims(groups=["ops", ""]),
                good_claims(groups={"ops": True}),
            )
        ]
    assert me["names"] == ["User:alice", "Group:ops", "Group:eu-admins"]
    for response in refused:
        assert_unauthenticated(response)


async def test_principal_and_groups_claims_are_configurable(idp: FakeIdP, client_for: ClientFactory) -> None:
    settings = idp_settings(idp, principal_claim="client_id", groups_claim="roles")
    claims = good_claims(client_id="orders-service", roles=["orders"], groups=["ignored"])
    async with client_for(settings) as (client, _):
        me = await whoami(client, idp.sign(claims))
        missing = await client.get(
            "/test/whoami", headers={"Authorization": f"Bearer {idp.sign(good_claims())}"}
        )
    assert me["names"] == ["User:orders-service", "Group:orders"]
    assert_unauthenticated(missing)


async def test_forwarded_for_is_ignored_from_untrusted_peers(idp: FakeIdP, client_for: ClientFactory) -> None:
    async with client_for(idp_settings(idp)) as (client, _):
        me = await whoami(client, idp.sign(good_claims()), **{"X-Forwarded-For": "6.6.6.6"})
    assert me["client_host"] == "127.0.0.1"


async def test_forwarded_for_from_a_trusted_proxy(idp: FakeIdP, client_for: ClientFactory) -> None:
    settings = idp_settings(idp).model_copy(update={"trusted_proxies": "127.0.0.1, 10.0.0.0/8"})
    token = idp.sign(good_claims())
    async with client_for(settings) as (client, _):
        # The client may forge the left part; the right-most address no trusted proxy vouches for wins.
        single = await whoami(client, token, **{"X-Forwarded-For": "6.6.6.6, 203.0.113.7"})
        chained = await whoami(client, token, **{"X-Forwarded-For": "6.6.6.6, 203.0.113.7, 10.1.2.3"})
        absent = await whoami(client, token)
    assert single["client_host"] == "203.0.113.7"
    assert chained["client_host"] == "203.0.113.7"
    assert absent["client_host"] == "127.0.0.1"


async def test_untrusted_peer_behind_a_trusted_list(client_for: ClientFactory) -> None:
    settings = dev_settings(trusted_proxies="10.0.0.1")
    async with client_for(settings, peer="192.0.2.50") as (client, _):
        token = (
            await client.post(
                "/oauth/token", data={"grant_type": "client_credentials"}, auth=("admin", "admin-secret")
            )
        ).json()["access_token"]
        me = await whoami(client, token, **{"X-Forwarded-For": "6.6.6.6"})
    assert me["client_host"] == "192.0.2.50"
