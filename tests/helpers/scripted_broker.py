"""A one-broker Kafka on a real socket whose DeleteRecords answers a test scripts: for what the emulator
never does on purpose (a response that leaves a partition out, a broker that never answers).

Frames are decoded and encoded with the emulator's schema-driven codec.
"""

from __future__ import annotations

import asyncio
import ssl
import struct
from collections.abc import Callable
from typing import Any

from kafka_emulator.protocol import messages

API_VERSIONS, METADATA, DELETE_RECORDS = 18, 3, 21
# Answer to a DeleteRecords request body: the response body, or None to never answer.
Script = Callable[[dict[str, Any]], dict[str, Any] | None]


class ScriptedBroker:
    def __init__(
        self, topic: str, partitions: int, script: Script, tls: ssl.SSLContext | None = None
    ) -> None:
        self.tls = tls
        self.topic = topic
        self.partitions = partitions
        self.script = script
        self.delete_requests: list[dict[str, Any]] = []
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []
        self.port = 0

    async def __aenter__(self) -> ScriptedBroker:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()
        await self._server.wait_closed()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        try:
            while True:
                (size,) = struct.unpack(">i", await reader.readexactly(4))
                header, body = messages.decode_request(await reader.readexactly(size))
                answer = self._answer(header.api_key, body)
                if answer is None:
                    continue
                frame = messages.encode_response(
                    header.api_key, header.api_version, header.correlation_id, answer
                )
                writer.write(struct.pack(">i", len(frame)) + frame)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            writer.close()

    def _answer(self, key: int, body: dict[str, Any]) -> dict[str, Any] | None:
        if key == API_VERSIONS:
            keys = [(API_VERSIONS, 0, 3), (METADATA, 0, 5), (DELETE_RECORDS, 0, 3)]
            return {
                "ErrorCode": 0,
                "ApiKeys": [{"ApiKey": k, "MinVersion": lo, "MaxVersion": hi} for k, lo, hi in keys],
            }
        if key == METADATA:
            return self._metadata()
        assert key == DELETE_RECORDS
        self.delete_requests.append(body)
        return self.script(body)

    def _metadata(self) -> dict[str, Any]:
        partitions = [
            {"ErrorCode": 0, "PartitionIndex": p, "LeaderId": 1, "ReplicaNodes": [1], "IsrNodes": [1]}
            for p in range(self.partitions)
        ]
        return {
            "Brokers": [{"NodeId": 1, "Host": "127.0.0.1", "Port": self.port, "Rack": None}],
            "ClusterId": "scripted",
            "ControllerId": 1,
            "Topics": [{"ErrorCode": 0, "Name": self.topic, "IsInternal": False, "Partitions": partitions}],
        }
