"""Turns one request frame into one response frame, the way a broker's request channel does.

Unknown API keys, versions outside the advertised range (except ApiVersions), undecodable requests and
requests before SASL authentication close the connection, as Kafka does. A handler that raises is
answered with UNKNOWN_SERVER_ERROR shaped like the request's error response.
"""

from __future__ import annotations

import asyncio
import logging
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass

from kafka_emulator.error_responses import error_response
from kafka_emulator.faults import FaultInjector
from kafka_emulator.protocol import messages
from kafka_emulator.protocol.api import HandlerRegistry, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.protocol.primitives import DecodeError
from kafka_emulator.request_log import LoggedRequest, RequestLog
from kafka_emulator.sasl import SASL_KEYS, SaslOutcome, SaslSession, SaslStage

log = logging.getLogger("kafka_emulator")

PRODUCE, SASL_HANDSHAKE, API_VERSIONS, SASL_AUTHENTICATE = 0, 17, 18, 36
BUILTIN_KEYS = (SASL_HANDSHAKE, API_VERSIONS, SASL_AUTHENTICATE)
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

VersionLimit = Callable[[int, int], int | None]  # (broker id, api key) -> highest version, None = schema's


@dataclass(frozen=True)
class Reply:
    payload: bytes | None  # response without its size prefix; None sends nothing
    close: bool = False


CLOSE = Reply(None, close=True)


