"""The token corpus: forged and malformed bearer tokens, generated from a trusted IdP and an attacker's.

``corpus(idp, attacker)`` returns ``{name: token}``; every one of them must be refused with a 401. Tokens
are built by hand (``cryptography``, ``hmac``) where joserfc would refuse to produce them.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import NameOID
from helpers.auth_idp import AUDIENCE, ISSUER, FakeIdP, b64, good_claims
from joserfc.jwk import RSAKey

NONE_CASINGS = ("none", "None", "NONE", "nOnE", "NoNe", "nONE", "none ", " none", "")
HMAC_DIGESTS = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}
# Where the bit flips go: enough positions to cover the start, middle and end of each segment.
FLIPS_PER_SEGMENT = 24


def segment(data: dict[str, Any] | list[Any] | str | bytes) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return b64(raw)


def signing_input(header: dict[str, Any] | bytes, claims: dict[str, Any] | Any) -> str:
    return f"{segment(header)}.{segment(claims)}"


def rs_sign(private: rsa.RSAPrivateKey, header: dict[str, Any], claims: Any, digest: Any = None) -> str:
    """An RSASSA-PKCS1-v1_5 signature over any header, which joserfc may refuse to write itself."""
    unsigned = signing_input(header, claims)
    signature = private.sign(unsigned.encode(), padding.PKCS1v15(), digest or hashes.SHA256())
    return f"{unsigned}.{b64(signature)}"


def hs_sign(secret: bytes, alg: str, header: dict[str, Any], claims: Any) -> str:
    unsigned = signing_input({**header, "alg": alg}, claims)
    return f"{unsigned}.{b64(hmac.new(secret, unsigned.encode(), HMAC_DIGESTS[alg]).digest())}"


def private_of(key: RSAKey) -> rsa.RSAPrivateKey:
    private = key.private_key
    assert isinstance(private, rsa.RSAPrivateKey)
    return private


def trusted(idp: FakeIdP, claims: Any, kid: str = "k1", **header: Any) -> str:
    """Signed by the IdP's own key k1: a valid signature, so only the claims or header may refuse it."""
    return rs_sign(private_of(idp.keys[kid]), {"alg": "RS256", "kid": kid, "typ": "JWT", **header}, claims)


def self_signed_cert(private: rsa.RSAPrivateKey) -> str:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "idp.test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(private, hashes.SHA256())
    )
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


def alg_none(claims: dict[str, Any]) -> dict[str, str]:
    tokens: dict[str, str] = {}
    for alg in NONE_CASINGS:
        for kid in ("k1", None):
            header: dict[str, Any] = {"alg": alg, "typ": "JWT"} | ({"kid": kid} if kid else {})
            unsigned = signing_input(header, claims)
            tokens[f"alg={alg!r} kid={kid} empty signature"] = f"{unsigned}."
            tokens[f"alg={alg!r} kid={kid} junk signature"] = f"{unsigned}.{b64(b'x' * 32)}"
    tokens["no alg at all"] = f"{signing_input({'kid': 'k1'}, claims)}."
    tokens["alg is null"] = f"{signing_input({'alg': None, 'kid': 'k1'}, claims)}."
    tokens["alg is a list"] = f"{signing_input({'alg': ['RS256', 'none'], 'kid': 'k1'}, claims)}."
    return tokens


def hmac_confusion(idp: FakeIdP, claims: dict[str, Any]) -> dict[str, str]:
    """HS* signed with what an attacker knows of the public key: the classic RS/HS confusion."""
    public = idp.keys["k1"]
    pem = public.as_pem(private=False)
    der = (
        private_of(public)
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    jwk = public.as_dict(private=False)
    secrets = {
        "PEM": pem,
        "PEM without newline": pem.rstrip(b"\n"),
        "PKCS1 PEM": private_of(public)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.PKCS1),
        "DER": der,
        "JWK JSON": json.dumps(jwk).encode(),
        "JWK JSON compact": json.dumps(jwk, separators=(",", ":")).encode(),
        "n value": str(jwk["n"]).encode(),
        "n bytes": base64.urlsafe_b64decode(str(jwk["n"]) + "=="),
        "JWKS text": json.dumps(idp.jwks()).encode(),
        "empty secret": b"",
    }
    tokens: dict[str, str] = {}
    for label, secret in secrets.items():
        for alg in HMAC_DIGESTS:
            for kid in ("k1", None):
                header = {"typ": "JWT"} | ({"kid": kid} if kid else {})
                tokens[f"{alg} keyed with the {label} kid={kid}"] = hs_sign(secret, alg, header, claims)
    return tokens


