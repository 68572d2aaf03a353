"""The forged-token corpus (``forge.corpus``) against the app with a production issuer: the IdP's JWKS is
fetched over loopback HTTP, the app answers over HTTP (ASGI), on a migrated SQLite database.

Every corpus token must get a 401 with a Bearer challenge and problem+json; a valid control token gets a
200 before and after the corpus (so a validator that refuses everything fails here too), and neither a
token's jku/x5u nor its unknown kids make the service fetch from anywhere but its configured JWKS.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from helpers.auth_idp import AUDIENCE, ISSUER, FakeIdP, good_claims

from app.adapters.db.migrate import upgrade
from app.main import create_app
from app.settings import AuthSettings, DatabaseSettings, Settings
from security.forge import corpus
from security.responses import unauthenticated

PROTECTED = "/v1/deletions"
# The production default, and a deployment that also allows every other JWS algorithm joserfc knows
# (an RSA key from the JWKS must still never verify an HMAC, nor an unlisted algorithm pass).
CONFIGS = {
    "RS256 only": ["RS256"],
    "many algorithms": ["RS256", "RS384", "RS512", "PS256", "ES256", "HS256", "HS384", "HS512"],
}


@asynccontextmanager
async def production_app(idp: FakeIdP, algorithms: list[str], db: Path) -> AsyncIterator[httpx.AsyncClient]:
    url = f"sqlite+aiosqlite:///{db}"
    await upgrade(url)
    auth = AuthSettings(issuer=ISSUER, audience=AUDIENCE, jwks_url=idp.jwks_url, algorithms=algorithms)
    app = create_app(Settings(database=DatabaseSettings(url=url), auth=auth), run_executor=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client


async def get(client: httpx.AsyncClient, token: str) -> httpx.Response:
    # Bytes, so a token with non-ASCII characters is sent as it is (UTF-8), not refused by httpx.
    return await client.get(PROTECTED, headers={"Authorization": f"Bearer {token}".encode()})


@pytest.mark.parametrize("algorithms", CONFIGS.values(), ids=CONFIGS.keys())
async def test_no_forged_token_is_accepted(
    idp: FakeIdP, attacker: FakeIdP, tmp_path: Path, algorithms: list[str]
) -> None:
    control = idp.sign(good_claims(exp=int(time.time()) + 3_600))
    tokens = corpus(idp, attacker, control)
    assert len(tokens) > 250
    async with production_app(idp, algorithms, tmp_path / "corpus.db") as client:
        assert (await get(client, control)).status_code == 200
        wrong = {}
        for name, token in tokens.items():
            response = await get(client, token)
            if not unauthenticated(response):
                wrong[name] = f"{response.status_code} {response.text[:200]}"
        assert wrong == {}, f"{len(wrong)} of {len(tokens)} forged tokens were not refused with a 401"
        # The key cache was not poisoned: the trusted keys still verify, k2 as well as k1.
        assert (await get(client, control)).status_code == 200
        assert (await get(client, idp.sign(good_claims(sub="bob"), kid="k2"))).status_code == 200
    assert attacker.hits == 0, "a token made the service fetch keys from a URL the token named"
    # Unknown kids force at most one refetch per cooldown: first fetch plus one, whatever the corpus held.
    assert idp.hits <= 2


async def test_the_corpus_checks_can_fail(idp: FakeIdP, attacker: FakeIdP, tmp_path: Path) -> None:
    """A token the validator must accept is reported as accepted by the same check the corpus uses."""
    async with production_app(idp, ["RS256"], tmp_path / "control.db") as client:
        response = await get(client, idp.sign(good_claims()))
        assert response.status_code == 200
        assert not unauthenticated(response)
        assert unauthenticated(await get(client, "not-a-token"))
