"""SASL/PLAIN on a connection: SaslHandshake v0/v1, SaslAuthenticate, and v0's raw token frames.

Mirrors Kafka's SaslServerAuthenticator: before authentication only ApiVersions, SaslHandshake and
SaslAuthenticate are accepted; a failed authentication is answered and then the connection closes.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from enum import Enum

from kafka_emulator.protocol.api import Message
from kafka_emulator.protocol.errors import ErrorCode

MECHANISM = "PLAIN"
ANONYMOUS = "User:ANONYMOUS"
SASL_KEYS = frozenset({17, 18, 36})  # SaslHandshake, ApiVersions, SaslAuthenticate
FAILED_MESSAGE = "Authentication failed: Invalid username or password"


class SaslStage(Enum):
    HANDSHAKE = "handshake"  # waiting for SaslHandshake
    RAW_TOKEN = "raw_token"  # noqa: S105 - a stage name. After SaslHandshake v0: the next frame is a bare PLAIN token
    AUTHENTICATE = "authenticate"  # after SaslHandshake v1: expecting SaslAuthenticate
    DONE = "done"


@dataclass
class SaslOutcome:
    response: Message
    close: bool = False


class SaslSession:
    """The SASL state of one connection; ``users`` None means a PLAINTEXT listener."""

    def __init__(self, users: dict[str, str] | None) -> None:
        self._users = users
        self.stage = SaslStage.DONE if users is None else SaslStage.HANDSHAKE
        self.principal = ANONYMOUS

    @property
    def authenticated(self) -> bool:
        return self.stage is SaslStage.DONE

    def handshake(self, version: int, request: Message) -> SaslOutcome:
        if self.stage is not SaslStage.HANDSHAKE:
            return SaslOutcome({"ErrorCode": ErrorCode.ILLEGAL_SASL_STATE, "Mechanisms": []})
        if request["Mechanism"] != MECHANISM:
            response = {"ErrorCode": ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Mechanisms": [MECHANISM]}
            return SaslOutcome(response, close=True)
        self.stage = SaslStage.RAW_TOKEN if version == 0 else SaslStage.AUTHENTICATE
        return SaslOutcome({"ErrorCode": ErrorCode.NONE, "Mechanisms": [MECHANISM]})

    def authenticate(self, request: Message) -> SaslOutcome:
        if self.stage is not SaslStage.AUTHENTICATE:
            message = "Unexpected SaslAuthenticate request"
            response = {"ErrorCode": ErrorCode.ILLEGAL_SASL_STATE, "ErrorMessage": message}
            return SaslOutcome(response, close=self.stage is not SaslStage.DONE)
        error = self._check_plain(bytes(request["AuthBytes"] or b""))
        if error is not None:
            response = {"ErrorCode": ErrorCode.SASL_AUTHENTICATION_FAILED, "ErrorMessage": error}
            return SaslOutcome(response, close=True)
        return SaslOutcome({"ErrorCode": ErrorCode.NONE, "ErrorMessage": None, "AuthBytes": b""})

    def raw_token(self, token: bytes) -> bool:
        """A v0 bare token; True when authenticated (the broker then sends an empty frame)."""
        return self.stage is SaslStage.RAW_TOKEN and self._check_plain(token) is None

    def _check_plain(self, token: bytes) -> str | None:
        """RFC 4616 message ``[authzid] NUL authcid NUL passwd``; returns an error message or None."""
        parts = token.split(b"\x00")
        if len(parts) != 3:
            return "Invalid SASL/PLAIN response: expected 3 tokens"
        try:
            authzid, user, password = (part.decode("utf-8") for part in parts)
        except UnicodeDecodeError:
            return FAILED_MESSAGE
        if authzid and authzid != user:
            return (
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        expected = (self._users or {}).get(user)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            return FAILED_MESSAGE
        self.stage = SaslStage.DONE
        self.principal = f"User:{user}"
        return None
