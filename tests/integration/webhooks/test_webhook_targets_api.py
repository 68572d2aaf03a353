"""Webhook targets over HTTP (both databases): every spelling of a loopback, link-local, private or other
special-purpose address, and every ``localhost`` name, is refused when a webhook is created or changed,
with the default settings and with an allow-list; URLs with whitespace or control characters are refused;
an operator who opens a network can target it. Refusals are problem+json 422 pointing at ``#/url`` and
change nothing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
import pytest

from app.settings import ClusterSettings, Settings, WebhookSettings

Token = Callable[[str], Awaitable[str]]
PROBLEM = "application/problem+json"
ALLOW_LIST = "*.hooks.internal,hooks.example.com"
SPECIAL_TARGETS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/",
    "http://127.0.0.1:9/",
    "http://[::1]:9/",
    "http://0x7f000001:9/",
    "http://localhost:9/",
    "http://0x7f000002/",
    "http://2130706434/",
    "http://127.2/",
    "http://0177.0.0.2/",
    "http://0/",
    "http://LOCALHOST./",
    "http://127\u30020\u30020\u30022/",
    "http://\uff11\uff12\uff17.0.0.1/",
    "http://hooks.localhost/",
    "http://127.0.0.1./",
    "http://[::ffff:127.0.0.1]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://[fe80::1]/",
    "http://10.0.0.1/",
    "http://192.168.0.1/",
    "http://100.64.0.1/",
    "http://224.0.0.1/",
    "http://[::]/",
]
CONTROL_TARGETS = [
    "http://127.0.0.2\t.hooks.internal/",
    "https://hooks.example.com/\r\nX-Injected: 1",
    "https://hooks.example.com/a\nb",
    "https://hooks.example.com/a b",
    "https://hooks.example.com\t/",
    " https://hooks.example.com/",
    "https://hooks.example.com/\x00",
]


@pytest.fixture
def run_executor() -> bool:
    return False


@pytest.fixture
def clusters() -> dict[str, ClusterSettings]:
    # Never reached: managing webhooks asks nothing of the cluster.
    return {"demo": ClusterSettings(bootstrap_servers="127.0.0.1:9", request_timeout_ms=1_000)}


@pytest.fixture(params=["", ALLOW_LIST], ids=["default", "allow-list"])
def webhooks(request: pytest.FixtureRequest) -> WebhookSettings:
    return WebhookSettings(allowed_hosts=request.param)


@pytest.fixture
def settings(settings: Settings, webhooks: WebhookSettings) -> Settings:
    return settings.model_copy(update={"webhooks": webhooks})


async def headers(token: Token) -> dict[str, str]:
    return {"Authorization": f"Bearer {await token('alice')}"}


def refused(response: httpx.Response, url: str) -> str:
    assert response.status_code == 422, (url, response.text)
    assert response.headers["content-type"].startswith(PROBLEM)
    problem = response.json()
    assert [e["pointer"] for e in problem["errors"]] == ["#/url"], problem
    return str(problem)


async def test_special_addresses_are_refused_on_create_and_update(
    app_client: httpx.AsyncClient, token: Token
) -> None:
    auth = await headers(token)
    good = {"cluster": "demo", "url": "https://hooks.example.com/purge"}
    created = await app_client.post("/v1/webhooks", json=good, headers=auth)
    assert created.status_code == 201, created.text
    webhook_id = created.json()["id"]
    for url in SPECIAL_TARGETS:
        detail = refused(
            await app_client.post("/v1/webhooks", json={"cluster": "demo", "url": url}, headers=auth), url
        )
        assert "PURGE_WEBHOOKS_ALLOWED" in detail
        refused(await app_client.patch(f"/v1/webhooks/{webhook_id}", json={"url": url}, headers=auth), url)
    listed = (await app_client.get("/v1/webhooks", headers=auth)).json()["items"]
    assert [(w["id"], w["url"]) for w in listed] == [(webhook_id, good["url"])]
    audit = (await app_client.get("/v1/audit", params={"limit": 100}, headers=auth)).json()["items"]
    assert [e["action"] for e in audit if e["action"].startswith("webhook.")] == ["webhook.created"]


async def test_whitespace_and_control_characters_are_refused(
    app_client: httpx.AsyncClient, token: Token
) -> None:
    auth = await headers(token)
    for url in CONTROL_TARGETS:
        response = await app_client.post("/v1/webhooks", json={"cluster": "demo", "url": url}, headers=auth)
        assert "control characters" in refused(response, url).lower()
    assert (await app_client.get("/v1/webhooks", headers=auth)).json()["items"] == []


@pytest.mark.parametrize(
    "webhooks",
    [
        WebhookSettings(allowed_networks="127.0.0.0/8"),
        WebhookSettings(allowed_hosts=ALLOW_LIST + ",127.0.0.0/8", allowed_networks="127.0.0.0/8"),
    ],
    ids=["default", "allow-list"],
)
async def test_an_opened_network_may_be_targeted(app_client: httpx.AsyncClient, token: Token) -> None:
    auth = await headers(token)
    for url in ["http://127.0.0.1:9/hook", "http://0x7f000002:9/hook", "http://[::ffff:127.0.0.3]:9/"]:
        response = await app_client.post("/v1/webhooks", json={"cluster": "demo", "url": url}, headers=auth)
        assert response.status_code == 201, response.text
        assert response.json()["url"] == url
    for url in ["http://169.254.169.254/", "http://[::1]:9/", "http://10.0.0.1/"]:
        refused(
            await app_client.post("/v1/webhooks", json={"cluster": "demo", "url": url}, headers=auth), url
        )
