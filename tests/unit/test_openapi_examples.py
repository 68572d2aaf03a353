"""The OpenAPI document's examples are valid requests, cover every offset spec, and name only what the
demo has (``tests/browser/test_docs_examples.py`` runs the first of each POST against the demo)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from app.api import examples
from app.api import response_examples as answers
from app.demo.data import DEMO_TOPICS
from app.openapi import document
from app.schemas.acls import AclCreate, AclRead
from app.schemas.approvals import ApprovalCreate, ApprovalRuleCreate, ApprovalRuleUpdate
from app.schemas.audit import AuditVerifyCreate
from app.schemas.common import Problem
from app.schemas.consumers import ConsumerCreate, ConsumerRead, ProgressReport
from app.schemas.deletions import DeletionCreate, DeletionRead
from app.schemas.inspection import DeletionPreview, TopicOffsetsRead
from app.schemas.retention import PolicyCreate, PolicyRead, PolicyUpdate
from app.schemas.webhooks import WebhookCreate, WebhookCreated, WebhookUpdate

DEMO_PARTITIONS = {topic.name: topic.partitions for topic in DEMO_TOPICS}
BODIES: list[tuple[type[BaseModel], dict[str, Any]]] = [
    (DeletionCreate, examples.DELETION_EXAMPLES),
    (AclCreate, examples.ACL_EXAMPLES),
    (ConsumerCreate, examples.CONSUMER_EXAMPLES),
    (ProgressReport, examples.PROGRESS_EXAMPLES),
    (PolicyCreate, examples.POLICY_EXAMPLES),
    (PolicyUpdate, examples.POLICY_UPDATE_EXAMPLES),
    (AuditVerifyCreate, examples.VERIFY_EXAMPLES),
    (ApprovalRuleCreate, examples.APPROVAL_RULE_EXAMPLES),
    (ApprovalRuleUpdate, examples.APPROVAL_RULE_UPDATE_EXAMPLES),
    (ApprovalCreate, examples.APPROVAL_EXAMPLES),
    (WebhookCreate, examples.WEBHOOK_EXAMPLES),
    (WebhookUpdate, examples.WEBHOOK_UPDATE_EXAMPLES),
]


@pytest.mark.parametrize(("model", "named"), BODIES, ids=[model.__name__ for model, _ in BODIES])
def test_every_body_example_is_a_valid_request(model: type[BaseModel], named: dict[str, Any]) -> None:
    for name, example in named.items():
        assert example["summary"], name
        model.model_validate_json(json.dumps(example["value"]))


def test_the_deletion_examples_show_every_offset_spec_on_demo_partitions() -> None:
    entries = [
        entry for example in examples.DELETION_EXAMPLES.values() for entry in example["value"]["partitions"]
    ]
    forms = {
        "concrete offset": any(e.get("offset", -1) >= 0 for e in entries),
        "offset -1": any(e.get("offset") == -1 for e in entries),
        "before, RFC 3339": any(isinstance(e.get("before"), str) for e in entries),
        "before, epoch ms": any(isinstance(e.get("before"), int) for e in entries),
        "committed_by": any("committed_by" in e for e in entries),
        "to end": any(e.get("to") == "end" for e in entries),
        "whole topic": any("partition" not in e for e in entries),
    }
    assert [form for form, shown in forms.items() if not shown] == []
    for entry in entries:
        assert entry["topic"] in DEMO_PARTITIONS
        assert entry.get("partition", 0) < DEMO_PARTITIONS[entry["topic"]]
    first = next(iter(examples.DELETION_EXAMPLES.values()))["value"]
    # The default deletes for real, and needs no override of the unconsumed-records guard.
    assert [key for key in ("dry_run", "allow_unconsumed", "ignore_groups") if first.get(key)] == []
    assert {e["topic"] for e in first["partitions"]} <= {"orders.eu", "orders.us"}  # orders-team may


def test_response_examples_are_valid_answers() -> None:
    DeletionRead.model_validate(answers.ACCEPTED_EXAMPLE)
    DeletionPreview.model_validate(answers.PREVIEW_EXAMPLE)
    TopicOffsetsRead.model_validate(answers.TOPIC_OFFSETS_EXAMPLE)
    AclRead.model_validate(answers.ACL_CREATED_EXAMPLE)
    ConsumerRead.model_validate(answers.CONSUMER_CREATED_EXAMPLE)
    PolicyRead.model_validate(answers.POLICY_CREATED_EXAMPLE)
    WebhookCreated.model_validate(answers.WEBHOOK_CREATED_EXAMPLE)
    schema = json.loads(document())
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                problem = response.get("content", {}).get("application/problem+json")
                if problem is None:
                    continue
                example = problem["example"]
                assert example["status"] == int(status), (method, path, status)
                assert example["type"].startswith("/problems/")
                Problem.model_validate(example)
