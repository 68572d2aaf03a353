"""What ``kafka-purge demo`` prints once everything is up."""

from __future__ import annotations

from typing import Protocol


class Addresses(Protocol):
    bootstrap: str
    control: str


def banner(public_url: str, emulator: Addresses, clients: dict[str, str], database: str) -> str:
    credentials = "\n".join(f"    {client:<12} {secret}" for client, secret in clients.items())
    body = (
        '{"cluster": "demo", "partitions": [{"topic": "orders.eu", "partition": 0, "offset": 100}, '
        '{"topic": "orders.eu", "partition": 1, "offset": -1}], "reason": "demo: purge old EU orders"}'
    )
    return f"""
kafka-purge demo is running.

  Swagger UI:            {public_url}/docs   (Authorize with a client id and secret below)
  API base URL:          {public_url}
  Kafka bootstrap:       {emulator.bootstrap}   (emulated 3-broker cluster "demo")
  Emulator control API:  {emulator.control}/state
  Database:              {database}   (SQLite, fresh each run, like the cluster)
  Topics:                orders.eu (6), orders.us (3), orders.audit (1), payments (3),
                         customers.compacted (3, compacted)

  Demo clients (OAuth2 client credentials):
{credentials}
    admin is a super user; orders-team may delete records of orders.* topics (a PREFIXED ACL),
    except orders.audit (a DENY for User:* puts it under legal hold: DENY beats ALLOW);
    auditor (group auditors) may see every deletion and the audit trail but delete nothing.

  Try it:
    TOKEN=$(curl -s -u orders-team:orders-secret -d grant_type=client_credentials \\
      {public_url}/oauth/token | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
    curl -s -w '\\n' -X POST {public_url}/v1/deletions -H "Authorization: Bearer $TOKEN" \\
      -H 'Content-Type: application/json' -d '{body}'
    curl -s -w '\\n' {public_url}/v1/deletions -H "Authorization: Bearer $TOKEN"

Press Ctrl-C to stop the service and the emulator.
"""
