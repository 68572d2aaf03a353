"""SASL authentication of a raw connection (``RawConnection``): SaslHandshake v1, then SaslAuthenticate
with PLAIN (RFC 4616) or SCRAM-SHA-512 (RFC 5802), as Kafka's clients do it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from helpers.emulator.wire_client import RawConnection

SCRAM = "SCRAM-SHA-512"
PLAIN = "PLAIN"


class LoginError(RuntimeError):
    pass


async def login(connection: RawConnection, mechanism: str, user: str, password: str) -> None:
    handshake = await connection.request("SaslHandshake", 1, {"Mechanism": mechanism})
    if handshake["ErrorCode"] != 0:
        raise LoginError(f"SaslHandshake {mechanism}: error {handshake['ErrorCode']}")
    if mechanism == PLAIN:
        await _authenticate(connection, b"\x00" + user.encode() + b"\x00" + password.encode())
        return
    await _scram(connection, user, password)


async def _authenticate(connection: RawConnection, token: bytes) -> bytes:
    answer = await connection.request("SaslAuthenticate", 1, {"AuthBytes": token})
    if answer["ErrorCode"] != 0:
        raise LoginError(f"SaslAuthenticate: {answer['ErrorMessage']}")
    return bytes(answer["AuthBytes"] or b"")


def _hmac(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha512).digest()


async def _scram(connection: RawConnection, user: str, password: str) -> None:
    nonce = secrets.token_urlsafe(18)
    client_first_bare = f"n={user},r={nonce}"
    server_first = (await _authenticate(connection, f"n,,{client_first_bare}".encode())).decode()
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    if not fields["r"].startswith(nonce):
        raise LoginError("SCRAM: the server nonce does not extend the client's")
    salted = hashlib.pbkdf2_hmac("sha512", password.encode(), base64.b64decode(fields["s"]), int(fields["i"]))
    client_key = _hmac(salted, b"Client Key")
    final_without_proof = f"c=biws,r={fields['r']}"
    auth_message = f"{client_first_bare},{server_first},{final_without_proof}".encode()
    signature = _hmac(hashlib.sha512(client_key).digest(), auth_message)
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    server_final = await _authenticate(
        connection, f"{final_without_proof},p={base64.b64encode(proof).decode()}".encode()
    )
    expected = _hmac(_hmac(salted, b"Server Key"), auth_message)
    if server_final.decode() != f"v={base64.b64encode(expected).decode()}":
        raise LoginError("SCRAM: the server signature does not verify")