class Dispatcher:
    def __init__(
        self,
        registry: HandlerRegistry,
        faults: FaultInjector,
        sasl_users: dict[str, str] | None = None,
        version_limit: VersionLimit | None = None,
        request_log: RequestLog | None = None,
    ) -> None:
        self._registry = registry
        self._faults = faults
        self._log = RequestLog(apis=()) if request_log is None else request_log
        self._sasl_users = sasl_users
        self._version_limit = version_limit or (lambda broker, key: None)

    def new_session(self) -> SaslSession:
        return SaslSession(self._sasl_users)

    def advertised(self, broker_id: int) -> dict[int, tuple[int, int]]:
        """API key -> (min, max) versions this broker accepts: schema range, handler present, limits."""
        ranges = ((key, self.version_range(broker_id, key)) for key in sorted(messages.apis()))
        return {key: found for key, found in ranges if found is not None}

    def version_range(self, broker_id: int, key: int) -> tuple[int, int] | None:
        if key not in BUILTIN_KEYS and self._registry.get(key) is None:
            return None
        if key not in messages.apis():
            return None
        low, high = messages.supported_versions(key)
        limit = self._version_limit(broker_id, key)
        return low, high if limit is None else min(high, limit)

    async def dispatch(self, broker_id: int, session: SaslSession, client_host: str, frame: bytes) -> Reply:
        if session.stage is SaslStage.RAW_TOKEN:
            return Reply(b"") if session.raw_token(frame) else CLOSE
        try:
            key, version = messages.peek_api(frame)
            received = self._log.clock(key)
            supported = self.version_range(broker_id, key)
            if supported is None:
                return CLOSE
            if not supported[0] <= version <= supported[1]:
                return self._unsupported(key, frame, supported)
            header, request = messages.decode_request(frame)
        except DecodeError as exc:
            log.debug("broker %s: closing connection on a malformed request: %s", broker_id, exc)
            return CLOSE
        if not session.authenticated and key not in SASL_KEYS:
            return CLOSE
        ctx = RequestContext(
            broker_id, key, version, header.correlation_id, header.client_id, session.principal, client_host
        )
        return await self._answer(ctx, session, request, self._log.record(ctx, request, received))

    def _unsupported(self, key: int, frame: bytes, supported: tuple[int, int]) -> Reply:
        if key != API_VERSIONS:
            return CLOSE
        # KIP-511: answer with a v0 body listing ApiVersions' own range so the client can retry lower.
        header, _ = messages.decode_request_header(frame)
        body = {
            "ErrorCode": ErrorCode.UNSUPPORTED_VERSION,
            "ApiKeys": [{"ApiKey": API_VERSIONS, "MinVersion": supported[0], "MaxVersion": supported[1]}],
        }
        return Reply(messages.encode_response(API_VERSIONS, 0, header.correlation_id, body))

    async def _answer(
        self, ctx: RequestContext, session: SaslSession, request: Message, logged: LoggedRequest | None
    ) -> Reply:
        response, close = await self._respond(ctx, session, request)
        if ctx.api_key == PRODUCE and request.get("Acks") == 0:
            # acks=0 gets no response; a broker signals a failure by closing the connection.
            payload: bytes | None = None
            close = close or _has_partition_error(response)
        else:
            response, payload = self._encode(ctx, request, response)
        if logged is not None:
            logged.answer(response)
        return Reply(payload, close)

    def _encode(self, ctx: RequestContext, request: Message, response: Message) -> tuple[Message, bytes]:
        try:
            return response, messages.encode_response(
                ctx.api_key, ctx.api_version, ctx.correlation_id, response
            )
        except (ValueError, TypeError, KeyError, OverflowError, struct.error) as exc:
            log.exception("broker %s: cannot encode %s response: %s", ctx.broker_id, ctx.api_key, exc)
            fallback = error_response(ctx.api_key, ctx.api_version, request, ErrorCode.UNKNOWN_SERVER_ERROR)
            return fallback, messages.encode_response(
                ctx.api_key, ctx.api_version, ctx.correlation_id, fallback
            )

    async def _respond(
        self, ctx: RequestContext, session: SaslSession, request: Message
    ) -> tuple[Message, bool]:
        fault = self._faults.take(ctx.broker_id, ctx.api_key)
        if fault is not None:
            if fault.delay_ms > 0:
                await asyncio.sleep(fault.delay_ms / 1000)
            if fault.error is not None:
                return error_response(ctx.api_key, ctx.api_version, request, fault.error), False
        try:
            return await self._handle(ctx, session, request)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("broker %s: handler for API %s failed", ctx.broker_id, ctx.api_key)
            error = ErrorCode.UNKNOWN_SERVER_ERROR
            return error_response(ctx.api_key, ctx.api_version, request, error), False

    async def _handle(
        self, ctx: RequestContext, session: SaslSession, request: Message
    ) -> tuple[Message, bool]:
        if ctx.api_key == API_VERSIONS:
            return self._api_versions(ctx, request), False
        if ctx.api_key in (SASL_HANDSHAKE, SASL_AUTHENTICATE):
            outcome = self._sasl(ctx, session, request)
            return outcome.response, outcome.close
        handler = self._registry.get(ctx.api_key)
        assert handler is not None  # advertised() only lists keys with a handler
        return await handler(ctx, request), False

    def _sasl(self, ctx: RequestContext, session: SaslSession, request: Message) -> SaslOutcome:
        if ctx.api_key == SASL_HANDSHAKE:
            return session.handshake(ctx.api_version, request)
        return session.authenticate(request)

    def _api_versions(self, ctx: RequestContext, request: Message) -> Message:
        if ctx.api_version >= 3 and not all(
            _SOFTWARE.fullmatch(request.get(name) or "")
            for name in ("ClientSoftwareName", "ClientSoftwareVersion")
        ):
            return {"ErrorCode": ErrorCode.INVALID_REQUEST, "ApiKeys": []}
        keys = [
            {"ApiKey": key, "MinVersion": low, "MaxVersion": high}
            for key, (low, high) in self.advertised(ctx.broker_id).items()
        ]
        return {"ErrorCode": ErrorCode.NONE, "ApiKeys": keys, "ThrottleTimeMs": 0}


def _has_partition_error(response: Message) -> bool:
    return any(
        p.get("ErrorCode", 0) != 0
        for topic in response.get("Responses", [])
        for p in topic.get("PartitionResponses", [])
    )
