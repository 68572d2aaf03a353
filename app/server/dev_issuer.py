"""The development token issuer is for a laptop: it listens on loopback addresses only, unless the operator
says otherwise, and its being on is logged every time the service starts."""

from __future__ import annotations

import ipaddress
import logging

from app.settings import AuthSettings
from app.settings.diagnostics import UnsafeConfiguration

log = logging.getLogger("kafka_purge.server")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name other than localhost may resolve to anything
        return False


def check_dev_issuer(auth: AuthSettings, host: str) -> None:
    """Refuses the dev issuer on a non-loopback ``host`` (unless allowed) and warns whenever it is on."""
    if not auth.dev_issuer:
        return
    if not is_loopback(host) and not auth.dev_issuer_allow_remote:
        raise UnsafeConfiguration(
            f"the development token issuer (PURGE_AUTH_DEV_ISSUER=true) would listen on {host}, which is not "
            "a loopback address: anyone reaching it could mint tokens with a dev client's secret; listen on "
            "127.0.0.1, configure an OIDC provider (PURGE_AUTH_ISSUER, PURGE_AUTH_JWKS_URL), or set "
            "PURGE_AUTH_DEV_ISSUER_ALLOW_REMOTE=true"
        )
    log.warning(
        "the development token issuer is on (PURGE_AUTH_DEV_ISSUER=true, listening on %s): every dev client "
        "secret mints tokens; use an OIDC provider in production",
        host,
    )
