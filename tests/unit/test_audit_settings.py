"""The audit checkpoint settings: their documented names, and a key that cannot sign refused at start-up
without its value in the error."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.audit.checkpoints import CheckpointKey, generate_private_key, load_checkpoint_key
from app.settings import Settings

BASE = {"PURGE_AUTH_DEV_ISSUER": "true"}


def settings_from(monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    for name, value in {**BASE, **env}.items():
        monkeypatch.setenv(name, value)
    return Settings()


def test_documented_names_reach_the_audit_group(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    key_file = tmp_path / "checkpoint-key.pem"
    key_file.write_text(generate_private_key())
    settings = settings_from(
        monkeypatch,
        PURGE_AUDIT_SIGNING_KEY_FILE=str(key_file),
        PURGE_AUDIT_CHECKPOINT_EVERY_EVENTS="50",
        PURGE_AUDIT_CHECKPOINT_SECONDS="5",
    )
    assert (settings.audit.checkpoint_every_events, settings.audit.checkpoint_seconds) == (50, 5)
    key = load_checkpoint_key(settings.audit.signing_key_text())
    assert key is not None
    assert key.key_id == CheckpointKey(key_file.read_text()).key_id


def test_without_a_key_no_checkpoints_are_signed(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_from(monkeypatch)
    assert (settings.audit.checkpoint_every_events, settings.audit.checkpoint_seconds) == (1000, 60)
    assert load_checkpoint_key(settings.audit.signing_key_text()) is None


def test_a_key_that_cannot_sign_is_refused_without_echoing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    public_only = '{"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}'
    for value in (public_only, "not-a-key-SECRETVALUE", '{"kty": "OKP", "d": "SECRETVALUE"'):
        with pytest.raises(ValidationError, match="audit") as refused:
            settings_from(monkeypatch, PURGE_AUDIT_SIGNING_KEY=value)
        assert "SECRETVALUE" not in str(refused.value)
        assert "11qYAYKx" not in str(refused.value)


def test_one_source_of_the_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    key_file = tmp_path / "checkpoint-key.pem"
    key_file.write_text(generate_private_key())
    with pytest.raises(ValidationError, match="not both"):
        settings_from(
            monkeypatch,
            PURGE_AUDIT_SIGNING_KEY=generate_private_key(),
            PURGE_AUDIT_SIGNING_KEY_FILE=str(key_file),
        )
    with pytest.raises(ValidationError, match="cannot read"):
        settings_from(monkeypatch, PURGE_AUDIT_SIGNING_KEY_FILE=str(tmp_path / "missing.pem"))
