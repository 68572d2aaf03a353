"""The request examples of the OpenAPI document: each one runs as it is against ``kafka-purge demo``.

The demo's cluster is ``demo`` with the topics orders.eu (6 partitions), orders.us (3), orders.audit (1,
under a legal hold), payments (3) and customers.compacted (3), 200 records a partition. ``orders-team``
may delete in orders.* but orders.audit; ``admin`` is a super user. The first example of an operation is
the one Swagger UI fills in: it succeeds for either client (ACLs, consumers and policies: as admin)
and changes something one can see. ``tests/browser/test_docs_examples.py`` executes every POST's first
example in Swagger UI against the demo.
"""

from __future__ import annotations

from typing import Any

Examples = dict[str, Any]

# Consumer groups of the demo that have not read to the end; with them, cuts past their positions
# are refused (409) unless the request says otherwise, which the examples below show.
DEMO_GROUP = "orders-billing"
REASON = "demo: "


def _deletion(summary: str, description: str, partitions: list[dict[str, Any]], **fields: Any) -> Examples:
    value = {"cluster": "demo", "partitions": partitions, "reason": REASON + summary.lower()}
    return {"summary": summary, "description": description, "value": {**value, **fields}}


DELETION_EXAMPLES: dict[str, Examples] = {
    "offset": _deletion(
        "First 100 records of orders.us partition 1",
        "A concrete offset: every record before offset 100 goes (the partition's log start offset "
        "becomes 100). Follow the Location to see it succeed, then GET /v1/clusters/demo/topics/orders.us.",
        [{"topic": "orders.us", "partition": 1, "offset": 100}],
    ),
    "high-watermark": _deletion(
        "Everything in orders.eu partition 2 now (-1)",
        "Offset -1 is resolved to the high watermark when the request is accepted; that concrete offset "
        "is stored, audited and sent. Consumer groups that have not read everything would stop it with "
        "409; allow_unconsumed says to go ahead anyway (recorded in the audit event).",
        [{"topic": "orders.eu", "partition": 2, "offset": -1}],
        allow_unconsumed=True,
    ),
    "to-end-preview": _deletion(
        "Preview: all of orders.us, to the end",
        '"to": "end" (the high watermark) on every partition of a topic (no partition given). With '
        "dry_run the answer is 200 with a preview and nothing is deleted: records that would go, the "
        "predicted outcome per partition, and every consumer group that has not read them.",
        [{"topic": "orders.us", "to": "end"}],
        dry_run=True,
    ),
    "before-time": _deletion(
        "Records of orders.eu partition 3 older than a time (RFC 3339)",
        "before: RFC 3339 with an offset. Resolved with ListOffsets by timestamp to the first record at "
        "or after the time; every demo record is older than 2030, so this cut is the high watermark. "
        f"ignore_groups lets the demo's lagging group {DEMO_GROUP} lose what it has not read.",
        [{"topic": "orders.eu", "partition": 3, "before": "2030-01-01T00:00:00Z"}],
        ignore_groups=[DEMO_GROUP],
    ),
    "before-epoch-ms": _deletion(
        "Preview: orders.eu partition 4 older than a time (epoch ms)",
        "before as epoch milliseconds (1893456000000 is 2030-01-01T00:00:00Z). The preview's cut_time "
        "says which record the cut found and whether timestamps around it are out of order.",
        [{"topic": "orders.eu", "partition": 4, "before": 1893456000000}],
        dry_run=True,
    ),
    "committed-by": _deletion(
        f"What consumer group {DEMO_GROUP} has read of orders.us",
        "committed_by: the minimum committed offset of the named groups on each partition. A group "
        "without a commit on a partition refuses the request (fail closed): the demo's group "
        f"{DEMO_GROUP} has committed on every orders.* partition.",
        [{"topic": "orders.us", "committed_by": [DEMO_GROUP]}],
    ),
    "leader-only": _deletion(
        "LeaderOnly: orders.eu partition 5, done once the leader truncated",
        "leader_only: a partition succeeds once its leader's log start offset reached the offset, "
        "without waiting for the followers (DeleteRecords v3, the LeaderOnly KIP; the demo's emulated "
        "brokers serve it, Apache Kafka (up to 4.4) does not and such partitions fail with "
        "UNSUPPORTED_VERSION).",
        [{"topic": "orders.eu", "partition": 5, "offset": 150}],
        leader_only=True,
        timeout_ms=10000,
    ),
}

