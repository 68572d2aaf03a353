"""Every topic of a cluster (for retention policies that select topics by prefix or pattern)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from app.adapters.kafka.client import BrokerFailure, ClusterClient, ClusterUnreachable
from app.adapters.kafka.metadata import Metadata
from app.adapters.kafka.metadata_codec import TopicMetadataRequest
from app.adapters.kafka.protocol import VersionUnsupported
from app.adapters.kafka.topic_info import INTERNAL_TOPICS
from app.errors import ServiceUnavailable


class AllTopicsMetadataRequest(TopicMetadataRequest):
    """Metadata with a null topic array: every topic (v1+), still never auto-creating one."""

    def __init__(self) -> None:
        super().__init__([])
        self.topics = None  # type: ignore[assignment]


class _HasMetadata(Protocol):
    async def _metadata(self, cluster: str, topics: Sequence[str]) -> tuple[ClusterClient, Metadata]: ...


class TopicListing:
    async def list_topics(self: _HasMetadata, cluster: str) -> list[str]:
        try:
            client, brokers_only = await self._metadata(cluster, [])
        except ClusterUnreachable as exc:
            raise ServiceUnavailable(f"cluster {cluster!r}: {exc}") from exc
        failures: list[str] = []
        for node in brokers_only.brokers:
            try:
                metadata = await client.send(node, AllTopicsMetadataRequest(), timeout_s=client.timeout_s)
            except (BrokerFailure, VersionUnsupported) as exc:
                failures.append(str(exc))
                continue
            assert isinstance(metadata, Metadata)
            return sorted(
                name
                for name, topic in metadata.topics.items()
                if topic.error == "NONE" and name not in INTERNAL_TOPICS
            )
        raise ServiceUnavailable(f"cluster {cluster!r}: no broker listed its topics ({'; '.join(failures)})")
