"""The world the authorization matrix runs in, and how each route is called.

One service (dev issuer, super user ``admin``, cluster ``demo`` on the Kafka emulator, SQLite) with:

- ``owner``: ALLOW DELETE and READ on TOPIC ``sec.`` (PREFIXED), READ on GROUP ``sec-`` (PREFIXED); it
  created the deletion, the consumers and the policy (with one run) every row reads;
- ``operator``: ALLOW ALTER and DESCRIBE on CLUSTER ``kafka-cluster``, nothing else;
- ``admin`` (a super user) made a webhook before the owner's deletion, so it has one delivery;
- ``stranger``: authenticated, no binding at all; ``anonymous``: no token.

The approval rule ``sec-rule`` protects topic ``sec.protected`` (also for retention policies) with the
approvers ``admin`` and ``operator`` (who may not DESCRIBE the topic, so their approval is refused);
``protected_id`` is a deletion of it by ``owner``, awaiting approval.

``CALLS`` builds each route's request for one principal. A call that changes or consumes something acts
on a resource made for it (a fresh deletion to cancel, a fresh policy to change or delete), so the rows
do not depend on each other's order.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
from fastapi import FastAPI

from app.audit.checkpoints import CheckpointKey, generate_private_key
from security.responses import PROBLEM, unauthenticated

CLIENTS = {
    "admin": "admin-secret",
    "owner": "owner-secret",
    "operator": "operator-secret",
    "stranger": "stranger-secret",
}
PRINCIPALS = ("anonymous", "stranger", "owner", "operator", "admin")
CLUSTER = "demo"
# The world's audit checkpoint key: a caller-supplied checkpoint signed with it verifies.
SIGNING_KEY = generate_private_key()
TOPIC = "sec.orders"
GROUP = "sec-billing"
SPARK = "sec-enricher"
POLICY = "sec-policy"
PROTECTED = "sec.protected"
RULE = "sec-rule"
LISTED = "200 listed"
HIDDEN = "200 not listed"
TOKEN_PATH = "/oauth/token"


@dataclass
class Call:
    method: str
    url: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    # For a list: whether the owner's resource is in the page (the outcome is then LISTED or HIDDEN).
    listed: Callable[[Any], bool] | None = None


@dataclass
class World:
    app: FastAPI
    client: httpx.AsyncClient
    tokens: dict[str, str]
    deletion_id: str = ""
    # A deletion of the owner's that has finished (cancelled: the world runs no executor).
    finished_id: str = ""
    protected_id: str = ""
    webhook_id: str = ""
    delivery_id: int = 0
    serial: itertools.count[int] = field(default_factory=itertools.count)

    def headers(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"} if who in self.tokens else {}

    async def send(self, who: str, call: Call) -> httpx.Response:
        kwargs = dict(call.kwargs)
        headers = {**self.headers(who), **kwargs.pop("headers", {})}
        return await self.client.request(call.method, call.url, headers=headers, **kwargs)

    async def as_owner(self, method: str, url: str, status: int, **kwargs: Any) -> Any:
        response = await self.client.request(method, url, headers=self.headers("owner"), **kwargs)
        assert response.status_code == status, response.text
        return response.json()

    async def new_deletion(self) -> str:
        body = {
            "cluster": CLUSTER,
            "partitions": [{"topic": TOPIC, "partition": 0, "offset": 1}],
            "reason": "authorization matrix",
            "allow_unconsumed": True,
        }
        created = await self.as_owner("POST", "/v1/deletions", 202, json=body)
        return str(created["id"])

    async def new_protected_deletion(self) -> str:
        body = {
            "cluster": CLUSTER,
            "partitions": [{"topic": PROTECTED, "partition": 0, "offset": 1}],
            "reason": "authorization matrix, protected",
            "allow_unconsumed": True,
        }
        created = await self.as_owner("POST", "/v1/deletions", 202, json=body)
        assert created["status"] == "awaiting_approval", created
        return str(created["id"])

    async def new_rule(self) -> str:
        name = f"sec-r{next(self.serial)}"
        body = {"name": name, "topics": {"names": ["sec.unused"]}, "approvers": ["User:admin"]}
        made = await self.client.post(rules(), json=body, headers=self.headers("admin"))
        assert made.status_code == 201, made.text
        return name

    async def new_policy(self) -> str:
        name = f"sec-p{next(self.serial)}"
        await self.as_owner("POST", policies(), 201, json=policy_body(name))
        return name

    async def new_webhook(self) -> str:
        response = await self.client.post("/v1/webhooks", json=webhook_body(), headers=self.headers("admin"))
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def name(self, stem: str) -> str:
        return f"{stem}{next(self.serial)}"


def outcome(call: Call, response: httpx.Response) -> int | str:
    """What the matrix compares: the status, LISTED/HIDDEN for a list, or why a refusal is malformed."""
    status = response.status_code
    if call.url == TOKEN_PATH:
        return status  # OAuth 2.0 errors have their own JSON form (RFC 6749 section 5.2)
    if status >= 400 and not response.headers.get("content-type", "").startswith(PROBLEM):
        return f"{status} not problem+json"
    if status == 401 and not unauthenticated(response):
        return "401 without a Bearer challenge"
    if status == 200 and call.listed is not None:
        return LISTED if call.listed(response.json()) else HIDDEN
    return status


def acls() -> str:
    return f"/v1/clusters/{CLUSTER}/acls"


def consumers() -> str:
    return f"/v1/clusters/{CLUSTER}/consumers"


def policies() -> str:
    return f"/v1/clusters/{CLUSTER}/policies"


def rules() -> str:
    return f"/v1/clusters/{CLUSTER}/approval-rules"


def policy_body(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "topics": {"prefix": "sec."},
        "consumers": {"groups": [GROUP]},
        "interval_seconds": 3600,
    }


def webhook_body() -> dict[str, Any]:
    return {"cluster": CLUSTER, "url": "http://hooks.invalid/matrix", "description": "authorization matrix"}


def binding(principal: str, **fields: str) -> dict[str, str]:
    return {
        "principal": principal,
        "host": "*",
        "operation": "DELETE",
        "permission_type": "ALLOW",
        "resource_type": "TOPIC",
        "pattern_type": "LITERAL",
        "resource_name": TOPIC,
        **fields,
    }


def names_in(key: str, wanted: str) -> Callable[[Any], bool]:
    return lambda page: any(item.get(key) == wanted for item in page["items"])


def has_items(page: Any) -> bool:
    return bool(page["items"])


Builder = Callable[[World, str], Awaitable[Call]]


async def token(world: World, who: str) -> Call:
    auth = (who, CLIENTS[who]) if who in CLIENTS else None
    return Call("POST", TOKEN_PATH, {"data": {"grant_type": "client_credentials"}, "auth": auth})


async def cancel(world: World, who: str) -> Call:
    return Call("POST", f"/v1/deletions/{await world.new_deletion()}/cancel")


async def create_deletion(world: World, who: str) -> Call:
    body = {
        "cluster": CLUSTER,
        "partitions": [{"topic": TOPIC, "partition": 1, "offset": 1}],
        "reason": f"matrix, as {who}",
        "allow_unconsumed": True,
    }
    return Call("POST", "/v1/deletions", {"json": body})


async def create_acl(world: World, who: str) -> Call:
    return Call("POST", acls(), {"json": binding(f"User:{world.name('nobody-')}")})


async def delete_acls(world: World, who: str) -> Call:
    # What the call would delete is made first (as the super user), so a 200 shows it deleted something.
    principal = f"User:{world.name('doomed-')}"
    made = await world.client.post(acls(), json=binding(principal), headers=world.headers("admin"))
    assert made.status_code == 201, made.text
    return Call("DELETE", acls(), {"params": {"principal": principal}})


async def register_consumer(world: World, who: str) -> Call:
    return Call("POST", consumers(), {"json": {"name": world.name("sec-group-"), "kind": "kafka_group"}})


async def report_progress(world: World, who: str) -> Call:
    body = {"query_id": "q-1", "run_id": "r-1", "batch_id": next(world.serial), "offsets": {TOPIC: {"0": 1}}}
    return Call("PUT", f"{consumers()}/{SPARK}/progress", {"json": body})


async def create_policy(world: World, who: str) -> Call:
    return Call("POST", policies(), {"json": policy_body(world.name("sec-new-"))})


async def update_policy(world: World, who: str) -> Call:
    return Call("PATCH", f"{policies()}/{await world.new_policy()}", {"json": {"enabled": False}})


async def delete_policy(world: World, who: str) -> Call:
    return Call("DELETE", f"{policies()}/{await world.new_policy()}")


async def create_rule(world: World, who: str) -> Call:
    body = {"name": world.name("sec-new-rule-"), "topics": {"prefix": "sec.x"}, "approvers": ["User:admin"]}
    return Call("POST", rules(), {"json": body})


async def update_rule(world: World, who: str) -> Call:
    return Call("PATCH", f"{rules()}/{await world.new_rule()}", {"json": {"expires_after_seconds": 3600}})


async def delete_rule(world: World, who: str) -> Call:
    return Call("DELETE", f"{rules()}/{await world.new_rule()}")


async def approve_deletion(world: World, who: str) -> Call:
    deletion_id = await world.new_protected_deletion()
    return Call("POST", f"/v1/deletions/{deletion_id}/approvals", {"json": {"decision": "approve"}})


async def read_approval(world: World, who: str) -> Call:
    return Call("GET", f"/v1/deletions/{world.protected_id}/approvals")


async def approve_policy(world: World, who: str) -> Call:
    name = world.name("sec-protected-")
    body = {**policy_body(name), "topics": {"names": [PROTECTED]}}
    created = await world.as_owner("POST", policies(), 201, json=body)
    assert created["approval_status"] == "pending", created
    return Call("POST", f"{policies()}/{name}/approvals", {"json": {"decision": "approve"}})


async def verify_audit(world: World, who: str) -> Call:
    """Verify against a checkpoint of the first event, signed with the world's key (as if from the log)."""
    answer = await world.client.get("/v1/audit", params={"limit": 1}, headers=world.headers("admin"))
    first = answer.json()["items"][0]
    checkpoint = CheckpointKey(SIGNING_KEY).sign(first["id"], first["hash"], datetime.now(UTC))
    return Call("POST", "/v1/audit/verify", {"json": {"checkpoint": checkpoint.jws}})


