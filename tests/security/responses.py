"""How the suite reads a refusal."""

from __future__ import annotations

import httpx

PROBLEM = "application/problem+json"


def unauthenticated(response: httpx.Response) -> bool:
    """A proper refusal: 401, a Bearer challenge, problem+json saying 401."""
    if response.status_code != 401:
        return False
    if not response.headers.get("www-authenticate", "").startswith("Bearer"):
        return False
    if not response.headers.get("content-type", "").startswith(PROBLEM):
        return False
    return bool(response.json().get("status") == 401)
