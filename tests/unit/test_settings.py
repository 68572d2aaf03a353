"""Start-up refuses unsafe or malformed configuration, and the documented variable names work."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from app.cli.main import main
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


SECRET = "hunter2-do-not-print"


def clusters(**cluster: Any) -> dict[str, str]:
    return {"PURGE_CLUSTERS": json.dumps({"prod": cluster})}


LEAKY_CONFIGURATIONS = [
    # A model-level refusal: pydantic would quote the whole cluster object.
    clusters(bootstrap_servers="k:9092", security_protocol="SASL_SSL", sasl_password=SECRET),
    clusters(bootstrap_servers="", sasl_password=SECRET),
    clusters(bootstrap_servers="k:9092", sasl_password=[SECRET]),
    {"PURGE_CLUSTERS": json.dumps({"prod": SECRET})},
    {"PURGE_AUTH_DEV_CLIENTS": json.dumps({"etl": [SECRET]})},
    {"PURGE_DATABASE_URL": f"postgresql+asyncpg//purge:{SECRET}@db/purge"},
    {"PURGE_AUTH_DEV_ISSUER": "false", "PURGE_DATABASE_URL": f"postgresql+asyncpg://purge:{SECRET}@db/purge"},
]


@pytest.mark.parametrize("env", LEAKY_CONFIGURATIONS)
def test_configuration_errors_never_show_secrets(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> None:
    with pytest.raises(ValidationError) as refused:
        settings_from(monkeypatch, **env)
    assert SECRET not in str(refused.value)


@pytest.mark.parametrize("command", ["serve", "migrate"])
@pytest.mark.parametrize("env", [LEAKY_CONFIGURATIONS[0], LEAKY_CONFIGURATIONS[5]])
def test_the_cli_reports_a_bad_configuration_without_its_secrets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str, env: dict[str, str]
) -> None:
    for name, value in {**BASE, **env}.items():
        monkeypatch.setenv(name, value)
    assert main([command]) == 2
    captured = capsys.readouterr()
    assert "invalid configuration" in captured.err
    assert SECRET not in captured.err + captured.out


def test_unparsable_json_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PURGE_AUTH_DEV_ISSUER", "true")
    monkeypatch.setenv("PURGE_CLUSTERS", f'{{"prod": {{"sasl_password": "{SECRET}"')
    assert main(["migrate"]) == 2
    err = capsys.readouterr().err
    assert "PURGE_CLUSTERS is not valid JSON" in err
    assert SECRET not in err
