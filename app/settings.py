"""Service settings: one pydantic-settings class, environment prefix ``PURGE_``.

Nested groups are addressed with one underscore after the group name, e.g. ``PURGE_DATABASE_URL``,
``PURGE_AUTH_DEV_ISSUER``, ``PURGE_WORKER_LEASE_SECONDS``. Clusters are a JSON object in
``PURGE_CLUSTERS`` (name -> connection settings), Kafka Connect clusters in ``PURGE_CONNECT`` (name ->
REST URL, the Kafka cluster its workers use, and basic or bearer credentials). Unsafe combinations are
refused at start-up.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from app.domain.authorizer import parse_super_users
from app.domain.webhooks import HostAllowList
from app.integrations.spark.checkpoint_roots import CheckpointRoots, parse_checkpoint_roots
from app.signing import SigningKey, public_jwks

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
    # and DeleteRecords are routed with the same leaders; one that refuses is asked again on fresh metadata.
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
    a file is read at every request, so a rotated secret is picked up without a restart."""

    url: str = Field(min_length=1, pattern=r"^https?://")
    kafka_cluster: str = Field(min_length=1)
    username: str | None = None
    password: SecretStr | None = None
    password_file: Path | None = None
    token: SecretStr | None = None
    token_file: Path | None = None
    timeout_seconds: float = Field(default=10.0, gt=0, le=300)

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
    # unless this is set (``app.server.dev_issuer``).
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


def _check_signing_key(text: str) -> None:
    """A key that cannot sign is refused at start-up (``ValueError`` naming the expected kinds)."""
    SigningKey(text)


def _read_setting_file(path: Path, variable: str) -> str:
    try:
        return path.read_text()
    except (OSError, UnicodeError) as exc:
        raise ValueError(f"cannot read {variable}: {exc}") from exc


class AuditSettings(SettingsGroup):
    """The service's signing key: it signs the audit chain's checkpoints (``app.audit.checkpoints``) and
    erasure certificates (``app.certificates``).

    The signing key (an Ed25519 or P-256 private key, PEM or JWK) must live outside the database host:
    ``signing_key`` or ``signing_key_file``, not both. Without one, no checkpoints are signed and no
    certificates issued (none is generated silently), and ``/v1/audit/verify`` says so. Retired keys
    (``retired_keys`` or ``retired_keys_file``: public keys as a JWK set, a JSON list of JWKs or PEM) stay
    published at ``/signing-keys`` after a rotation, so that what they signed still verifies.
    """

    signing_key: SecretStr | None = None
    signing_key_file: Path | None = None
    retired_keys: str | None = None
    retired_keys_file: Path | None = None
    checkpoint_every_events: int = Field(default=1000, ge=1)
    checkpoint_seconds: float = Field(default=60.0, gt=0)

    @field_validator("signing_key")
    @classmethod
    def _usable_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            _check_signing_key(value.get_secret_value())
        return value

    @field_validator("signing_key_file")
    @classmethod
    def _usable_key_file(cls, value: Path | None) -> Path | None:
        if value is not None:
            _check_signing_key(_read_setting_file(value, "PURGE_AUDIT_SIGNING_KEY_FILE"))
        return value

    @field_validator("retired_keys")
    @classmethod
    def _usable_retired_keys(cls, value: str | None) -> str | None:
        if value is not None:
            public_jwks(value)
        return value

    @field_validator("retired_keys_file")
    @classmethod
    def _usable_retired_keys_file(cls, value: Path | None) -> Path | None:
        if value is not None:
            public_jwks(_read_setting_file(value, "PURGE_AUDIT_RETIRED_KEYS_FILE"))
        return value

    @model_validator(mode="after")
    def _one_key_source(self) -> AuditSettings:
        if self.signing_key is not None and self.signing_key_file is not None:
            raise ValueError("configure PURGE_AUDIT_SIGNING_KEY or PURGE_AUDIT_SIGNING_KEY_FILE, not both")
        if self.retired_keys is not None and self.retired_keys_file is not None:
            raise ValueError("configure PURGE_AUDIT_RETIRED_KEYS or PURGE_AUDIT_RETIRED_KEYS_FILE, not both")
        return self

    def signing_key_text(self) -> str | None:
        """The configured private key's text (read from its file when given as one), or None."""
        if self.signing_key_file is not None:
            return self.signing_key_file.read_text()
        return self.signing_key.get_secret_value() if self.signing_key is not None else None

    def retired_keys_text(self) -> str | None:
        """The configured retired public keys' text (read from its file when given as one), or None."""
        if self.retired_keys_file is not None:
            return self.retired_keys_file.read_text()
        return self.retired_keys


