"""The Connect REST adapter against the test server: a worker before Connect 2.3, bearer tokens, failures.
Kept on a fake for what a real worker (tests/real_kafka/test_connect.py) cannot do: ignore ``expand``, take
a bearer token (Connect's own REST extension knows basic auth only)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.connect_rest import ConnectRestServer, sink
from pydantic import SecretStr, ValidationError

from app.adapters.connect import read_connectors
from app.domain.connect import ConnectUnavailable
from app.settings import ConnectSettings

BASIC = "Basic Y29ubmVjdDpzM2NyM3Q="  # connect:s3cr3t


@pytest.fixture
def server() -> Iterator[ConnectRestServer]:
    running = ConnectRestServer(
        {"s3": sink("orders"), "cdc": {**sink(), "type": "source"}}, authorization=BASIC
    )
    yield running
    running.stop()


async def test_reads_every_connector_one_by_one(server: ConnectRestServer, tmp_path: Path) -> None:
    server.expand = False  # a worker before Connect 2.3: each connector read on its own
    secret = tmp_path / "password"
    secret.write_text("s3cr3t\n")
    settings = ConnectSettings(url=server.url, kafka_cluster="demo", username="connect", password_file=secret)
    found = await read_connectors(settings)
    assert sorted(found) == ["cdc", "s3"]
    assert (found["s3"].type, found["s3"].state, found["s3"].task_states) == ("sink", "RUNNING", ("RUNNING",))
    assert found["s3"].config["topics"] == "orders"
    assert found["cdc"].type == "source"


async def test_refused_credentials_and_a_server_down_are_unavailable(server: ConnectRestServer) -> None:
    wrong = ConnectSettings(
        url=server.url, kafka_cluster="demo", username="connect", password=SecretStr("no")
    )
    with pytest.raises(ConnectUnavailable, match="answered 401"):
        await read_connectors(wrong)
    bearer = ConnectSettings(url=server.url, kafka_cluster="demo", token=SecretStr("t"))
    server.stop()
    with pytest.raises(ConnectUnavailable, match="unreadable"):
        await read_connectors(bearer)


@pytest.mark.parametrize(
    "fields",
    [
        {"username": "u"},
        {"username": "u", "password": "p", "token": "t"},
        {"token": "t", "token_file": "/run/secrets/token"},
        {"url": "ftp://connect"},
    ],
)
def test_incomplete_credentials_are_refused(fields: dict[str, str]) -> None:
    with pytest.raises(ValidationError, match="1 validation error for ConnectSettings"):
        ConnectSettings.model_validate({"url": "http://connect:8083", "kafka_cluster": "demo", **fields})
