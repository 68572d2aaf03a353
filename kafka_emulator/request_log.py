"""A bounded log of the requests the brokers answered, for tests that must check what a client sent.

Kafka has no such log (its request log is a debug logger); this is an emulator feature. Only the APIs
chosen at construction are recorded (DeleteRecords by default), so other requests cost one set lookup.
An entry keeps the decoded request and the response by reference: recording a 10,000-partition
DeleteRecords costs two clock reads and one object, and the per-partition view is built when read.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kafka_emulator.protocol import messages
from kafka_emulator.protocol.api import Message, RequestContext

DELETE_RECORDS = 21
DEFAULT_MAX_REQUESTS = 10_000
# Entries hold the decoded request and response (about 0.5 KB per DeleteRecords partition): a second
# bound keeps a long benchmark of 10,000-partition requests from growing the process without limit.
DEFAULT_MAX_PARTITIONS = 500_000
Stamp = tuple[float, float]  # (time.monotonic(), time.time())


@dataclass(frozen=True, slots=True)
class LoggedPartition:
    """One requested DeleteRecords partition and how it was answered (None: no answer)."""

    topic: str
    partition: int
    offset: int
    error: int | None
    low_watermark: int | None


class LoggedRequest:
    """One request: who sent it to which broker, when it arrived and when it was answered."""

    __slots__ = (
        "answered_monotonic",
        "answered_wall",
        "ctx",
        "received_monotonic",
        "received_wall",
        "request",
        "response",
        "seq",
        "size",
    )

    def __init__(self, seq: int, ctx: RequestContext, request: Message, received: Stamp) -> None:
        self.seq = seq
        self.ctx = ctx
        self.received_monotonic, self.received_wall = received
        self.answered_monotonic: float | None = None
        self.answered_wall: float | None = None
        self.request = request
        self.response: Message | None = None
        # Partitions requested (DeleteRecords), else 1: what the log's partition bound counts.
        self.size = (
            sum(len(t["Partitions"]) for t in request.get("Topics") or ())
            if ctx.api_key == DELETE_RECORDS
            else 1
        )

    def answer(self, response: Message) -> None:
        self.answered_monotonic = time.monotonic()
        self.answered_wall = time.time()
        self.response = response

    @property
    def broker_id(self) -> int:
        return self.ctx.broker_id

    @property
    def client_id(self) -> str | None:
        return self.ctx.client_id

    @property
    def api_key(self) -> int:
        return self.ctx.api_key

    @property
    def api_version(self) -> int:
        return self.ctx.api_version

    @property
    def api(self) -> str:
        return messages.api_name(self.ctx.api_key)

    def partitions(self) -> list[LoggedPartition]:
        """DeleteRecords only (empty for other APIs): every requested partition in request order, a
        partition listed twice once per listing, each with the partition's answer."""
        if self.ctx.api_key != DELETE_RECORDS:
            return []
        answers: dict[tuple[str, int], tuple[int, int]] = {}
        for topic in (self.response or {}).get("Topics") or []:
            for p in topic["Partitions"]:
                answers[(topic["Name"], p["PartitionIndex"])] = (p["ErrorCode"], p["LowWatermark"])
        logged = []
        for topic in self.request.get("Topics") or []:
            name = topic["Name"]
            for p in topic["Partitions"]:
                error, low_watermark = answers.get((name, p["PartitionIndex"]), (None, None))
                logged.append(LoggedPartition(name, p["PartitionIndex"], p["Offset"], error, low_watermark))
        return logged

    def to_json(self) -> dict[str, Any]:
        answered = None
        if self.answered_monotonic is not None:
            answered = {"monotonic": self.answered_monotonic, "wall": self.answered_wall}
        ctx = self.ctx
        return {
            "seq": self.seq,
            "broker": ctx.broker_id,
            "api": self.api,
            "api_version": ctx.api_version,
            "correlation_id": ctx.correlation_id,
            "client_id": ctx.client_id,
            "principal": ctx.principal,
            "client_host": ctx.client_host,
            "received": {"monotonic": self.received_monotonic, "wall": self.received_wall},
            "answered": answered,
            "partitions": [
                {
                    "topic": p.topic,
                    "partition": p.partition,
                    "offset": p.offset,
                    "error": p.error,
                    "low_watermark": p.low_watermark,
                }
                for p in self.partitions()
            ],
        }


class RequestLog:
    """The newest requests of the recorded APIs, oldest first, at most ``max_requests`` of them holding
    at most ``max_partitions`` DeleteRecords partitions; ``seq`` numbers never repeat, so a reader can
    page with ``after`` even while old entries fall out."""

    def __init__(
        self,
        max_requests: int = DEFAULT_MAX_REQUESTS,
        apis: Iterable[str | int] = ("DeleteRecords",),
        max_partitions: int = DEFAULT_MAX_PARTITIONS,
    ) -> None:
        if max_requests < 1 or max_partitions < 1:
            raise ValueError("the request log needs room for at least one request")
        self.api_keys = frozenset(_api_key(api) for api in apis)
        self.max_requests = max_requests
        self.max_partitions = max_partitions
        self._entries: deque[LoggedRequest] = deque()
        self._size = 0
        self._seq = itertools.count(1)
        self.dropped = 0  # entries pushed out by the bounds since the last clear

    def clock(self, api_key: int) -> Stamp | None:
        """The arrival time of a request of a recorded API (read before decoding it), else None."""
        if api_key not in self.api_keys:
            return None
        return time.monotonic(), time.time()

    def record(self, ctx: RequestContext, request: Message, received: Stamp | None) -> LoggedRequest | None:
        """Starts an entry for a request whose arrival was clocked; the caller answers it."""
        if received is None:
            return None
        entry = LoggedRequest(next(self._seq), ctx, request, received)
        self._entries.append(entry)
        self._size += entry.size
        # The newest entry always stays, even a request larger than the partition bound.
        while len(self._entries) > self.max_requests or (
            self._size > self.max_partitions and len(self._entries) > 1
        ):
            self._size -= self._entries.popleft().size
            self.dropped += 1
        return entry

    def entries(
        self, api: str | int | None = None, client_id: str | None = None, after: int = 0
    ) -> Iterator[LoggedRequest]:
        key = None if api is None else _api_key(api)
        if key is not None and key not in self.api_keys:
            raise ValueError(f"{messages.api_name(key)} requests are not recorded (see request_log_apis)")
        for entry in list(self._entries):
            if entry.seq <= after:
                continue
            if key is not None and entry.ctx.api_key != key:
                continue
            if client_id is not None and entry.ctx.client_id != client_id:
                continue
            yield entry

    def clear(self) -> None:
        self._entries.clear()
        self._size = 0
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._entries)


def _api_key(api: str | int) -> int:
    try:
        return messages.api_key(api)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
