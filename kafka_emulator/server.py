"""One broker's TCP listener: size-prefixed frames in, responses out, one request at a time.

Like Kafka's SocketServer, a connection's next request is read only after the previous response was
sent (Kafka mutes the channel meanwhile), so responses are in request order even when a handler waits
(DeleteRecords purgatory). Clients may still pipeline: their requests queue in the socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from kafka_emulator.dispatch import Dispatcher

log = logging.getLogger("kafka_emulator")

MAX_FRAME_BYTES = 100 * 1024 * 1024  # socket.request.max.bytes
MAX_SASL_FRAME_BYTES = 512 * 1024  # sasl.server.max.receive.size, applies before authentication


class BrokerServer:
    def __init__(
        self, broker_id: int, dispatcher: Dispatcher, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.broker_id = broker_id
        self.host = host
        self.port = port
        self._dispatcher = dispatcher
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def running(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        """Listen; the first start picks an ephemeral port (if 0), later starts reuse the same port."""
        if self._server is not None:
            return
        self._server = await asyncio.start_server(self._serve, self.host, self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Close the listener and every open connection."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        await self.drop_connections()
        await server.wait_closed()

    async def drop_connections(self) -> None:
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await self._connection_loop(reader, writer)
            writer.close()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.transport.abort()  # the client went away
        except asyncio.CancelledError:
            writer.transport.abort()  # broker stopped or connections dropped
        except Exception:
            log.exception("broker %s: connection failed", self.broker_id)
            writer.transport.abort()
        finally:
            self._connections.discard(task)

    async def _connection_loop(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        client_host = str(peer[0]) if peer else "unknown"
        session = self._dispatcher.new_session()
        while True:
            size = int.from_bytes(await reader.readexactly(4), "big", signed=True)
            limit = MAX_FRAME_BYTES if session.authenticated else MAX_SASL_FRAME_BYTES
            if size < 0 or size > limit:
                log.debug("broker %s: closing connection on frame size %d", self.broker_id, size)
                return
            frame = await reader.readexactly(size)
            reply = await self._dispatcher.dispatch(self.broker_id, session, client_host, frame)
            if reply.payload is not None:
                writer.write(len(reply.payload).to_bytes(4, "big"))
                writer.write(reply.payload)
                await writer.drain()
            if reply.close:
                with contextlib.suppress(ConnectionError):
                    await writer.drain()
                return
