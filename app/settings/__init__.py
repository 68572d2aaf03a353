"""Service settings: one pydantic-settings class, environment prefix ``PURGE_``.

Nested groups are addressed with one underscore after the group name, e.g. ``PURGE_DATABASE_URL``,
``PURGE_AUTH_DEV_ISSUER``, ``PURGE_WORKER_LEASE_SECONDS``. Clusters are a JSON object in
``PURGE_CLUSTERS`` (name -> connection settings), Kafka Connect clusters in ``PURGE_CONNECT`` (name ->
REST URL, the Kafka cluster its workers use, and basic or bearer credentials). Unsafe combinations are
refused at start-up.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.domain.authorizer import parse_super_users
from app.settings.groups import (
    AclSource,
    AuthSettings,
    ClusterSettings,
    ConnectSettings,
    DatabaseSettings,
    LimitSettings,
    SaslMechanism,
    SecurityProtocol,
    SettingsGroup,
    SparkSettings,
    WorkerSettings,
)
from app.settings.signing import AuditSettings
from app.settings.webhooks import WebhookSettings

__all__ = [
    "AclSource",
    "AuditSettings",
    "AuthSettings",
    "ClusterSettings",
    "ConnectSettings",
    "DatabaseSettings",
    "LimitSettings",
    "SaslMechanism",
    "SecurityProtocol",
    "Settings",
    "SettingsGroup",
    "SparkSettings",
    "WebhookSettings",
    "WorkerSettings",
    "get_settings",
]


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
