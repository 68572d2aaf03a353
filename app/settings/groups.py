"""The settings groups of the database, the Kafka and Connect clusters, authentication, the executor,
the request limits and Spark consumers."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from app.integrations.spark.checkpoint_roots import CheckpointRoots, parse_checkpoint_roots
from app.urls import has_user_info

SecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
SaslMechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
AclSource = Literal["service", "kafka"]
# pydantic's errors quote the input they refused (a whole cluster object with its sasl_password, a
# database URL with its password): never in a configuration error, in any group.
HIDE_INPUT = ConfigDict(hide_input_in_errors=True)
# RFC 6749 §3.3 scope-token: printable ASCII but space, double quote and backslash.
SCOPE_TOKEN = r"[\x21\x23-\x5b\x5d-\x7e]+"  # noqa: S105 - a pattern, not a secret


class SettingsGroup(BaseModel):
    model_config = HIDE_INPUT


def no_user_info(value: str | None) -> str | None:
    """A URL the service renders in logs, runs and problems may not carry a credential (``user:pw@``):
    credentials have settings of their own, which are never shown."""
    if value is not None and has_user_info(value):
        raise ValueError("the URL must not carry user info (user:password@); give credentials separately")
    return value


class DatabaseSettings(SettingsGroup):
    url: str = "sqlite+aiosqlite:///./data/kafka-purge.db"
    # Each process opens 2 x pool_size connections to PostgreSQL when it starts and keeps them
    # (``app.adapters.db.session``): size PostgreSQL's max_connections for that.
    pool_size: int = Field(default=10, ge=1)
    echo: bool = False

    @field_validator("url")
    @classmethod
    def _parsable_url(cls, value: str) -> str:
        # SQLAlchemy's own parse errors quote the whole URL, password included.
        try:
            make_url(value)
        except (ArgumentError, ValueError):
            raise ValueError(
                "not a SQLAlchemy database URL (dialect+driver://user:password@host/db)"
            ) from None
        return value


def readable_secret(path: Path) -> SecretStr:
    """The secret a file holds (surrounding whitespace stripped); raises ``ValueError`` naming the file,
    never its content, when it cannot be read or is empty."""
    try:
        secret = path.read_text().strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ValueError(f"cannot read the secret file {path}: {reason}") from None
    if not secret:
        raise ValueError(f"the secret file {path} is empty")
    return SecretStr(secret)


class ClusterSettings(SettingsGroup):
    """How the service reaches one Kafka cluster, with its own Kafka principal."""

    bootstrap_servers: str = Field(min_length=1)
    security_protocol: SecurityProtocol = "PLAINTEXT"
    sasl_mechanism: SaslMechanism | None = None
    sasl_username: str | None = None
    sasl_password: SecretStr | None = None
    ssl_cafile: str | None = None
    client_id: str = "kafka-purge"
    request_timeout_ms: int = Field(default=40_000, ge=1_000)
    # How old the topic metadata and cleanup.policy may be that accepting a deletion naming concrete
    # partitions relies on (0: always ask). A topic or partition not known, or a compact-only policy, is
    # looked up fresh before a refusal; offsets and consumer groups are always read fresh. ListOffsets
    # and DeleteRecords are routed with leaders answered up to five minutes ago (0 here: never), as
    # Kafka's clients route; one that refuses is asked again on fresh metadata.
    metadata_max_age_ms: int = Field(default=5_000, ge=0, le=300_000)
    acl_source: AclSource = "service"
    acl_cache_seconds: float = Field(default=10.0, gt=0)

    @model_validator(mode="after")
    def _sasl_complete(self) -> ClusterSettings:
        if self.security_protocol.startswith("SASL") and not (
            self.sasl_mechanism and self.sasl_username and self.sasl_password
        ):
            raise ValueError("SASL clusters need sasl_mechanism, sasl_username and sasl_password")
        return self


class ConnectSettings(SettingsGroup):
    """One Kafka Connect cluster's REST API, read by retention sweeps to learn its sink connectors.

    ``kafka_cluster`` names the ``PURGE_CLUSTERS`` entry its workers read from. Credentials: HTTP basic
    (``username`` and ``password`` or ``password_file``) or a bearer token (``token`` or ``token_file``);
    a file is read at start-up (a missing, unreadable or empty one is refused then) and again at every
    request, so a rotated secret is picked up without a restart. The URL carries no user info: it is
    shown in policy runs, audit events and logs (``app.urls``), the credentials never are."""

    url: str = Field(min_length=1, pattern=r"^https?://")
    kafka_cluster: str = Field(min_length=1)
    username: str | None = None
    password: SecretStr | None = None
    password_file: Path | None = None
    token: SecretStr | None = None
    token_file: Path | None = None
    timeout_seconds: float = Field(default=10.0, gt=0, le=300)

    @field_validator("url")
    @classmethod
    def _plain_url(cls, value: str) -> str:
        # Parsed as the client that uses it parses it; its errors quote parts of the URL, never shown.
        try:
            httpx.URL(value)
        except httpx.InvalidURL:
            raise ValueError("not a valid http(s) URL") from None
        if has_user_info(value):
            raise ValueError(
                "the URL must not carry user info (user:password@); give username and password_file"
            )
        return value

    @model_validator(mode="after")
    def _one_credential(self) -> ConnectSettings:
        basic = self.username is not None or self.password is not None or self.password_file is not None
        bearer = self.token is not None or self.token_file is not None
        if basic and bearer:
            raise ValueError("give basic credentials or a bearer token, not both")
        if basic and (self.username is None or (self.password is None) == (self.password_file is None)):
            raise ValueError("basic credentials need username and one of password or password_file")
        if self.token is not None and self.token_file is not None:
            raise ValueError("give token or token_file, not both")
        for secret in (self.password_file, self.token_file):
            if secret is not None:
                readable_secret(secret)
        return self


class AuthSettings(SettingsGroup):
    """Bearer JWT validation, and the development token issuer."""

    issuer: str | None = None
    audience: str = "kafka-purge"
    jwks_url: str | None = None
    algorithms: list[str] = Field(default_factory=lambda: ["RS256"])
    principal_claim: str = "sub"
    groups_claim: str | None = "groups"
    leeway_seconds: int = Field(default=30, ge=0, le=300)
    jwks_cache_seconds: float = Field(default=300.0, gt=0)
    dev_issuer: bool = False
    # The dev issuer mints tokens for anyone holding a dev client's secret: it listens on loopback only
    # unless this is set (``app.auth.dev_issuer``).
    dev_issuer_allow_remote: bool = False
    dev_clients: dict[str, SecretStr] = Field(default_factory=dict)
    dev_client_groups: dict[str, list[str]] = Field(default_factory=dict)
    dev_token_ttl_seconds: int = Field(default=3600, ge=60)
    # Swagger UI's login (authorization code + PKCE) at the issuer: a public client registered there with
    # ``<service URL>/docs/oauth2-redirect`` as its redirect URI, and the scopes to ask for.
    ui_client_id: str | None = Field(default=None, max_length=255, pattern=r"^[\x21-\x7e]+$")
    ui_scopes: str = Field(default="openid", pattern=rf"^{SCOPE_TOKEN}( {SCOPE_TOKEN})*$")
    # Where the service reads the issuer's discovery document when it reaches the issuer at another
    # address than browsers do (a container network); unset: ``<issuer>/.well-known/openid-configuration``.
    discovery_url: str | None = None

    _plain_urls = field_validator("issuer", "jwks_url", "discovery_url")(no_user_info)

    @field_validator("algorithms")
    @classmethod
    def _no_none_algorithm(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one JWT algorithm must be allowed")
        if any(alg.lower() == "none" for alg in value):
            raise ValueError("the 'none' JWT algorithm is never allowed")
        return value


class WorkerSettings(SettingsGroup):
    """The durable executor that sends DeleteRecords requests."""

    poll_interval_seconds: float = Field(default=0.2, gt=0)
    lease_seconds: float = Field(default=30.0, gt=0)
    claim_batch: int = Field(default=10_000, ge=1)
    backoff_initial_ms: int = Field(default=200, ge=1)
    backoff_max_ms: int = Field(default=5_000, ge=1)
    confirm_interval_ms: int = Field(default=500, ge=1)


class LimitSettings(SettingsGroup):
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    max_partitions: int = Field(default=10_000, ge=1)
    default_timeout_ms: int = Field(default=30_000, ge=1)
    max_timeout_ms: int = Field(default=600_000, ge=1)
    page_size: int = Field(default=100, ge=1)
    max_page_size: int = Field(default=1_000, ge=1)
    # How long a client may take to send a request's body once its head is in; past it the connection gets
    # a 408 and is closed (``app.api.middleware``). The head's deadline is the reverse proxy's.
    body_timeout_seconds: float = Field(default=30.0, gt=0, le=3600)


class SparkSettings(SettingsGroup):
    """Spark consumers. ``checkpoint_roots`` (``PURGE_SPARK_CHECKPOINT_ROOTS``): comma-separated local
    folders and object-store URLs under which consumers' checkpoints may be read; empty turns pull mode
    off (``app.integrations.spark.checkpoint_roots``)."""

    checkpoint_roots: str = ""

    @field_validator("checkpoint_roots")
    @classmethod
    def _valid_roots(cls, value: str) -> str:
        parse_checkpoint_roots(value)
        return value

    def roots(self) -> CheckpointRoots:
        return parse_checkpoint_roots(self.checkpoint_roots)