def foreign_keys(attacker: FakeIdP, claims: dict[str, Any]) -> dict[str, str]:
    """Well-formed signatures by keys the service does not trust."""
    rogue = private_of(attacker.keys["k1"])
    ec_key = ec.generate_private_key(ec.SECP256R1())
    unsigned = signing_input({"alg": "ES256", "kid": "k1"}, claims)
    der_signature = ec_key.sign(unsigned.encode(), ec.ECDSA(hashes.SHA256()))
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    r, s = decode_dss_signature(der_signature)
    es256 = f"{unsigned}.{b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"
    pss_unsigned = signing_input({"alg": "PS256", "kid": "k1"}, claims)
    pss = rogue.sign(
        pss_unsigned.encode(),
        padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32),
        hashes.SHA256(),
    )
    return {
        "foreign RS256 key, trusted kid k1": rs_sign(rogue, {"alg": "RS256", "kid": "k1"}, claims),
        "foreign RS256 key, trusted kid k2": rs_sign(rogue, {"alg": "RS256", "kid": "k2"}, claims),
        "foreign RS256 key, its own kid": rs_sign(rogue, {"alg": "RS256", "kid": "attacker"}, claims),
        "foreign RS256 key, no kid": rs_sign(rogue, {"alg": "RS256"}, claims),
        "foreign RS512 key, kid k1": rs_sign(rogue, {"alg": "RS512", "kid": "k1"}, claims, hashes.SHA512()),
        "foreign ES256 key, kid k1": es256,
        "foreign PS256 key, kid k1": f"{pss_unsigned}.{b64(pss)}",
    }


def header_tricks(attacker: FakeIdP, claims: dict[str, Any]) -> dict[str, str]:
    """kid injection and keys named by the token itself (jku, x5u, jwk, x5c), all signed by the attacker."""
    rogue = private_of(attacker.keys["k1"])
    rogue_jwk = attacker.keys["k1"].as_dict(private=False)
    kids: dict[str, Any] = {
        "path traversal": "../../../../dev/null",
        "path traversal to k1": "../k1",
        "absolute path": "/etc/passwd",
        "SQL injection": "k1' OR '1'='1",
        "SQL union": "x' UNION SELECT 'secret' --",
        "command": "k1; rm -rf /",
        "unknown": "no-such-key",
        "empty": "",
        "NUL": "k1\x00",
        "URL": attacker.jwks_url,
        "integer": 1,
        "null": None,
        "list": ["k1"],
        "object": {"kid": "k1"},
    }
    tokens = {
        f"kid {label} ({kid!r})": rs_sign(rogue, {"alg": "RS256", "kid": kid}, claims)
        for label, kid in kids.items()
    }
    cert = self_signed_cert(rogue)
    for kid in ("k1", "attacker"):
        named_keys: dict[str, dict[str, Any]] = {
            "jku": {"jku": attacker.jwks_url},
            "x5u": {"x5u": attacker.jwks_url},
            "jwk": {"jwk": {**rogue_jwk, "kid": kid}},
            "x5c": {"x5c": [cert]},
            "jku and jwk": {"jku": attacker.jwks_url, "jwk": rogue_jwk},
        }
        for label, extra in named_keys.items():
            header = {"alg": "RS256", "kid": kid, **extra}
            tokens[f"{label} names the attacker's key, kid {kid}"] = rs_sign(rogue, header, claims)
    return tokens


def signed_header_tricks(idp: FakeIdP, claims: dict[str, Any]) -> dict[str, str]:
    """Validly signed by the trusted key, yet with a header a verifier must refuse (RFC 7515 §4.1.11)."""
    unknown = {"crit": ["urn:example:unknown"], "urn:example:unknown": True}
    unencoded_input = f"{segment({'alg': 'RS256', 'kid': 'k1', 'b64': False, 'crit': ['b64']})}."
    raw_payload = json.dumps(claims)
    unencoded_sig = private_of(idp.keys["k1"]).sign(
        (unencoded_input + raw_payload).encode(), padding.PKCS1v15(), hashes.SHA256()
    )
    return {
        "crit with an unknown extension": trusted(idp, claims, **unknown),
        "crit naming a missing header": trusted(idp, claims, crit=["exp"]),
        "crit not a list": trusted(idp, claims, crit="urn:example:unknown"),
        "b64=false unencoded payload": f"{unencoded_input}{b64(raw_payload.encode())}.{b64(unencoded_sig)}",
        "zip in a JWS header": trusted(idp, claims, zip="DEF"),
    }


def jwe_tokens(claims: dict[str, Any]) -> dict[str, str]:
    parts = [b64(b"k" * 32), b64(b"iv" * 6), b64(json.dumps(claims).encode()), b64(b"t" * 16)]
    return {
        f"JWE alg {alg} enc {enc}": ".".join([segment({"alg": alg, "enc": enc, "kid": "k1"}), *parts])
        for alg, enc in (("RSA-OAEP", "A256GCM"), ("dir", "A128CBC-HS256"), ("RSA1_5", "A128GCM"))
    }


