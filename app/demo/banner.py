"""What ``kafka-purge demo`` prints once everything is up: addresses, clients, and examples that each
change or show something in the demo's data (``tests/e2e/test_readme_examples.py`` runs them in order)."""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from app.demo.groups import LAGGING, LIVE
from app.demo.retention import (
    POLICY_INTERVAL_SECONDS,
    POLICY_NAME,
    SPARK_CONSUMER,
    SPARK_POSITION,
    SPARK_TOPIC,
    spark_progress,
)

PRINT_ACCESS_FIELD = "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"access_token\"])'"


class Addresses(Protocol):
    bootstrap: str
    control: str


def _shell_json(body: dict[str, Any]) -> str:
    """``body`` as JSON inside single quotes, where a string value ``"$NAME"`` becomes the shell variable."""
    return "'" + re.sub(r'"\$([A-Z_]+)"', r"'$\1'", json.dumps(body)) + "'"


def _post(url: str, path: str, body: dict[str, Any], method: str = "POST") -> str:
    return (
        f"curl -s -w '\\n' -X {method} {url}{path} -H \"Authorization: Bearer $TOKEN\" \\\n"
        f"      -H 'Content-Type: application/json' -d {_shell_json(body)}"
    )


def _get(url: str, path: str) -> str:
    return f"curl -s -w '\\n' {url}{path} -H \"Authorization: Bearer $TOKEN\""


def examples(url: str) -> list[tuple[str, str]]:
    """(what it shows, shell command) pairs, to run in order as ``orders-team``."""
    everything = {"cluster": "demo", "partitions": [{"topic": "orders.us", "to": "end"}], "reason": "demo"}
    older = {
        "cluster": "demo",
        "partitions": [{"topic": "orders.us", "before": "$THREE_DAYS_AGO"}],
        "reason": "demo: older than three days",
    }
    consumed = {
        "cluster": "demo",
        "partitions": [{"topic": "orders.us", "committed_by": [LAGGING.name]}],
        "reason": "demo: what billing has read",
    }
    return [
        (
            "a token for orders-team",
            f"TOKEN=$(curl -s -u orders-team:orders-secret -d grant_type=client_credentials \\\n"
            f"      {url}/oauth/token | {PRINT_ACCESS_FIELD})",
        ),
        (
            f"offsets and lag: {LAGGING.name} stopped part way, {LIVE.name} is live and nearly done",
            _get(url, "/v1/clusters/demo/topics/orders.us"),
        ),
        (
            "preview deleting all of orders.us: the records that would go, the groups that would lose some",
            _post(url, "/v1/deletions", {**everything, "dry_run": True}),
        ),
        (
            "the same for real is refused (409): those groups have not read it all",
            _post(url, "/v1/deletions", everything),
        ),
        (
            "delete records older than three days (a time cut; both groups have read them)",
            "THREE_DAYS_AGO=$(( ($(date +%s) - 3 * 86400) * 1000 ))  # epoch ms\n    "
            + _post(url, "/v1/deletions", older),
        ),
        (f"delete what {LAGGING.name} has read", _post(url, "/v1/deletions", consumed)),
        ("your deletions, newest first", _get(url, "/v1/deletions")),
        (
            f"policy {POLICY_NAME} (every {POLICY_INTERVAL_SECONDS} s) deletes what {LAGGING.name} and the "
            f"Spark query {SPARK_CONSUMER} read of {SPARK_TOPIC}: its first sweep cut at {SPARK_POSITION}",
            _get(url, f"/v1/clusters/demo/policies/{POLICY_NAME}/runs"),
        ),
        (
            f"the Spark query moves past {LAGGING.name}: the next sweep cuts at {LAGGING.name}'s position",
            _post(
                url,
                f"/v1/clusters/demo/consumers/{SPARK_CONSUMER}/progress",
                spark_progress(180, batch_id=2),
                method="PUT",
            ),
        ),
        (
            f"within {POLICY_INTERVAL_SECONDS} s, every {SPARK_TOPIC} partition starts there",
            _get(url, f"/v1/clusters/demo/topics/{SPARK_TOPIC}"),
        ),
    ]


def banner(public_url: str, emulator: Addresses, clients: dict[str, str], database: str) -> str:
    credentials = "\n".join(f"    {client:<16} {secret}" for client, secret in clients.items())
    tries = "\n".join(f"    # {what}\n    {command}" for what, command in examples(public_url))
    return f"""
kafka-purge demo is running.

  Swagger UI:            {public_url}/docs   (Authorize with a client id and secret below)
  API base URL:          {public_url}
  Kafka bootstrap:       {emulator.bootstrap}   (emulated 3-broker cluster "demo")
  Emulator control API:  {emulator.control}/state
  Database:              {database}   (SQLite, fresh each run, like the cluster)
  Topics:                orders.eu (6), orders.us (3), orders.audit (1), payments (3),
                         customers.compacted (3, compacted), customers-pii (3, every deletion needs a
                         privacy officer's approval); 200 records a partition over the last 7 days
  Consumers:             groups {LAGGING.name} (orders.eu, orders.us: stopped part way) and
                         {LIVE.name} (orders.us: one member in this process, 10 records behind);
                         Spark query {SPARK_CONSUMER} ({SPARK_TOPIC}, reported up to {SPARK_POSITION})
  Retention policy:      {POLICY_NAME} (owner orders-team)

  Demo clients (OAuth2 client credentials):
{credentials}
    admin is a super user; orders-team may delete records of orders.* topics (a PREFIXED ACL),
    except orders.audit (a DENY for User:* puts it under legal hold: DENY beats ALLOW), and owns the
    orders-* consumers; auditor (group auditors) may see every deletion and the audit trail but
    delete nothing. orders-team may also ask to erase records of customers-pii: the approval rule
    customers-pii-four-eyes holds it until privacy-officer (group privacy-officers) approves it.

  Try it (each step changes or shows something; run them in order):
{tries}

Press Ctrl-C to stop the service and the emulator.
"""