async def certificate(world: World, who: str) -> Call:
    if not world.finished_id:
        world.finished_id = await world.new_deletion()
        await world.as_owner("POST", f"/v1/deletions/{world.finished_id}/cancel", 200)
    return Call("GET", f"/v1/deletions/{world.finished_id}/certificate")


async def create_webhook(world: World, who: str) -> Call:
    return Call("POST", "/v1/webhooks", {"json": webhook_body()})


async def update_webhook(world: World, who: str) -> Call:
    return Call("PATCH", f"/v1/webhooks/{await world.new_webhook()}", {"json": {"enabled": False}})


async def delete_webhook(world: World, who: str) -> Call:
    return Call("DELETE", f"/v1/webhooks/{await world.new_webhook()}")


def filled(world: World, template: str, name: str) -> str:
    """The route's path template with the world's resources: its deletion, cluster, topic, ``name``."""
    values = {
        "deletion_id": world.deletion_id,
        "webhook_id": world.webhook_id,
        "delivery_id": world.delivery_id,
        "cluster": CLUSTER,
        "topic": TOPIC,
        "partition": 0,
        "name": name,
        "path": "swagger-ui.css",  # a documentation asset
        "slug": "forbidden",  # a problem type's page
    }
    return template.format(**values)


def listing(template: str, listed: Callable[[World], Callable[[Any], bool]], **kwargs: Any) -> Builder:
    async def build(world: World, who: str) -> Call:
        return Call("GET", filled(world, template, POLICY), kwargs, listed(world))

    return build