ACL_EXAMPLES: dict[str, Examples] = {
    "allow-delete": {
        "summary": "Let orders-team delete records of payments",
        "description": "As admin (ALTER on CLUSTER). orders-team may then purge payments too; a second "
        "identical binding is a 409.",
        "value": {
            "principal": "User:orders-team",
            "host": "*",
            "operation": "DELETE",
            "permission_type": "ALLOW",
            "resource_type": "TOPIC",
            "resource_name": "payments",
            "pattern_type": "LITERAL",
        },
    },
    "legal-hold": {
        "summary": "Put payments under a legal hold (DENY for everyone)",
        "description": "A DENY beats every ALLOW: nobody but super users may delete in payments.",
        "value": {
            "principal": "User:*",
            "host": "*",
            "operation": "DELETE",
            "permission_type": "DENY",
            "resource_type": "TOPIC",
            "resource_name": "payments",
            "pattern_type": "LITERAL",
        },
    },
    "describe-groups": {
        "summary": "Let the auditors group see every consumer",
        "description": "DESCRIBE on every GROUP (consumers are groups for authorization).",
        "value": {
            "principal": "Group:auditors",
            "host": "*",
            "operation": "DESCRIBE",
            "permission_type": "ALLOW",
            "resource_type": "GROUP",
            "resource_name": "*",
            "pattern_type": "LITERAL",
        },
    },
}

SPARK_CONSUMER = "orders-archiver"
CONSUMER_EXAMPLES: dict[str, Examples] = {
    "spark": {
        "summary": "A Spark query that pushes its progress",
        "description": "Needs READ on GROUP orders-archiver (admin). Its progress then comes with "
        "PUT .../consumers/orders-archiver/progress.",
        "value": {"name": SPARK_CONSUMER, "kind": "spark"},
    },
    "kafka-group": {
        "summary": "A Kafka consumer group",
        "description": "Kafka keeps the group's committed offsets; registering it makes it visible here.",
        "value": {"name": "orders-audit-export", "kind": "kafka_group"},
    },
}

PROGRESS_EXAMPLES: dict[str, Examples] = {
    "batch": {
        "summary": "A committed batch read orders.eu partitions 0 and 1 up to offset 150",
        "description": "The next offset to read per partition, as Spark's progress reports it. Needs READ "
        "on GROUP orders-archiver and on TOPIC orders.eu (admin); an unknown consumer is registered.",
        "value": {
            "query_id": "orders-archiver-query",
            "run_id": "run-1",
            "batch_id": 1,
            "offsets": {"orders.eu": {"0": 150, "1": 150}},
        },
    }
}

POLICY_NAME = "orders-us-trim"
POLICY_EXAMPLES: dict[str, Examples] = {
    "groups": {
        "summary": "Trim orders.us once its consumer groups read it",
        "description": "Every 60 s, trim orders.us up to what every named group has committed "
        "(at least 10 records at a time). A partition where a group has no commit is skipped, and the "
        "policy's runs say why. Needs DELETE on the topics and DESCRIBE on the groups.",
        "value": {
            "name": POLICY_NAME,
            "topics": {"names": ["orders.us"]},
            "consumers": {"groups": [DEMO_GROUP]},
            "min_records": 10,
            "interval_seconds": 60,
        },
    },
    "prefix-spark": {
        "summary": "Every orders.* topic, after a Spark query read it, keeping the last hour",
        "description": "A prefix covers present and future topics. orders.audit's DENY makes the sweep skip "
        "it (owner_not_authorized) unless the owner is a super user.",
        "value": {
            "name": "orders-archived",
            "topics": {"prefix": "orders."},
            "consumers": {"spark": [SPARK_CONSUMER]},
            "min_age_seconds": 3600,
            "interval_seconds": 300,
        },
    },
}

POLICY_UPDATE_EXAMPLES: dict[str, Examples] = {
    "pause": {"summary": "Pause the policy", "value": {"enabled": False}},
    "slower": {"summary": "Sweep every 10 minutes", "value": {"interval_seconds": 600}},
}

