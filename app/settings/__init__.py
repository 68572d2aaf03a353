"""Service settings: one pydantic-settings class, environment prefix ``PURGE_``.

Nested groups are addressed with one underscore after the group name, e.g. ``PURGE_DATABASE_URL``,
``PURGE_AUTH_DEV_ISSUER``, ``PURGE_WORKER_LEASE_SECONDS``. Clusters are a JSON object in
``PURGE_CLUSTERS`` (name -> connection settings), Kafka Connect clusters in ``PURGE_CONNECT`` (name ->
REST URL, the Kafka cluster its workers use, and basic or bearer credentials). Unsafe combinations are
refused at start-up.
"""

from __future__ import annotations

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
from app.settings.service import Settings, get_settings
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
