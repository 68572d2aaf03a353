"""The real ``kafka-purge`` client commands (subprocesses) against the real service process and an
emulator process: offset JSON files as Kafka documents them, --topic/--to, preview, status, evidence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.demo_processes import (
    ROOT,
    get_or_none,
    kafka_purge,
    produce_records,
    purge_env,
    running,
    service_url,
    wait_until,
)

KAFKA_DOC_EXAMPLE = '{"partitions":\n  [{"topic": "foo", "partition": 1, "offset": 1}],\n "version":1\n}\n'


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = tmp_path_factory.mktemp("cli")
    topology = tmp / "topology.yaml"
    topics = [
        {"name": "foo", "partitions": 2},
        {"name": "events", "partitions": 3},
        {"name": "bad", "partitions": 1},
    ]
    topology.write_text(json.dumps({"topics": topics}), encoding="utf-8")
    emulator_cmd = [sys.executable, "-m", "kafka_emulator", "--brokers", "3", "--config", str(topology)]
    with running(emulator_cmd, {**os.environ, "PYTHONPATH": str(ROOT)}, tmp) as emulator:
        bootstrap = json.loads(emulator.wait_for_line(r"^\{.*\"bootstrap\".*\}$").group(0))["bootstrap"]
        for topic, partitions in (("foo", 2), ("events", 3), ("bad", 1)):
            produce_records(bootstrap, topic, partitions, 10)
        env = purge_env(tmp, PURGE_CLUSTERS=json.dumps({"demo": {"bootstrap_servers": bootstrap}}))
        with running(kafka_purge("serve", "--port", "0"), env, tmp) as process:
            url = service_url(process)
            wait_until(lambda: get_or_none(f"{url}/healthz"))
            yield {"url": url, "dir": str(tmp)}


def cli(service: dict[str, str], *args: str, token: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    env.update(PYTHONPATH=str(ROOT), PURGE_URL=service["url"])
    if token:
        grant = httpx.post(
            f"{service['url']}/oauth/token",
            data={"grant_type": "client_credentials"},
            auth=("admin", "admin-secret"),
        )
        env["PURGE_TOKEN"] = grant.json()["access_token"]
    else:
        env.update(PURGE_CLIENT_ID="admin", PURGE_CLIENT_SECRET="admin-secret")
    command = [sys.executable, "-m", "app", *args]
    return subprocess.run(command, env=env, cwd=service["dir"], capture_output=True, text=True, timeout=60)


def write(service: dict[str, str], name: str, text: str) -> str:
    path = Path(service["dir"]) / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_kafka_documentation_example_is_deleted_and_followed(service: dict[str, str]) -> None:
    path = write(service, "doc.json", KAFKA_DOC_EXAMPLE)
    result = cli(
        service, "delete", "--cluster", "demo", "--offset-json-file", path, "--reason", "doc", "--wait"
    )
    assert result.returncode == 0, result.stderr
    assert "succeeded" in result.stdout
    assert "foo    1          1       succeeded  1" in result.stdout
    # Not a terminal: progress comes as plain lines, not a redrawn bar.
    assert "\r" not in result.stderr
    assert "1/1 partitions done" in result.stderr


def test_version_may_be_omitted_and_unknown_fields_are_ignored(service: dict[str, str]) -> None:
    text = '{"partitions": [{"topic": "foo", "partition": 0, "offset": 2, "comment": "x"}], "extra": true}'
    path = write(service, "noversion.json", text)
    result = cli(
        service,
        "delete",
        "--cluster",
        "demo",
        "--offset-json-file",
        path,
        "--reason",
        "r",
        "--output",
        "json",
    )
    assert result.returncode == 0, result.stderr
    deletion = json.loads(result.stdout)
    assert [(p["topic"], p["partition"], p["resolved_offset"]) for p in deletion["partitions"]] == [
        ("foo", 0, 2)
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"partitions": [{"topic": "foo", "partition": 1, "offset": 1}, {"topic": "foo", "partition": 1, '
            '"offset": 2}], "version": 1}',
            "Offset json file contains duplicate topic partitions: foo-1",
        ),
        ('{"partitions": [], "version": 2}', "Not supported version field value 2"),
        ('{"version": 1}', "Missing partitions field"),
        ('{"partitions": [{"topic": "foo", "partition": "1", "offset": 1}]}', "partition must be an integer"),
    ],
)
def test_invalid_offset_files_are_refused_before_sending(
    service: dict[str, str], text: str, message: str
) -> None:
    path = write(service, "bad.json", text)
    result = cli(
        service, "delete", "--cluster", "demo", "--offset-json-file", path, "--reason", "r", token=True
    )
    assert result.returncode == 2
    assert message in result.stderr


def test_topic_preview_then_status_of_a_failed_partition_and_evidence(service: dict[str, str]) -> None:
    preview = cli(
        service, "preview", "--cluster", "demo", "--topic", "events", "--to", "end", "--reason", "p"
    )
    assert preview.returncode == 0, preview.stderr
    assert "30 record(s) would be deleted" in preview.stdout
    as_json = cli(
        service,
        "delete",
        "--cluster",
        "demo",
        "--topic",
        "events",
        "--to",
        "@2999-01-01T00:00:00Z",
        "--reason",
        "p",
        "--dry-run",
        "--output",
        "json",
    )
    parsed: dict[str, Any] = json.loads(as_json.stdout)
    assert [p["resolved_offset"] for p in parsed["partitions"]] == [10, 10, 10]
    assert all(p["cut_time"]["record_found"] is False for p in parsed["partitions"])

    failing = cli(
        service,
        "delete",
        "--cluster",
        "demo",
        "--topic",
        "bad",
        "--partition",
        "0",
        "--to",
        "99",
        "--reason",
        "beyond the end",
        "--wait",
    )
    assert failing.returncode == 1
    assert "OFFSET_OUT_OF_RANGE" in failing.stdout
    deletion_id = failing.stdout.split()[1]
    status = cli(service, "status", deletion_id, "--output", "json")
    assert status.returncode == 1
    assert json.loads(status.stdout)["partitions"][0]["status"] == "failed"
    evidence = cli(service, "evidence", deletion_id, "--output", "json")
    assert evidence.returncode == 1
    assert json.loads(evidence.stdout)["partitions"][0]["verdict"] == "not_deleted"


def test_missing_credentials_and_api_refusals_exit_non_zero(service: dict[str, str]) -> None:
    env_less = subprocess.run(
        [sys.executable, "-m", "app", "status", "x", "--url", service["url"]],
        env={**{k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert env_less.returncode == 2
    assert "PURGE_TOKEN" in env_less.stderr
    unknown = cli(service, "status", "no-such-deletion")
    assert unknown.returncode == 1
    assert "HTTP 404" in unknown.stderr
    assert unknown.stderr.count("\n") == 1, "one line, no library warning"
    wrong_secret = cli(service, "status", "x", "--client-secret", "wrong")
    assert wrong_secret.returncode == 1
    assert "token request refused: invalid_client: client authentication failed" in wrong_secret.stderr
    no_issuer = cli(service, "status", "x", "--token-url", "http://127.0.0.1:9/token")
    assert no_issuer.returncode == 1
    assert "kafka-purge: " in no_issuer.stderr
    assert "Traceback" not in no_issuer.stderr
