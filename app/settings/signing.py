"""The service's signing key settings (``PURGE_AUDIT_*``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr, field_validator, model_validator

from app.settings.groups import SettingsGroup
from app.signing import SigningKey, public_jwks


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
