"""A wrong configuration, as an operator meets it: the real ``kafka-purge`` process prints one line naming
the variable (or the database, without its password) and what to check, no traceback, and exits 2."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.child_process import running

ROOT = Path(__file__).resolve().parents[2]
SECRET = "hunter2-do-not-print"


def cli_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    env |= {"PYTHONPATH": str(ROOT), "PURGE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'purge.db'}"}
    # The text format, whose layout these tests read.
    return env | {"PURGE_AUTH_DEV_ISSUER": "true", "PURGE_LOG_FORMAT": "text", **settings}


def run_cli(tmp_path: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env=cli_env(tmp_path, **settings),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stdout == ""
    assert SECRET not in result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("settings", "expected", "then"),
    [
        (
            {"PURGE_CLUSTERS": '{"prod": {"sasl_password": "' + SECRET + '"'},
            "PURGE_CLUSTERS is not valid JSON (Expecting ',' delimiter: line 1 column ",
            "): expected a JSON object mapping names to objects with bootstrap_servers, security_protocol,",
        ),
        (
            {"PURGE_AUTH_ALGORITHMS": "RS256"},
            "PURGE_AUTH_ALGORITHMS is not valid JSON (Expecting value: line 1 column 1 (char 0)): "
            "expected a JSON array of strings",
            "",
        ),
        (
            {"PURGE_AUTH_DEV_CLIENTS": '["admin"]'},
            "PURGE_AUTH_DEV_CLIENTS: Input should be a valid dictionary "
            "(expected a JSON object mapping names to strings)",
            "",
        ),
        (
            {"PURGE_WORKER_LEASE_SECONDS": "soon"},
            "PURGE_WORKER_LEASE_SECONDS: Input should be a valid number, unable to parse string as a number",
            "",
        ),
        (
            {
                "PURGE_CLUSTERS": json.dumps(
                    {"prod": {"bootstrap_servers": "k:9092", "security_protocol": "TLS"}}
                )
            },
            "PURGE_CLUSTERS at prod.security_protocol: Input should be 'PLAINTEXT', 'SSL', 'SASL_PLAINTEXT' "
            "or 'SASL_SSL'",
            "",
        ),
        (
            {
                "PURGE_CONNECT": json.dumps(
                    {"sinks": {"url": f"http://purge:{SECRET}@connect:8083", "kafka_cluster": "demo"}}
                )
            },
            "PURGE_CONNECT at sinks.url: the URL must not carry user info (user:password@); "
            "give username and password_file",
            "",
        ),
        (
            {"PURGE_AUTH_DEV_ISSUER": "false"},
            "configure PURGE_AUTH_ISSUER and PURGE_AUTH_JWKS_URL, or PURGE_AUTH_DEV_ISSUER=true",
            "",
        ),
    ],
)
def test_a_bad_variable_is_named_with_what_it_expects(
    tmp_path: Path, settings: dict[str, str], expected: str, then: str
) -> None:
    line = one_line_error(run_cli(tmp_path, "migrate", **settings))
    assert line.startswith("kafka-purge: invalid configuration: " + expected), line
    assert then in line.removeprefix("kafka-purge: invalid configuration: " + expected)


def test_serve_reports_the_same_way(tmp_path: Path) -> None:
    line = one_line_error(run_cli(tmp_path, "serve", "--port", "0", PURGE_AUTH_ALGORITHMS="RS256"))
    assert line.startswith("kafka-purge: invalid configuration: PURGE_AUTH_ALGORITHMS is not valid JSON"), (
        line
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            f"postgresql+asyncpg://purge:{SECRET}@127.0.0.1:{{port}}/purge",
            "cannot connect to the database postgresql+asyncpg://127.0.0.1:{port}/purge: nothing "
            "accepts connections at 127.0.0.1:{port}; check that the database server runs there",
        ),
        (
            f"postgresql+asyncpg://no_role_kp:{SECRET}@127.0.0.1:5432/postgres",
            "cannot connect to the database postgresql+asyncpg://127.0.0.1:5432/postgres: "
            "the server refused the login of user 'no_role_kp' (role \"no_role_kp\" does not exist); "
            "check the user and password in PURGE_DATABASE_URL",
        ),
        (
            f"postgresql+asyncpg://postgres:{SECRET}@127.0.0.1:5432/no_db_kp",
            "cannot connect to the database postgresql+asyncpg://127.0.0.1:5432/no_db_kp: "
            'database "no_db_kp" does not exist; create it, or correct the database name',
        ),
        (
            f"postgresql+asyncpg://purge:{SECRET}@no-such-host.invalid:5432/purge",
            "cannot connect to the database postgresql+asyncpg://no-such-host.invalid:5432/purge: "
            "the host name 'no-such-host.invalid' does not resolve",
        ),
    ],
)
def test_a_database_that_cannot_be_used_is_named_without_its_password(
    tmp_path: Path, url: str, expected: str
) -> None:
    port = str(free_port())
    line = one_line_error(run_cli(tmp_path, "migrate", PURGE_DATABASE_URL=url.replace("{port}", port)))
    assert line.startswith("kafka-purge: " + expected.replace("{port}", port)), line


def test_an_unknown_variable_is_a_warning_with_the_closest_name(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "migrate", PURGE_CLUSTER="{}", PURGE_AUTH_ISUER="https://idp")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if " WARNING " in line]
    assert [w.split(": ", 1)[1] for w in warnings] == [
        "unknown environment variable PURGE_AUTH_ISUER is ignored (did you mean PURGE_AUTH_ISSUER?)",
        "unknown environment variable PURGE_CLUSTER is ignored (did you mean PURGE_CLUSTERS?)",
    ]


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_the_dev_issuer_refuses_a_non_loopback_address(tmp_path: Path, command: str) -> None:
    line = one_line_error(run_cli(tmp_path, command, "--host", "0.0.0.0", "--port", "0"))
    assert line.startswith(
        "kafka-purge: invalid configuration: the development token issuer (PURGE_AUTH_DEV_ISSUER=true) "
        "would listen on 0.0.0.0, which is not a loopback address"
    ), line
    assert line.endswith("or set PURGE_AUTH_DEV_ISSUER_ALLOW_REMOTE=true")


@pytest.mark.parametrize(
    ("host", "settings"), [("127.0.0.1", {}), ("0.0.0.0", {"PURGE_AUTH_DEV_ISSUER_ALLOW_REMOTE": "true"})]
)
def test_the_dev_issuer_warns_whenever_it_is_on(tmp_path: Path, host: str, settings: dict[str, str]) -> None:
    env = cli_env(tmp_path, **settings)
    command = [sys.executable, "-m", "app", "serve", "--host", host, "--port", "0"]
    with running(command, env, tmp_path) as service:
        service.wait_for_line(r"serving HTTP on")
        warning = service.wait_for_line(
            r"WARNING kafka_purge.server: (the development token issuer is on .*)"
        )
        assert service.stop() == 0
    assert f"listening on {host}" in warning.group(1)
