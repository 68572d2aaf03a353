"""A raw Kafka connection for tests: frames built with the emulator's codec, or arbitrary bytes."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from typing import Any

from kafka_emulator.protocol import messages
from kafka_emulator.protocol.api import Message

READ_TIMEOUT_S = 10.0


class RawConnection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._correlation = 0

    @classmethod
    async def open(cls, host: str, port: int) -> RawConnection:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer)

    def next_correlation(self) -> int:
        self._correlation += 1
        return self._correlation

    async def send_frame(self, payload: bytes) -> None:
        self.writer.write(struct.pack(">i", len(payload)) + payload)
        await self.writer.drain()

    async def send_request(
        self, api: str | int, version: int, body: Message, client_id: str | None = "raw-test"
    ) -> int:
        key = messages.api_key(api)
        correlation = self.next_correlation()
        header = messages.RequestHeader(key, version, correlation, client_id)
        await self.send_frame(messages.encode_request(header, body))
        return correlation

    async def read_frame(self) -> bytes | None:
        """The next response frame, or None when the broker closed the connection."""
        try:
            size_bytes = await asyncio.wait_for(self.reader.readexactly(4), READ_TIMEOUT_S)
            (size,) = struct.unpack(">i", size_bytes)
            return await asyncio.wait_for(self.reader.readexactly(size), READ_TIMEOUT_S)
        except (asyncio.IncompleteReadError, ConnectionError):
            return None

    async def read_response(self, api: str | int, version: int) -> tuple[int, Message]:
        frame = await self.read_frame()
        assert frame is not None, "the broker closed the connection"
        return messages.decode_response(messages.api_key(api), version, frame)

    async def request(self, api: str | int, version: int, body: Message | None = None, **kw: Any) -> Message:
        correlation = await self.send_request(api, version, body or {}, **kw)
        got, response = await self.read_response(api, version)
        assert got == correlation
        return response

    async def closed_by_broker(self) -> bool:
        """True when the broker closes the connection (EOF or reset) instead of answering."""
        return await self.read_frame() is None

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()
