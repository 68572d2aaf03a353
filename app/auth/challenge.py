"""401 errors that carry the ``WWW-Authenticate`` challenge of RFC 6750 §3."""

from __future__ import annotations

from app.errors import NotAuthenticated

REALM = "kafka-purge"


class BearerChallenge(NotAuthenticated):
    """A 401 whose ``headers`` the problem renderer copies onto the response."""

    def __init__(self, detail: str, *, error: str | None = "invalid_token") -> None:
        super().__init__(detail)
        challenge = f'Bearer realm="{REALM}"'
        if error is not None:
            # The description is one of our own fixed sentences, never token content, so no quoting issues.
            challenge += f', error="{error}", error_description="{detail}"'
        self.headers = {"WWW-Authenticate": challenge}


def missing_token() -> BearerChallenge:
    return BearerChallenge("A bearer token is required", error=None)


def invalid_token(description: str) -> BearerChallenge:
    return BearerChallenge(description)
