"""Swagger UI and ReDoc in headless Chromium with the Internet out of reach: ``kafka-purge demo`` (the
service and the emulated cluster, as processes) serves both pages and their assets itself; Authorize
with a demo client's credentials, then "Try it out" on POST /v1/deletions deletes records (202)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.child_process import running
from offline_browser import ROOT, Offline
from playwright.sync_api import expect
from swagger_ui import (
    CREATE_DELETION,
    authorize_dialog,
    expect_authorized,
    open_docs,
    shown_status,
    try_it_out,
)

DOC_ASSETS = ("/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo's base URL (dev token issuer, demo clients and ACLs, orders.* topics with records)."""
    folder: Path = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    command = [sys.executable, "-m", "app", "--log-level", "WARNING", "demo", "--port", "0"]
    with running([*command, "--data-dir", str(folder)], {**env, "PYTHONPATH": str(ROOT)}, folder) as demo:
        base = demo.wait_for_line(r"API base URL:\s+(\S+)").group(1)
        demo.wait_for_line("Press Ctrl-C")
        yield base


def test_swagger_ui_authorizes_and_deletes_without_the_internet(offline: Offline, demo: str) -> None:
    page = offline.page
    open_docs(page, demo)

    dialog = authorize_dialog(page)
    expect(dialog).to_contain_text("clientCredentials")
    dialog.locator("input[id^=client_id]").fill("orders-team")
    dialog.locator("input[id^=client_secret]").fill("orders-secret")
    dialog.locator("button.modal-btn.authorize").click()
    expect_authorized(dialog)

    body = {
        "cluster": "demo",
        "partitions": [{"topic": "orders.eu", "partition": 0, "offset": 100}],
        "reason": "Swagger UI, offline",
    }
    response, operation = try_it_out(page, CREATE_DELETION, body)
    assert response.status == 202, response.text()
    assert response.request.headers["authorization"].startswith("Bearer ")
    assert response.json()["principal"] == "User:orders-team"
    expect(shown_status(operation)).to_have_text("202")

    assert offline.elsewhere() == []
    assert all(f"{demo}{asset}" in offline.requested for asset in DOC_ASSETS), offline.requested


def test_redoc_renders_without_the_internet(offline: Offline, demo: str) -> None:
    page = offline.page
    page.goto(f"{demo}/redoc")
    expect(page.locator("h1")).to_contain_text("kafka-purge")
    expect(page.get_by_text("POST/v1/deletions").first).to_be_visible()
    assert offline.elsewhere() == []
    assert f"{demo}/docs/assets/redoc.standalone.js" in offline.requested
