"""The cluster model: brokers, topics, partitions, replica logs, replication and the purgatory."""

from kafka_emulator.state.cluster_state import ClusterState
from kafka_emulator.state.partition import Partition
from kafka_emulator.state.topics import Topic, TopicError

__all__ = ["ClusterState", "Partition", "Topic", "TopicError"]
