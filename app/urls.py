"""URLs as people read them: in errors, logs, policy runs, audit events and problems.

A URL's user info (``user:password@``) is a credential, so it is never shown: :func:`shown_url` is the one
way the service renders a configured URL for people. The authority is what follows ``scheme://`` up to the
first ``/``, ``?`` or ``#`` (RFC 3986 §3.2, as httpx and ``urllib`` read it), and its user info is
everything up to its last ``@``. A SQLAlchemy URL is rendered first with its password percent-encoded, so
a password holding ``/``, ``?`` or ``#`` (which SQLAlchemy's own parser accepts) stays inside the user info.
"""

from __future__ import annotations

import re

from sqlalchemy.engine import URL

_AUTHORITY = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<authority>[^/?#]*)")


def shown_url(url: str | URL) -> str:
    """``url`` without its user info (and without the ``@`` that ends it)."""
    text = url.render_as_string(hide_password=False) if isinstance(url, URL) else url
    match = _AUTHORITY.match(text)
    if match is None or "@" not in match["authority"]:
        return text
    host = match["authority"].rpartition("@")[2]
    return f"{match['scheme']}{host}{text[match.end() :]}"


def has_user_info(url: str) -> bool:
    """Whether ``url`` carries user info, i.e. a credential in its authority."""
    return shown_url(url) != url
