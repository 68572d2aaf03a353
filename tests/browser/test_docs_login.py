"""Human login in Swagger UI, end to end in headless Chromium with the Internet out of reach: a real
OpenID Connect provider (Canaille, ``oidc_provider.py``), the emulated cluster and ``kafka-purge serve``
run as processes on loopback. The service learns the provider's endpoints from ``PURGE_AUTH_ISSUER``'s
discovery document; the user signs in on the provider's own form (authorization code with PKCE), comes
back to Swagger UI and deletes records through a binding that names only their group.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from helpers.child_process import running
from offline_browser import ROOT, Offline
from playwright.sync_api import Locator, Response, expect
from swagger_ui import CREATE_DELETION, authorize_dialog, expect_authorized, open_docs, try_it_out

from app.adapters.db.migrate import upgrade
from app.adapters.db.repositories import acls
from app.adapters.db.session import create_engine, make_sessionmaker, write_transaction
from app.demo.data import produce_demo_records, write_topology
from app.domain.acl import AclBinding, Operation, PatternType, Permission, ResourceType

USER, PASSWORD, GROUP = "alice", "wonderland-42", "orders-team"
UI_CLIENT_ID = "kafka-purge-ui"
# The group's grant, and nothing for the user: a deletion succeeds only through the Group: principal.
GROUP_MAY_DELETE_ORDERS = AclBinding(
    f"Group:{GROUP}",
    "*",
    Operation.DELETE,
    Permission.ALLOW,
    ResourceType.TOPIC,
    "orders.",
    PatternType.PREFIXED,
)


def run_async(work: Coroutine[Any, Any, Any]) -> Any:
    """Runs ``work`` on a loop of its own thread: Playwright's sync API holds this thread's loop."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, work).result()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def grant_group(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with write_transaction(make_sessionmaker(engine)) as session:
            await acls.bump_version(session, "demo")
            await acls.add_binding(session, "demo", GROUP_MAY_DELETE_ORDERS, datetime.now(UTC))
    finally:
        await engine.dispose()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The provider, the emulated cluster (demo topics and records) and the service; their addresses."""
    folder: Path = tmp_path_factory.mktemp("login")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}, "PYTHONPATH": str(ROOT)}
    service = f"http://127.0.0.1:{free_port()}"
    provider_command = [
        *(sys.executable, str(Path(__file__).with_name("oidc_provider.py"))),
        *("--service-url", service, "--user", f"{USER}:{PASSWORD}", "--group", GROUP),
    ]
    topology = write_topology(folder / "topology.yaml")
    emulator_command = [sys.executable, "-m", "kafka_emulator", "--config", str(topology)]
    database = f"sqlite+aiosqlite:///{folder / 'purge.db'}"
    with ExitStack() as processes:
        provider = processes.enter_context(running(provider_command, env, folder))
        emulator = processes.enter_context(running(emulator_command, env, folder))
        # The schema and the group's grant, in this process while the provider and the emulator start.
        run_async(upgrade(database))
        run_async(grant_group(database))
        issuer = json.loads(provider.wait_for_line(r"^\{.*\"issuer\".*\}$").group(0))["issuer"]
        bootstrap = json.loads(emulator.wait_for_line(r"^\{.*\"bootstrap\".*\}$").group(0))["bootstrap"]
        run_async(produce_demo_records(bootstrap))
        discovery = httpx.get(f"{issuer}/.well-known/openid-configuration", timeout=10).json()
        env |= {
            "PURGE_DATABASE_URL": database,
            "PURGE_CLUSTERS": json.dumps({"demo": {"bootstrap_servers": bootstrap}}),
            "PURGE_AUTH_ISSUER": issuer,
            "PURGE_AUTH_JWKS_URL": discovery["jwks_uri"],
            "PURGE_AUTH_UI_CLIENT_ID": UI_CLIENT_ID,
            "PURGE_AUTH_UI_SCOPES": "openid profile groups",
            "PURGE_WORKER_POLL_INTERVAL_SECONDS": "0.05",
        }
        serve = [sys.executable, "-m", "app", "serve", "--port", service.rsplit(":", 1)[1]]
        processes.enter_context(running(serve, env, folder)).wait_for_line(r"Application startup complete")
        yield {"service": service, "discovery": discovery}


def sign_in(offline: Offline, dialog: Locator, token_endpoint: str) -> Response:
    """Authorize opens the provider's login form in a popup; the user types their name, then their
    password; Swagger UI then redeems the code. Returns the token response."""
    page = offline.page
    with page.expect_popup() as opened:
        dialog.locator("button.modal-btn.authorize").click()
    form = opened.value
    form.locator("input[name=login]").fill(USER)
    form.locator("button[type=submit]").last.click()
    form.locator("input[name=password]").fill(PASSWORD)
    with page.expect_response(lambda r: r.url == token_endpoint and r.request.method == "POST") as token:
        form.locator("button[type=submit]").last.click()
    return token.value


def test_a_person_logs_in_and_deletes_through_their_group(offline: Offline, stack: dict[str, Any]) -> None:
    page, discovery = offline.page, stack["discovery"]
    open_docs(page, stack["service"])
    dialog = authorize_dialog(page)
    expect(dialog).to_contain_text("authorizationCode with PKCE")
    expect(dialog.locator("input[id^=client_id]")).to_have_value(UI_CLIENT_ID)

    token = sign_in(offline, dialog, discovery["token_endpoint"])
    assert token.status == 200, token.text()
    redeemed = parse_qs(token.request.post_data or "")
    assert redeemed["grant_type"] == ["authorization_code"]
    assert redeemed["code_verifier"]
    assert "client_secret" not in redeemed  # a public client: PKCE instead of a secret
    authorization = [url for url in offline.requested if url.startswith(discovery["authorization_endpoint"])]
    asked = parse_qs(urlsplit(authorization[0]).query)  # then again after the login form, by the provider
    assert asked["client_id"] == [UI_CLIENT_ID]
    assert asked["code_challenge_method"] == ["S256"]
    assert asked["code_challenge"]
    assert asked["redirect_uri"] == [f"{stack['service']}/docs/oauth2-redirect"]
    came_back = [url for url in offline.requested if url.startswith(f"{asked['redirect_uri'][0]}?")]
    assert parse_qs(urlsplit(came_back[0]).query)["state"] == asked["state"]
    expect_authorized(dialog)

    body = {"cluster": "demo", "partitions": [{"topic": "orders.eu", "offset": -1}], "reason": "logged in"}
    accepted, _ = try_it_out(page, CREATE_DELETION, body)
    assert accepted.status == 202, accepted.text()
    assert accepted.json()["principal"] == f"User:{USER}"

    # The grant names the group's topics only: the same person may not delete elsewhere.
    elsewhere = {**body, "partitions": [{"topic": "payments", "offset": -1}]}
    refused, _ = try_it_out(page, CREATE_DELETION, elsewhere)
    assert refused.status == 403, refused.text()

    assert offline.elsewhere() == []
