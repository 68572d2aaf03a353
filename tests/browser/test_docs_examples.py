"""Every POST in the demo's Swagger UI works with its default "Try it out" example: ``kafka-purge demo``
(the service and the emulated cluster, as processes), /docs in headless Chromium, Authorize as the
demo's ``admin`` (client credentials), then "Try it out" and Execute on each POST operation, in the
order a person would go, each answering 2xx. The path parameters Swagger UI fills in from the
document's examples (cluster ``demo``) are left as they are.

Six operations need something that exists first; the test makes it and types it in:
- ``POST /v1/deletions/{deletion_id}/cancel``: the id of a deletion still waiting to be sent. The test
  has the emulated brokers hold DeleteRecords for a minute, keeps the executor's batches busy with
  deletions submitted over HTTP, submits one more (stored pending, unclaimed) and cancels that. It
  runs last: the brokers keep holding DeleteRecords afterwards.
- ``POST /v1/audit/verify``: its example is a checkpoint signed by another key (200, ``ok`` false);
  the test then verifies against a checkpoint the demo signed and logged (``audit checkpoint ...
  jws=``), which answers ``ok`` true.
- ``POST /oauth/token`` (the demo's development token issuer): a client id and secret.
- ``POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry``: the webhook the default example
  created (first, so the deletions after it are its events) and one of its deliveries.
- ``POST /v1/deletions/{deletion_id}/approvals`` and
  ``POST /v1/clusters/{cluster}/policies/{name}/approvals``: a deletion and a policy of orders-team held
  by an approval rule that names admin as its approver.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.child_process import Process, running
from offline_browser import ROOT, Offline
from playwright.sync_api import Page, expect
from swagger_ui import (
    authorize_dialog,
    collapse,
    execute,
    expect_authorized,
    open_docs,
    operation_ids,
    shown_status,
)

from app.worker.executor import MAX_BATCHES

ADMIN = ("admin", "admin-secret")
CHECKPOINT_LINE = r"audit checkpoint event_id=\d+ jws=([A-Za-z0-9_.-]+)"
# Operations run with their default example as is, in this order (element ids of Swagger UI).
AS_IS = (
    "operations-webhooks-create_webhook_v1_webhooks_post",
    "operations-deletions-create_deletion_v1_deletions_post",
    "operations-acls-create_acl_v1_clusters__cluster__acls_post",
    "operations-consumers-register_consumer_v1_clusters__cluster__consumers_post",
    "operations-policies-create_policy_v1_clusters__cluster__policies_post",
    "operations-approvals-create_approval_rule_v1_clusters__cluster__approval_rules_post",
    "operations-audit-verify_audit_chain_against_v1_audit_verify_post",
)
VERIFY = "operations-audit-verify_audit_chain_against_v1_audit_verify_post"
TOKEN = "operations-dev_token_issuer-issue_token_oauth_token_post"
CANCEL = "operations-deletions-cancel_deletion_v1_deletions__deletion_id__cancel_post"
RETRY = "operations-webhooks-retry_delivery_v1_webhooks__webhook_id__deliveries__delivery_id__retry_post"
APPROVE = "operations-approvals-decide_deletion_v1_deletions__deletion_id__approvals_post"
APPROVE_POLICY = "operations-approvals-decide_policy_v1_clusters__cluster__policies__name__approvals_post"
ORDERS_TEAM = ("orders-team", "orders-secret")


@dataclass
class Demo:
    base: str
    control: str
    process: Process


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    """The demo, logging at INFO so that its audit checkpoints show."""
    folder: Path = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    command = [sys.executable, "-m", "app", "--log-level", "INFO", "demo", "--port", "0"]
    with running([*command, "--data-dir", str(folder)], {**env, "PYTHONPATH": str(ROOT)}, folder) as process:
        base = process.wait_for_line(r"API base URL:\s+(\S+)").group(1)
        control = process.wait_for_line(r"Emulator control API:\s+(\S+)/state").group(1)
        process.wait_for_line("Press Ctrl-C")
        yield Demo(base, control, process)


def admin_headers(base: str, client: tuple[str, str] = ADMIN) -> dict[str, str]:
    grant = httpx.post(f"{base}/oauth/token", data={"grant_type": "client_credentials"}, auth=client)
    grant.raise_for_status()
    return {"Authorization": f"Bearer {grant.json()['access_token']}"}


def awaiting_admins_approval(demo: Demo) -> tuple[str, str]:
    """A deletion and a retention policy of orders-team on orders.us, both awaiting approval under a rule
    that names admin as its approver (admin may approve what another principal asked for)."""
    rule = {
        "name": "admin-approves-orders-us",
        "topics": {"names": ["orders.us"]},
        "approvers": ["User:admin"],
    }
    made = httpx.post(
        f"{demo.base}/v1/clusters/demo/approval-rules",
        json=rule,
        headers=admin_headers(demo.base),
        timeout=10,
    )
    assert made.status_code == 201, made.text
    team = admin_headers(demo.base, ORDERS_TEAM)
    body = {"cluster": "demo", "partitions": [{"topic": "orders.us", "partition": 0, "offset": 10}]}
    held = httpx.post(
        f"{demo.base}/v1/deletions", json={**body, "reason": "replay"}, headers=team, timeout=10
    )
    assert (held.status_code, held.json()["status"]) == (202, "awaiting_approval"), held.text
    policy = {
        "name": "orders-us-read",
        "topics": {"names": ["orders.us"]},
        "consumers": {"groups": ["orders-billing"]},
    }
    created = httpx.post(f"{demo.base}/v1/clusters/demo/policies", json=policy, headers=team, timeout=10)
    assert (created.status_code, created.json()["approval_status"]) == (201, "pending"), created.text
    return held.json()["id"], policy["name"]


def submit(demo: Demo, headers: dict[str, str], topic: str, partition: int, offset: int) -> str:
    body = {
        "cluster": "demo",
        "partitions": [{"topic": topic, "partition": partition, "offset": offset}],
        "reason": "demo: kept waiting",
    }
    accepted = httpx.post(f"{demo.base}/v1/deletions", json=body, headers=headers, timeout=10)
    assert accepted.status_code == 202, accepted.text
    deletion_id: str = accepted.json()["id"]
    return deletion_id


def first_partition(demo: Demo, headers: dict[str, str], deletion_id: str) -> dict[str, Any]:
    answer = httpx.get(f"{demo.base}/v1/deletions/{deletion_id}", headers=headers, timeout=10)
    row: dict[str, Any] = answer.json()["partitions"][0]
    return row


def waiting_deletion(demo: Demo) -> str:
    """A deletion not yet sent: every broker holds DeleteRecords for a minute, so each deletion the
    executor takes keeps one of its ``MAX_BATCHES`` batches busy; once they all are, the next deletion
    is stored pending and nobody claims it."""
    brokers = httpx.get(f"{demo.control}/state", timeout=10).json()["listeners"]
    for broker in brokers:
        fault = {"broker": int(broker), "api": "DeleteRecords", "delay_ms": 60_000, "count": 100}
        httpx.post(f"{demo.control}/faults", json=fault, timeout=10).raise_for_status()
    headers = admin_headers(demo.base)
    for partition in range(MAX_BATCHES + 2):  # orders.eu has 6 partitions
        deletion_id = submit(demo, headers, "orders.eu", partition, 150)
        if unclaimed_for_a_second(demo, headers, deletion_id):
            return deletion_id
    raise AssertionError("the executor took every deletion: none is left waiting to cancel")


def unclaimed_for_a_second(demo: Demo, headers: dict[str, str], deletion_id: str) -> bool:
    """Whether the deletion's partition is still pending and never attempted a second after it was
    accepted: the executor claims at once, or within its poll interval, when it has room. A claim seen
    sooner ends the wait there."""
    deadline = time.monotonic() + 1
    while time.monotonic() < deadline:
        row = first_partition(demo, headers, deletion_id)
        if (row["status"], row["attempts"]) != ("pending", 0):
            return False
        time.sleep(0.1)
    row = first_partition(demo, headers, deletion_id)
    return (row["status"], row["attempts"]) == ("pending", 0)


def expect_2xx(page: Page, operation_id: str, **typed: Any) -> dict[str, Any]:
    response, operation = execute(page, operation_id, **typed)
    assert 200 <= response.status < 300, f"{operation_id}: {response.status} {response.text()}"
    expect(shown_status(operation)).to_have_text(str(response.status))
    answer: dict[str, Any] = response.json()
    collapse(operation)
    return answer


@pytest.mark.timeout(300)
def test_every_post_works_with_its_default_example(offline: Offline, demo: Demo) -> None:
    page = offline.page
    open_docs(page, demo.base)
    expected = {*AS_IS, TOKEN, CANCEL, RETRY, APPROVE, APPROVE_POLICY}
    assert set(operation_ids(page, "post")) == expected, "a POST this test does not run"

    dialog = authorize_dialog(page)
    dialog.locator("input[id^=client_id]").fill(ADMIN[0])
    dialog.locator("input[id^=client_secret]").fill(ADMIN[1])
    dialog.locator("button.modal-btn.authorize").click()
    expect_authorized(dialog)

    answers = {operation: expect_2xx(page, operation) for operation in AS_IS}
    assert answers[AS_IS[0]]["secret"].startswith("whsec_")
    assert answers[AS_IS[1]]["principal"] == "User:admin"
    assert answers[AS_IS[1]]["partitions"][0]["resolved_offset"] == 100
    assert answers[VERIFY]["ok"] is False  # the example's checkpoint is signed by another key

    checkpoint = demo.process.wait_for_line(CHECKPOINT_LINE).group(1)
    assert expect_2xx(page, VERIFY, body={"checkpoint": checkpoint})["ok"] is True

    webhook_id = answers[AS_IS[0]]["id"]
    deliveries = httpx.get(
        f"{demo.base}/v1/webhooks/{webhook_id}/deliveries", headers=admin_headers(demo.base), timeout=10
    ).json()["items"]
    params = {"webhook_id": webhook_id, "delivery_id": str(deliveries[0]["id"])}
    assert expect_2xx(page, RETRY, params=params)["status"] == "pending"

    deletion_id, policy = awaiting_admins_approval(demo)
    assert expect_2xx(page, APPROVE, params={"deletion_id": deletion_id})["status"] == "approved"
    assert expect_2xx(page, APPROVE_POLICY, params={"name": policy})["status"] == "approved"

    token = expect_2xx(page, TOKEN, form={"client_id": ADMIN[0], "client_secret": ADMIN[1]})
    assert token["token_type"] == "Bearer"

    cancelled = expect_2xx(page, CANCEL, params={"deletion_id": waiting_deletion(demo)})
    assert cancelled["status"] == "cancelled"
    assert offline.elsewhere() == []
