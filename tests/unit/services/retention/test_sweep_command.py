"""A sweep's deletion is a domain command: its cuts, as the policy's owner, why; and the specs and
request fields its audit event records are those of the same deletion sent as an HTTP body."""

from __future__ import annotations

from app.adapters.db.retention_models import RetentionPolicy
from app.domain.ports import Requester, TopicPartition
from app.schemas.deletions import DeletionCreate, entry_specs
from app.services.retention.sweep import deletion_command

TP = TopicPartition


def policy() -> RetentionPolicy:
    return RetentionPolicy(
        cluster="demo",
        name="orders-consumed",
        leader_only=True,
        owner="User:alice",
        owner_groups=["ops"],
        owner_host="10.0.0.7",
    )


def test_the_command_names_the_cuts_the_owner_and_the_policy() -> None:
    command = deletion_command(policy(), {TP("orders", 1): 40, TP("orders", 0): 12})
    assert command.cluster == "demo"
    assert [(c.topic, c.partition, c.offset) for c in command.cuts] == [("orders", 0, 12), ("orders", 1, 40)]
    assert command.leader_only
    assert command.reason == "policy orders-consumed"
    assert command.as_whom == Requester("User:alice", ("ops",), "10.0.0.7")
    assert command.allow_unconsumed
    assert command.consumers_read


def test_the_command_plans_and_audits_as_the_same_http_body() -> None:
    command = deletion_command(policy(), {TP("orders", 0): 12, TP("orders", 1): 40})
    body = DeletionCreate.model_validate(
        {
            "cluster": "demo",
            "partitions": [
                {"topic": c.topic, "partition": c.partition, "offset": c.offset} for c in command.cuts
            ],
            "leader_only": True,
            "reason": "policy orders-consumed",
            "allow_unconsumed": True,
        }
    )
    assert entry_specs(command.partitions) == entry_specs(body.partitions)
    fields = ("cluster", "leader_only", "timeout_ms", "reason", "allow_unconsumed")
    assert {f: getattr(command, f) for f in fields} == {f: getattr(body, f) for f in fields}
    assert list(command.ignore_groups) == body.ignore_groups
