"""Who is calling: the authenticated principal, the client address it called from, the dependency that
authenticates every /v1 request (a 401 with the ``WWW-Authenticate`` challenge of RFC 6750 §3 otherwise),
and the groups its token reported.

Every authenticated request whose token carries a groups claim reports them (``Memberships``), so an
approver's decision leaves out every group the requester is known to belong to, whichever token the
requester asked with. Each instance writes a principal's groups when they differ from what it last wrote,
so a steady caller costs no write. A failed write is logged and retried with the next token: the groups
already stored (or none, which refuses approval through a group) keep deciding meanwhile.
"""

from __future__ import annotations

import ipaddress
import logging
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.openapi.models import OAuth2 as OAuth2Model
from fastapi.openapi.models import OAuthFlowClientCredentials
from fastapi.openapi.models import OAuthFlows as OAuthFlowsModel
from fastapi.security.base import SecurityBase
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.faults import recorded_commits
from app.adapters.db.repositories import memberships as repo
from app.adapters.db.session import write_transaction
from app.errors import NotAuthenticated
from app.logs import principal_var
from app.settings import Settings
from app.text import has_control_character

log = logging.getLogger("kafka_purge.auth")
approvals_log = logging.getLogger("kafka_purge.approvals")

REALM = "kafka-purge"
TOKEN_PATH = "/oauth/token"  # noqa: S105 - a URL path, not a secret
SCHEME_HELP = "Bearer JWT. With the dev issuer on, use the client-credentials flow at /oauth/token."
REMEMBERED = 10_000

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


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


@dataclass(frozen=True)
class Principal:
    """An authenticated caller, named the way Kafka names principals (``User:alice``, ``Group:ops``).

    ``groups_reported``: the token carried a groups claim, so ``groups`` are every group the identity
    provider puts them in (an empty claim: none); without one the service does not know their groups."""

    user: str
    groups: tuple[str, ...]
    client_host: str
    groups_reported: bool = False

    @property
    def name(self) -> str:
        return f"User:{self.user}"

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *(f"Group:{group}" for group in self.groups))


@lru_cache(maxsize=64)
def _networks(trusted: frozenset[str]) -> tuple[IpNetwork, ...]:
    networks: list[IpNetwork] = []
    for entry in trusted:
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            continue  # a host name: matched literally by _is_trusted
    return tuple(networks)


def _is_trusted(host: str, trusted: frozenset[str]) -> bool:
    if host in trusted:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in _networks(trusted))


def client_host(peer: str | None, forwarded_for: list[str], trusted: frozenset[str]) -> str:
    """The caller's address: the socket peer, unless that peer is a trusted proxy.

    Behind trusted proxies the right-most ``X-Forwarded-For`` entry that is not itself a trusted proxy
    is the first address no trusted party vouches for; anything left of it may be forged by the client.
    """
    host = peer or "unknown"
    if not trusted or not _is_trusted(host, trusted):
        return host
    entries = [e.strip() for header in forwarded_for for e in header.split(",") if e.strip()]
    for entry in reversed(entries):
        if not _is_trusted(entry, trusted):
            return entry
    return entries[0] if entries else host


def bearer_token(authorization: str | None) -> str:
    if not authorization:
        raise missing_token()
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        raise missing_token()
    token = token.strip()
    if not token:
        raise invalid_token("The bearer token is empty")
    return token


def principal_from_claims(claims: dict[str, Any], settings: Settings, host: str) -> Principal:
    user = claims.get(settings.auth.principal_claim)
    if not isinstance(user, str) or not user:
        raise invalid_token("The token does not name a principal")
    groups: tuple[str, ...] = ()
    raw = claims.get(settings.auth.groups_claim) if settings.auth.groups_claim else None
    if raw is not None:
        # Anything but a list of names is refused: a group silently dropped could be one a DENY names.
        if not isinstance(raw, list) or not all(isinstance(g, str) and g for g in raw):
            raise invalid_token("The token's groups claim is not a list of group names")
        groups = tuple(dict.fromkeys(raw))
    # Principals are stored, audited and matched against ACLs: a control character in one is refused
    # (``app.text``), not trimmed into some other name.
    if has_control_character(user) or any(has_control_character(group) for group in groups):
        raise invalid_token("The token's principal or groups hold control characters")
    return Principal(user=user, groups=groups, client_host=host, groups_reported=raw is not None)


def request_client_host(request: Request, trusted_proxies: frozenset[str]) -> str:
    peer = request.client.host if request.client else None
    return client_host(peer, request.headers.getlist("x-forwarded-for"), trusted_proxies)


class BearerAuthentication(SecurityBase):
    """Authenticates the request's bearer token into its principal; raises a 401 ``BearerChallenge``
    otherwise (our problem+json with a proper challenge, not FastAPI's default).

    It is also the OAuth2 security scheme of the OpenAPI document, so Swagger UI's Authorize button runs
    the client-credentials flow. Being both, authentication is one dependency of each route, not a
    principal dependency over a scheme dependency: FastAPI's solving costs about as much per dependency
    as the cached token check itself."""

    def __init__(self) -> None:
        self.model = OAuth2Model(
            flows=OAuthFlowsModel(
                clientCredentials=OAuthFlowClientCredentials(tokenUrl=TOKEN_PATH, scopes={})
            ),
            description=SCHEME_HELP,
        )
        self.scheme_name = "OAuth2"

    async def __call__(self, request: Request) -> Principal:
        auth = getattr(request.app.state, "auth", None)
        if auth is None:
            raise RuntimeError("app.auth.install(app, settings) was not called")
        host = request_client_host(request, auth.trusted_proxies)
        try:
            claims = await auth.validator.validate(bearer_token(request.headers.get("authorization")))
            principal = principal_from_claims(claims, auth.settings, host)
        except BearerChallenge as exc:
            # The reason is one of our fixed sentences; the token itself is never logged.
            log.info("authentication failed from %s: %s", host, exc.detail)
            raise
        if principal.groups_reported and auth.memberships is not None:
            await auth.memberships.report(principal)
        # For the rest of the request's log lines (the request's task ends with it).
        principal_var.set(principal.name)
        return principal


current_principal = BearerAuthentication()
PrincipalDep = Annotated[Principal, Depends(current_principal)]


class Memberships:
    """Reports principals' groups to the ``membership`` table, skipping what this instance wrote last."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self._sessionmaker = sessionmaker
        self._written: OrderedDict[str, tuple[str, ...]] = OrderedDict()

    async def report(self, principal: Principal) -> None:
        groups = tuple(sorted(principal.groups))
        if self._written.get(principal.name) == groups:
            self._written.move_to_end(principal.name)
            return
        try:
            # Writing the same groups again changes nothing, so this commit leaves the request free to
            # run again after a database fault (``app.adapters.db.faults``): it is recorded apart.
            with recorded_commits():
                async with write_transaction(self._sessionmaker) as session:
                    await repo.report(session, principal.name, groups, datetime.now(UTC))
        except (SQLAlchemyError, OSError) as exc:
            approvals_log.warning("could not store the groups of %s: %s", principal.name, type(exc).__name__)
            return
        self._written[principal.name] = groups
        self._written.move_to_end(principal.name)
        while len(self._written) > REMEMBERED:
            self._written.popitem(last=False)