# A well-formed checkpoint signed by a key of no deployment: verifying against it answers 200 with
# ok false ("signed by another key"). A real one comes from the service's log.
FOREIGN_CHECKPOINT = (
    "eyJhbGciOiJFZDI1NTE5Iiwia2lkIjoia09lS2V5Qm4tZ2tPbTQ0TlBvVEcxNm9vMEZoY2JGWHRMSGxJR2o5WmF5TSIsInR5cCI6"
    "ImthZmthLXB1cmdlLWF1ZGl0LWNoZWNrcG9pbnQifQ.eyJldmVudF9oYXNoIjoiYTNmMWEzZjFhM2YxYTNmMWEzZjFhM2YxYTNmM"
    "WEzZjFhM2YxYTNmMWEzZjFhM2YxYTNmMWEzZjFhM2YxYTNmMSIsImV2ZW50X2lkIjo0Miwic2lnbmVkX2F0IjoiMjAyNi0xMS0yNVQ"
    "xMjowMDowMC4wMDAwMDBaIn0.mCIYhji_suDCWNm6zjs861m6JWkCbUMSyR9LQPYLlYPBHTWs3UwkM_mQy5RrGh-0PSZxCL1-bBGUd"
    "9YVv-cPAg"
)
VERIFY_EXAMPLES: dict[str, Examples] = {
    "checkpoint": {
        "summary": "A checkpoint from the log",
        "description": "Paste the jws= of an 'audit checkpoint event_id=... jws=...' line of the service's "
        "log (the demo signs one every 10 s while events arrive). This one is signed by another key, so "
        "the answer says ok false and why.",
        "value": {"checkpoint": FOREIGN_CHECKPOINT},
    }
}

CLUSTER_EXAMPLES: dict[str, Examples] = {"demo": {"summary": "The demo's cluster", "value": "demo"}}
TOPIC_EXAMPLES: dict[str, Examples] = {"orders.eu": {"summary": "A demo topic", "value": "orders.eu"}}

APPROVAL_RULE_NAME = "pii-four-eyes"
APPROVAL_RULE_EXAMPLES: dict[str, Examples] = {
    "pii": {
        "summary": "Two approvals for every customers- topic",
        "value": {
            "name": "customers-two-approvals",
            "topics": {"prefix": "customers-"},
            "approvers": ["Group:privacy-officers", "User:approver"],
            "required_approvals": 2,
            "expires_after_seconds": 86400,
            "exemptions": [],
        },
    }
}
APPROVAL_RULE_UPDATE_EXAMPLES: dict[str, Examples] = {
    "wait": {"summary": "Let requests wait three days", "value": {"expires_after_seconds": 259200}},
    "exempt-retention": {
        "summary": "Let retention policies over its topics run without approval (audited)",
        "value": {"exemptions": ["retention"]},
    },
}
APPROVAL_EXAMPLES: dict[str, Examples] = {
    "approve": {"summary": "Approve", "value": {"decision": "approve", "comment": "checked the ticket"}},
    "reject": {"summary": "Reject", "value": {"decision": "reject", "comment": "wrong topic"}},
}

WEBHOOK_EXAMPLES: dict[str, Examples] = {
    "all-events": {
        "summary": "Every deletion event of the demo cluster",
        "description": "Needs ALTER on CLUSTER demo (admin). The answer holds the generated signing secret, "
        "shown this once. The name does not resolve (.invalid never does): its deliveries are retried, then "
        "dead-lettered.",
        "value": {
            "cluster": "demo",
            "url": "http://receiver.invalid/kafka-purge-events",
            "description": "demo",
        },
    },
    "outcomes": {
        "summary": "Only how deletions end, signed with a secret of your own",
        "value": {
            "cluster": "demo",
            "url": "https://hooks.example.com/kafka-purge",
            "event_types": ["deletion.succeeded", "deletion.failed", "deletion.partially_failed"],
            "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        },
    },
}

WEBHOOK_UPDATE_EXAMPLES: dict[str, Examples] = {
    "pause": {"summary": "Stop writing events for it", "value": {"enabled": False}},
    "rotate": {
        "summary": "A new signing secret",
        "value": {"secret": "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"},
    },
}
WEBHOOK_ID_EXAMPLES: dict[str, Examples] = {
    "example": {"summary": "A webhook's id", "value": "0b6f3b0c-7c2e-4f43-9a51-3f1d2b9e6c10"}
}