# How each route is called, unless it is a plain GET of the world's resource (``build_call``).
CALLS: dict[tuple[str, str], Builder] = {
    ("POST", "/oauth/token"): token,
    ("POST", "/v1/deletions"): create_deletion,
    ("GET", "/v1/deletions"): listing(
        "/v1/deletions", lambda world: names_in("id", world.deletion_id), params={"limit": 1000}
    ),
    ("POST", "/v1/deletions/{deletion_id}/cancel"): cancel,
    ("GET", "/v1/deletions/{deletion_id}/certificate"): certificate,
    ("POST", "/v1/audit/verify"): verify_audit,
    ("POST", "/v1/clusters/{cluster}/acls"): create_acl,
    ("DELETE", "/v1/clusters/{cluster}/acls"): delete_acls,
    ("POST", "/v1/clusters/{cluster}/consumers"): register_consumer,
    ("GET", "/v1/clusters/{cluster}/consumers"): listing(consumers(), lambda world: names_in("name", GROUP)),
    ("PUT", "/v1/clusters/{cluster}/consumers/{name}/progress"): report_progress,
    ("POST", "/v1/clusters/{cluster}/policies"): create_policy,
    ("GET", "/v1/clusters/{cluster}/policies"): listing(policies(), lambda world: names_in("name", POLICY)),
    ("PATCH", "/v1/clusters/{cluster}/policies/{name}"): update_policy,
    ("DELETE", "/v1/clusters/{cluster}/policies/{name}"): delete_policy,
    ("GET", "/v1/clusters/{cluster}/policies/{name}/runs"): listing(
        "/v1/clusters/{cluster}/policies/{name}/runs", lambda world: has_items
    ),
    ("POST", "/v1/clusters/{cluster}/approval-rules"): create_rule,
    ("PATCH", "/v1/clusters/{cluster}/approval-rules/{name}"): update_rule,
    ("DELETE", "/v1/clusters/{cluster}/approval-rules/{name}"): delete_rule,
    ("POST", "/v1/deletions/{deletion_id}/approvals"): approve_deletion,
    ("GET", "/v1/deletions/{deletion_id}/approvals"): read_approval,
    ("GET", "/v1/approvals"): listing(
        "/v1/approvals", lambda world: names_in("deletion_id", world.protected_id)
    ),
    ("POST", "/v1/clusters/{cluster}/policies/{name}/approvals"): approve_policy,
    ("POST", "/v1/webhooks"): create_webhook,
    ("GET", "/v1/webhooks"): listing("/v1/webhooks", lambda world: names_in("id", world.webhook_id)),
    ("PATCH", "/v1/webhooks/{webhook_id}"): update_webhook,
    ("DELETE", "/v1/webhooks/{webhook_id}"): delete_webhook,
    ("GET", "/v1/webhooks/{webhook_id}/deliveries"): listing(
        "/v1/webhooks/{webhook_id}/deliveries", lambda world: has_items
    ),
}
# The resource a plain GET of a route with a {name} reads.
NAMES = {
    "/v1/clusters/{cluster}/consumers/{name}": GROUP,
    "/v1/clusters/{cluster}/policies/{name}": POLICY,
    "/v1/clusters/{cluster}/approval-rules/{name}": RULE,
}


async def build_call(world: World, who: str, method: str, template: str) -> Call:
    if (method, template) in CALLS:
        return await CALLS[(method, template)](world, who)
    return Call(method, filled(world, template, NAMES.get(template, "")))
