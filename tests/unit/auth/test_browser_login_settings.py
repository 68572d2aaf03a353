"""``PURGE_AUTH_UI_CLIENT_ID`` and ``PURGE_AUTH_UI_SCOPES``: Swagger UI's login at the configured issuer."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.settings import Settings

PRODUCTION = {
    "PURGE_AUTH_ISSUER": "https://login.example",
    "PURGE_AUTH_JWKS_URL": "https://login.example/jwks",
}


def settings_from(monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Settings()


def test_the_login_settings_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_from(
        monkeypatch,
        **PRODUCTION,
        PURGE_AUTH_UI_CLIENT_ID="kafka-purge-ui",
        PURGE_AUTH_UI_SCOPES="openid groups",
    )
    assert settings.auth.ui_client_id == "kafka-purge-ui"
    assert settings.auth.ui_scopes == "openid groups"


def test_without_a_client_id_there_is_no_login(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_from(monkeypatch, **PRODUCTION)
    assert settings.auth.ui_client_id is None
    assert settings.auth.ui_scopes == "openid"


def test_the_dev_issuer_has_no_login_page(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="dev issuer has no login page"):
        settings_from(monkeypatch, PURGE_AUTH_DEV_ISSUER="true", PURGE_AUTH_UI_CLIENT_ID="kafka-purge-ui")


@pytest.mark.parametrize("scopes", ["", "openid  groups", " openid", 'openid "groups"', "openid\tgroups"])
def test_scopes_are_rfc_6749_scope_tokens_separated_by_one_space(
    monkeypatch: pytest.MonkeyPatch, scopes: str
) -> None:
    with pytest.raises(ValidationError, match="ui_scopes"):
        settings_from(monkeypatch, **PRODUCTION, PURGE_AUTH_UI_SCOPES=scopes)


@pytest.mark.parametrize("client_id", ["", "swagger ui", "ui\n"])
def test_a_client_id_is_visible_ascii(monkeypatch: pytest.MonkeyPatch, client_id: str) -> None:
    with pytest.raises(ValidationError, match="ui_client_id"):
        settings_from(monkeypatch, **PRODUCTION, PURGE_AUTH_UI_CLIENT_ID=client_id)
