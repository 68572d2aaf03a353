"""A token naming its principal or groups with control characters is refused (401): such names would be
stored, audited and matched against ACLs, and PostgreSQL cannot store NUL at all."""

from __future__ import annotations

import pytest
from helpers.auth import ClientFactory, assert_unauthenticated, idp_settings
from helpers.auth_idp import FakeIdP, good_claims


@pytest.mark.parametrize(
    "claims",
    [
        {"sub": "alice\x00"},
        {"sub": "alice\nUser:admin"},
        {"sub": "alice\x85"},
        {"groups": ["ops", "admins\x00"]},
        {"groups": ["\x1b[31mops"]},
    ],
)
async def test_control_characters_in_names_are_refused(
    idp: FakeIdP, client_for: ClientFactory, claims: dict[str, object]
) -> None:
    token = idp.sign(good_claims(**claims))
    async with client_for(idp_settings(idp)) as (client, _):
        response = await client.get("/test/whoami", headers={"Authorization": f"Bearer {token}"})
    assert_unauthenticated(response)


async def test_printable_names_are_kept(idp: FakeIdP, client_for: ClientFactory) -> None:
    token = idp.sign(good_claims(sub="älice o'brien", groups=["ops team"]))
    async with client_for(idp_settings(idp)) as (client, _):
        response = await client.get("/test/whoami", headers={"Authorization": f"Bearer {token}"})
    assert response.json()["names"] == ["User:älice o'brien", "Group:ops team"]
