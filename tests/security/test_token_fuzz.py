"""Property: no token is accepted unless a trusted key signed exactly the original content (catalogue A10)."""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

from helpers.auth_idp import AUDIENCE, ISSUER, good_claims, new_key, raw_token
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from joserfc import jwt
from joserfc.jwk import KeySet

from app.auth.principals import BearerChallenge
from app.auth.tokens import StaticKeys, TokenValidator
from app.settings import AuthSettings

TRUSTED = new_key("k1")
ATTACKER = new_key("k1")
VALIDATOR = TokenValidator(
    AuthSettings(issuer=ISSUER, audience=AUDIENCE, algorithms=["RS256", "ES256"]),
    ISSUER,
    StaticKeys(KeySet([TRUSTED])),
)
GOOD = jwt.encode({"alg": "RS256", "kid": "k1"}, good_claims(exp=int(time.time()) + 86_400), TRUSTED)
B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def accepts(token: str) -> bool:
    try:
        asyncio.run(VALIDATOR.validate(token))
    except BearerChallenge:
        return False
    return True


def decoded(token: str) -> list[bytes]:
    return [base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)) for part in token.split(".")]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_tokens_are_rejected(data: st.DataObject) -> None:
    position = data.draw(st.integers(0, len(GOOD) - 1))
    replacement = data.draw(st.sampled_from(B64URL + ".=+/ "))
    token = GOOD[:position] + replacement + GOOD[position + 1 :]
    if token == GOOD or not accepts(token):
        return
    # base64url's final character carries spare bits: a change there may decode to the same bytes.
    assert decoded(token) == decoded(GOOD)


claims_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.lists(st.text(max_size=5)),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    alg=st.sampled_from(["RS256", "none", "HS256", "ES256", "PS256", "", "RS512"]),
    kid=st.one_of(st.none(), st.sampled_from(["k1", "k2", "../k1", ""]), st.integers()),
    overrides=st.dictionaries(st.sampled_from(["exp", "iss", "aud", "nbf", "iat", "sub"]), claims_values),
    signer=st.sampled_from(["attacker", "garbage", "empty"]),
)
def test_forged_tokens_are_rejected(alg: str, kid: Any, overrides: dict[str, Any], signer: str) -> None:
    header: dict[str, Any] = {"alg": alg}
    if kid is not None:
        header["kid"] = kid
    claims = {**good_claims(), **overrides}
    if signer == "attacker" and alg == "RS256" and not isinstance(kid, int):
        token = jwt.encode(header, claims, ATTACKER, algorithms=["RS256"])
    else:
        token = raw_token(header, claims, b"" if signer == "empty" else b"\x00" * 256)
    assert not accepts(token)
