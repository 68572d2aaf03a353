"""The demo's ACL bindings and four-eyes approval rule, created through the service's own API by the
super user ``admin``."""

from __future__ import annotations

import httpx

PROTECTED_TOPIC = "customers-pii"
DEMO_APPROVAL_RULE: dict[str, object] = {
    "name": "customers-pii-four-eyes",
    "topics": {"names": [PROTECTED_TOPIC]},
    "approvers": ["Group:privacy-officers"],
    "required_approvals": 1,
    "expires_after_seconds": 86400,
    # Every way of deleting needs approval, retention policies too: no exemption.
    "exemptions": [],
}
DEMO_ACLS: tuple[dict[str, str], ...] = (
    # The orders team may purge its own topics (DELETE implies DESCRIBE, as in Kafka).
    {
        "principal": "User:orders-team",
        "operation": "DELETE",
        "permission_type": "ALLOW",
        "resource_type": "TOPIC",
        "resource_name": "orders.",
        "pattern_type": "PREFIXED",
    },
    # It also reads its topics and owns the consumer groups named orders-* (Spark queries are GROUP
    # resources too): it reports its Spark query's progress and creates retention policies over them.
    {
        "principal": "User:orders-team",
        "operation": "READ",
        "permission_type": "ALLOW",
        "resource_type": "TOPIC",
        "resource_name": "orders.",
        "pattern_type": "PREFIXED",
    },
    {
        "principal": "User:orders-team",
        "operation": "READ",
        "permission_type": "ALLOW",
        "resource_type": "GROUP",
        "resource_name": "orders-",
        "pattern_type": "PREFIXED",
    },
    # Legal hold: DENY beats the PREFIXED ALLOW above, for every principal (super users excepted).
    {
        "principal": "User:*",
        "operation": "DELETE",
        "permission_type": "DENY",
        "resource_type": "TOPIC",
        "resource_name": "orders.audit",
        "pattern_type": "LITERAL",
    },
    # customers-pii holds personal data: orders-team may ask to erase records there (an approval rule
    # makes every such deletion wait for a privacy officer), and the privacy officers see what they approve.
    {
        "principal": "User:orders-team",
        "operation": "DELETE",
        "permission_type": "ALLOW",
        "resource_type": "TOPIC",
        "resource_name": PROTECTED_TOPIC,
        "pattern_type": "LITERAL",
    },
    {
        "principal": "Group:privacy-officers",
        "operation": "DESCRIBE",
        "permission_type": "ALLOW",
        "resource_type": "TOPIC",
        "resource_name": PROTECTED_TOPIC,
        "pattern_type": "LITERAL",
    },
    # Auditors see every deletion and read the audit trail, but delete nothing.
    {
        "principal": "Group:auditors",
        "operation": "DESCRIBE",
        "permission_type": "ALLOW",
        "resource_type": "TOPIC",
        "resource_name": "*",
        "pattern_type": "LITERAL",
    },
    {
        "principal": "Group:auditors",
        "operation": "DESCRIBE",
        "permission_type": "ALLOW",
        "resource_type": "CLUSTER",
        "resource_name": "kafka-cluster",
        "pattern_type": "LITERAL",
    },
)


async def bearer(client: httpx.AsyncClient, credentials: tuple[str, str]) -> dict[str, str]:
    """The Authorization header of a dev-issuer token for the client id and secret ``credentials``."""
    grant = await client.post("/oauth/token", data={"grant_type": "client_credentials"}, auth=credentials)
    grant.raise_for_status()
    return {"Authorization": f"Bearer {grant.json()['access_token']}"}


async def create_demo_acls(client: httpx.AsyncClient, admin: dict[str, str], cluster: str = "demo") -> None:
    """Creates ``DEMO_ACLS`` with the super user's ``admin`` headers."""
    for binding in DEMO_ACLS:
        response = await client.post(f"/v1/clusters/{cluster}/acls", json=binding, headers=admin)
        response.raise_for_status()


async def create_demo_approval_rule(
    client: httpx.AsyncClient, admin: dict[str, str], cluster: str = "demo"
) -> None:
    """Creates ``DEMO_APPROVAL_RULE`` with the super user's ``admin`` headers."""
    response = await client.post(
        f"/v1/clusters/{cluster}/approval-rules", json=DEMO_APPROVAL_RULE, headers=admin
    )
    response.raise_for_status()
