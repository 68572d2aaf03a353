"""Webhook delivery settings (``PURGE_WEBHOOKS_*``)."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from app.domain.webhook_targets import HostAllowList, TargetPolicy, parse_networks
from app.settings.groups import SettingsGroup


class WebhookSettings(SettingsGroup):
    """Delivering webhooks (``app.worker.webhooks``): the hosts and networks they may target
    (``app.domain.webhook_targets``), the timeout of one attempt, the backoff between attempts and how
    many attempts before a delivery is dead-lettered."""

    # Comma-separated host names, ``*.suffix`` names and CIDRs a URL may name; empty: any host.
    allowed_hosts: str = ""
    # Comma-separated CIDRs of special-purpose address space (loopback, private, link-local, ...) targets
    # may reach; empty: public addresses only.
    allowed_networks: str = ""
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

    @field_validator("allowed_networks")
    @classmethod
    def _valid_networks(cls, value: str) -> str:
        parse_networks(value)
        return value

    @model_validator(mode="after")
    def _lease_outlasts_attempt(self) -> WebhookSettings:
        if self.lease_seconds <= self.timeout_seconds:
            raise ValueError(
                "PURGE_WEBHOOKS_LEASE_SECONDS must be longer than PURGE_WEBHOOKS_TIMEOUT_SECONDS"
            )
        return self

    def target_policy(self) -> TargetPolicy:
        return TargetPolicy(HostAllowList.parse(self.allowed_hosts), parse_networks(self.allowed_networks))