def claim_variants(idp: FakeIdP) -> dict[str, str]:
    """Validly signed tokens whose claims must not be accepted."""
    now = int(time.time())
    variants: dict[str, Any] = {
        "wrong iss": good_claims(iss="https://evil.test/"),
        "iss without its trailing slash": good_claims(iss=ISSUER.rstrip("/")),
        "iss as a list": good_claims(iss=[ISSUER]),
        "missing iss": {**good_claims(), "iss": None},
        "wrong aud": good_claims(aud="someone-else"),
        "aud list without us": good_claims(aud=["someone-else", "other"]),
        "aud case changed": good_claims(aud=AUDIENCE.upper()),
        "missing aud": {**good_claims(), "aud": None},
        "expired beyond the leeway": good_claims(exp=now - 120, iat=now - 600, nbf=now - 600),
        "exp as a string": good_claims(exp=str(now + 300)),
        "exp is true": good_claims(exp=True),
        "missing exp": {**good_claims(), "exp": None},
        "nbf in the future": good_claims(nbf=now + 600),
        "iat in the future": good_claims(iat=now + 600),
        "missing sub": {**good_claims(), "sub": None},
        "empty sub": good_claims(sub=""),
        "sub is a number": good_claims(sub=42),
        "sub is a list": good_claims(sub=["alice"]),
        "sub is an object": good_claims(sub={"name": "alice"}),
        "sub with NUL": good_claims(sub="alice\x00admin"),
        "sub with a newline": good_claims(sub="alice\nUser:admin"),
        "sub with an escape": good_claims(sub="alice\x1b[2J"),
        "groups as a string": good_claims(groups="admins"),
        "huge token": good_claims(padding="x" * 9_000),
    }
    tokens = {}
    for name, claims in variants.items():
        tokens[f"claims: {name}"] = trusted(idp, {k: v for k, v in claims.items() if v is not None})
    tokens["claims: payload is a JSON list"] = trusted(idp, [good_claims()])
    tokens["claims: payload is a JSON string"] = trusted(idp, "alice")
    tokens["claims: payload is not JSON"] = trusted(idp, b"not json")
    tokens["huge header"] = trusted(idp, good_claims(), x="y" * 9_000)
    return tokens


def flip(token: str, index: int, position: int, bit: int) -> str:
    parts = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(parts[index] + "=" * (-len(parts[index]) % 4)))
    raw[position % len(raw)] ^= 1 << bit
    parts[index] = b64(bytes(raw))
    return ".".join(parts)


def bit_flips(control: str) -> dict[str, str]:
    tokens = {}
    for index, name in enumerate(("header", "payload", "signature")):
        length = len(base64.urlsafe_b64decode(control.split(".")[index] + "==="))
        positions = sorted(
            {round(i * (length - 1) / (FLIPS_PER_SEGMENT - 1)) for i in range(FLIPS_PER_SEGMENT)}
        )
        for position in positions:
            bit = position % 8
            tokens[f"bit {bit} of {name} byte {position} flipped"] = flip(control, index, position, bit)
    return tokens


def mangled(control: str) -> dict[str, str]:
    header, payload, signature = control.split(".")
    return {
        "truncated by 1": control[:-1],
        "truncated by 10": control[:-10],
        "truncated to half": control[: len(control) // 2],
        "signature removed": f"{header}.{payload}.",
        "two segments": f"{header}.{payload}",
        "one segment": header,
        "empty header": f".{payload}.{signature}",
        "empty payload": f"{header}..{signature}",
        "trailing dot": f"{control}.",
        "four segments": f"{control}.{signature}",
        "six segments": f"{control}.a.b.c",
        "signature doubled": f"{header}.{payload}.{signature}{signature}",
        "signature of another token": f"{header}.{segment(good_claims(sub='mallory'))}.{signature}",
        "padding on every segment": ".".join(p + "==" for p in (header, payload, signature)),
        "padding on the signature": f"{control}=",
        "standard base64 alphabet": control.replace("-", "+").replace("_", "/")
        + ("+" if "-" not in control else ""),
        "space inside": f"{header}.{payload[:10]} {payload[10:]}.{signature}",
        "tab inside": f"{header}.{payload}.\t{signature}",
        "percent-encoded dots": control.replace(".", "%2E"),
        "non-ASCII character": f"{header}.{payload}.{signature[:-1]}\u00e9",
        "invalid base64 character": f"{header}.{payload}.{signature[:-2]}!!",
        "header not JSON": f"{b64(b'{alg:RS256}')}.{payload}.{signature}",
        "header is a JSON list": f"{segment(['RS256'])}.{payload}.{signature}",
        "header is base64 of nothing": f"{b64(b'')}x.{payload}.{signature}",
    }


def corpus(idp: FakeIdP, attacker: FakeIdP, control: str) -> dict[str, str]:
    claims = good_claims(exp=int(time.time()) + 3_600)
    builders: list[Callable[[], dict[str, str]]] = [
        lambda: alg_none(claims),
        lambda: hmac_confusion(idp, claims),
        lambda: foreign_keys(attacker, claims),
        lambda: header_tricks(attacker, claims),
        lambda: signed_header_tricks(idp, claims),
        lambda: jwe_tokens(claims),
        lambda: claim_variants(idp),
        lambda: bit_flips(control),
        lambda: mangled(control),
    ]
    tokens: dict[str, str] = {}
    for build in builders:
        tokens.update(build())
    return tokens
