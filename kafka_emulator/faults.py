"""Injected faults: delay and/or fail the next N requests of one API on one broker."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from kafka_emulator.protocol import messages
from kafka_emulator.protocol.errors import ErrorCode


@dataclass
class Fault:
    error: int | None  # None: only delay, then handle normally
    remaining: int
    delay_ms: float


def error_code(error: str | int | None) -> int | None:
    """Accepts Kafka's error name ("KAFKA_STORAGE_ERROR") or a numeric code."""
    if error is None or isinstance(error, int):
        return error
    try:
        return int(ErrorCode[error.upper()])
    except KeyError:
        raise ValueError(f"unknown error {error!r}") from None


class FaultInjector:
    def __init__(self) -> None:
        self._faults: dict[tuple[int, int], deque[Fault]] = {}

    def add(
        self, broker: int, api: str | int, error: str | int | None = None, count: int = 1, delay_ms: float = 0
    ) -> None:
        if count < 1:
            raise ValueError("count must be at least 1")
        if delay_ms < 0:
            raise ValueError("delay_ms must not be negative")
        if error is None and delay_ms == 0:
            raise ValueError("a fault needs an error, a delay, or both")
        try:
            key = messages.api_key(api)
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
        fault = Fault(error_code(error), count, delay_ms)
        self._faults.setdefault((broker, key), deque()).append(fault)

    def take(self, broker: int, api_key: int) -> Fault | None:
        """The fault that applies to this request, if any; consumes one of its occurrences."""
        queue = self._faults.get((broker, api_key))
        if not queue:
            return None
        fault = queue[0]
        fault.remaining -= 1
        if fault.remaining <= 0:
            queue.popleft()
        return fault

    def clear(self) -> None:
        self._faults.clear()

    def pending(self) -> list[dict[str, object]]:
        return [
            {
                "broker": broker,
                "api": messages.api_name(key),
                "error": f.error,
                "remaining": f.remaining,
                "delay_ms": f.delay_ms,
            }
            for (broker, key), queue in self._faults.items()
            for f in queue
        ]
