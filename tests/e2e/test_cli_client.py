"""The real ``kafka-purge`` client commands (subprocesses, no terminal) against the real service process
and an emulator process: offset JSON files as Kafka documents them, ``TOPIC -p -o`` as rpk takes them,
preview, status, evidence, and errors that name the URL and end with the documented exit codes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.cli import Service, cli_env, cli_service, run_cli, token

from app.cli.exits import Exit

KAFKA_DOC_EXAMPLE = '{"partitions":\n  [{"topic": "foo", "partition": 1, "offset": 1}],\n "version":1\n}\n'


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with cli_service(tmp_path_factory.mktemp("cli"), {"foo": 2, "events": 3, "bad": 1}) as running:
        yield running


def write(service: Service, name: str, text: str) -> str:
    path = service.dir / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_kafka_documentation_example_is_deleted_and_followed(service: Service) -> None:
    path = write(service, "doc.json", KAFKA_DOC_EXAMPLE)
    result = run_cli(service, "delete", "--offset-json-file", path, "--reason", "doc", "--wait", "--yes")
    assert result.returncode == Exit.OK, result.stderr
    assert re.search(r"^foo +1 +1 +succeeded +1$", result.stdout, re.MULTILINE), result.stdout
    # Not a terminal: progress comes as plain lines, not a redrawn bar.
    assert "\r" not in result.stderr
    assert "\x1b" not in result.stderr + result.stdout
    assert "1/1 partitions done" in result.stderr


def test_version_may_be_omitted_and_unknown_fields_are_ignored(service: Service) -> None:
    text = '{"partitions": [{"topic": "foo", "partition": 0, "offset": 2, "comment": "x"}], "extra": true}'
    path = write(service, "noversion.json", text)
    result = run_cli(service, "delete", "-f", path, "--reason", "r", "--format", "json", "--no-confirm")
    assert result.returncode == Exit.OK, result.stderr
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
def test_invalid_offset_files_are_refused_before_sending(service: Service, text: str, message: str) -> None:
    path = write(service, "bad.json", text)
    env = cli_env(service, PURGE_TOKEN=token(service))
    result = run_cli(service, "delete", "--file", path, "--reason", "r", "--yes", env=env)
    assert result.returncode == Exit.USAGE
    assert message in result.stderr


def test_a_missing_input_file_is_one_line_and_a_usage_error(service: Service) -> None:
    missing = str(service.dir / "nowhere.json")
    result = run_cli(service, "delete", "--file", missing, "--reason", "r", "--yes")
    assert result.returncode == Exit.USAGE
    assert result.stderr == f"kafka-purge: offset JSON file {missing} does not exist\n"
    no_checkpoint = run_cli(service, "audit", "verify", "--checkpoint", missing)
    assert no_checkpoint.returncode == Exit.USAGE
    assert "Errno" not in no_checkpoint.stderr


def test_preview_needs_no_reason_and_says_what_would_happen(service: Service) -> None:
    preview = run_cli(service, "preview", "events", "-o", "end")
    assert preview.returncode == Exit.OK, preview.stderr
    assert "This deletes 30 record(s) from 3 partition(s) of events on cluster demo." in preview.stdout
    assert "No consumer group has unread records among them." in preview.stdout
    assert "Preview only: nothing was deleted." in preview.stdout
    assert "OUTCOME" not in preview.stdout
    assert "NONE" not in preview.stdout
    assert re.search(r"^events +0 +10 +0 +10 +10 +delete$", preview.stdout, re.MULTILINE), preview.stdout
    beyond = run_cli(service, "preview", "bad", "-p", "0", "-o", "99")
    assert re.search(r"^bad +0 +99 .* fail: OFFSET_OUT_OF_RANGE$", beyond.stdout, re.MULTILINE), beyond.stdout

    as_json = run_cli(
        service,
        "delete",
        "events",
        "-o",
        "@2999-01-01T00:00:00Z",
        "--reason",
        "p",
        "--dry-run",
        "--format",
        "json",
    )
    parsed: dict[str, Any] = json.loads(as_json.stdout)
    assert [p["resolved_offset"] for p in parsed["partitions"]] == [10, 10, 10]
    assert all(p["cut_time"]["record_found"] is False for p in parsed["partitions"])
    in_ms = run_cli(service, "preview", "events", "-p", "0,2", "-o", "@0", "--format", "json")
    assert [(p["partition"], p["records_deleted"]) for p in json.loads(in_ms.stdout)["partitions"]] == [
        (0, 0),
        (2, 0),
    ]


def test_without_a_terminal_delete_needs_yes(service: Service) -> None:
    result = run_cli(service, "delete", "events", "-o", "end", "--reason", "r")
    assert result.returncode == Exit.USAGE
    assert "stdin is not a TTY" in result.stderr
    assert "--yes" in result.stderr
    listed = run_cli(service, "list", "--topic", "events", "--format", "json")
    assert json.loads(listed.stdout) == []


def test_an_offset_beyond_the_end_is_refused_naming_the_high_watermark(service: Service) -> None:
    refused = run_cli(service, "delete", "bad", "-p", "0", "-o", "99", "--reason", "beyond", "--wait", "-y")
    assert refused.returncode == Exit.REFUSED, refused.stderr
    assert "answered 409" in refused.stderr
    assert "offset 99 is above the high watermark 10 of bad-0" in refused.stderr


def test_a_failed_partition_shows_in_status_and_evidence(service: Service) -> None:
    service.fail_next_deletion("bad", 0, "POLICY_VIOLATION")
    failing = run_cli(service, "delete", "bad", "-p", "0", "-o", "3", "--reason", "refused", "--wait", "-y")
    assert failing.returncode == Exit.FAILED, failing.stderr
    assert "POLICY_VIOLATION" in failing.stdout
    deletion_id = failing.stdout.split()[1]
    status = run_cli(service, "status", deletion_id, "--format", "json")
    assert status.returncode == Exit.FAILED
    assert json.loads(status.stdout)["partitions"][0]["status"] == "failed"
    evidence = run_cli(service, "evidence", deletion_id, "--format", "json")
    assert evidence.returncode == Exit.FAILED
    assert json.loads(evidence.stdout)["partitions"][0]["verdict"] == "not_deleted"


def test_secrets_come_from_files(service: Service) -> None:
    env = {k: v for k, v in cli_env(service).items() if k not in ("PURGE_CLIENT_SECRET",)}
    secret_file = write(service, "secret", "admin-secret\n")
    by_secret = run_cli(service, "list", "--client-secret-file", secret_file, env=env)
    assert by_secret.returncode == Exit.OK, by_secret.stderr
    env.pop("PURGE_CLIENT_ID")
    token_file = write(service, "token", token(service))
    assert run_cli(service, "list", env={**env, "PURGE_TOKEN_FILE": token_file}).returncode == Exit.OK


def test_errors_name_the_url_and_say_what_to_do(service: Service) -> None:
    no_credentials = {k: v for k, v in cli_env(service).items() if k not in ("PURGE_CLIENT_ID",)}
    env_less = run_cli(service, "status", "x", env=no_credentials)
    assert env_less.returncode == Exit.USAGE
    assert "PURGE_TOKEN" in env_less.stderr

    unknown = run_cli(service, "status", "no-such-deletion")
    assert unknown.returncode == Exit.REFUSED
    assert f"GET {service.url}/v1/deletions/no-such-deletion answered 404" in unknown.stderr
    assert "check the id" in unknown.stderr
    assert unknown.stderr.count("\n") == 2, "the error and what to do; no library warning"

    invalid = run_cli(service, "preview", "events", "-o", "end", "--timeout-ms", "0")
    assert invalid.returncode == Exit.REFUSED
    assert f"POST {service.url}/v1/deletions answered 422" in invalid.stderr
    assert "  /timeout_ms: " in invalid.stderr

    wrong_secret = run_cli(service, "status", "x", env=cli_env(service, PURGE_CLIENT_SECRET="wrong"))
    assert wrong_secret.returncode == Exit.REFUSED
    assert f"token request to {service.url}/oauth/token refused: invalid_client" in wrong_secret.stderr

    no_issuer = run_cli(service, "status", "x", "--token-url", "http://127.0.0.1:9/token")
    assert no_issuer.returncode == Exit.UNEXPECTED
    assert "cannot reach http://127.0.0.1:9/token" in no_issuer.stderr
    no_service = run_cli(
        service, "list", "--url", "http://127.0.0.1:9", env=cli_env(service, PURGE_TOKEN="t")
    )
    assert no_service.returncode == Exit.UNEXPECTED
    assert "cannot reach http://127.0.0.1:9/v1/deletions" in no_service.stderr
    assert "is the service running there?" in no_service.stderr
    for result in (no_issuer, no_service, wrong_secret, invalid, unknown):
        assert "Traceback" not in result.stderr


def test_help_lists_the_environment_and_exit_codes(service: Service) -> None:
    for command in ((), ("delete",), ("acl", "add")):
        shown = run_cli(service, *command, "--help")
        assert shown.returncode == Exit.OK
        for variable in (
            "PURGE_URL",
            "PURGE_TOKEN",
            "PURGE_TOKEN_FILE",
            "PURGE_CLIENT_ID",
            "PURGE_CLIENT_SECRET",
        ):
            assert variable in shown.stdout
        assert "exit codes:" in shown.stdout
        assert "4    partially failed" in shown.stdout