class LimitSettings(SettingsGroup):
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    max_partitions: int = Field(default=10_000, ge=1)
    default_timeout_ms: int = Field(default=30_000, ge=1)
    max_timeout_ms: int = Field(default=600_000, ge=1)
    page_size: int = Field(default=100, ge=1)
    max_page_size: int = Field(default=1_000, ge=1)
    # How long a client may take to send a request's head (request line and headers), and then its body;
    # past either the connection gets a 408 and is closed (``app.server.protocol``).
    header_timeout_seconds: float = Field(default=10.0, gt=0, le=3600)
    body_timeout_seconds: float = Field(default=30.0, gt=0, le=3600)


class WebhookSettings(SettingsGroup):
    """Delivering webhooks (``app.worker.webhooks``): the hosts they may target, the timeout of one
    attempt, the backoff between attempts and how many attempts before a delivery is dead-lettered."""

    # Comma-separated host names, ``*.suffix`` names and CIDRs; empty: any host (admins only set targets).
    allowed_hosts: str = ""
    max_attempts: int = Field(default=10, ge=1, le=100)
    timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    backoff_initial_seconds: float = Field(default=1.0, gt=0)
    backoff_max_seconds: float = Field(default=300.0, gt=0)
    # Longer than an attempt: a delivery whose worker died is attempted again once its lease ran out.
    lease_seconds: float = Field(default=60.0, gt=0)
    poll_interval_seconds: float = Field(default=0.5, gt=0)
    claim_batch: int = Field(default=20, ge=1, le=1000)

    @field_validator("allowed_hosts")
    @classmethod
    def _valid_hosts(cls, value: str) -> str:
        HostAllowList.parse(value)
        return value

    @model_validator(mode="after")
    def _lease_outlasts_attempt(self) -> WebhookSettings:
        if self.lease_seconds <= self.timeout_seconds:
            raise ValueError(
                "PURGE_WEBHOOKS_LEASE_SECONDS must be longer than PURGE_WEBHOOKS_TIMEOUT_SECONDS"
            )
        return self

    def allow_list(self) -> HostAllowList:
        return HostAllowList.parse(self.allowed_hosts)


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


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="PURGE_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="ignore",
        # An error names the setting but never echoes its value: it may be a secret (a signing key).
        hide_input_in_errors=True,
    )

    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    clusters: dict[str, ClusterSettings] = Field(default_factory=dict)
    connect: dict[str, ConnectSettings] = Field(default_factory=dict)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    spark: SparkSettings = Field(default_factory=SparkSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)
    super_users: str = ""
    trusted_proxies: str = ""
    public_url: str = "http://127.0.0.1:8080"

    @model_validator(mode="after")
    def _auth_configured(self) -> Settings:
        production = bool(self.auth.issuer or self.auth.jwks_url)
        if self.auth.dev_issuer and production:
            # Tokens the dev issuer mints for any configured client would stand beside the IdP's.
            raise ValueError(
                "PURGE_AUTH_DEV_ISSUER=true cannot run next to a production issuer: unset "
                "PURGE_AUTH_ISSUER and PURGE_AUTH_JWKS_URL, or the dev issuer"
            )
        if self.auth.dev_issuer and self.auth.ui_client_id:
            raise ValueError(
                "PURGE_AUTH_UI_CLIENT_ID logs in at PURGE_AUTH_ISSUER: the dev issuer has no login page"
            )
        if not self.auth.dev_issuer and not (self.auth.issuer and self.auth.jwks_url):
            raise ValueError(
                "configure PURGE_AUTH_ISSUER and PURGE_AUTH_JWKS_URL, or PURGE_AUTH_DEV_ISSUER=true"
            )
        return self

    @model_validator(mode="after")
    def _connect_clusters_known(self) -> Settings:
        for name, connect in self.connect.items():
            if connect.kafka_cluster not in self.clusters:
                raise ValueError(
                    f"Connect cluster {name!r} names unknown Kafka cluster {connect.kafka_cluster!r}"
                )
        return self

    @field_validator("super_users")
    @classmethod
    def _valid_super_users(cls, value: str) -> str:
        parse_super_users(value)
        return value

    def super_user_set(self) -> frozenset[str]:
        """``PURGE_SUPER_USERS`` is ``;``-separated ``Type:Name`` principals, as Kafka's ``super.users``."""
        return parse_super_users(self.super_users)

    def trusted_proxy_set(self) -> frozenset[str]:
        return frozenset(p.strip() for p in self.trusted_proxies.split(",") if p.strip())


@lru_cache
def get_settings() -> Settings:
    return Settings()
