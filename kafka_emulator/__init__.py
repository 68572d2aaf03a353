"""A Kafka cluster emulator speaking the real wire protocol (a test tool; the product never imports it).

``EmulatedCluster`` is imported lazily so that the codec (``kafka_emulator.protocol``) can be used
without loading the whole cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafka_emulator.cluster import EmulatedCluster

__all__ = ["EmulatedCluster"]


def __getattr__(name: str) -> Any:
    if name == "EmulatedCluster":
        from kafka_emulator.cluster import EmulatedCluster

        return EmulatedCluster
    raise AttributeError(f"module 'kafka_emulator' has no attribute {name!r}")
