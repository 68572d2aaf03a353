"""Data-plane request handlers: Metadata, topics, Produce, Fetch, ListOffsets, DeleteRecords, configs,
InitProducerId and OffsetForLeaderEpoch."""

from kafka_emulator.handlers import (
    configs,
    delete_records,
    fetch,
    leader_epochs,
    list_offsets,
    metadata,
    produce,
    producer_ids,
    topics,
)
from kafka_emulator.protocol.api import Authorizer, HandlerRegistry
from kafka_emulator.state import ClusterState


def register_data_handlers(registry: HandlerRegistry, state: ClusterState, authorizer: Authorizer) -> None:
    registry.register(produce.API_KEY, produce.produce_handler(state, authorizer))
    registry.register(fetch.API_KEY, fetch.fetch_handler(state, authorizer))
    registry.register(list_offsets.API_KEY, list_offsets.list_offsets_handler(state, authorizer))
    registry.register(metadata.API_KEY, metadata.metadata_handler(state, authorizer))
    registry.register(topics.CREATE_TOPICS, topics.create_topics_handler(state, authorizer))
    registry.register(topics.DELETE_TOPICS, topics.delete_topics_handler(state, authorizer))
    registry.register(delete_records.API_KEY, delete_records.delete_records_handler(state, authorizer))
    registry.register(configs.API_KEY, configs.describe_configs_handler(state, authorizer))
    registry.register(producer_ids.API_KEY, producer_ids.init_producer_id_handler(state, authorizer))
    registry.register(leader_epochs.API_KEY, leader_epochs.offset_for_leader_epoch_handler(state, authorizer))


__all__ = ["register_data_handlers"]
