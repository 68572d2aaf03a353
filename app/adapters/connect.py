"""Kafka Connect's REST API, read for the connectors' types, configs and states.

One ``GET /connectors?expand=info&expand=status`` (Connect 2.3+, KIP-465) answers for every connector;
an older worker ignores ``expand`` and lists names, and each connector is then read with
``GET /connectors/{name}``, ``/config`` and ``/status``. Any transport error, error status or unreadable
answer raises ``ConnectUnavailable``: a sweep that cannot read Connect deletes nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

import httpx

from app.domain.connect import ConnectorState, ConnectUnavailable
from app.settings import ConnectSettings
from app.settings.groups import readable_secret
from app.urls import shown_url


def _auth(settings: ConnectSettings) -> httpx.Auth | None:
    if settings.username is not None:
        if settings.password_file is not None:
            password = readable_secret(settings.password_file).get_secret_value()
        else:
            password = settings.password.get_secret_value() if settings.password else ""
        return httpx.BasicAuth(settings.username, password)
    return None


def _headers(settings: ConnectSettings) -> dict[str, str]:
    if settings.token_file is not None:
        return {"Authorization": f"Bearer {readable_secret(settings.token_file).get_secret_value()}"}
    if settings.token is not None:
        return {"Authorization": f"Bearer {settings.token.get_secret_value()}"}
    return {}


def _state(name: str, info: Any, status: Any) -> ConnectorState:
    config = {str(k): str(v) for k, v in (info.get("config") or {}).items()}
    return ConnectorState(
        name=name,
        type=str(info.get("type") or status.get("type") or ""),
        config=config,
        state=str((status.get("connector") or {}).get("state") or "UNKNOWN"),
        task_states=tuple(str(t.get("state") or "UNKNOWN") for t in status.get("tasks") or ()),
    )


async def _get(http: httpx.AsyncClient, path: str, params: Any = None) -> Any:
    response = await http.get(path, params=params)
    if response.status_code != 200:
        raise ConnectUnavailable(f"GET {path} answered {response.status_code}")
    return response.json()


async def _one(http: httpx.AsyncClient, name: str) -> ConnectorState:
    base = f"/connectors/{quote(name, safe='')}"
    info, config, status = await asyncio.gather(
        _get(http, base), _get(http, f"{base}/config"), _get(http, f"{base}/status")
    )
    return _state(name, {**info, "config": config}, status)


async def read_connectors(settings: ConnectSettings) -> dict[str, ConnectorState]:
    """Every connector of the Connect cluster, by name; raises ``ConnectUnavailable``."""
    try:
        async with httpx.AsyncClient(
            base_url=settings.url,
            auth=_auth(settings),
            headers=_headers(settings),
            timeout=settings.timeout_seconds,
        ) as http:
            listing = await _get(http, "/connectors", params=[("expand", "info"), ("expand", "status")])
            if isinstance(listing, list):
                states = await asyncio.gather(*(_one(http, str(name)) for name in listing))
                return {s.name: s for s in states}
            return {
                str(name): _state(str(name), entry.get("info") or {}, entry.get("status") or {})
                for name, entry in listing.items()
            }
    except (httpx.HTTPError, OSError, ValueError, AttributeError, TypeError) as exc:
        raise ConnectUnavailable(f"Kafka Connect at {shown_url(settings.url)} unreadable: {exc}") from None
