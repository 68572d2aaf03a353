"""Headless Chromium (Debian's ``chromium``, driven by Playwright; Playwright never downloads a browser of
its own here) with every request that leaves the machine refused and recorded: a page that needed the
Internet would show it in ``Offline.blocked``.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import BrowserContext, Request, Route

CHROMIUM = "/usr/bin/chromium"  # Debian's package; `make test` installs it
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]


def leaves_the_machine(url: str) -> bool:
    """A network request to anything but a loopback address (data: and blob: URLs stay in the page)."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https", "ws", "wss"}:
        return False
    host = parts.hostname or ""
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


@dataclass
class Offline:
    """A page (and its popups) that may only reach loopback addresses. Requests elsewhere are aborted
    (``blocked``). Playwright's routing never sees the target of a redirect, so redirects are checked
    from the request events (``requested`` lists every request the browser made, redirects included).
    A request the page's own Content-Security-Policy refuses never reaches the network, nor routing."""

    context: BrowserContext
    requested: list[str] = field(default_factory=list)
    redirected: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.context.on("request", self.record)
        self.context.route("**/*", self.route)
        self.page = self.context.new_page()

    def record(self, request: Request) -> None:
        self.requested.append(request.url)
        if request.redirected_from is not None:
            self.redirected.append(request.url)

    def route(self, route: Route) -> None:
        if leaves_the_machine(route.request.url):
            self.blocked.append(route.request.url)
            route.abort("internetdisconnected")
        else:
            route.continue_()

    def elsewhere(self) -> list[str]:
        """Every request sent off the machine: aborted by the route, or (a redirect) failed on its own."""
        return self.blocked + [url for url in self.redirected if leaves_the_machine(url)]
