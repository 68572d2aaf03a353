"""Kafka adapter: ``KafkaClusters`` implements ``app.domain.ports.KafkaGateway`` over aiokafka's client."""

from app.adapters.kafka.gateway import KafkaClusters

__all__ = ["KafkaClusters"]
