"""Start-up refuses unsafe or malformed configuration, and the documented variable names work."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.settings import Settings

BASE = {"PURGE_AUTH_DEV_ISSUER": "true"}


def settings_from(monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    for name, value in {**BASE, **env}.items():
        monkeypatch.setenv(name, value)
    return Settings()


def test_documented_variable_names_reach_their_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_from(
        monkeypatch,
        PURGE_DATABASE_URL="postgresql+asyncpg://purge@db/purge",
        PURGE_WORKER_LEASE_SECONDS="5",
        PURGE_LIMITS_MAX_PARTITIONS="20",
        PURGE_CLUSTERS='{"prod": {"bootstrap_servers": "k1:9092,k2:9092"}}',
        PURGE_SUPER_USERS="User:admin; Group:ops",
    )
    assert settings.database.url == "postgresql+asyncpg://purge@db/purge"
    assert settings.worker.lease_seconds == 5
    assert settings.limits.max_partitions == 20
    assert settings.clusters["prod"].bootstrap_servers == "k1:9092,k2:9092"
    assert settings.super_user_set() == {"User:admin", "Group:ops"}


@pytest.mark.parametrize("algorithms", ['["none"]', '["RS256", "NONE"]', "[]"])
def test_the_none_algorithm_is_refused(monkeypatch: pytest.MonkeyPatch, algorithms: str) -> None:
    with pytest.raises(ValidationError, match="algorithm"):
        settings_from(monkeypatch, PURGE_AUTH_ALGORITHMS=algorithms)


def test_a_malformed_super_user_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="principalType:principalName"):
        settings_from(monkeypatch, PURGE_SUPER_USERS="User:admin;alice")


def test_sasl_without_credentials_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="SASL"):
        settings_from(
            monkeypatch,
            PURGE_CLUSTERS='{"prod": {"bootstrap_servers": "k:9092", "security_protocol": "SASL_SSL"}}',
        )


def test_without_dev_issuer_an_issuer_and_jwks_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="PURGE_AUTH_ISSUER"):
        settings_from(monkeypatch, PURGE_AUTH_DEV_ISSUER="false")


@pytest.mark.parametrize(
    "production",
    [{"PURGE_AUTH_ISSUER": "https://idp.example/"}, {"PURGE_AUTH_JWKS_URL": "https://idp.example/jwks"}],
)
def test_the_dev_issuer_refuses_to_run_next_to_a_production_issuer(
    monkeypatch: pytest.MonkeyPatch, production: dict[str, str]
) -> None:
    with pytest.raises(ValidationError, match="cannot run next to a production issuer"):
        settings_from(monkeypatch, **production)
