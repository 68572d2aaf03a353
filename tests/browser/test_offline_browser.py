"""The browser tests' network rule: only loopback addresses may be asked; page-local URLs are no request."""

from __future__ import annotations

import pytest
from offline_browser import leaves_the_machine


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/docs",
        "http://127.3.4.5/x",
        "http://localhost:9000/",
        "http://[::1]:8080/openapi.json",
        "ws://127.0.0.1:1/socket",
        "data:image/svg+xml;base64,PHN2Zy8+",
        "blob:http://127.0.0.1:8080/5f0c",
    ],
)
def test_loopback_and_page_local_urls_stay(url: str) -> None:
    assert not leaves_the_machine(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://cdn.redoc.ly/redoc/logo-mini.svg",
        "https://fonts.googleapis.com/css?family=Roboto",
        "http://10.0.0.1/",
        "http://192.168.1.10:8080/docs",
        "wss://example.com/socket",
        "http://127.0.0.1.example.com/",
    ],
)
def test_anything_else_leaves(url: str) -> None:
    assert leaves_the_machine(url)
