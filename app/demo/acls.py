"""The demo's ACL bindings, created through the service's own API by the super user ``admin``."""

from __future__ import annotations

import httpx

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
    # Legal hold: DENY beats the PREFIXED ALLOW above, for every principal (super users excepted).
    {
        "principal": "User:*",
        "operation": "DELETE",
        "permission_type": "DENY",
        "resource_type": "TOPIC",
        "resource_name": "orders.audit",
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


async def create_demo_acls(base_url: str, admin: tuple[str, str], cluster: str = "demo") -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as client:
        grant = await client.post("/oauth/token", data={"grant_type": "client_credentials"}, auth=admin)
        grant.raise_for_status()
        headers = {"Authorization": f"Bearer {grant.json()['access_token']}"}
        for binding in DEMO_ACLS:
            response = await client.post(f"/v1/clusters/{cluster}/acls", json=binding, headers=headers)
            response.raise_for_status()
