"""The ``kafka-purge`` commands beside ``delete`` against the real service process and an emulator:
``list`` with its filters, ``cancel``, ``acl list|add|remove``, ``policy create|list|runs`` and
``audit verify|export``, in both formats, with a principal that may not do them."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import pytest
from helpers.cli import Service, cli_env, cli_service, commit_offsets, run_cli

from app.cli.exits import Exit

CLIENTS = json.dumps({"admin": "admin-secret", "bob": "bob-secret"})


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp("cli-admin")
    with cli_service(tmp, {"orders": 2, "clicks": 1}, PURGE_AUTH_DEV_CLIENTS=CLIENTS) as running:
        yield running


def bob(service: Service) -> dict[str, str]:
    return cli_env(service, PURGE_CLIENT_ID="bob", PURGE_CLIENT_SECRET="bob-secret")


def test_list_filters_and_cancel_of_a_finished_deletion(service: Service) -> None:
    done = run_cli(service, "delete", "clicks", "-o", "3", "--reason", "list me", "--yes", "--wait")
    assert done.returncode == Exit.OK, done.stderr
    deletion_id = done.stdout.split()[1]
    listed = run_cli(service, "list", "--topic", "clicks", "--status", "succeeded", "--format", "json")
    assert [d["id"] for d in json.loads(listed.stdout)] == [deletion_id]
    assert (
        json.loads(
            run_cli(service, "list", "--topic", "clicks", "--status", "failed", "--format", "json").stdout
        )
        == []
    )
    as_table = run_cli(service, "list", "--limit", "1")
    assert as_table.stdout.splitlines()[0].split() == [
        "ID",
        "CLUSTER",
        "STATUS",
        "PARTITIONS",
        "TOPICS",
        "PRINCIPAL",
        "CREATED",
        "REASON",
    ]
    assert re.match(
        rf"{deletion_id} +demo +succeeded +1 +clicks +User:admin ", as_table.stdout.splitlines()[1]
    )

    cancelled = run_cli(service, "cancel", deletion_id)
    assert cancelled.returncode == Exit.REFUSED
    assert f"POST {service.url}/v1/deletions/{deletion_id}/cancel answered 409" in cancelled.stderr
    assert "No partition of this deletion is still waiting to be sent." in cancelled.stderr


def test_acl_add_list_remove(service: Service) -> None:
    binding = ["--principal", "User:bob", "--resource-type", "topic", "--resource-name", "orders"]
    refused = run_cli(service, "acl", "list", env=bob(service))
    assert refused.returncode == Exit.REFUSED
    assert f"GET {service.url}/v1/clusters/demo/acls answered 403" in refused.stderr
    assert "ask an administrator" in refused.stderr

    added = run_cli(
        service,
        "acl",
        "add",
        *binding,
        "--operation",
        "describe",
        "--permission",
        "allow",
        "--format",
        "json",
    )
    assert added.returncode == Exit.OK, added.stderr
    assert json.loads(added.stdout)["pattern_type"] == "LITERAL"
    invalid = run_cli(service, "acl", "add", *binding, "--operation", "FLY", "--permission", "ALLOW")
    assert invalid.returncode == Exit.REFUSED
    assert "answered 422" in invalid.stderr

    shown = run_cli(service, "acl", "list", "--principal", "User:bob")
    assert shown.returncode == Exit.OK, shown.stderr
    assert shown.stdout.splitlines()[1].split() == [
        "User:bob",
        "*",
        "DESCRIBE",
        "ALLOW",
        "TOPIC",
        "orders",
        "LITERAL",
    ]

    unasked = run_cli(service, "acl", "remove", "--principal", "User:bob")
    assert unasked.returncode == Exit.USAGE
    assert "--yes" in unasked.stderr
    everything = run_cli(service, "acl", "remove", "--yes")
    assert everything.returncode == Exit.USAGE
    removed = run_cli(service, "acl", "remove", "--principal", "User:bob", "--yes", "--format", "json")
    assert removed.returncode == Exit.OK, removed.stderr
    assert [b["operation"] for b in json.loads(removed.stdout)] == ["DESCRIBE"]
    left = run_cli(service, "acl", "list", "--principal", "User:bob", "--format", "json")
    assert json.loads(left.stdout)["items"] == []


def test_policy_create_list_and_runs(service: Service) -> None:
    commit_offsets(service.bootstrap, "billing", {("orders", 0): 4, ("orders", 1): 6})
    usage = run_cli(service, "policy", "create", "consumed", "--prefix", "orders")
    assert usage.returncode == Exit.USAGE
    assert "--groups" in usage.stderr
    created = run_cli(
        service,
        "policy",
        "create",
        "consumed",
        "--prefix",
        "orders",
        "--groups",
        "billing",
        "--interval-seconds",
        "1",
    )
    assert created.returncode == Exit.OK, created.stderr
    assert created.stdout.startswith("policy consumed created on demo; first sweep at ")
    listed = run_cli(service, "policy", "list")
    assert listed.stdout.splitlines()[1].split()[:6] == ["consumed", "orders*", "group", "billing", "0", "1"]

    deadline = time.monotonic() + 30
    while True:
        runs = json.loads(run_cli(service, "policy", "runs", "consumed", "--format", "json").stdout)
        if runs and runs[-1]["deletion_id"]:
            break
        assert time.monotonic() < deadline, runs
        time.sleep(0.5)
    assert runs[-1]["partitions_planned"] == 2
    as_table = run_cli(service, "policy", "runs", "consumed")
    assert as_table.stdout.splitlines()[0].split()[:3] == ["RUN", "STARTED", "STATUS"]
    missing = run_cli(service, "policy", "runs", "nope")
    assert missing.returncode == Exit.REFUSED
    assert "answered 404" in missing.stderr


def test_audit_verify_and_export(service: Service) -> None:
    verified = run_cli(service, "audit", "verify")
    assert verified.returncode == Exit.OK, verified.stderr
    assert verified.stdout.startswith("ok: ")
    exported = run_cli(service, "audit", "export", "--action", "acl.created")
    assert exported.returncode == Exit.OK, exported.stderr
    events = [json.loads(line) for line in exported.stdout.splitlines()]
    assert events
    assert {e["action"] for e in events} == {"acl.created"}
    target = service.dir / "audit.ndjson"
    to_file = run_cli(service, "audit", "export", "--output-file", str(target))
    assert to_file.returncode == Exit.OK
    assert to_file.stdout == ""
    assert len(target.read_text().splitlines()) >= len(events)
    as_table = run_cli(service, "audit", "export", "--action", "acl.created", "--format", "table")
    assert as_table.stdout.splitlines()[0].split() == [
        "ID",
        "OCCURRED_AT",
        "ACTION",
        "PRINCIPAL",
        "CLUSTER",
        "DELETION",
    ]
    bad_time = run_cli(service, "audit", "export", "--since", "yesterday")
    assert bad_time.returncode == Exit.REFUSED
    assert "/v1/audit/export?since=yesterday answered 422" in bad_time.stderr
