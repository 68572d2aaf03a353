"""The ``authz.denied`` event: a KIP-11 refusal, or a caller refused an approval decision."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.audit.chain import NewEvent
from app.audit.events import Actor, event
from app.domain.acl import Operation, ResourceType
from app.domain.authorizer import Decision


@dataclass(frozen=True)
class AclDenial:
    """A KIP-11 refusal: ``operation`` on the ``denied`` resources, each with the deciding binding."""

    principals: Sequence[str]
    operation: Operation
    resource_type: ResourceType
    denied: Mapping[str, Decision]


@dataclass(frozen=True)
class ApprovalDenial:
    """A caller who may not decide on an approval request, and why."""

    subject_kind: str
    subject: str
    reason: str


def authz_denied(actor: Actor, cluster: str | None, denial: AclDenial | ApprovalDenial) -> NewEvent:
    """A refusal; a KIP-11 one names its first 1,000 resources and counts them all."""
    if isinstance(denial, ApprovalDenial):
        details: dict[str, Any] = {"operation": "APPROVE", **dataclasses.asdict(denial)}
    else:
        denied = sorted(denial.denied.items())[:1_000]
        details = {
            "principals": list(denial.principals),
            "host": actor.client_host,
            "operation": denial.operation.value,
            "resource_type": denial.resource_type.value,
            "topics" if denial.resource_type is ResourceType.TOPIC else "resources": [n for n, _ in denied],
            "denied": [
                {"resource_name": name, "reason": decision.reason, "binding": _binding(decision)}
                for name, decision in denied
            ],
            "denied_count": len(denial.denied),
        }
    return event("authz.denied", actor, cluster, details)


def _binding(decision: Decision) -> dict[str, str] | None:
    binding = decision.matched_binding
    if binding is None:
        return None
    return {
        "principal": binding.principal,
        "host": binding.host,
        "operation": binding.operation.value,
        "permission_type": binding.permission.value,
        "resource_type": binding.resource_type.value,
        "resource_name": binding.resource_name,
        "pattern_type": binding.pattern_type.value,
    }
